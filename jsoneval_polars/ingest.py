"""Files, tables and Python objects -> document pairs + errors (SPEC §9).

Every input record ends up either in a pair or in the errors list; nothing is dropped quietly.
JSON text is parsed with orjson; a line orjson refuses (NaN/Infinity literals, integers beyond
64 bits, lone surrogates) is parsed again by the standard library, which accepts them, and a
line neither accepts is an error row naming the file, the line and the reason.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson
import polars as pl

from .config import CONFIG_ONLY_KEYS, TOP_KEYS
from .exits import InputError, InputFileError, first_line
from .extract import Extraction, loads_noting, orjson_may_round
from .file_ranges import RangeRead, read_range
from .flatten import Flattened, TextSpans, flatten_texts, read_spans
from . import table_texts
from .schemas import ERRORS
from .table_texts import ColumnTexts, SpilledTexts, TableFile, spill_folder
from .table_texts import remove as remove_spill
from .python_values import NoJsonMeaning, json_value, real_number
from .textfile import UTF8_BOM, not_utf8_text
from .values import TOO_DEEP

Side = Literal["gt", "aio"]
#: A document whose root is an array is scored as the object ``{"$": array}``: its paths are
#: ``$[0].amount`` (attribute ``$[].amount``) and its list is configured as ``lists: {"$": ...}``.
ROOT_LIST = "$"
ParseStatus = Literal["json", "code_block", "embedded", "invalid", "missing"]


# A key in JSON text is a string followed by a colon; this over-counts (a string value may hold
# '":'), never under-counts, so "no more matches than parsed keys" proves there is no duplicate.
_KEY_TOKEN = re.compile(rb'"\s*:')


@dataclass
class Record:
    doc_id: str | None
    content: Any
    line: int
    has_id: bool
    raw: bytes | None = None  # the JSON text, kept only to re-check suspected duplicate keys
    notes: list[str] = field(default_factory=list)  # values not kept exactly
    parsed: Any = None  # the whole parsed record (content may be a part of it)
    meta: dict[str, Any] = field(default_factory=dict)  # metadata columns of a table input


#: The per-pair columns of :class:`Pairs` (metadata columns follow, as strings).
PAIR_SCHEMA = {
    "doc_id": pl.String,
    "gt_present": pl.Boolean,
    "aio_present": pl.Boolean,
    "aio_parse_status": pl.String,
    "gt_line": pl.Int64,
    "aio_line": pl.Int64,
    "safety": pl.Float64,
}


@dataclass
class Pairs:
    """Paired documents, the unit a batch producer hands to the batch core
    (:func:`core.score_batch`).

    ``table`` has one row per pair (:data:`PAIR_SCHEMA`, then the metadata columns);
    ``gt`` and ``aio`` hold the parsed documents row for row (GT ``{}`` where absent, AIO
    ``None`` where absent). ``errors`` are the error rows of reading and pairing, ``n_read``
    the records read per side: both belong to the whole input, so :meth:`batches` leaves them
    out of the slices.
    """

    table: pl.DataFrame
    gt: list[dict]
    aio: list[dict | None]
    errors: list[dict] = field(default_factory=list)
    n_read: dict[str, int] = field(default_factory=dict)
    files: dict[str, str | None] = field(default_factory=dict)
    #: the sides already flattened from their JSON text (:func:`flatten.flatten_texts`), for
    #: pairs that never became Python objects; then ``gt`` and ``aio`` are empty
    flat: tuple[Any, Any] | None = None

    def __len__(self) -> int:
        return self.table.height

    @property
    def metadata(self) -> list[str]:
        return [c for c in self.table.columns if c not in PAIR_SCHEMA]

    def batches(self, size: int) -> Iterator[Pairs]:
        """Consecutive slices of at most ``size`` pairs (none for no pairs)."""
        for start in range(0, len(self), max(1, size)):
            yield Pairs(
                self.table.slice(start, size), self.gt[start:start + size],
                self.aio[start:start + size], files=self.files,
            )

    def with_safety(self, safety: Any) -> Pairs:
        """The same pairs with their ``safety`` column from :func:`safety_lookup` forms."""
        values = safety_lookup(safety, self.table["doc_id"].to_list(), self.gt, self.aio)
        table = self.table.with_columns(pl.Series("safety", values, dtype=pl.Float64))
        return Pairs(table, self.gt, self.aio, self.errors, self.n_read, self.files, self.flat)


def error_row(source, file, line, doc_id, message, severity="error") -> dict:
    """One row of the errors table (SPEC §7): the one place such a row is built."""
    return {"source": source, "doc_id": doc_id, "line": line, "error": message,
            "severity": severity, "file": file}


class ErrorRows:
    """Collects error rows; in strict mode the first error raises :class:`InputError` naming
    the file and the line instead."""

    def __init__(self, strict: bool) -> None:
        self.rows: list[dict] = []
        self.strict = strict

    def add(self, source, file, line, doc_id, message, severity="error") -> None:
        if self.strict and severity == "error":
            where = f"{file or source}" + (f", line {line}" if line is not None else "")
            raise InputError(f"{where}" + (f" (doc_id '{doc_id}')" if doc_id else "")
                             + f": {message}")
        self.rows.append(error_row(source, file, line, doc_id, message, severity))


def _parse_json(raw: bytes) -> tuple[Any, list[str]]:
    """Parsed value and notes on values that could not be kept exactly. Text nested deeper
    than Python's parser reads is read a member at a time (:func:`_read_too_deep`), a member
    too deep to read being :data:`values.TOO_DEEP`: the record keeps its id, and its document
    is reported as nested too deeply to score, as when the parse succeeds and the walk runs
    out of depth (DECISIONS.md 102)."""
    try:
        return _parse_whole(raw)
    except RecursionError:
        return _read_too_deep(raw)


def _parse_whole(raw: bytes) -> tuple[Any, list[str]]:
    if not orjson_may_round(raw):
        try:
            return orjson.loads(raw), []
        except orjson.JSONDecodeError:
            pass  # retried below with the standard library, which accepts what orjson refuses
    return loads_noting(raw)


_TOO_DEEP_TEXT = "JSON nested too deeply to parse"
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET_STEP = np.zeros(256, dtype=np.int32)  # a byte's change of depth outside strings
_BRACKET_STEP[list(b"[{")], _BRACKET_STEP[list(b"]}")] = 1, -1
_SPACE = re.compile(rb"[ \t\n\r]*")
_SCALAR_END = re.compile(rb"[,}\] \t\n\r]")


def _read_too_deep(raw: bytes) -> tuple[dict[str, Any] | list[Any], list[str]]:
    """Text too deep for the parser, read a member (or, in a JSON-array file, a record) at a
    time: each parsed on its own, a member too deep even so as :data:`values.TOO_DEEP`, a
    record too deep read member by member. A key given twice keeps its last value, as
    ``json.loads`` does. The parts too deep are not checked beyond their brackets and strings.
    ValueError when the root is neither an object nor an array, or the text is not JSON at
    this level."""
    at = _json_start(raw)
    array = raw[at:at + 1] == b"["
    parts: list[tuple[str | None, Any]] = []
    notes: list[str] = []
    for key, start, end in _root_parts(raw, at):
        try:
            value, more = _parse_whole(raw[start:end])
        except RecursionError:
            value, more = (_read_too_deep(raw[start:end]) if array and raw[start:start + 1] == b"{"
                           else (TOO_DEEP, []))
        parts.append((key, value))
        notes += more
    return ([value for _, value in parts] if array else dict(parts)), notes


def _json_start(text: bytes) -> int:
    """Where JSON text begins: after a UTF-8 BOM and blanks."""
    return _SPACE.match(text, len(UTF8_BOM) if text.startswith(UTF8_BOM) else 0).end()


def _root_parts(raw: bytes, at: int) -> Iterator[tuple[str | None, int, int]]:
    """(key, start, end) of each member of the object at ``at``, or (None, start, end) of each
    element of the array there; ValueError for text that is not JSON at this level."""
    closer = {b"{": b"}", b"[": b"]"}.get(raw[at:at + 1])
    if closer is None:
        raise ValueError(_TOO_DEEP_TEXT)
    at = _SPACE.match(raw, at + 1).end()
    after = b","
    if raw[at:at + 1] == closer:  # {} or []
        after, at = closer, _SPACE.match(raw, at + 1).end()
    while after == b",":
        key = None
        if closer == b"}":
            name = _JSON_STRING.match(raw, at)
            colon = _SPACE.match(raw, name.end()).end() if name else at
            if not name or raw[colon:colon + 1] != b":":
                raise ValueError(_TOO_DEEP_TEXT)
            key, at = json.loads(name.group()), _SPACE.match(raw, colon + 1).end()
        end = _value_end(raw, at)
        yield key, at, end
        at = _SPACE.match(raw, end).end()
        after = raw[at:at + 1]
        at = _SPACE.match(raw, at + 1).end()
    if after != closer or at != len(raw):
        raise ValueError(_TOO_DEEP_TEXT)


def _value_end(raw: bytes, at: int) -> int:
    """Where the JSON value starting at ``at`` ends: its brackets matched outside its strings
    (in one pass of numpy over the rest of the text: such a value may be megabytes of
    brackets); a scalar ends at the next separator, space or closing bracket."""
    if raw[at:at + 1] == b'"':
        string = _JSON_STRING.match(raw, at)
        if not string:
            raise ValueError(_TOO_DEEP_TEXT)
        return string.end()
    if raw[at:at + 1] not in (b"[", b"{"):
        end = _SCALAR_END.search(raw, at)
        return len(raw) if end is None else end.start()
    text = np.frombuffer(raw, dtype=np.uint8, offset=at)
    step = _BRACKET_STEP[text]
    step[_in_strings(text)] = 0
    closed = np.flatnonzero(np.cumsum(step, dtype=np.int32) == 0)
    if not len(closed):
        raise ValueError(_TOO_DEEP_TEXT)
    return at + int(closed[0]) + 1


def not_json(exc: ValueError) -> str:
    """What is wrong with text that is not JSON: the parser's reason, where in the text, and
    the text there (a record's line in its file is named beside it: the error row's ``line``,
    or the message of ``jsoneval runs``)."""
    if isinstance(exc, UnicodeDecodeError):  # JSON text is UTF-8
        before = exc.object[:exc.start].decode("utf-8", "replace")
        text = before + exc.object[exc.start:].decode("utf-8", "replace")
        return (f"not valid JSON (not UTF-8: byte 0x{exc.object[exc.start]:02x} at byte "
                f"{exc.start + 1}): {_around(text, len(before))!r}")
    if not isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc}"
    where = (f"column {exc.colno}" if exc.lineno == 1
             else f"line {exc.lineno}, column {exc.colno} of the text")
    return (f"not valid JSON ({exc.msg} at {where}): {_around(exc.doc, exc.pos)!r}"
            f"{_why_extra_data(exc)}")


def _why_extra_data(exc: json.JSONDecodeError) -> str:
    """Why text that holds whole records may not parse as one: an array's elements written
    one a line, without brackets; or records on lines that end in a lone CR (classic Mac OS),
    which an NDJSON reader, splitting at LF, reads as one line."""
    if exc.msg != "Extra data":
        return ""
    if exc.doc[exc.pos:].strip() == ",":
        return "; NDJSON lines end without a comma"
    if "\n" not in exc.doc and exc.doc[:exc.pos].rstrip(" \t").endswith("\r"):
        return "; its lines end in a lone CR: convert them to LF, one record a line"
    return ""


def not_json_at_line(exc: json.JSONDecodeError) -> str:
    """:func:`not_json` for a whole file's text (a JSON array): the file's line, then the
    message for that line alone, as a bad line of an NDJSON file reads."""
    line = exc.doc.splitlines()[exc.lineno - 1] if exc.doc else ""
    return f"line {exc.lineno}: {not_json(json.JSONDecodeError(exc.msg, line, exc.colno - 1))}"


def _around(text: str, at: int) -> str:
    """The 40 characters of ``text`` before ``at`` and the 20 from it, cut with '...'."""
    start, stop = max(0, at - 40), at + 20
    return ("..." if start else "") + text[start:stop] + ("..." if stop < len(text) else "")


def _count_keys(obj: Any) -> int:
    stack, n = [obj], 0
    while stack:
        v = stack.pop()
        if type(v) is dict:
            n += len(v)
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
    return n


def _may_repeat_keys(raw: bytes, obj: Any) -> bool:
    """False when ``raw`` provably names no key twice in one object.

    Fast path, for text without \\u escapes: a colon there is either a key's separator or a
    character inside a string, and orjson writes the parsed object with exactly one colon per
    kept key and the same characters inside strings; so the text holds no more colons than the
    re-serialized object exactly when no key was dropped. (Single-byte counts run at memchr
    speed.) Otherwise key tokens are counted with a regex and keys by a walk of the object.
    """
    if b"\\" not in raw or b"\\u" not in raw:
        try:
            dumped = orjson.dumps(obj)
        except (TypeError, orjson.JSONEncodeError):  # ints beyond 64 bits from the stdlib parse
            pass
        else:
            return raw.count(b":") > dumped.count(b":")
    return len(_KEY_TOKEN.findall(raw)) > _count_keys(obj)


def _duplicate_keys(raw: bytes, obj: Any) -> list[str]:
    """Keys that occur twice in one object of ``raw`` (looked for only when a cheap count says
    the text may hold more keys than the parsed object)."""
    if not _may_repeat_keys(raw, obj):
        return []
    dups: list[str] = []

    def hook(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                dups.append(k)
            seen.add(k)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except RecursionError:  # a document too deep to score: the keys found so far
        pass
    return dups


def _is_utf8(text: str) -> bool:
    """False for a string holding a lone surrogate (json reads "\\ud800" into one)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_id(value: Any) -> str | int | None:
    """An id's JSON (python_values.json_value) when that is a string or an integer."""
    try:
        value = json_value(value)
    except (NoJsonMeaning, RecursionError):
        return None
    return value if type(value) in (str, int) else None


