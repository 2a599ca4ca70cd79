"""Parsed documents -> long leaves table and list-item table (SPEC §2).

This module has one output contract, so a faster kernel can replace it without touching the rest:

``leaves`` (one row per leaf of one side)
    doc (UInt32)       position of the document pair in the batch
    item (Int64)       innermost list-of-records item holding the leaf, -1 for none
    suffix (str)       the path below that item (the whole path when item = -1)
    attribute (str)    the path with every list index written ``[]``
    key (str)          bare field name: the raw key of the last object member on the path
    member (str)       the key when the leaf is a direct member of its item, else null
    kind (str)         null, bool, int, float, string, array, object
    text (str)         canonical text (SPEC §1); null only for JSON null and NaN
    is_null (bool)     the §1 null test (with ``empty_containers_are_null`` applied)
    empty_array (bool) the value is ``[]``: dropped later if the other side has records there

``items`` (one row per item of a list of records)
    item (Int64), doc (UInt32), parent (Int64, -1 at top), depth (Int32, 1 at top),
    list_attribute (str), list_suffix (str: the list's path below the parent item), index (Int32)

Items are numbered from ``item_base`` so that two sides (or two batches) never share ids.
Indices are the side's own positions; alignment (align.py) turns AIO indices into final ones.

``members`` (one row per member of an item whose value is a non-empty object or list of records)
    item (Int64), member (str), kind (str), text (str: canonical JSON), is_null (bool, false)

``errors`` lists ``(position, message)`` for each document left out; ``next_item`` is the first
unused item id (ids drawn by a document that was left out stay used).

Two kernels produce these tables, row for row: the Python walker (:func:`flatten_python`, the
reference) and the native kernel (Rust, ``src/``, module ``jsoneval_polars._native``), which
takes the documents either as Python objects (:func:`flatten_native`) or as JSON text
(:func:`flatten_texts`, no Python objects at all) and returns Arrow tables through the PyCapsule
interface. The native kernel vouches only for what it handles exactly; for anything else (a
value with no JSON meaning, a repeated key, text serde_json refuses...) it declines and the
Python walker flattens the batch, so messages and warnings have one definition.
:func:`flatten` runs the kernel named by :data:`KERNEL`: the native one, unless
``JSONEVAL_PURE_PYTHON=1``.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from .python_values import json_value
from .textfile import SHRUNK, read_exactly
from .values import TooDeep, canonical_container, canonical_float

from .native import KERNEL, SEGMENT, _native  # noqa: F401 -- flatten.KERNEL is what runs

LEAF_SCHEMA = {
    "doc": pl.UInt32,
    "item": pl.Int64,
    "suffix": pl.String,
    "attribute": pl.String,
    "key": pl.String,
    "member": pl.String,
    "kind": pl.String,
    "text": pl.String,
    "is_null": pl.Boolean,
    "empty_array": pl.Boolean,
}
ITEM_SCHEMA = {
    "item": pl.Int64,
    "doc": pl.UInt32,
    "parent": pl.Int64,
    "depth": pl.Int32,
    "list_attribute": pl.String,
    "list_suffix": pl.String,
    "index": pl.Int32,
}

_NEEDS_QUOTE = frozenset('.[]"')
_segment_cache: dict[str, tuple[str, str]] = {}


def _segments(key: str) -> tuple[str, str]:
    """(segment at the start of a path, segment after a parent) for an object key."""
    seg = _segment_cache.get(key)
    if seg is None:
        if not key.isascii():
            _check_encodable(key, "an object key")
        if key == "" or any(
            c in _NEEDS_QUOTE or c.isspace() or ord(c) < 32 or ord(c) == 127 for c in key
        ):
            quoted = "[" + json.dumps(key, ensure_ascii=False) + "]"
            seg = (quoted, quoted)
        else:
            seg = (key, "." + key)
        if len(_segment_cache) < 100_000:
            _segment_cache[key] = seg
    return seg


def member_segment(key: str) -> str:
    """How a member ``key`` continues a path: ``.key``, or ``["the key"]`` quoted."""
    return _segments(key)[1]


_decoder = json.JSONDecoder()


def path_keys(path: str) -> list[str]:
    """The object keys along a path or attribute, unquoted (list indices skipped).

    >>> path_keys('line_items[].description'), path_keys('m["n[0]"]')
    (['line_items', 'description'], ['m', 'n[0]'])
    """
    keys, i, n = [], 0, len(path)
    while i < n:
        if path.startswith('["', i):
            key, i = _decoder.raw_decode(path, i + 1)
            keys.append(key)
            i += 1  # the closing bracket
        elif path[i] == "[":
            i = path.index("]", i) + 1
        elif path[i] == ".":
            i += 1
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            keys.append(path[i:j])
            i = j
    return keys


class UnrepresentableValue(ValueError):
    """A Python value with no JSON meaning (a set, a datetime, a lone surrogate...)."""


def _check_encodable(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UnrepresentableValue(
            f"string at '{where}' holds a lone surrogate and cannot be stored as UTF-8"
        ) from None


@dataclass
class Flattened:
    leaves: pl.DataFrame
    items: pl.DataFrame
    errors: list[tuple[int, str]]  # (doc position, message) for documents left out
    next_item: int
    # item members whose value is a non-empty object or list of records (those are not leaves
    # themselves): item, member, kind, text (canonical JSON), is_null
    members: pl.DataFrame | None = None
    # metadata members read from the JSON text (flatten_texts' ``metadata``): doc, name (an
    # index into the names), text (Python's str() of the value; a null value has no row)
    metadata: pl.DataFrame | None = None
    # documents a lenient flatten_texts left out for the Python path, by position
    declined: list[int] = field(default_factory=list)
    # documents whose answer text flatten_texts read from a fenced block (SPEC §8's
    # code_block), by position; the other answer texts were JSON as a whole
    code_blocks: list[int] = field(default_factory=list)


MEMBER_SCHEMA = {
    "item": pl.Int64, "member": pl.String, "kind": pl.String, "text": pl.String,
    "is_null": pl.Boolean,
}
_ROW_COLUMNS = ("item", "suffix", "attribute", "key", "member", "kind", "text")


def flatten(
    docs: Sequence[dict | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """Flatten the root objects in ``docs`` (None = no document on this side).

    A document that cannot be flattened (an unrepresentable value, nesting deeper than Python's
    recursion limit) contributes nothing and is reported in ``errors`` by position.
    Item members holding a container are also kept, as canonical JSON in ``members``, for
    list alignment (DECISIONS.md 9). Runs the kernel named by :data:`KERNEL`.
    """
    if KERNEL == "native":
        return flatten_native(docs, empty_containers_are_null=empty_containers_are_null,
                              item_base=item_base)
    return flatten_python(docs, empty_containers_are_null=empty_containers_are_null,
                          item_base=item_base)


def flatten_python(
    docs: Sequence[dict | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """:func:`flatten` by the Python walker, the reference the native kernel is tested against.

    Written for speed as Python goes: one tuple per leaf, scalars handled inline without a call,
    null flags derived afterwards.
    """
    rows: list[tuple] = []
    add = rows.append
    items: list[tuple] = []
    add_item = items.append
    next_item = item_base
    doc_pos = 0
    cache = _segment_cache
    extra: list[tuple] = []

    def walk_dict(d: dict, suffix: str, attr: str, item: int, depth: int, root: bool,
                  item_root: bool):
        for k, v in d.items():
            if type(k) is not str:
                raise UnrepresentableValue(f"object key {k!r} at '{suffix}' is not a string")
            seg = cache.get(k) or _segments(k)
            s = suffix + seg[0 if root else 1]
            at = attr + seg[1 if attr else 0]
            mem = k if item_root else None
            t = type(v)
            if t is str:
                text = " ".join(v.split()).lower()
                if not text.isascii():
                    _check_encodable(text, s)
                add((item, s, at, k, mem, "string", text))
            elif t is dict:
                if v:
                    if item_root:  # no leaf itself, but may be a match field (DECISIONS.md 9)
                        extra.append((item, k, "object", _container_text(v, s), False))
                    walk_dict(v, s, at, item, depth, False, False)
                else:
                    add((item, s, at, k, mem, "object", "{}"))
            elif t is list or t is tuple:
                walk_list(v, s, at, k, mem, item, depth)
            elif v is None:
                add((item, s, at, k, mem, "null", None))
            elif t is bool:
                add((item, s, at, k, mem, "bool", "true" if v else "false"))
            elif t is int:
                add((item, s, at, k, mem, "int", str(v)))
            elif t is float:
                add((item, s, at, k, mem, "float", canonical_float(v)))
            elif t is TooDeep:  # a member too deep for the parser (ingest._parse_json)
                raise RecursionError
            else:
                raise UnrepresentableValue(
                    f"value of type {t.__name__} at '{s}' has no JSON meaning"
                )

    def walk_list(v, s: str, at: str, k: str, mem, item: int, depth: int):
        nonlocal next_item
        if v and all(type(x) is dict for x in v):
            if mem is not None:  # a list of records as an item member: a possible match field
                extra.append((item, k, "array", _container_text(v, s), False))
            inner = at + "[]"
            for i, x in enumerate(v):
                iid = next_item
                next_item += 1
                add_item((iid, doc_pos, item, depth + 1, at, s, i))
                if x:
                    walk_dict(x, "", inner, iid, depth + 1, False, True)
                else:
                    add((iid, "", inner, k, None, "object", "{}"))
        elif not v:
            add((item, s, at, k, mem, "array", "[]"))
        elif all(isinstance(x, dict) for x in v):  # records once read as JSON: converted
            odd = next(x for x in v if type(x) is not dict)
            raise UnrepresentableValue(f"value of type {type(odd).__name__} at '{s}' has no "
                                       "JSON meaning")
        else:
            add((item, s, at, k, mem, "array", _array_text(v, s)))

    errors: list[tuple[int, str]] = []
    doc_index: list[int] = []
    counts: list[int] = []
    for pos, doc in enumerate(docs):
        if doc is None:
            continue
        doc_pos = pos
        n_rows, n_items, n_extra = len(rows), len(items), len(extra)
        first_item = next_item
        try:
            try:
                walk_dict(doc, "", "", -1, 0, True, False)
            except UnrepresentableValue:
                converted = _json_document(doc)
                if converted is doc:
                    raise
                # an enum, a date, a numpy number...: walked again as its JSON
                del rows[n_rows:], items[n_items:], extra[n_extra:]
                next_item = first_item
                walk_dict(converted, "", "", -1, 0, True, False)
        except UnrepresentableValue as exc:
            del rows[n_rows:], items[n_items:], extra[n_extra:]
            errors.append((pos, str(exc)))
            continue
        except RecursionError:
            del rows[n_rows:], items[n_items:], extra[n_extra:]
            errors.append((pos, "document is nested too deeply to score"))
            continue
        doc_index.append(pos)
        counts.append(len(rows) - n_rows)

    columns = list(zip(*rows, strict=True)) if rows else [()] * len(_ROW_COLUMNS)
    leaves = pl.DataFrame(
        dict(zip(_ROW_COLUMNS, columns, strict=True)),
        schema={c: LEAF_SCHEMA[c] for c in _ROW_COLUMNS},
    )
    doc = np.repeat(np.asarray(doc_index, dtype=np.uint32), np.asarray(counts, dtype=np.int64))
    kind, text = pl.col("kind"), pl.col("text")
    container_null = (
        kind.is_in(["array", "object"]) & text.is_in(["[]", "{}"])
        if empty_containers_are_null
        else pl.lit(False)
    )
    leaves = leaves.with_columns(
        pl.Series("doc", doc, dtype=pl.UInt32),
        (text.is_null() | ((kind == "string") & (text == "")) | container_null).alias("is_null"),
        ((kind == "array") & (text == "[]")).alias("empty_array"),
    ).select(list(LEAF_SCHEMA))
    item_table = pl.DataFrame(
        dict(zip(ITEM_SCHEMA, zip(*items, strict=True), strict=True)) if items else None,
        schema=ITEM_SCHEMA,
    )
    members = pl.DataFrame(
        dict(zip(MEMBER_SCHEMA, zip(*extra, strict=True), strict=True)) if extra else None,
        schema=MEMBER_SCHEMA,
    )
    return Flattened(leaves, item_table, errors, next_item, members)


def _container_text(value: list | tuple | dict, where: str) -> str:
    try:
        return canonical_container(value)
    except (TypeError, ValueError) as exc:
        raise UnrepresentableValue(
            f"array at '{where}' holds a value with no JSON meaning: {exc}"
        ) from None


def _array_text(value: list | tuple, where: str) -> str:
    """Canonical text of an array leaf. json.dumps keeps lone surrogates, which no table can
    store; a container member needs no such check, the walk below it finds them."""
    text = _container_text(value, where)
    if not text.isascii():
        _check_encodable(text, where)
    return text


_SEGMENT = SEGMENT  # native.SEGMENT, here for the tests to make small


def flatten_native(
    docs: Sequence[dict | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """:func:`flatten` by the native kernel; same tables as :func:`flatten_python`, which runs
    instead when the kernel declines the batch."""
    tables, next_item, *_ = _native.flatten_objects(
        docs if isinstance(docs, list) else list(docs), item_base, empty_containers_are_null,
        _SEGMENT,
    )
    if tables is None:
        converted = [_json_document(doc) for doc in docs]
        if any(new is not old for new, old in zip(converted, docs, strict=True)):
            # an enum, a date, a numpy number...: the kernel takes the documents as their JSON
            docs = converted
            tables, next_item, *_ = _native.flatten_objects(
                docs, item_base, empty_containers_are_null, _SEGMENT)
    if tables is None:
        return flatten_python(docs, empty_containers_are_null=empty_containers_are_null,
                              item_base=item_base)
    return _flattened(tables, next_item)


def _json_document(doc: dict | None) -> dict | None:
    """A document as its JSON (python_values.json_value): the same object when nothing in it
    has another type; a value with no JSON meaning is kept, for the walker to name."""
    try:
        return json_value(doc, keep_unknown=True)
    except RecursionError:  # the walker reports the depth
        return doc


@dataclass(frozen=True)
class TextSpans:
    """JSON texts as spans of one buffer read from a file: text ``i`` is the ``lengths[i]``
    bytes at file offset ``offsets[i]``, and ``buffer`` holds the file from offset ``base``
    (None for both: no document). The kernel reads them in place, with no bytes object per
    text (:func:`read_spans`)."""

    buffer: bytes
    base: int
    offsets: list[int | None]
    lengths: list[int | None]

    def texts(self) -> list[bytes | None]:
        return [None if o is None else self.buffer[o - self.base: o - self.base + n]
                for o, n in zip(self.offsets, self.lengths, strict=True)]


def read_spans(
    path: str | Path, offsets: Sequence[int | None] | pl.Series,
    lengths: Sequence[int | None] | pl.Series,
) -> TextSpans:
    """The lines at these byte offsets of a file already scanned, as spans of one buffer. A
    batch of an aligned file is one contiguous range, read at once; the lines of a batch
    spread over the file are read one by one into the buffer."""
    # the range's bounds in one Polars pass, not four Python loops over the batch's lines
    spans = pl.DataFrame([pl.Series("o", offsets, dtype=pl.Int64),
                          pl.Series("n", lengths, dtype=pl.Int64)])
    lo, hi, total = spans.filter(pl.col("o").is_not_null()).select(
        pl.col("o").min(), (pl.col("o") + pl.col("n")).max().alias("hi"), pl.col("n").sum()
    ).row(0)
    offsets, lengths = spans["o"].to_list(), spans["n"].to_list()
    if lo is None:
        return TextSpans(b"", 0, offsets, lengths)
    if hi - lo <= 4 * total + (1 << 20):  # about one range of the file: read at once
        return TextSpans(read_exactly(path, lo, hi - lo), lo, offsets, lengths)
    if _native is not None:  # one read a line, without the GIL
        joined = _native.read_pieces(str(path), offsets, lengths)
    else:
        with open(path, "rb") as f:
            joined = b"".join(os.pread(f.fileno(), n, o)
                              for o, n in zip(offsets, lengths, strict=True) if o is not None)
    if len(joined) != total:  # as read_pieces: no short text
        raise OSError(errno.EIO, SHRUNK, str(path))
    ends = itertools.accumulate(n or 0 for n in lengths)  # in the joined buffer
    return TextSpans(joined, 0, [None if o is None else end - n
                                 for o, n, end in zip(offsets, lengths, ends, strict=True)],
                     lengths)


def flatten_texts(
    texts: Sequence[bytes | None] | TextSpans,
    *,
    skip: str | None = None,
    metadata: Sequence[str] = (),
    content: str | None = None,
    text_content: bool = False,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
    lenient: bool = False,
    walked: tuple | None = None,
) -> Flattened | None:
    """The tables of documents given as JSON text (None: no document), the root member ``skip``
    (the id field) left out, without building Python objects; None when the kernel declines
    (text it does not vouch for: the caller parses the batch and runs :func:`flatten`). The
    root members named in ``metadata`` are not content: their values are
    :attr:`Flattened.metadata` (a member holding an object or a list is declined, for the
    Python path to report). With ``content``, that root member is the document; a string in
    it is read as JSON text when ``text_content`` (the AIO's raw model text: when the whole
    text is one JSON object, or else a fenced block tagged json or untagged holds one, listed in
    :attr:`Flattened.code_blocks`; src/fenced.rs. Other texts are declined for the rest of
    SPEC §8's extraction).
    ``lenient``: the documents the kernel declines are left out and listed in
    :attr:`Flattened.declined`, the others flattened (None only without the kernel).
    ``walked``: the kernel's walk of these texts with these options, already made
    (``file_ranges.walk_lines``)."""
    if KERNEL != "native":
        return None
    options = (skip, item_base, empty_containers_are_null, _SEGMENT)
    named = {"meta": list(metadata), "content": content, "text_content": text_content,
             "lenient": lenient}
    if walked is not None:
        tables, next_item, _, declined, code_blocks = walked
    elif isinstance(texts, TextSpans):
        tables, next_item, _, declined, code_blocks = _native.flatten_spans(
            texts.buffer, texts.base, texts.offsets, texts.lengths, *options, **named)
    else:
        tables, next_item, _, declined, code_blocks = _native.flatten_json(
            texts if isinstance(texts, list) else list(texts), *options, **named)
    return None if tables is None else _flattened(tables, next_item, declined, code_blocks)


def combined(native: Flattened, python: Flattened, renumber: pl.Series, python_docs: pl.Series,
            declined: list[int], item_base: int) -> Flattened:
    """One side's tables of a batch read partly by the kernel's text walk and partly by the
    Python path (ingest.pairs_from_texts): the kernel's (documents at plan positions; those at
    ``declined`` positions dropped, whichever side's text was declined) and the Python path's
    (documents numbered in their own batch), documents renumbered to the batch's positions
    (``renumber``: plan position -> batch position; ``python_docs``: Python document -> batch
    position) and items from ``item_base`` in document order, as one walk over the batch
    numbers them."""
    def docs(frame: pl.DataFrame, positions: pl.Series) -> pl.DataFrame:
        return frame.with_columns(positions.gather(frame["doc"].cast(pl.Int64))
                                  .cast(frame.schema["doc"]).alias("doc"))

    # the kernel's side of a pair the other side's text sent to the Python path goes too
    gone = pl.col("doc").cast(pl.Int64).is_in(pl.Series(declined, dtype=pl.Int64).implode())
    gone_items = native.items.filter(gone)["item"]
    native = Flattened(native.leaves.filter(~gone), native.items.filter(~gone), [],
                       native.next_item,
                       None if native.members is None else native.members.filter(
                           ~pl.col("item").is_in(gone_items.implode())))
    leaves_schema, items_schema = native.leaves.schema, native.items.schema
    leaves = pl.concat([docs(native.leaves, renumber),
                        docs(python.leaves, python_docs).select(
                            pl.col(c).cast(t) for c, t in leaves_schema.items())])
    items = pl.concat([docs(native.items, renumber),
                       docs(python.items, python_docs).select(
                           pl.col(c).cast(t) for c, t in items_schema.items())])
    items = items.sort("doc", "item")
    old, new = items["item"], pl.int_range(item_base, item_base + items.height, eager=True)

    def renamed(column: str) -> pl.Expr:
        name = pl.col(column)
        return (pl.when(name >= 0).then(name.replace_strict(old, new, default=-1))
                .otherwise(name).cast(pl.Int64).alias(column))

    members = [m for m in (native.members, python.members) if m is not None]
    members = (pl.concat([m.select(pl.col(c).cast(t) for c, t in members[0].schema.items())
                          for m in members]).with_columns(renamed("item")).sort(
                              "item", maintain_order=True) if members else None)
    errors = [(int(python_docs[doc]), message) for doc, message in python.errors]
    return Flattened(
        leaves=leaves.with_columns(renamed("item")).sort("doc", maintain_order=True),
        items=items.with_columns(renamed("item"), renamed("parent")),
        errors=errors,
        next_item=item_base + items.height,
        members=members,
    )


def _flattened(tables: tuple, next_item: int, declined: list[int] = (),
               code_blocks: list[int] = ()) -> Flattened:
    leaves, items, members, metadata = (pl.DataFrame(t) for t in tables)
    return Flattened(leaves, items, [], next_item, members, metadata, list(declined),
                     list(code_blocks))
