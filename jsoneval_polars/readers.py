"""Values read from the canonical texts by the native readers when the extension is built
(src/dates.rs, src/number.rs), by the expressions of values.py otherwise: dates, numbers,
and the value keys a list match field compares by. The expressions stay the reference; the
tests hold each reader equal to its expression. (values.py itself does not import the
extension: the flattener, which loads it, imports values.py.)"""

from __future__ import annotations

import functools

import polars as pl

from .flatten import _native
from .values import (
    _ISO_DATE, INT_EXACT, NUMBER_TEXT, date_formats, date_of, looks_like_date, parse_number,
)


def dates_of(texts: pl.Series, date_order: str = "DMY") -> pl.Series:
    """:func:`date_of` of a column of canonical texts, a Date column: by the native reader
    (src/dates.rs, the same regexes; it skips a text without four digits in a row and stops at
    the first format that matches) when the extension is built, else by the expression on the
    rows :func:`looks_like_date` recognizes (one regex; the format regexes cost several times
    more)."""
    frame = texts.alias("text").to_frame()
    reader = _date_reader(date_order)
    if reader is not None:
        return pl.DataFrame(reader.days(frame)).to_series().alias(texts.name)
    text = pl.col("text")
    out = pl.repeat(None, len(texts), dtype=pl.Date, eager=True).alias(texts.name)
    at = frame.select(looks_like_date(text, date_order).fill_null(False)).to_series().arg_true()
    if len(at):
        out = out.scatter(at, frame[at].select(date_of(text, date_order)).to_series())
    return out


@functools.cache
def _date_reader(date_order: str):
    """The native reader of one date order whenever the extension is built (its test holds it
    equal to :func:`date_of`)."""
    if _native is None:
        return None
    return _native.DateReader(_ISO_DATE, list(date_formats(date_order)))


def numbers_of(frame: pl.DataFrame) -> pl.Series:
    """:func:`parse_number` of a frame's ``text`` and ``kind`` columns, a Float64 column: read
    at once from the Arrow columns by the native reader (src/number.rs: numbers' text as
    doubles, strings by the same grammar; Polars' regex groups cost ten times more) when the
    extension is built, else by the expression."""
    reader = _number_reader()
    if reader is None:
        return frame.select(parse_number(pl.col("text"), pl.col("kind"))).to_series()
    return pl.DataFrame(reader.values(frame.select("text", "kind"))).to_series()


@functools.cache
def _number_reader():
    """The native reader whenever the extension is built (JSONEVAL_PURE_PYTHON names the
    walker that flattens; the reader has its own test against the expression)."""
    return None if _native is None else _native.NumberReader(NUMBER_TEXT)


def value_keys(
    members: pl.DataFrame, rows: pl.Expr, parse: str, date_order: str = "DMY"
) -> pl.Series:
    """What a list match field compares by value besides its canonical text (DECISIONS.md
    51, 52), on the ``rows`` selected (null elsewhere): with ``parse`` "date", ``d:`` and the
    ISO date of a date string in a recognized format; with "number", ``n:`` and the float of
    a number or numeric string below 2**53 in magnitude. Needs kind and text. The reader runs
    on the selected rows that can hold such a value only (a string; a number, or a string
    with a digit), each read once."""
    kind, value = pl.col("kind"), pl.col("value")
    if parse == "date":
        can = kind == "string"
        key = pl.lit("d:") + value.cast(pl.String)
    else:
        can = kind.is_in(["int", "float"]) | ((kind == "string")
                                              & pl.col("text").str.contains("[0-9]"))
        key = (pl.when(value == 0).then(pl.lit("n:0"))  # -0.0 is 0
               .when(value.abs() < INT_EXACT).then(pl.lit("n:") + value.cast(pl.String)))
    out = pl.repeat(None, members.height, dtype=pl.String, eager=True).alias("key")
    at = members.select((rows & can).fill_null(False)).to_series().arg_true()
    if not len(at):
        return out
    part = members[at]
    values = dates_of(part["text"], date_order) if parse == "date" else numbers_of(part)
    return out.scatter(at, values.alias("value").to_frame().select(key).to_series())


def member_keys(gt_members: pl.DataFrame, aio_members: pl.DataFrame,
                date_order: str = "DMY") -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both sides' list members (field, kind, text, ...) with ``key``: the value keys
    (:func:`value_keys`) computed only where they can decide a comparison that canonical text
    does not: GT date strings and AIO dates in those fields; AIO numeric strings in fields
    where the GT has numbers, and then those GT numbers. In one native pass when the extension
    is built (src/member_keys.rs, which spells keys its own way: only their equalities count,
    and its test holds them to this path's), else by :func:`value_keys`."""
    native = _member_keys(date_order)
    if native is not None:
        g, a = native.keys(*(m.select("field", "kind", "text") for m in (gt_members, aio_members)))
        return (gt_members.with_columns(pl.DataFrame(g).to_series()),
                aio_members.with_columns(pl.DataFrame(a).to_series()))
    field, kind = pl.col("field"), pl.col("kind")

    def fields_where(frame: pl.DataFrame, rows: pl.Expr) -> pl.Expr:
        return field.is_in(frame.filter(rows)["field"].unique().implode())

    g_date = value_keys(gt_members, pl.lit(True), "date", date_order)
    a_number = value_keys(aio_members, (kind == "string")
                          & fields_where(gt_members, kind.is_in(["int", "float"])), "number")
    a_date = value_keys(aio_members, fields_where(
        gt_members.with_columns(g_date), pl.col("key").is_not_null()), "date", date_order)
    g_number = value_keys(gt_members, fields_where(
        aio_members.with_columns(a_number), pl.col("key").is_not_null()), "number")
    return (gt_members.with_columns(g_date.fill_null(g_number)),
            aio_members.with_columns(a_date.fill_null(a_number)))


@functools.cache
def _member_keys(date_order: str):
    """The native member keys of one date order whenever the extension is built."""
    if _native is None:
        return None
    return _native.MemberKeys(_ISO_DATE, list(date_formats(date_order)), NUMBER_TEXT)