def _split_record(
    obj: Any, id_field: str, content_field: str | None
) -> tuple[str | None, bool, Any, str | None]:
    """(doc_id, has_id, content, problem) of one input record."""
    if not isinstance(obj, dict):
        return None, False, obj, None
    has_id = id_field in obj
    doc_id = obj.get(id_field)
    if has_id and (isinstance(doc_id, bool) or not isinstance(doc_id, str | int)):
        doc_id = _json_id(doc_id)  # a numpy integer, a UUID (DECISIONS 113)
        if doc_id is None:
            return None, True, obj, (f"{id_field} must be a string or an integer; "
                                     f"got {obj[id_field]!r}")
    if isinstance(doc_id, str) and not _is_utf8(doc_id):  # "\ud800": no table can hold it
        return None, True, obj, (f"{id_field} {doc_id!r} holds a lone surrogate and cannot be "
                                 "stored as UTF-8")
    doc_id = None if doc_id is None else str(doc_id)
    if not has_id and CONFIG_ONLY_KEYS & obj.keys() and obj.keys() <= set(TOP_KEYS):
        return None, False, obj, (f"a jsoneval config (keys {', '.join(obj)}), not a "
                                  "document: give it with --config (config= in Python)")
    if content_field is not None:
        return doc_id, has_id, *_content_of(obj, content_field)
    if has_id:  # a copy without the id (copy + del is 5x faster than a comprehension)
        content = obj.copy()
        del content[id_field]
        return doc_id, has_id, content, None
    return doc_id, has_id, obj, None


def content_fields(content_field: str | tuple[str | None, str | None] | None
                   ) -> tuple[str | None, str | None]:
    """The (GT, AIO) members holding the documents: ``content_field`` is one name for both
    sides, a pair, or None (the record is the document)."""
    if isinstance(content_field, tuple):
        return content_field
    return content_field, content_field


def _content_of(record: Any, content_field: str | None) -> tuple[Any, str | None]:
    """(document, problem) of a record whose document is its member ``content_field`` (None:
    the record itself). A record that is not an object is its own document, whose root
    :func:`build_pairs` judges."""
    if content_field is None or not isinstance(record, dict):
        return record, None
    if content_field not in record:
        return None, f"record has no content field '{content_field}'"
    return record[content_field], None


def iter_records(
    lines: Iterable[tuple[int, bytes]],
    side: Side,
    file: str | None,
    id_field: str,
    content_field: str | None,
    errors: ErrorRows,
) -> Iterator[Record]:
    """The records of (line number, text) pairs; blank lines (a BOM alone too) are skipped, bad
    ones become error rows. A generator, so a caller that needs only the ids holds one
    document at a time."""
    for line_no, raw in lines:
        if not raw.removeprefix(UTF8_BOM).strip():  # a BOM is skipped as JSON text skips it
            continue
        try:
            obj, notes = _parse_json(raw)
        except ValueError as exc:
            errors.add(side, file, line_no, None, not_json(exc))
            continue
        doc_id, has_id, content, problem = _split_record(obj, id_field, content_field)
        if problem:
            errors.add(side, file, line_no, doc_id, problem)
            continue
        yield Record(doc_id, content, line_no, has_id, raw, notes, obj)


def _records_from_objects(
    objs: Sequence[Any],
    side: Side,
    id_field: str,
    content_field: str | None,
    errors: ErrorRows,
    file: str | None = None,
) -> list[Record]:
    """Records from parsed objects; ``line`` is the 1-based position in the sequence."""
    out = []
    for i, obj in enumerate(objs, start=1):
        doc_id, has_id, content, problem = _split_record(obj, id_field, content_field)
        if problem:
            errors.add(side, file, i, doc_id, problem)
            continue
        out.append(Record(doc_id, content, i, has_id, parsed=obj))
    return out


def _json_column(table: pl.DataFrame, side: Side, id_field: str, json_column: str | None) -> str:
    """The table's JSON column: ``json_column``, or the one column besides the id."""
    if json_column is None:
        others = [c for c in table.columns if c != id_field]
        if len(others) != 1:
            raise InputError(f"{side} table: name the JSON column (json_column=...); columns are "
                             f"{table.columns}{_one_column_per_field(id_field)}")
        json_column = others[0]
    if json_column not in table.columns:
        raise InputError(f"{side} table has no column '{json_column}'; columns: {table.columns}")
    return json_column


def _one_column_per_field(id_field: str) -> str:
    """How a table with one column per field is read."""
    return (f". A column per field? json_column='*' (--json-column '*') reads each row's "
            f"columns besides {id_field!r} as its document")


def _record_from_text(
    text: str | None, row: int, doc_id: str | None, has_id: bool, side: Side, json_column: str,
    errors: ErrorRows, content_field: str | None = None, file: str | None = None,
) -> Record | None:
    """The record of one JSON-text cell (``row`` is 1-based), or None after its error row
    (naming ``file``, the table's, None in memory); with ``content_field``, its document is
    that member (:func:`_content_of`)."""
    if text is None:
        errors.add(side, file, row, doc_id, f"column '{json_column}' is null")
        return None
    raw = text.encode("utf-8")
    try:
        content, notes = _parse_json(raw)
    except ValueError as exc:
        if side == "aio":  # raw model text: extraction decides (SPEC §8)
            return Record(doc_id, text, row, has_id)
        errors.add(side, file, row, doc_id, not_json(exc))
        return None
    document, problem = _content_of(content, content_field)
    if problem:
        errors.add(side, file, row, doc_id, problem)
        return None
    return Record(doc_id, document, row, has_id, raw, notes, content)


def _records_from_table(
    table: pl.DataFrame, side: Side, id_field: str, json_column: str | None, errors: ErrorRows,
    content_field: str | None = None, file: str | None = None,
) -> list[Record]:
    """A table with an id column (optional) and one JSON-text or struct column, whose cells are
    the documents, or with ``content_field`` the records holding them."""
    json_column = _json_column(table, side, id_field, json_column)
    col = table[json_column]
    ids = table[id_field].cast(pl.String).to_list() if id_field in table.columns else None
    meta_cols = [c for c in table.columns if c not in (id_field, json_column)]
    metas = table.select(meta_cols).to_dicts() if meta_cols else None
    has_id = ids is not None
    out = []
    if col.dtype == pl.String:
        for i, text in enumerate(col.to_list(), start=1):
            rec = _record_from_text(text, i, ids[i - 1] if ids else None, has_id, side,
                                    json_column, errors, content_field, file)
            if rec is not None:
                out.append(rec)
    elif isinstance(col.dtype, pl.Struct):
        for i, cell in enumerate(col.to_list(), start=1):
            doc_id = ids[i - 1] if ids else None
            content, problem = _content_of(cell, content_field)
            if problem:
                errors.add(side, file, i, doc_id, problem)
                continue
            out.append(Record(doc_id, content, i, has_id, parsed=cell))
    else:
        raise InputError(f"{side} column '{json_column}' must hold JSON text or structs; got "
                         f"{col.dtype}{_one_column_per_field(id_field)}")
    if metas:
        for r in out:
            r.meta = metas[r.line - 1]
    return out


def read_once(source: Any) -> Any:
    """An in-memory table input as a Polars frame (a LazyFrame collected, any Arrow producer
    read), an iterator of records as a list, anything else as it is. An Arrow stream can be
    read only once (pyarrow's RecordBatchReader, which DuckDB 2's ``.arrow()`` returns), as can
    a generator, and an input is looked at more than once on the way to its pairs: read a
    second time, such a GT was empty, and the run scored every document as AIO-only without a
    word. So each input is read here, once."""
    if isinstance(source, pl.LazyFrame):
        return source.collect()
    if not isinstance(source, pl.DataFrame | str | Path) and hasattr(source, "__arrow_c_stream__"):
        return pl.DataFrame(source)  # pyarrow tables, record batch readers, DuckDB relations
    if isinstance(source, Iterator):  # a generator of records (a batch reader iterates too)
        return list(source)
    return source


def table_source(source: Any, *, by_batch: bool = False, side: Side = "gt",
                 rows: tuple[str, Sequence[str]] | None = None,
                 ) -> tuple[pl.DataFrame | TableFile, str | None] | None:
    """A table input as a DataFrame and its file name (None in memory): a Parquet or Arrow IPC
    file, a Polars frame, any Arrow producer; None for other inputs. With ``by_batch``, a file
    pyarrow opens is a :class:`table_texts.TableFile`, read a column and a record batch at a
    time (one it cannot open is read whole, which names the problem as before). With
    ``rows`` (id field, metadata names: ``json_column="*"``), the table is read whole and its
    other columns become one JSON-text column :data:`ROW_DOCUMENT` (:func:`_rows_as_documents`)."""
    if isinstance(source, str | Path):
        path = Path(source)
        suffix = path.suffix.lower()
        if not path.is_file() or suffix not in TABLE_SUFFIXES:
            return None
        if by_batch and rows is None and suffix not in TEXT_TABLES:
            with contextlib.suppress(Exception):
                return TableFile(path), str(path)
        table, name = read_table_file(path, f"{side} input"), str(path)
    else:
        table, name = read_once(source), None
        if not isinstance(table, pl.DataFrame):
            return None
    return (table if rows is None else _rows_as_documents(table, side, *rows)), name


