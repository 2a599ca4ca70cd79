"""Structured-output extraction: AIO text -> JSON object + parse status (SPEC §8, seed 003).

An LLM answer given as text is parsed in this order, and the first strategy that yields a JSON
**object** wins:

1. ``json``: the whole text (surrounding whitespace and a byte-order mark ignored) is JSON.
2. ``code_block``: the first fenced code block (```` ``` ```` or ``~~~``) whose info string is
   ``json`` (any case) or empty, and whose body parses.
3. ``embedded``: the first balanced ``{…}`` span that parses. The brace scan knows JSON strings,
   so ``{"a": "}"}`` is one span.
4. ``invalid``: nothing above produced an object.

A text that parses as a JSON array, number, string, … is not a success: the next strategy is
tried, so ``[{"a": 1}]`` ends ``embedded`` (the object inside) and ``42`` ends ``invalid``.

The **narrative** is the text outside the JSON span (outside the whole fenced block, fences
included, for ``code_block``), stripped; the whole stripped text for ``invalid``.

Parsing uses orjson and falls back to the standard library's ``json`` where orjson refuses
input that ``json`` accepts (``NaN``/``Infinity`` literals) or would round it (integers beyond
64 bits), so such values are kept instead of failing extraction or being rounded; the ones not
kept exactly are listed in ``Extraction.notes``, which scoring turns into warning rows (SPEC §9,
DECISIONS.md 22). JSON nested deeper than :data:`MAX_NESTING` (1024) levels is not
parsed: such a text ends ``invalid``, the same wherever it is called from.
"""

from __future__ import annotations

import collections
import decimal
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson
import polars as pl

ExtractStatus = Literal["json", "code_block", "embedded", "invalid"]
STATUSES: tuple[ExtractStatus, ...] = ("json", "code_block", "embedded", "invalid")

__all__ = [
    "STATUSES",
    "ExtractStatus",
    "Extraction",
    "extract_column",
    "extract_json",
    "loads_noting",
    "orjson_may_round",
    "parse_object",
]


@dataclass(frozen=True, slots=True)
class Extraction:
    """Result of :func:`extract_json`.

    ``value`` is the parsed JSON object, or None when ``status == "invalid"``; ``narrative`` is
    the text outside the JSON span, stripped; ``notes`` say which of its values were not kept
    exactly (:func:`loads_noting`).
    """

    value: dict[str, Any] | None
    status: ExtractStatus
    narrative: str
    notes: tuple[str, ...] = ()


# --- parsing --------------------------------------------------------------------------------

_NOT_PARSED = object()
# Runs of digits and points read as runs of zeros, so one `in` finds a long one (memchr speed;
# a regex took 10-15 µs a document).
_RUNS_AS_ZEROS = str.maketrans("0123456789.", "0" * 11)
_BYTE_RUNS_AS_ZEROS = bytes.maketrans(b"0123456789.", b"0" * 11)
_LONG_RUN = 16


def orjson_may_round(text: str | bytes) -> bool:
    """Whether orjson might read a number of ``text`` inexactly, and without a word: an integer
    beyond 64 bits (it becomes a float) or a float of more than 15 significant digits (the
    nearest double). Such text holds a run of 16+ digits and points; the json module reads it
    instead (:func:`loads_noting`), which keeps such integers exact and notes the floats. A run
    inside a string only costs that time."""
    if isinstance(text, bytes):
        return b"0" * _LONG_RUN in text.translate(_BYTE_RUNS_AS_ZEROS)
    return "0" * _LONG_RUN in text.translate(_RUNS_AS_ZEROS)
#: JSON nested deeper than this is not parsed, whichever parser would be used: orjson stops
#: there, and the json module's limit depends on the caller's stack depth, so accepting deeper
#: text would make the status depend on where extraction is called from.
MAX_NESTING = 1024


def loads_noting(text: str | bytes) -> tuple[Any, list[str]]:
    """``json.loads``, and a note for each value not kept exactly (DECISIONS.md 22): a number
    beyond a double's range (kept as ±inf) or precision (read as the nearest double), and the
    literals NaN (read as null) and ±Infinity (kept as ±inf), which are not JSON, one note per
    literal with its count. Raises as ``json.loads``."""
    notes: list[str] = []
    constants: collections.Counter[str] = collections.Counter()
    rounded: list[tuple[str, float]] = []

    def parse_float(number: str) -> float:
        value = float(number)
        if value in (float("inf"), float("-inf")):
            notes.append(f"number {number} overflows a double; kept as {value}")
        elif not _shown_by(value, number):
            rounded.append((number, value))
        return value

    def parse_constant(name: str) -> float:
        constants[name] += 1
        return float(name)

    value = json.loads(text, parse_float=parse_float, parse_constant=parse_constant)
    if rounded:  # one note, however many
        number, nearest = rounded[0]
        notes.append(f"number {number} has more digits than a double keeps; read as {nearest!r}"
                     if len(rounded) == 1 else
                     f"{len(rounded)} numbers have more digits than a double keeps; each is read "
                     f"as the nearest double (the first, {number}, as {nearest!r})")
    for name, count in constants.items():
        times = f" ({count} times)" if count > 1 else ""  # one row, however many
        kept = "read as null" if name == "NaN" else f"kept as {float(name)}"
        notes.append(f"{name}{times} is not valid JSON; {kept}")
    return value, notes