#: Files read as tables, by their suffix; a CSV or TSV file is read whole, every column as
#: text (docs/DECISIONS.md 107).
TEXT_TABLES = {".csv": ",", ".tsv": "\t"}
TABLE_SUFFIXES = (".parquet", ".arrow", ".ipc", ".feather", *TEXT_TABLES)


def read_table_file(path: Path, what: str, error: type[InputError] = InputFileError
                    ) -> pl.DataFrame:
    """A file of :data:`TABLE_SUFFIXES` read whole; a CSV or TSV file with every column as
    text, so an id keeps its zeros. A file that cannot be read is ``error``, one line naming
    it as ``what`` ("gt input", "--safety") and saying why."""
    suffix = path.suffix.lower()
    try:
        if suffix not in TEXT_TABLES:
            return pl.read_parquet(path) if suffix == ".parquet" else pl.read_ipc(path)
        with open(path, "rb") as f:  # a UTF-16 file read as text is columns of mojibake
            check_text_file(f.read(4096), f"{what} {path}")
        return pl.read_csv(path, separator=TEXT_TABLES[suffix], infer_schema=False)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise error(f"{what} {path}: not a readable {suffix[1:].upper()} table: "
                    f"{first_line(exc)}") from None


#: ``json_column`` value for a table whose columns are the document's members (one per
#: field, as a flat extraction table has them), and the JSON-text column they become.
ROW_COLUMNS, ROW_DOCUMENT = "*", "document"


def _rows_as_documents(table: pl.DataFrame, side: Side, id_field: str,
                       metadata: Sequence[str]) -> pl.DataFrame:
    """The id and metadata columns of ``table``, and each row's other columns as one JSON
    object (Polars' ``json_encode``): a null cell is a null member, a date or time its ISO
    text, a decimal its text, a NaN or infinite float null (docs/DECISIONS.md 105)."""
    labels = [c for c in (id_field, *metadata) if c in table.columns]
    members = [c for c in table.columns if c not in labels]
    if not members:
        raise InputError(f"{side} table has no column to score besides {labels}")
    for name in members:
        if _holds_bytes(table.schema[name]):
            raise InputError(f"{side} column '{name}' holds {table.schema[name]}, which a JSON "
                             "document cannot hold: drop it, or decode it to text first")
    return table.select(*labels, pl.struct(members).struct.json_encode().alias(ROW_DOCUMENT))


def _row_columns(json_column: str | None, id_field: str, metadata: Sequence[str]
                 ) -> tuple[tuple[str, Sequence[str]] | None, str | None]:
    """``table_source``'s ``rows`` for ``json_column``, and the JSON column to read then."""
    if json_column != ROW_COLUMNS:
        return None, json_column
    return (id_field, metadata), ROW_DOCUMENT


def _holds_bytes(dtype: pl.DataType) -> bool:
    if isinstance(dtype, pl.Struct):
        return any(_holds_bytes(f.dtype) for f in dtype.fields)
    if isinstance(dtype, pl.List | pl.Array):
        return _holds_bytes(dtype.inner)
    return dtype in (pl.Binary, pl.Object)


def read_records(
    source: Any,
    side: Side,
    *,
    id_field: str,
    content_field: str | None = None,
    json_column: str | None = None,
    metadata: Sequence[str] = (),
    errors: ErrorRows,
) -> tuple[list[Record], str | None]:
    """Records of one input and the file name used in error rows."""
    rows, json_column = _row_columns(json_column, id_field, metadata)
    if isinstance(source, str | Path):
        path = Path(source)
        name = str(path)
        if not path.is_file():
            raise InputFileError(f"{side} input {name} does not exist or is not a file")
        table = table_source(path, side=side, rows=rows)
        if table is not None:
            return _records_from_table(table[0], side, id_field, json_column, errors,
                                       content_field, name), name
        data = path.read_bytes()
        check_text_file(data[:8], name)
        data = data.removeprefix(UTF8_BOM)
        if starts_json_array(data):
            try:
                objs, notes = _parse_json(data)
            except ValueError as exc:
                # NDJSON whose first line starts with '[' (and is bad, or an array root)
                lines = enumerate(data.split(b"\n"), start=1)
                recs = list(iter_records(lines, side, name, id_field, content_field, errors))
                if not recs:
                    raise InputFileError(f"{name}: not a valid JSON array: {exc}"
                                         f"{_cut_short(exc)}") from None
                return recs, name
            if not isinstance(objs, list):
                raise InputFileError(f"{name}: a JSON file must hold an array of records")
            for note in notes:
                errors.add(side, name, None, None, note, severity="warning")
            dups = _duplicate_keys(data, objs)
            if dups:  # element texts are not kept, so this is reported for the file
                errors.add(
                    side, name, None, None,
                    f"duplicate key(s) {', '.join(map(repr, sorted(set(dups))))} in an object; "
                    "the last value was used",
                    severity="warning",
                )
            return _records_from_objects(objs, side, id_field, content_field, errors, name), name
        # pretty-printed objects (as `jq .` writes them) are records as lines are
        lines = (object_texts(data) if starts_json_objects(data)
                 else enumerate(data.split(b"\n"), start=1))
        recs = list(iter_records(lines, side, name, id_field, content_field, errors))
        return recs, name
    table = table_source(source, side=side, rows=rows)
    if table is not None:
        return _records_from_table(table[0], side, id_field, json_column, errors,
                                   content_field), None
    if isinstance(source, Sequence) and not isinstance(source, str | bytes):
        return _records_from_objects(source, side, id_field, content_field, errors), None
    raise InputError(
        f"{side} input must be a file path, a list of records or a Polars/Arrow table; "
        f"got {type(source).__name__}"
    )


RECORD_SCHEMA = {"line": pl.Int64, "doc_id": pl.String, "has_id": pl.Boolean}
#: A scanned record: where its line is in the file (:func:`scan_ndjson`).
SCAN_SCHEMA = {**RECORD_SCHEMA, "offset": pl.Int64, "length": pl.Int64}
#: The columns of a scan in the order the kernel gives them.
_SCAN_COLUMNS = {name: SCAN_SCHEMA[name] for name in ("line", "offset", "length", "doc_id",
                                                      "has_id")}


def check_text_file(head: bytes, name: str) -> None:
    """An :class:`InputFileError` when a JSON input does not begin as UTF-8 text can: with a
    UTF-16 or UTF-32 byte order mark or NUL bytes, or with the magic bytes of a compressed file.
    Read line by line, such a file gave an error row per line, or worse, a record from a line
    that happened to decode (DECISIONS.md 18c)."""
    problem = not_utf8_text(head)
    if problem is not None:
        raise InputFileError(f"{name} is {problem[0]}, not UTF-8 JSON: {problem[1]}")


def json_file_for_polars(path: Path, name: str) -> Path | bytes:
    """A JSON or NDJSON file as Polars' JSON readers take it, for the side files and tables
    read by Polars rather than by the inputs' readers: its bytes less a leading UTF-8 BOM (JSON
    text may begin with one, as ``json.loads`` allows; Polars stops at it with "TapeError at
    character 0"), else the path itself, a file of :data:`CODECS` too (Polars decompresses
    it). UTF-16 and UTF-32 text, or another compression, is an :class:`InputFileError` naming
    ``name`` (:func:`check_text_file`)."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if not head.startswith(tuple(CODECS)):
        check_text_file(head, name)
    return path.read_bytes()[len(UTF8_BOM):] if head.startswith(UTF8_BOM) else path


def starts_json_array(head: bytes) -> bool:
    """Whether a file beginning with ``head`` is a JSON array of records rather than NDJSON.

    It is when its first character (after a BOM and blanks) is '[' and its first line is not
    a whole JSON value followed by more lines: '[' alone or a pretty-printed array, or one
    line holding the whole array. NDJSON whose first document has an array root is NDJSON.
    """
    head = head.removeprefix(UTF8_BOM).lstrip()
    if head[:1] != b"[":
        return False
    first, newline, rest = head.partition(b"\n")
    if not newline or not rest.strip():
        return True
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return True
    return False


def starts_json_objects(head: bytes) -> bool:
    """Whether a file beginning with ``head`` holds JSON objects written over several lines
    each (pretty-printed, as ``jq .`` writes them) rather than NDJSON: it starts (after a BOM
    and blanks) with an object that closes after its first line, within ``head``, and that
    object is JSON. An NDJSON file whose first line is cut short does not close it there, or
    not as JSON, so it stays NDJSON, its first line one error row."""
    at = _json_start(head)
    if not _opens_object_over_lines(head, at):
        return False
    try:
        end = _value_end(head, at)
    except ValueError:
        return False
    return _is_json(head[at:end])


def _opens_object_over_lines(head: bytes, at: int) -> bool:
    """Whether ``head`` has an object at ``at`` that its first line does not close (the
    brackets of the first line alone are matched: an NDJSON file's first line closes)."""
    line_end = head.find(b"\n", at)
    if head[at:at + 1] != b"{" or line_end < 0:
        return False
    try:
        _value_end(head[:line_end], at)
    except ValueError:
        return True
    return False


def object_texts(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(first line, text) of each top-level JSON value of pretty-printed objects, as NDJSON
    gives (line, text) pairs (:func:`object_spans`)."""
    return ((line, data[a:b]) for line, a, b in object_spans(data))


def object_spans(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(first line, start, stop) of each top-level JSON value of pretty-printed objects: the
    values end where their brackets, matched outside strings, close. A stray bracket or quote,
    or an object never closed, throws the matching off for the rest of the file; so a value
    that does not parse is cut again (:func:`_object_pieces`), and only the pieces that are
    not JSON are error rows, the objects around them kept."""
    bom = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    raw = np.frombuffer(data, dtype=np.uint8)
    step = _BRACKET_STEP[raw]
    step[:bom] = 0
    step[_in_strings(raw)] = 0
    ends = np.flatnonzero((np.cumsum(step, dtype=np.int32) == 0) & (step < 0)) + 1
    newlines = np.flatnonzero(raw == ord("\n"))
    start = bom
    for end in [*ends.tolist(), len(data)]:
        for a, b in _object_pieces(data, start, end):
            yield int(np.searchsorted(newlines, a)) + 1, a, b
        start = end


def _object_pieces(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The value in ``data[start:end]`` from its first byte that is not blank; if it does not
    parse, cut again before each '{' and after each '}' that opens a line (where ``jq .``
    starts and ends each object; a JSON string cannot hold a line end). Blank pieces are left
    out."""
    first = _SPACE.match(data, start).end()
    if first >= end:
        return []
    cuts = sorted({m.end() for m in _OBJECT_EDGES.finditer(data, first, end)} - {end})
    bounds = ([(start, end)] if not cuts or _is_json(data[start:end])
              else zip([start, *cuts], [*cuts, end], strict=True))
    return [(at, b) for a, b in bounds if (at := _SPACE.match(data, a).end()) < b]


#: where ``jq .`` starts and ends each object: before a '{' and after a '}' that open a line
_OBJECT_EDGES = re.compile(rb"\n(?=\{)|\n\}")


def _is_json(text: bytes) -> bool:
    try:
        _parse_json(text)
    except (ValueError, RecursionError):
        return False
    return True


def _in_strings(raw: np.ndarray) -> np.ndarray:
    """Which bytes of JSON text are inside strings (their quotes included), in a few numpy
    passes: a quote after an odd run of backslashes is escaped; the others open and close
    strings in turn. Splitting 25 MB of pretty-printed objects (:func:`object_texts`) took
    0.54 s this way, 1.21 s matching each string with a regular expression."""
    position = np.arange(len(raw), dtype=np.int32 if len(raw) < 2**31 else np.int64)
    plain = np.maximum.accumulate(np.where(raw == ord("\\"), -1, position))
    quotes = np.flatnonzero(raw == ord('"'))
    before = np.maximum(quotes - 1, 0)
    backslashes = np.where(quotes > 0, before - plain[before], 0)
    toggles = np.zeros(len(raw), dtype=np.uint8)
    toggles[quotes[backslashes % 2 == 0]] = 1
    inside = np.bitwise_xor.accumulate(toggles).view(bool)
    inside[quotes] = True  # a closing quote toggles back: it is still the string's
    return inside


#: compressed files read through a plain copy (compressed.py): magic bytes -> pyarrow codec
CODECS = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd", b"BZh": "bz2"}
_COMPRESSED_SUFFIXES = (".gz", ".gzip", ".zst", ".zstd", ".bz2")


def plain_name(name: str) -> str:
    """A compressed file's name without its compression suffix (``gt.csv.gz``: ``gt.csv``),
    which says what the decompressed text is."""
    for suffix in _COMPRESSED_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or "input"
    return name


def codec_of(source: Any) -> str | None:
    """The codec of a compressed file given as a path (by its first bytes), else None."""
    if not isinstance(source, str | Path):
        return None
    try:
        with open(source, "rb") as f:
            head = f.read(4)
    except OSError:
        return None  # a missing file is reported by the reader
    return next((codec for magic, codec in CODECS.items() if head.startswith(magic)), None)


def head_of(path: str | Path, codec: str, size: int = 1 << 16) -> bytes:
    """The first ``size`` decompressed bytes (NDJSON or a JSON array? its head decides)."""
    import pyarrow as pa

    try:
        with pa.CompressedInputStream(pa.OSFile(str(path)), codec) as stream:
            return stream.read(size)
    except (OSError, pa.ArrowException) as exc:
        raise InputFileError(f"{path}: cannot decompress it as {codec}: {exc}") from None


def ndjson_path(source: Any, side: str) -> Path:
    """``source`` as the path of an NDJSON file, a JSON array of records or pretty-printed
    objects, or an :class:`InputFileError` saying why not (not a file, a table format, or an
    array or objects without the native kernel to find them)."""
    if not isinstance(source, str | Path):
        raise InputFileError(f"{side}: streaming scores NDJSON files; got {type(source).__name__} "
                         "(use evaluate() for tables and lists of records)")
    path = Path(source)
    if not path.is_file():
        raise InputFileError(f"{side} input {path} does not exist or is not a file")
    suffix = Path(plain_name(path.name)).suffix  # gt.csv.gz is a CSV table
    if suffix.lower() in TABLE_SUFFIXES:
        raise InputFileError(f"{side} input {path}: streaming reads NDJSON; score "
                             f"{suffix} files with evaluate()")
    head = _text_head(path, side)
    if _native_kernel():  # it finds the records of an array or of objects
        return path
    if starts_json_array(head):
        raise InputFileError(f"{side} input {path} holds a JSON array; streaming reads NDJSON "
                             "(one record per line): score it with evaluate()")
    if starts_json_objects(head):
        raise InputFileError(f"{side} input {path} holds pretty-printed JSON objects; streaming "
                             "reads NDJSON (one record per line): score it with evaluate()")
    return path


def text_kind(path: str | Path) -> str:
    """What a text input (:func:`ndjson_path`) holds: "array" (a JSON array of records),
    "objects" (pretty-printed objects) or "ndjson"."""
    head = _text_head(Path(path), "input")
    return ("array" if starts_json_array(head) else "objects" if starts_json_objects(head)
            else "ndjson")


def _native_kernel() -> bool:
    from .flatten import KERNEL
    return KERNEL == "native"


def _text_head(path: Path, side: str) -> bytes:
    """As much of a text file's beginning as decides what it holds (:func:`starts_json_array`,
    :func:`starts_json_objects`), decompressed; an :class:`InputFileError` for a file that is
    not UTF-8 text."""
    codec = codec_of(path)
    if codec:  # read through a decompressed copy (compressed.plain_copies): its head decides
        head = head_of(path, codec, (1 << 20) + 8192)
        check_text_file(head, f"{side} input {path}")
        at = _json_start(head)
        if head[at:at + 1] == b"[":
            first, newline, rest = head.partition(b"\n")
            head = first + newline + rest.partition(b"\n")[0] + b"\n"
        elif head[at:at + 1] != b"{":
            head = head[:4096]
        return head
    with open(path, "rb") as f:
        head = f.read(4096)
        check_text_file(head, f"{side} input {path}")
        at = _json_start(head)
        if head[at:at + 1] == b"[":  # its first line decides
            head += f.readline(1 << 20) + f.readline(4096)
        elif head[at:at + 1] == b"{":  # an object its first line does not close decides
            if b"\n" not in head[at:]:
                head += f.readline(1 << 20)
            if _opens_object_over_lines(head, at):
                head += f.read(1 << 20)
    return head


def is_ndjson(source: Any) -> bool:
    """Whether ``source`` is a text file of records this driver reads (NDJSON, a JSON array or
    pretty-printed objects; not Parquet/Arrow)."""
    try:
        ndjson_path(source, "input")
    except InputError:
        return False
    return True


def screen_keyed_rows(
    rows: pl.DataFrame, id_field: str, null_messages: Mapping[str, str], *, strict: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows of keyed records (columns ``side``, ``doc_id``, ``json``, ``row``) that can be
    paired by id, and error rows for the rest (SPEC §9), as :func:`pair_records` reports them:
    a null id, a null JSON cell (``null_messages[side]``), a doc_id repeated on one side (the
    first row with JSON in input order is kept). The columnar form of the same rules, for
    drivers that hold records as table rows (Spark's chunks)."""
    no_id = pl.col("doc_id").is_null()
    no_json = pl.col("json").is_null()
    first = pl.when(~no_json).then(pl.col("row")).min().over("side", "doc_id")
    checked = rows.with_columns(
        pl.when(no_id)
        .then(pl.lit(f"record has no '{id_field}'"))
        .when(no_json)
        .then(pl.col("side").replace_strict(dict(null_messages), return_dtype=pl.String))
        .when(pl.col("row") != first)
        .then(pl.format("duplicate {} '{}' (an earlier row has it); left out",
                        pl.lit(id_field), pl.col("doc_id")))
        .alias("error")
    )
    bad = checked.filter(pl.col("error").is_not_null())
    if strict and bad.height:  # the first error raises, worded by the one error-row builder
        first_bad = bad.row(0, named=True)
        ErrorRows(strict).add(first_bad["side"], None, None, first_bad["doc_id"],
                              first_bad["error"])
    errors = bad.select(
        pl.col("side").alias("source"), "doc_id", pl.lit(None, pl.Int64).alias("line"),
        "error", pl.lit("error").alias("severity"), pl.lit(None, pl.String).alias("file"),
    ).cast(ERRORS)
    return checked.filter(pl.col("error").is_null()).drop("error"), errors


def pair_records(
    gt: pl.DataFrame, aio: pl.DataFrame, id_field: str, files: Mapping[str, str | None],
    errors: ErrorRows, *, by_id: bool | None = None,
) -> pl.DataFrame:
    """The pairing (SPEC §9): one row per document pair, in order (GT order, then AIO-only
    records), with ``doc_id`` and, per side, the side's other record columns prefixed
    ``gt_`` / ``aio_`` (null where the side has no record).

    ``gt`` and ``aio`` hold one row per record in line order: :data:`RECORD_SCHEMA` plus any
    payload columns (a position, a byte offset). When both sides carry ids, records pair by
    id; a record without an id and a repeated id (the first occurrence wins) become error rows.
    Otherwise records pair by position. ``by_id`` decides instead when given (a part of a
    larger input, pair_plan.py: the whole input's sides decide).
    """
    payload = [c for c in gt.columns if c not in ("doc_id", "has_id")]
    if by_id is None:
        by_id = bool(gt["has_id"].any() and aio["has_id"].any())
    if by_id:
        plan, left_out = _pair_by_id(gt, aio, payload)
        for side, rows in zip(("gt", "aio"), left_out, strict=True):
            for line, doc_id, first in rows.iter_rows():
                message = (
                    f"record has no '{id_field}'" if doc_id is None
                    else f"duplicate {id_field} '{doc_id}' (first on line {first}); left out"
                )
                errors.add(side, files.get(side), line, doc_id, message)
    else:
        unkeyed = [name for name, t in (("GT", gt), ("AIO", aio)) if not t["has_id"].any()]
        if gt.height and aio.height:  # a misspelt id field pairs by position, never silently
            keyed = " under the GT's ids" if unkeyed == ["AIO"] else (
                " under the AIO's ids" if unkeyed == ["GT"] else "")
            errors.add("config", None, None, None,
                       f"no {' or '.join(unkeyed)} record has '{id_field}': the documents are "
                       f"paired by position (line order){keyed}", severity="warning")
        n = max(gt.height, aio.height)
        sides = [
            t.select(*[pl.col(c).alias(f"{s}_{c}") for c in ("doc_id", *payload)])
            .with_row_index("i")
            for s, t in (("gt", gt), ("aio", aio))
        ]
        plan = (
            pl.int_range(n, dtype=pl.UInt32, eager=True).alias("i").to_frame()
            .join(sides[0], on="i", how="left").join(sides[1], on="i", how="left")
            .sort("i")
            .select(
                pl.coalesce("gt_doc_id", "aio_doc_id", pl.col("i").cast(pl.String)).alias("doc_id"),
                pl.exclude("i", "gt_doc_id", "aio_doc_id"),
            )
        )
    return plan.select("doc_id", *[f"{s}_{c}" for s in ("gt", "aio") for c in payload])


def _pair_by_id(gt: pl.DataFrame, aio: pl.DataFrame, payload: list[str]
                ) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """:func:`pair_records` of two sides with ids: the plan, and per side the records left out
    (line, doc_id, first_line: the line of the id's first record, null for no id), in line
    order. Two sides with the same ids in the same increasing order (each id then once: the
    files a pipeline writes in one order) are the plan side by side, checked in two passes
    over the ids (10-20 ms a million) where :func:`_pair_by_id_polars` groups and joins them
    (0.3-0.45 s a million, on the main thread while the batch threads wait)."""
    ids = gt["doc_id"]
    if not (ids.null_count() == 0 and ids.equals(aio["doc_id"])
            and (ids.tail(-1) > ids.head(-1)).all()):  # each id above the one before
        return _pair_by_id_polars(gt, aio, payload)
    sides = [table.select(pl.col(c).alias(f"{side}_{c}") for c in payload)
             for side, table in (("gt", gt), ("aio", aio))]
    none = gt.select("line", "doc_id", pl.col("line").alias("first_line")).clear()
    return pl.concat([gt.select("doc_id"), *sides], how="horizontal"), [none, none]


def _pair_by_id_polars(gt: pl.DataFrame, aio: pl.DataFrame, payload: list[str]
                       ) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """:func:`_pair_by_id` for any ids: each side's first record of an id by a window, then
    the GT's records joined with the AIO's and the AIO's alone."""
    kept, left_out = {}, []
    for side, table in (("gt", gt), ("aio", aio)):
        with_id = table.filter(pl.col("doc_id").is_not_null()).with_columns(
            pl.col("line").first().over("doc_id").alias("first_line")
        )
        left_out.append(pl.concat([
            table.filter(pl.col("doc_id").is_null()).select(
                "line", "doc_id", pl.lit(None, pl.Int64).alias("first_line")
            ),
            with_id.filter(pl.col("line") != pl.col("first_line")).select(
                "line", "doc_id", "first_line"
            ),
        ]).sort("line"))
        kept[side] = with_id.filter(pl.col("line") == pl.col("first_line")).select(
            "doc_id", *[pl.col(c).alias(f"{side}_{c}") for c in payload]
        )
    both = kept["gt"].join(kept["aio"], on="doc_id", how="left", maintain_order="left")
    aio_only = kept["aio"].join(kept["gt"], on="doc_id", how="anti", maintain_order="left")
    return pl.concat([both, aio_only], how="diagonal"), left_out


def pair_inputs(
    gt: Any,
    aio: Any,
    *,
    id_field: str = "doc_id",
    content_field: str | tuple[str | None, str | None] | None = None,
    json_column: str | None = None,
    strict: bool = False,
    extract: Callable[[str], Extraction] | None = None,
    metadata: Sequence[str] = (),
) -> Pairs:
    """Pair the documents of two inputs. ``content_field`` names the member holding the
    document (one name for both sides, or a (gt, aio) pair); by default the whole record less
    the id is the document. ``metadata`` names record members (or table columns) that are not
    content but travel to the result tables; the AIO's value wins over the GT's."""
    errors = ErrorRows(strict)
    gt_field, aio_field = content_fields(content_field)
    recs, files = {}, {}
    check_metadata_names(metadata, id_field)
    for side, fld, source in (("gt", gt_field, gt), ("aio", aio_field, aio)):
        recs[side], files[side] = read_records(
            source, side, id_field=id_field, content_field=fld, json_column=json_column,
            metadata=metadata, errors=errors,
        )
        if metadata:
            take_metadata(recs[side], metadata, fld is None, files[side])
    n_read = {side: _n_read(recs[side], side, errors) for side in ("gt", "aio")}
    tables = {
        side: pl.DataFrame(
            [(r.line, r.doc_id, r.has_id, i) for i, r in enumerate(recs[side])],
            schema={**RECORD_SCHEMA, "i": pl.Int64}, orient="row",
        )
        for side in ("gt", "aio")
    }
    plan = pair_records(tables["gt"], tables["aio"], id_field, files, errors)

    def pick(side: str) -> list[Record | None]:
        return [None if i is None else recs[side][i] for i in plan[f"{side}_i"].to_list()]

    matched = zip(plan["doc_id"].to_list(), pick("gt"), pick("aio"), strict=True)
    pairs = build_pairs(matched, errors, files=files, metadata=metadata, extract=extract)
    pairs.n_read = n_read
    return pairs


def build_pairs(
    matched: Iterable[tuple[str, Record | None, Record | None]],
    errors: ErrorRows,
    *,
    files: Mapping[str, str | None],
    metadata: Sequence[str] = (),
    extract: Callable[[str], Extraction] | None = None,
) -> Pairs:
    """The pairs of matched (doc_id, GT record, AIO record) triples: root checks, AIO text
    extraction (SPEC §8), inexact-value warnings, metadata and line numbers. The returned
    pairs carry every error row of ``errors``."""
    gt_file, aio_file = files.get("gt"), files.get("aio")
    if extract is None:
        from .extract import extract_json as extract

    rows: list[tuple] = []
    gt_docs: list[dict] = []
    aio_docs: list[dict | None] = []
    meta: dict[str, list[str | None]] = {name: [] for name in metadata}
    for doc_id, gr, ar in matched:
        gt_doc: dict | None = None
        if gr is not None:
            if isinstance(gr.content, list):
                gr.content = {ROOT_LIST: gr.content}
            if not isinstance(gr.content, dict):
                errors.add(
                    "gt", gt_file, gr.line, doc_id,
                    f"GT root must be a JSON object; got {_kind(gr.content)}"
                    f"{_encoded_twice(gr.content)}",
                )
                if ar is not None:
                    errors.add(
                        "aio", aio_file, ar.line, doc_id,
                        "left out: its GT document is not usable (see the gt error row)",
                    )
                continue
            gt_doc = gr.content
            _warn_inexact(gr, "gt", gt_file, doc_id, errors)
        status, aio_doc = "missing", None
        if ar is not None:
            if isinstance(ar.content, list):
                ar.content = {ROOT_LIST: ar.content}
            if isinstance(ar.content, dict):
                status, aio_doc = "json", ar.content
                _warn_inexact(ar, "aio", aio_file, doc_id, errors)
            elif isinstance(ar.content, str):
                ex = extract(ar.content)
                status = ex.status
                aio_doc = ex.value if ex.value is not None else {}
                for note in ex.notes:  # NaN in the model's text, say
                    errors.add("aio", aio_file, ar.line, doc_id, note, severity="warning")
            else:
                status, aio_doc = "invalid", {}
                errors.add(
                    "aio", aio_file, ar.line, doc_id,
                    f"AIO root is {_kind(ar.content)}, not an object; scored as {{}}",
                    severity="warning",
                )
        rows.append((doc_id, gr is not None, ar is not None, status,
                     gr.line if gr else None, ar.line if ar else None, 1.0))
        gt_docs.append(gt_doc if gt_doc is not None else {})
        aio_docs.append(aio_doc)
        for name, values in meta.items():
            source = next((r for r in (ar, gr) if r and r.meta.get(name) is not None), None)
            value = None if source is None else str(source.meta[name])
            if value is not None and not _is_utf8(value):  # the document is still scored
                side, file = ("aio", aio_file) if source is ar else ("gt", gt_file)
                errors.add(side, file, source.line, doc_id,  # type: ignore[union-attr]
                           f"metadata '{name}' {value!r} holds a lone surrogate and cannot be "
                           "stored as UTF-8; left null", severity="warning")
                value = None
            values.append(value)
    table = pl.DataFrame(rows, schema=PAIR_SCHEMA, orient="row").with_columns(
        pl.Series(name, values, dtype=pl.String) for name, values in meta.items()
    )
    return Pairs(table, gt_docs, aio_docs, list(errors.rows), files=dict(files))


def read_texts_at(
    path: str | Path, offsets: Sequence[int | None], lengths: Sequence[int | None]
) -> list[bytes | None]:
    """The lines at these byte offsets of a file already scanned (None where ``offset`` is
    None)."""
    return read_spans(path, offsets, lengths).texts()


def read_records_at(
    path: str | Path, side: Side, lines: Sequence[int | None], offsets: Sequence[int | None],
    lengths: Sequence[int | None], id_field: str, content_field: str | None,
) -> list[Record | None]:
    """Records read back by byte offset from an NDJSON file already scanned (None where
    ``offset`` is None): the streaming producer reads each batch this way."""
    out: list[Record | None] = []
    for raw, line in zip(read_texts_at(path, offsets, lengths), lines, strict=True):
        if raw is None:
            out.append(None)
            continue
        try:
            obj, notes = _parse_json(raw)
        except ValueError as exc:
            raise InputError(f"{path}, line {line}: changed while it was being scored "
                             f"({exc})") from None
        doc_id, has_id, content, _ = _split_record(obj, id_field, content_field)
        out.append(Record(doc_id, content, line, has_id, raw, notes, obj))
    return out


def pairs_from_texts(
    plan: pl.DataFrame, texts: Mapping[str, list[bytes | None] | TextSpans], skip: str | None,
    empty_containers_are_null: bool, files: Mapping[str, str | None],
    metadata: Sequence[str] = (), fields: tuple[str | None, str | None] = (None, None),
    in_python: Callable[[pl.DataFrame], Pairs] | None = None,
    in_python_also: Sequence[int] = (),
    own_metadata: Mapping[str, Mapping[str, pl.Series]] | None = None,
    ids_in_text: bool = False,
    walked: tuple[tuple, tuple] | None = None,
) -> Pairs | None:
    """The pairs of a batch of paired JSON texts (``plan``: doc_id and per side its line,
    None where absent) flattened straight from their text, less the root member ``skip`` (an
    NDJSON record's id) and the root members named in ``metadata`` (their values become the
    metadata columns); a side's content field in ``fields`` is its document instead (the
    AIO's may hold the document as JSON text). None when the native kernel declines a text
    (then the caller reads the records as Python objects, which gives the errors and
    warnings, SPEC §9); with ``in_python``, which reads some of the plan's rows that way, only
    the pairs of the texts it declines are (and those at the positions ``in_python_also``),
    and the batch is put together as one Python read would have made it
    (:func:`_with_python_pairs`). ``own_metadata``: per side, metadata values of the plan's
    rows from a table's own columns, which win over the members of those names.

    Every line the kernel takes is a JSON object with no repeated key, no number beyond a
    double and no metadata member holding a container, and its document is a JSON object (an
    AIO text that is one whole, status ``json``, or whose fenced block is, ``code_block``):
    :func:`build_pairs` would find nothing to report, so the table is its table.

    ``walked``: the kernel's walk of both sides' texts with these options, already made.
    ``ids_in_text`` (the pass over sorted files, stream.py; its walk, ``file_ranges.walk_lines``,
    kept the ids): the plan has no doc_id; each pair's is the id member ``skip`` its two
    records hold, and when a record has none, or the two differ, the result is None as well."""
    if ids_in_text and walked is None:
        raise TypeError("ids_in_text reads the ids a walk kept (file_ranges.walk_lines)")
    options = {"skip": skip, "metadata": metadata,
               "empty_containers_are_null": empty_containers_are_null}
    lenient = in_python is not None
    walked = walked or (None, None)
    gt = flatten_texts(texts["gt"], content=fields[0], lenient=lenient, walked=walked[0],
                       **options)
    if gt is None:
        return None
    if ids_in_text:
        plan = plan.with_columns(_kept_ids(gt, len(metadata), plan.height))
        if plan["doc_id"].null_count():
            return None
    aio = flatten_texts(texts["aio"], item_base=gt.next_item, content=fields[1],
                        text_content=True, lenient=lenient, walked=walked[1], **options)
    if aio is None or (ids_in_text and not plan["doc_id"].equals(
            _kept_ids(aio, len(metadata), plan.height))):
        return None
    present = {side: plan[f"{side}_line"].is_not_null() for side in ("gt", "aio")}
    status = pl.select(
        pl.when(present["aio"]).then(pl.lit("json")).otherwise(pl.lit("missing"))
    ).to_series()
    if aio.code_blocks:
        status = status.scatter(aio.code_blocks, "code_block")
    table = pl.DataFrame({
        "doc_id": plan["doc_id"],
        "gt_present": present["gt"],
        "aio_present": present["aio"],
        "aio_parse_status": status,
        "gt_line": plan["gt_line"],
        "aio_line": plan["aio_line"],
        "safety": pl.repeat(1.0, plan.height, dtype=pl.Float64, eager=True),
    }, schema=PAIR_SCHEMA).with_columns(_metadata_columns(metadata, plan.height, gt, aio,
                                                          own_metadata or {}))
    declined = sorted({*gt.declined, *aio.declined, *in_python_also})
    if not declined:
        return Pairs(table, [], [], files=dict(files), flat=(gt, aio))
    if in_python is None or len(declined) == plan.height or not table["doc_id"].is_unique().all():
        return None  # the whole batch by the Python path
    python = in_python(plan[declined])
    return _with_python_pairs(table, (gt, aio), declined, python, empty_containers_are_null)


def _kept_ids(flat: Flattened, name: int, n: int) -> pl.Series:
    """The doc_id of each of ``n`` documents a walk kept (``file_ranges.walk_lines``: the
    metadata rows named ``name``); null where a record has none."""
    rows = flat.metadata.filter(pl.col("name") == name)
    return pl.repeat(None, n, dtype=pl.String, eager=True).alias("doc_id").scatter(
        rows["doc"], rows["text"])


def _with_python_pairs(table: pl.DataFrame, flat: tuple[Flattened, Flattened],
                       declined: list[int], python: Pairs, empty_containers_are_null: bool
                       ) -> Pairs:
    """One batch from the pairs the kernel read (``table`` and ``flat``, the declined
    positions left out) and those read by the Python path (``python``: the declined rows of the
    plan, in order, less any :func:`build_pairs` left out), as the Python path would have made
    it for the whole batch: the pairs in plan order, each side's leaves in document order and
    its items numbered in document order (GT from 0, AIO after it), the Python pairs' error
    rows."""
    from .flatten import combined, flatten

    indexed = table.with_row_index("_p")
    # each Python pair's plan position (doc_ids are unique in a batch)
    taken = python.table.select("doc_id").join(indexed.select("doc_id", "_p"), on="doc_id",
                                               how="left", maintain_order="left")["_p"]
    kept = indexed.filter(~pl.col("_p").is_in(declined))
    rows = pl.concat([kept, python.table.with_columns(taken).select(kept.columns)]).sort("_p")
    # plan position -> position in the batch (the pairs build_pairs left out have none)
    renumber = pl.repeat(-1, table.height, dtype=pl.Int64, eager=True).scatter(
        rows["_p"], pl.int_range(rows.height, eager=True))
    gt_py = flatten(python.gt, empty_containers_are_null=empty_containers_are_null,
                    item_base=flat[1].next_item)
    aio_py = flatten(python.aio, empty_containers_are_null=empty_containers_are_null,
                     item_base=gt_py.next_item)
    at_plan = taken.cast(pl.Int64)
    gt = combined(flat[0], gt_py, renumber, renumber.gather(at_plan), declined, 0)
    aio = combined(flat[1], aio_py, renumber, renumber.gather(at_plan), declined, gt.next_item)
    return Pairs(rows.drop("_p"), [], [], list(python.errors), files=python.files,
                 flat=(gt, aio))


def _metadata_columns(names: Sequence[str], n: int, gt: Flattened, aio: Flattened,
                      own: Mapping[str, Mapping[str, pl.Series]]) -> list[pl.Series]:
    """Each metadata column of a batch from the kernel's metadata rows, or from a side's own
    column (``own``) of that name: the AIO record's value, else the GT record's, as
    :func:`build_pairs` takes it."""
    def value(side: str, flat: Flattened, index: int, name: str) -> pl.Series:
        if name in own.get(side, {}):
            return own[side][name].alias(name)
        rows = flat.metadata.filter(pl.col("name") == index)
        return pl.repeat(None, n, dtype=pl.String, eager=True).alias(name).scatter(
            rows["doc"], rows["text"])

    return [value("aio", aio, index, name).fill_null(value("gt", gt, index, name))
            for index, name in enumerate(names)]


def scan_ndjson(
    path: str, side: str, start: int, stop: int, first_line: int, id_field: str,
    content_field: str | None, strict: bool,
) -> tuple[pl.DataFrame, list[dict]]:
    """Records of one byte range of an NDJSON file (lines numbered from ``first_line``): line,
    offset, length, doc_id, has_id; plus error rows (:func:`scan_range`, then
    :func:`number_range`)."""
    return number_range(scan_range(path, start, stop, id_field, content_field), side,
                        first_line, strict)


@dataclass
class RangeScan:
    """One byte range of an NDJSON file read by the kernel (:func:`scan_range`): its records,
    lines numbered from 1 in the range, and the lines it declined. The range's place in the
    file's line numbers is known only once the ranges before it are scanned
    (:func:`number_range`)."""

    path: str
    start: int
    records: pl.DataFrame
    #: (index from 0 in the range, offset, length) of each line left to the Python path
    declined: list[tuple[int, int, int]]
    line_ends: int
    id_field: str
    content_field: str | None
    #: the range's bytes, kept only while the Python path still has to read some of them
    data: bytes | None


def scan_range(path: str, start: int, stop: int, id_field: str, content_field: str | None,
               early: Future[RangeRead] | None = None) -> RangeScan:
    """Bytes ``[start, stop)`` of an NDJSON file, which end at a line end or the file's end,
    read by the native kernel (:func:`file_ranges.read_range`) without the GIL, so the files
    driver's threads scan side by side, or taken from the ``early`` read the command started
    (:class:`file_ranges.EarlyScan`); with a content field, the records without that member are
    declined, as is every line without the extension."""
    from .flatten import KERNEL
    if KERNEL == "native":
        read = early.result() if early is not None else read_range(path, start, stop, id_field,
                                                                  content_field)
        records, declined, spans = _kernel_records(read.scanned)
        pieces = [(i, a, n) for i, (a, n) in zip(declined, spans, strict=True)]
        data, line_ends = read.data, read.line_ends
    else:  # every line is read in Python
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(stop - start)
        lines = data.split(b"\n")
        starts = itertools.accumulate((len(raw) + 1 for raw in lines), initial=0)
        records, line_ends = pl.DataFrame(schema=_SCAN_COLUMNS), len(lines) - 1
        pieces = [(i, at, len(raw)) for i, (at, raw) in enumerate(zip(starts, lines))]
    # the first range's first record is looked at again if it has no id (_unless_config)
    first_without_id = start == 0 and (records.height == 0 or not records["has_id"][0])
    return RangeScan(path, start, records, pieces, line_ends, id_field, content_field,
                     data if pieces or first_without_id else None)


def number_range(scan: RangeScan, side: str, first_line: int,
                 strict: bool) -> tuple[pl.DataFrame, list[dict]]:
    """A :class:`RangeScan` numbered in its file (its first line is ``first_line``), with the
    declined lines read by :func:`ingest.iter_records`, which writes their error rows."""
    errors = ErrorRows(strict)
    native = scan.records.with_columns(pl.col("line") + (first_line - 1))
    table = native
    if scan.declined:
        in_python = _records_in_python(
            scan.data, [(first_line + i, a, a + n) for i, a, n in scan.declined], side,
            scan.path, scan.id_field, scan.content_field, errors)
        table = pl.concat([native, in_python]).sort("line")
    table = table.with_columns(pl.col("offset") + scan.start)
    if scan.start == 0 and table.height and not table["has_id"][0]:
        table = _unless_config(table, scan.data, side, scan.path, scan.id_field, errors)
    return table.select(list(SCAN_SCHEMA)), errors.rows


def _unless_config(table: pl.DataFrame, data: bytes, side: str, path: str, id_field: str,
                   errors: ErrorRows) -> pl.DataFrame:
    """The scan of a file's first range less its first record when that record, without an
    id, is a jsoneval config (:func:`_split_record`; its error row says so): a config given as
    an input is one object, so its first record is the one to look at, and records of a file
    paired by position are not parsed twice."""
    offset, length, line = table["offset"][0], table["length"][0], table["line"][0]
    try:
        record, _ = _parse_json(data[offset:offset + length])
    except ValueError:
        return table
    problem = _split_record(record, id_field, None)[3]
    if problem is None:
        return table
    errors.add(side, path, line, None, problem)
    return table.slice(1)


def scan_json_array(
    path: str, side: str, id_field: str, content_field: str | None, strict: bool,
) -> tuple[pl.DataFrame, list[dict]]:
    """Records of a JSON-array file as :func:`scan_ndjson` gives those of NDJSON lines, each
    element numbered by its position from 1 as the records of an array always were
    (:func:`_scan_values`).

    A file whose delimiters do not make one array (cut short, a missing comma) is read as
    NDJSON lines, as it always was: NDJSON whose first line starts with '[' is NDJSON; with no
    record on any line it is an :class:`InputFileError` ("not a valid JSON array")."""
    scanned = _scan_values(path, side, id_field, content_field, strict, objects=False)
    if scanned is not None:
        return scanned
    size = Path(path).stat().st_size
    table, rows = scan_ndjson(path, side, 0, size, 1, id_field, content_field, strict)
    if not table.height:
        try:
            _parse_json(Path(path).read_bytes().removeprefix(UTF8_BOM))
            reason = "its elements are not delimited as the kernel reads them"
        except ValueError as exc:
            reason = f"{exc}{_cut_short(exc)}"
        raise InputFileError(f"{path}: not a valid JSON array: {reason}")
    return table, rows


def _cut_short(exc: ValueError) -> str:
    """A hint when the parse of a whole file ran out of text: the file ends inside the array
    (a download or a write stopped early), where the parser names only a position."""
    if isinstance(exc, json.JSONDecodeError) and (
            exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string")):
        return "; the file ends before the array closes (was it cut short?)"
    return ""


def scan_json_objects(
    path: str, side: str, id_field: str, content_field: str | None, strict: bool,
) -> tuple[pl.DataFrame, list[dict]]:
    """Records of a file of pretty-printed objects (DECISIONS 108) as :func:`scan_ndjson`
    gives those of NDJSON lines, each numbered by the line its object starts on
    (:func:`_scan_values`). A file whose brackets do not close (a string never closed throws
    the matching off to its end) is read by the Python path whole (:func:`object_spans`), each
    value that is not JSON cut again, so one bad object costs only itself."""
    scanned = _scan_values(path, side, id_field, content_field, strict, objects=True)
    if scanned is not None:
        return scanned
    data = Path(path).read_bytes()
    errors = ErrorRows(strict)
    table = _records_in_python(data, list(object_spans(data)), side, path, id_field,
                               content_field, errors)
    return table.sort("line").select(list(SCAN_SCHEMA)), errors.rows


#: Bytes of a JSON array or of pretty-printed objects read at a time by :func:`_scan_values`.
VALUES_CHUNK_BYTES = 16 << 20


def _scan_values(
    path: str, side: str, id_field: str, content_field: str | None, strict: bool, *,
    objects: bool, chunk_bytes: int | None = None,
) -> tuple[pl.DataFrame, list[dict]] | None:
    """The records of a JSON array (or, ``objects``, of pretty-printed objects), read
    ``chunk_bytes`` at a time: the kernel finds each value by its brackets, strings and commas
    (``_native.scan_records``) and reads its id as it reads a line's; the batches read the
    values back by offset, as lines. A value the kernel declines is read by
    :func:`iter_records`, so one that is not JSON is its own error row; among objects, one
    that does not parse is cut again (:func:`_object_pieces`), and an object without an id is
    read there too (a config given as input is named so). Only the ids are kept, and a chunk
    holds at most a value cut off at its end besides. None when the file's delimiters do not
    make such values."""
    from .flatten import _native
    errors, parts = ErrorRows(strict), []
    expect, base, carry, n_values, n_lines = 0, 0, b"", 0, 0
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk_bytes or VALUES_CHUNK_BYTES)
            last = not block
            data = carry + block if carry else block
            found = _native.scan_records(data, expect, last, id_field, content_field, objects)
            if found is None:
                return None
            scanned, consumed, expect, n = found
            table, declined, spans = _kernel_records(scanned)
            if objects:  # numbered by line; declined objects and those without an id: Python's
                table = table.with_columns(pl.col("line") + n_lines)
                regions = sorted([(a, a + k) for a, k in spans] + [
                    (a, a + k) for a, k in table.filter(~pl.col("has_id"))
                    .select("offset", "length").iter_rows()])
                table = table.filter(pl.col("has_id"))
                newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n")) \
                    if regions else None
                pieces = [(n_lines + int(np.searchsorted(newlines, a)) + 1, a, b)
                          for start, end in regions for a, b in _object_pieces(data, start, end)]
                n_lines += data.count(b"\n", 0, consumed)
            else:  # numbered by position
                table = table.with_columns(pl.col("line") + n_values)
                pieces = [(n_values + i + 1, a, a + k)
                          for i, (a, k) in zip(declined, spans, strict=True)]
            in_python = _records_in_python(data, pieces, side, path, id_field, content_field,
                                           errors)
            parts.append(pl.concat([table, in_python]).with_columns(pl.col("offset") + base))
            n_values += n
            carry, base = data[consumed:], base + consumed
            if last:
                break
    table = pl.concat(parts).sort("line")
    return table.select(list(SCAN_SCHEMA)), errors.rows


def _kernel_records(scanned: tuple) -> tuple[pl.DataFrame, list[int], list[tuple[int, int]]]:
    """A kernel scan (``_native.scan_range``, ``scan_records``) as scan rows numbered from 1,
    and the numbers (from 0) and (offset, length) of the texts it left to the Python path.
    The rows come as an Arrow table the kernel built without the GIL (as Python lists, they
    held it for about 5 ms a 16 MB range, which the other threads waited out)."""
    table, declined, spans = scanned
    table = pl.DataFrame(table).cast(_SCAN_COLUMNS)
    return table.with_columns(pl.col("line") + 1), declined, spans


def _records_in_python(data: bytes, pieces: list[tuple[int, int, int]], side: str, path: str,
                       id_field: str, content_field: str | None,
                       errors: ErrorRows) -> pl.DataFrame:
    """The records of (line, start, stop) pieces of ``data`` read by :func:`iter_records`
    (their error rows go to ``errors``), as scan rows."""
    at = [(0, 0)]

    def texts() -> Iterator[tuple[int, bytes]]:
        for line, a, b in pieces:
            at[0] = (a, b - a)  # iter_records yields a text's record before it reads the next
            yield line, data[a:b]

    kept = [(r.line, *at[0], r.doc_id, r.has_id)
            for r in iter_records(texts(), side, path, id_field, content_field, errors)]
    return pl.DataFrame(kept, schema=_SCAN_COLUMNS, orient="row")


#: How each kind of text file (:func:`text_kind`) is scanned from its start to its end.
_WHOLE_SCANS = {"array": scan_json_array, "objects": scan_json_objects}


def scan_whole_file(
    path: str, side: str, id_field: str, content_field: str | None, strict: bool,
) -> tuple[pl.DataFrame, list[dict]]:
    """The records of a whole NDJSON file (:func:`scan_ndjson`), JSON array
    (:func:`scan_json_array`) or file of pretty-printed objects (:func:`scan_json_objects`)."""
    scan = _WHOLE_SCANS.get(text_kind(path))
    if scan is not None:
        return scan(str(path), side, id_field, content_field, strict)
    return scan_ndjson(str(path), side, 0, Path(path).stat().st_size, 1, id_field,
                       content_field, strict)


def read_pairs(
    plan: pl.DataFrame, files: Mapping[str, str | Path], *, id_field: str,
    fields: tuple[str | None, str | None] = (None, None), metadata: Sequence[str] = (),
    strict: bool = False, empty_containers_are_null: bool = False, native: bool = True,
) -> Pairs:
    """The pairs of a pair plan's rows (doc_id and per side line, offset, length into an
    NDJSON file already scanned). Whole records less the id, when ``native`` allows, are
    flattened straight from their text (:func:`pairs_from_texts`), and the pairs of the lines
    the kernel declines are read as Python objects and paired by :func:`build_pairs`, which
    writes their error and warning rows (``Pairs.errors``); without ``native``, all are."""
    names = {s: str(p) for s, p in files.items()}

    def in_python(rows: pl.DataFrame) -> Pairs:
        recs = {}
        for side, content_field in zip(("gt", "aio"), fields, strict=True):
            recs[side] = read_records_at(
                files[side], side, *(rows[f"{side}_{c}"].to_list()
                                     for c in ("line", "offset", "length")),
                id_field, content_field,
            )
            if metadata:
                take_metadata([r for r in recs[side] if r is not None], metadata,
                              content_field is None, names[side])
        return build_pairs(
            zip(rows["doc_id"].to_list(), recs["gt"], recs["aio"], strict=True),
            ErrorRows(strict), files=names, metadata=metadata,
        )

    # a content field that is also the id or a metadata member: the Python path's own rules
    if native and not {id_field, *metadata} & set(fields):
        texts = {side: read_spans(files[side], plan[f"{side}_offset"], plan[f"{side}_length"])
                 for side in ("gt", "aio")}
        pairs = pairs_from_texts(plan, texts, id_field, empty_containers_are_null, names,
                                 metadata, fields, in_python)
        if pairs is not None:
            return pairs
    return in_python(plan)


def read_sorted_pairs(plan: pl.DataFrame, walked: tuple[tuple, tuple],
                      files: Mapping[str, str | Path], *, id_field: str,
                      empty_containers_are_null: bool = False) -> Pairs | None:
    """The pairs of a batch of the pass over sorted files (:mod:`sorted_pass`): line i of one
    file with line i of the other (``plan``: per side line, offset and length; ``walked``:
    both sides as ``file_ranges.walk_lines`` walks them), each pair's doc_id the id both its
    records hold, as :func:`read_pairs` reads them; None when a record has no id, the two
    differ, or the kernel declines a line."""
    return pairs_from_texts(plan, {"gt": None, "aio": None}, id_field, empty_containers_are_null,
                            {side: str(path) for side, path in files.items()}, ids_in_text=True,
                            walked=walked)


def plan_ndjson(
    gt: str | Path, aio: str | Path, id_field: str, strict: bool,
    fields: tuple[str | None, str | None] = (None, None),
) -> tuple[pl.DataFrame, list[dict], dict[str, int]]:
    """The pair plan of two NDJSON files or JSON arrays read whole in this process
    (:func:`scan_whole_file`, then :func:`pair_records`): its rows for :func:`read_pairs`, the
    error rows of reading and pairing, and the records read per side."""
    errors = ErrorRows(strict)
    tables, rows = {}, []
    for side, path, content_field in (("gt", gt, fields[0]), ("aio", aio, fields[1])):
        tables[side], side_rows = scan_whole_file(str(path), side, id_field, content_field,
                                                  strict)
        rows += side_rows
    n_read = {side: tables[side].height + sum(
        1 for e in rows if e["source"] == side and e["severity"] == "error") for side in tables}
    errors.rows = rows
    plan = pair_records(tables["gt"], tables["aio"], id_field,
                        {"gt": str(gt), "aio": str(aio)}, errors)
    return plan, errors.rows, n_read


@dataclass
class TablePlan:
    """Two tables' JSON-text columns paired without parsing the texts in Python: the in-memory
    driver's reading of table inputs (Parquet, Arrow, Polars, DuckDB results), as
    :func:`plan_ndjson` is of NDJSON files.

    ``plan`` has ``doc_id`` and per side ``line`` (the 1-based row) and ``row``; ``texts``
    the UTF-8 text of each row of each side: the table's own column (Binary: no Python
    object per row until a batch asks for its rows), or for a table file read with ``spill``
    the texts written end to end to a file in that folder (:mod:`table_texts`), which
    :meth:`close` removes. ``records`` are the rows that are not
    JSON as the kernel reads it (``_native.unreadable_texts``: invalid text, NaN, lone
    surrogates, deep nesting) and null cells, read by the Python path when the plan was made:
    their error rows come first, and pairing sees the records :func:`pair_inputs` would.
    ``errors`` and ``n_read`` are those of reading and pairing."""

    plan: pl.DataFrame
    texts: dict[str, ColumnTexts | SpilledTexts]
    records: dict[str, dict[int, Record]]
    files: dict[str, str | None]
    errors: list[dict]
    n_read: dict[str, int]
    #: metadata names, and per side those that are columns of its table, as strings (a
    #: table's own column wins over a member of the same name, which is still not content)
    metadata: list[str] = field(default_factory=list)
    meta_columns: dict[str, dict[str, pl.Series]] = field(default_factory=dict)
    #: per side, the member of each cell's record holding its document (None: the cell)
    fields: tuple[str | None, str | None] = (None, None)
    #: the folder of spilled texts (None: every table was in memory)
    spill: Path | None = None

    def close(self) -> None:
        """Remove the spilled texts."""
        remove_spill(self.spill)

    def read_pairs(self, plan: pl.DataFrame, *, strict: bool = False,
                   empty_containers_are_null: bool = False) -> Pairs:
        """The pairs of some of the plan's rows: flattened from their text where it is JSON
        and the walk takes it (no repeated key, no number beyond a double, object roots); the
        other pairs (a cell read in Python when the plan was made, or one the walk declines)
        read as Python records and paired by :func:`build_pairs` (its error and warning rows
        in ``Pairs.errors``), pair by pair (:func:`pairs_from_texts`)."""
        sides = ("gt", "aio")
        texts = {side: self.texts[side].take(plan[f"{side}_row"]) for side in sides}

        def in_python(part: pl.DataFrame) -> Pairs:
            doc_ids = part["doc_id"].to_list()
            recs = {}
            for side in sides:
                recs[side] = [self._record(side, row, doc_id) for row, doc_id in zip(
                    part[f"{side}_row"].to_list(), doc_ids, strict=True)]
                if self.metadata:  # as _records_from_table and pair_inputs read them
                    for r in recs[side]:
                        if r is not None:
                            r.meta = {name: column[r.line - 1] for name, column
                                      in self.meta_columns.get(side, {}).items()}
                    take_metadata([r for r in recs[side] if r is not None], self.metadata,
                                  self._field(side) is None, self.files[side])
            return build_pairs(zip(doc_ids, recs["gt"], recs["aio"], strict=True),
                               ErrorRows(strict), files=self.files, metadata=self.metadata)

        aside = pl.any_horizontal(
            pl.col(f"{side}_row").is_in(pl.Series(list(self.records[side]), dtype=pl.Int64)
                                        .implode()) for side in sides)
        read_aside = plan.select(aside.arg_true()).to_series().to_list()
        own = {side: {name: column.gather(plan[f"{side}_row"])
                      for name, column in self.meta_columns.get(side, {}).items()}
               for side in sides}
        pairs = pairs_from_texts(plan, texts, None, empty_containers_are_null, self.files,
                                 self.metadata, self.fields, in_python=in_python,
                                 in_python_also=read_aside, own_metadata=own)
        return in_python(plan) if pairs is None else pairs

    def _record(self, side: Side, row: int | None, doc_id: str) -> Record | None:
        """The Python record of a row: read when the plan was made, else parsed now (it is
        JSON, so it gets no error row)."""
        if row is None:
            return None
        if row in self.records[side]:
            return self.records[side][row]
        raw = self.texts[side].one(row)
        parsed, notes = _parse_json(raw)
        # the plan read aside the records without their content member
        content, _ = _content_of(parsed, self._field(side))
        return Record(doc_id, content, row + 1, True, raw, notes, parsed)

    def _field(self, side: Side) -> str | None:
        return self.fields[0 if side == "gt" else 1]


def plan_tables(gt: Any, aio: Any, *, id_field: str, json_column: str | None,
                strict: bool, metadata: Sequence[str] = (),
                content_field: str | tuple[str | None, str | None] | None = None,
                spill: Path | None = None) -> TablePlan | None:
    """The :class:`TablePlan` of two table inputs whose JSON columns hold text (with
    ``content_field``, records holding the documents, as :func:`pair_inputs` reads them);
    None for other inputs (a struct column, a file that is not a table, no native kernel), for
    a nested metadata column, and for a content field that is also a metadata name, which
    :func:`pair_inputs` reads. With ``spill`` (a folder), table files larger than
    :data:`table_texts.SPILL_ABOVE` in all are read a record batch at a time and their texts
    written to a new folder in ``spill`` (:mod:`table_texts`): call the plan's ``close`` when
    done with it."""
    from .flatten import KERNEL

    by_batch = spill is not None
    rows, json_column = _row_columns(json_column, id_field, metadata)
    sources = {side: table_source(source, by_batch=by_batch, side=side, rows=rows)
               for side, source in (("gt", gt), ("aio", aio))}
    fields = content_fields(content_field)
    if KERNEL != "native" or None in sources.values() or set(fields) & set(metadata):
        return None
    columns = {side: _json_column(table, side, id_field, json_column)
               for side, (table, _) in sources.items()}
    if any(sources[side][0].schema[columns[side]] != pl.String for side in sources):
        return None
    meta_names = {side: [name for name in metadata
                         if name in table.columns and name != columns[side]]
                  for side, (table, _) in sources.items()}
    if any(table.schema[name].is_nested() or table.schema[name] == pl.Object
           for side, (table, _) in sources.items() for name in meta_names[side]):
        return None
    on_disk = [table for table, _ in sources.values() if isinstance(table, TableFile)]
    if sum(table.size for table in on_disk) <= table_texts.SPILL_ABOVE:
        sources = {side: (table.read_all() if isinstance(table, TableFile) else table, name)
                   for side, (table, name) in sources.items()}
    folder = spill_folder(spill) if any(
        isinstance(table, TableFile) for table, _ in sources.values()) else None
    try:
        return _plan_tables(sources, columns, meta_names, id_field, fields, strict,
                            list(metadata), folder)
    except BaseException:
        remove_spill(folder)
        raise


def _plan_tables(sources: dict[str, tuple[pl.DataFrame | TableFile, str | None]],
                 columns: dict[str, str], meta_names: dict[str, list[str]], id_field: str,
                 fields: tuple[str | None, str | None], strict: bool, metadata: list[str],
                 folder: Path | None) -> TablePlan:
    errors = ErrorRows(strict)
    tables, texts, records, files, n_read, meta_columns = {}, {}, {}, {}, {}, {}
    for side, (table, files[side]) in sources.items():
        has_id = id_field in table.columns
        labels = [*([id_field] if has_id else []), *meta_names[side]]
        own = table.select(labels) if isinstance(table, pl.DataFrame) else table.read(labels)
        # as build_pairs writes them: once, not per batch
        meta_columns[side] = {name: _as_python_str(own[name]) for name in meta_names[side]}
        ids = own[id_field].cast(pl.String) if has_id else pl.repeat(
            None, table.height, dtype=pl.String, eager=True)
        member = fields[0 if side == "gt" else 1]
        records[side], dropped = {}, []

        def read_aside(start: int, cells: pl.Series) -> None:
            """Null cells and text that is not JSON, in row order: read as pair_inputs
            reads them (called within this side's iteration, cells from row ``start``)."""
            aside = sorted({*cells.is_null().arg_true().to_list(),
                            *_unreadable_rows(cells, member)})
            for i in aside:
                row = start + i
                rec = _record_from_text(cells[i], row + 1, ids[row], has_id, side,
                                        columns[side], errors, member, files[side])
                if rec is None:
                    dropped.append(row)
                else:
                    records[side][row] = rec

        if isinstance(table, pl.DataFrame):
            texts[side] = ColumnTexts(table[columns[side]])
            read_aside(0, table[columns[side]])
        else:
            assert folder is not None
            texts[side] = table_texts.spill_file(table, columns[side], folder, read_aside)
        tables[side] = pl.DataFrame({
            "line": pl.int_range(1, table.height + 1, dtype=pl.Int64, eager=True),
            "doc_id": ids,
            "has_id": pl.repeat(has_id, table.height, dtype=pl.Boolean, eager=True),
            "row": pl.int_range(0, table.height, dtype=pl.Int64, eager=True),
        }).filter(~pl.col("row").is_in(pl.Series(dropped, dtype=pl.Int64).implode()))
        n_read[side] = table.height  # each row is a record or an error row
    plan = pair_records(tables["gt"], tables["aio"], id_field, files, errors)
    return TablePlan(plan, texts, records, files, errors.rows, n_read, metadata,
                     meta_columns, fields, folder)


def _unreadable_rows(texts: pl.Series, content_field: str | None) -> list[int]:
    """The rows of a column of JSON text that :func:`_native.unreadable_texts` finds, read
    from the column's Arrow buffers (no Python object per cell)."""
    from .flatten import _native

    return _native.unreadable_texts(texts.alias("text").to_frame(), content_field)


def _as_python_str(column: pl.Series) -> pl.Series:
    """Each value's ``str()``, which :func:`build_pairs` writes for a metadata value read in
    Python (null stays null): a string or integer column's cast, any other's (floats, booleans,
    dates: ``True``, ``1e+16``, Python's spelling) per value in Python."""
    if column.dtype == pl.String or column.dtype.is_integer():
        return column.cast(pl.String)
    return pl.Series(column.name, [None if v is None else str(v) for v in column.to_list()],
                     dtype=pl.String)


def metadata_names(metadata: str | Sequence[str], by: str | Sequence[str] = (),
                   partition_by: str | None = None, *, id_field: str) -> list[str]:
    """A run's metadata columns: those named, then the slices' and the partition's (a slice
    or a partition needs its column), each once, checked. One name may be given as a string
    (``metadata="model"`` is one column, not five of one letter)."""
    names = list(dict.fromkeys([*name_list(metadata), *name_list(by),
                                *([partition_by] if partition_by else [])]))
    check_metadata_names(names, id_field)
    return names


def name_list(names: str | Sequence[str]) -> list[str]:
    """Names given as a list, or one name as a string (not a sequence of letters)."""
    return [names] if isinstance(names, str) else list(names)


def check_metadata_names(metadata: Sequence[str], id_field: str) -> None:
    if id_field in metadata:
        raise InputFileError(f"metadata names the id field '{id_field}': it is in every table "
                             "already, as doc_id; drop it from the metadata")


def take_metadata(
    records: list[Record], names: Sequence[str], from_content: bool, file: str | None = None
) -> None:
    """Move the metadata members of each record out of its content (or read them from the whole
    record when a content field holds the document). A member holding an object or a list is
    content that would be scored, not a label: naming it is an error, not a silent removal."""
    wanted = set(names)
    for r in records:
        source = r.parsed if isinstance(r.parsed, dict) else None
        if source is not None:
            for n in names:
                if isinstance(source.get(n), dict | list):
                    kind = "an object" if isinstance(source[n], dict) else "a list"
                    raise InputFileError(
                        f"{file or 'input'}, line {r.line}: metadata '{n}' holds {kind}, a scored "
                        "member; metadata must be a string, number or boolean (drop it from "
                        "the metadata to score it)"
                    )
            # a table's own metadata column wins over a member of the same name
            r.meta.update({n: source[n] for n in names if n in source and n not in r.meta})
        if from_content and isinstance(r.content, dict) and wanted & r.content.keys():
            r.content = {k: v for k, v in r.content.items() if k not in wanted}


def _n_read(records: list[Record], side: Side, errors: ErrorRows) -> int:
    """Records read = records kept + records already turned into error rows."""
    lost = sum(1 for e in errors.rows if e["source"] == side and e["severity"] == "error")
    return len(records) + lost


def _warn_inexact(rec: Record, side: Side, file, doc_id, errors: ErrorRows) -> None:
    """Warnings for values not kept exactly and for duplicate keys (last one wins)."""
    for note in rec.notes:
        errors.add(side, file, rec.line, doc_id, note, severity="warning")
    if rec.raw is None:
        return
    dups = _duplicate_keys(rec.raw, rec.parsed)
    if dups:
        errors.add(
            side, file, rec.line, doc_id,
            f"duplicate key(s) {', '.join(map(repr, sorted(set(dups))))} in one object; "
            "the last value was used",
            severity="warning",
        )


def _kind(value: Any) -> str:
    return {
        list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _encoded_twice(value: Any) -> str:
    """A hint for a root that is a string holding a JSON object: the record was encoded twice
    (``json.dumps`` of its JSON text), which reads as a string, not a document."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            if isinstance(json.loads(value), dict):
                return " holding a JSON object (was the record encoded twice?)"
        except ValueError:
            pass
    return ""


def check_safety_columns(table: pl.DataFrame) -> None:
    if not {"doc_id", "safety"} <= set(table.columns):
        raise InputError(f"safety table needs doc_id and safety columns; got {table.columns}")


def safety_lookup(safety: Any, doc_ids: list[str], gt: list, aio: list) -> list[float]:
    """Per-document safety (SPEC §7): a mapping doc_id -> score, a table with doc_id and safety
    columns, a callable (gt, aio) -> score, or None (1.0 everywhere)."""
    if safety is None:
        return [1.0] * len(doc_ids)
    if callable(safety):
        values = [safety(g, a) for g, a in zip(gt, aio, strict=True)]
    else:
        if isinstance(safety, pl.DataFrame):
            check_safety_columns(safety)
            safety = dict(zip(safety["doc_id"].cast(pl.String), safety["safety"], strict=True))
        if not isinstance(safety, Mapping):
            raise InputError("safety must be a mapping, a table or a callable; got "
                             f"{type(safety).__name__}")
        values = [safety.get(d, 1.0) for d in doc_ids]
    numbers = [real_number(v) for v in values]  # a numpy float32 or a Decimal too
    for d, v, number in zip(doc_ids, values, numbers, strict=True):
        if number is None or not 0.0 <= number <= 1.0:
            raise InputError(f"safety of document '{d}' must be a number in [0, 1]; got {v!r}")
    return numbers