def _shown_by(value: float, literal: str) -> bool:
    """Whether the double's shortest round-trip text (its canonical text's digits) has the
    decimal literal's value. At most 15 significant digits always do (src/node.rs reads
    JSON text by the same rule)."""
    mantissa = literal.partition("e")[0].partition("E")[0]
    if sum(c.isdigit() for c in mantissa) <= 15:
        return True
    return decimal.Decimal(literal) == decimal.Decimal(repr(value))


def _loads(text: str) -> tuple[Any, tuple[str, ...] | None]:
    """(value, None) when orjson read the text exactly; (value, notes) when the ``json`` module
    read it (orjson would not serialize the value faithfully: NaN becomes ``null``, big ints
    raise); (_NOT_PARSED, None) when neither could."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        if "depth limit" in str(error):
            return _NOT_PARSED, None
    else:
        if not orjson_may_round(text):
            return value, None
    # NaN / Infinity literals, integers beyond 64 bits.
    try:
        value, notes = loads_noting(text)
    except (ValueError, RecursionError):
        return _NOT_PARSED, None
    return value, tuple(notes)


def _object(text: str) -> tuple[dict[str, Any] | None, tuple[str, ...] | None]:
    value, notes = _loads(text)
    return (value, notes) if isinstance(value, dict) else (None, None)


def parse_object(text: str) -> dict[str, Any] | None:
    """The JSON object that ``text`` is (surrounding whitespace allowed), or None when it is
    not JSON or not an object. No extraction from prose; see :func:`extract_json` for that."""
    return _object(text)[0]


# --- fenced code blocks ---------------------------------------------------------------------

_OPENER = re.compile(r"`{3,}|~{3,}")
_JSON_TAGS = frozenset({"", "json"})


@dataclass(frozen=True, slots=True)
class _Block:
    start: int  # first character of the opening fence
    end: int  # one past the closing fence
    tag: str  # first word of the info string, lower-cased ("" when untagged)
    body: str


def _fenced_blocks(text: str) -> Iterator[_Block]:
    """Closed fenced blocks in order. An unclosed fence ends the scan (everything after it is
    its body, and a truncated block is left to the brace scan)."""
    pos = 0
    while (m := _OPENER.search(text, pos)) is not None:
        fence = m.group()
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        rest = text[m.end() : line_end]
        inline_close = rest.find(fence)
        if inline_close >= 0:
            # One-line block: ```json {"a": 1}```
            inner = rest[:inline_close].strip()
            if inner.startswith(("{", "[")) or not inner:
                tag, body = "", inner
            else:
                head, *tail = inner.split(maxsplit=1)
                tag, body = head.lower(), "".join(tail)
            end = m.end() + inline_close + len(fence)
            yield _Block(m.start(), end, tag, body)
            pos = end
            continue
        if "`" in rest and fence[0] == "`":
            # CommonMark: a backtick fence's info string holds no backtick; not a fence.
            pos = m.end()
            continue
        closing = re.compile(
            rf"^[ \t]*{re.escape(fence)}{re.escape(fence[0])}*[ \t]*$", re.MULTILINE
        )
        body_start = min(line_end + 1, len(text))
        close = closing.search(text, body_start)
        if close is None:
            return
        tag = rest.strip().split(maxsplit=1)[0].lower() if rest.strip() else ""
        yield _Block(m.start(), close.end(), tag, text[body_start : close.start()])
        pos = close.end()


# --- balanced brace spans -------------------------------------------------------------------

_SPECIAL = re.compile(r'[{}"\\]')
_OBJECT_START = re.compile(r"\{\s*[\"}]")  # a JSON object opens with a key or closes at once
# When a span nested deeper than MAX_NESTING does not parse, the spans inside it are not tried:
# they would be fragments of one deep document, and trying each would make the scan quadratic.


def _brace_pass(text: str, start: int) -> dict[int, tuple[int, int]]:
    """One string-aware scan from the ``{`` at ``start`` to the end of the text.

    For every ``{`` met outside a JSON string it records (one past its matching ``}`` or -1,
    nesting depth of the span). A scan started at any of those braces would see exactly the same
    characters in the same string state, so one pass answers for all of them; a brace that this
    pass saw inside a string gets its own pass later. This keeps the scan linear for deeply
    nested text instead of quadratic.
    """
    spans: dict[int, tuple[int, int]] = {}
    stack: list[list[int]] = []  # [position, depth of the deepest span inside so far]
    in_string = False
    escaped_at = -1
    for m in _SPECIAL.finditer(text, start):
        i = m.start()
        c = text[i]
        if in_string:
            if i == escaped_at:
                continue
            if c == "\\":
                escaped_at = i + 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "{":
            stack.append([i, 0])
        elif c == "}" and stack:
            pos, inner = stack.pop()
            spans[pos] = (i + 1, inner + 1)
            if stack and stack[-1][1] < inner + 1:
                stack[-1][1] = inner + 1
    for pos, inner in stack:
        spans[pos] = (-1, inner + 1)
    return spans


def _embedded(text: str) -> tuple[dict[str, Any] | None, tuple[str, ...] | None, int, int]:
    """First balanced ``{…}`` span (by start position) that parses to an object. A span that
    does not parse is skipped and the next ``{`` after its start is tried, so an object nested
    in broken text is still found."""
    spans: dict[int, tuple[int, int]] = {}
    skip_before = -1
    for m in re.finditer(r"\{", text):
        start = m.start()
        if start < skip_before:
            continue
        if start not in spans:
            for pos, span in _brace_pass(text, start).items():
                spans.setdefault(pos, span)
        end, depth = spans[start]
        if end < 0:
            continue
        if _OBJECT_START.match(text, start) is None:
            continue
        value, notes = _object(text[start:end])
        if value is not None:
            return value, notes, start, end
        if depth > MAX_NESTING:
            skip_before = end
    return None, None, -1, -1


# --- public API -----------------------------------------------------------------------------


def _extract(text: str) -> tuple[Extraction, bool]:
    """The extraction, and whether orjson read its value exactly."""
    stripped = text.strip().lstrip("\ufeff").strip()
    value, notes = _object(stripped)
    if value is not None:
        return Extraction(value, "json", "", notes or ()), notes is None
    for block in _fenced_blocks(text):
        if block.tag not in _JSON_TAGS:
            continue
        value, notes = _object(block.body.strip())
        if value is not None:
            narrative = (text[: block.start] + text[block.end :]).strip()
            return Extraction(value, "code_block", narrative, notes or ()), notes is None
    value, notes, start, end = _embedded(text)
    if value is not None:
        narrative = (text[:start] + text[end:]).strip()
        return Extraction(value, "embedded", narrative, notes or ()), notes is None
    return Extraction(None, "invalid", stripped), False


def extract_json(text: str) -> Extraction:
    """Extract the JSON object from an LLM answer (SPEC §8).

    >>> extract_json('Result:\\n```json\\n{"a": 1}\\n```\\nDone.')
    Extraction(value={'a': 1}, status='code_block', narrative='Result:\\n\\nDone.', notes=())
    >>> extract_json("[1, 2]").status
    'invalid'
    """
    if not isinstance(text, str):
        raise TypeError(f"extract_json expects a str; got {type(text).__name__}")
    return _extract(text)[0]


def _compact(value: dict[str, Any], exact_with_orjson: bool) -> str:
    if exact_with_orjson:
        return orjson.dumps(value).decode()
    # Values only the json module could read (NaN, Infinity, big ints) are written back the
    # same way, so nothing is rounded or turned into null silently.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def extract_column(texts: pl.Series) -> pl.DataFrame:
    """:func:`extract_json` over a string Series.

    Returns one row per input row with ``value_json`` (compact JSON text of the object, key
    order kept; null when invalid), ``status`` and ``narrative``. A null input text gives null
    in all three columns (the document is missing, not invalid; the pipeline marks it).

    The per-text Python call is unavoidable (JSON parsing and the brace scan are not Polars
    expressions); it runs once per *distinct* text.
    """
    if texts.dtype != pl.String:
        raise TypeError(f"extract_column expects a String Series; got dtype {texts.dtype}")
    cache: dict[str, tuple[str | None, str, str]] = {}
    value_json: list[str | None] = []
    status: list[str | None] = []
    narrative: list[str | None] = []
    for text in texts:
        if text is None:
            value_json.append(None)
            status.append(None)
            narrative.append(None)
            continue
        row = cache.get(text)
        if row is None:
            extraction, exact = _extract(text)
            dumped = None if extraction.value is None else _compact(extraction.value, exact)
            row = cache[text] = (dumped, extraction.status, extraction.narrative)
        value_json.append(row[0])
        status.append(row[1])
        narrative.append(row[2])
    return pl.DataFrame(
        {"value_json": value_json, "status": status, "narrative": narrative},
        schema={"value_json": pl.String, "status": pl.String, "narrative": pl.String},
    )
