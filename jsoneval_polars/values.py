"""Null test and canonical text (SPEC §1), and the value tests used for strategy detection.

The flattener computes canonical text once per leaf while it walks the parsed JSON (the one place
where every value is a Python object anyway): strings inline there, as
``" ".join(s.split()).lower()`` (a call per string leaf costs measurably), floats and containers
through the functions below. Everything downstream works on the canonical text columns with
Polars expressions.
"""

from __future__ import annotations

import functools
import json
import math
import re

import polars as pl

KINDS = ("null", "bool", "int", "float", "string", "array", "object")
INT_EXACT = 2**53  # floats below this magnitude hold every integer exactly


class TooDeep:
    """The value of a record's member nested deeper than Python's JSON parser reads (Python's
    recursion limit): the record keeps its id and its other members, and its document is
    reported as nested too deeply to score (``ingest._parse_json``, DECISIONS.md 102)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<nested too deeply>"


TOO_DEEP = TooDeep()


def canonical_float(value: float) -> str | None:
    """Canonical text of a float; None for NaN (a null)."""
    if value != value:
        return None
    if math.isfinite(value) and value == int(value) and abs(value) < INT_EXACT:
        return str(int(value))
    return repr(value)


def canonical_container(value: list | dict) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).lower()


# --- expressions over the leaves table -------------------------------------------------------

# DECISIONS.md 6; matched on canonical (lower-cased) text, so T and Z match in either case
_ISO_DATE = (
    r"^(?i)[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?$"
)
_EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"

# Dates (DECISIONS.md 51), on canonical text: each format is a regex with groups y, m, d.
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_D, _M, _Y = r"(?P<d>[0-9]{1,2})", r"(?P<m>[0-9]{1,2})", r"(?P<y>[0-9]{4})"
_NAMED = f"(?P<m>{_MONTH})\\.?"

def date_formats(date_order: str) -> tuple[str, ...]:
    """The recognized date formats as regexes with groups y, m, d (m may be a month name).
    ``date_order`` reads NN/NN/YYYY day first (DMY) or month first (MDY); under YMD only
    year-first numeric dates are read."""
    slashed = {"DMY": [f"^{_D}/{_M}/{_Y}$"], "MDY": [f"^{_M}/{_D}/{_Y}$"], "YMD": []}
    return (
        f"^{_Y}-(?P<m>[0-9]{{2}})-(?P<d>[0-9]{{2}})(?:[t ].*)?$",  # ISO, after _ISO_DATE
        f"^{_Y}/{_M}/{_D}$",
        *slashed[date_order],
        f"^{_D}\\.{_M}\\.{_Y}$",
        f"^{_D}[- ]{_NAMED}[- ]{_Y}$",
        f"^{_NAMED} {_D},? {_Y}$",
    )


def date_of(text: pl.Expr, date_order: str = "DMY") -> pl.Expr:
    """The calendar date a canonical text names in a recognized format, else null (an
    impossible day such as 31/02/2025 included). Vectorized: one regex per format, coalesced,
    then one strict ``%Y-%m-%d`` parse."""
    s = text.str.strip_chars()
    iso_ok = s.str.contains(_ISO_DATE)
    parts = []
    for i, fmt in enumerate(date_formats(date_order)):
        g = (pl.when(iso_ok) if i == 0 else pl.when(True)).then(s).str.extract_groups(fmt)
        parts.append(g)
    y = pl.coalesce([p.struct.field("y") for p in parts])
    y = pl.when(y != "0000").then(y)  # year 1 is the first a calendar date has
    m = pl.coalesce([p.struct.field("m") for p in parts])
    d = pl.coalesce([p.struct.field("d") for p in parts])
    month = (
        pl.when(m.str.contains(r"^[0-9]+$"))
        .then(m)
        .otherwise(m.str.slice(0, 3).replace_strict(
            {name: str(i + 1) for i, name in enumerate(_MONTHS)}, default=None))
    )
    iso = pl.concat_str([y, month.str.zfill(2), d.str.zfill(2)], separator="-")
    return iso.str.to_date("%Y-%m-%d", strict=False)


def looks_like_date(raw: pl.Expr, date_order: str = "DMY") -> pl.Expr:
    """True where a (stripped) canonical string is written in a recognized date format (the
    strategy detection test; the day itself need not exist)."""
    s = raw.str.strip_chars()
    return s.str.contains(_ISO_DATE) | s.str.contains(other_date_formats(date_order))


def other_date_formats(date_order: str) -> str:
    """The recognized date formats but ISO's, as one regex without named groups."""
    return "|".join(f"(?:{_unnamed(f)})" for f in date_formats(date_order)[1:])


def _unnamed(fmt: str) -> str:
    return re.sub(r"\(\?P<[a-z]>", "(", fmt)


def is_date_or_email(raw: pl.Expr, date_order: str = "DMY") -> pl.Expr:
    """True where a (stripped) raw string looks like a date (any recognized format) or an
    e-mail address."""
    return looks_like_date(raw, date_order) | raw.str.strip_chars().str.contains(_EMAIL)


# Numbers as NUMERIC reads them (DECISIONS.md 7, 43): thousands separators removed first; then
# optional parentheses (a negative), one currency code before or after, a sign and a currency
# sign in either order before the digits or a currency sign after them, spaces between.
_CURRENCY = r"[$€£¥₹]"
CURRENCY_CODES = (
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "nzd", "cny", "inr", "sek", "nok", "dkk",
    "pln", "czk", "huf", "sgd", "hkd", "krw", "brl", "mxn", "zar", "try", "ils", "aed", "sar",
)
_CODE = "(?:" + "|".join(CURRENCY_CODES) + ")"
NUMBER_TEXT = (
    r"^(?P<open>\()?\s*(?:" + _CODE + r"\s*)?"
    rf"(?P<pre>[+-]?{_CURRENCY}?|{_CURRENCY}[+-])\s*"
    r"(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)"
    rf"\s*(?P<suf>{_CURRENCY})?\s*(?:" + _CODE + r")?\s*(?P<close>\))?$"
)


def parse_number(text: pl.Expr, kind: pl.Expr) -> pl.Expr:
    """Float value of a leaf for NUMERIC: numbers, and numeric strings (canonical text:
    thousands separators, currency signs and codes, parentheses for a negative); null for
    anything else, booleans included."""
    # the string branch only matters for strings; null elsewhere, the regexes skip those rows
    s = pl.when(kind == "string").then(text).str.replace_all(",", "", literal=True)
    g = s.str.extract_groups(NUMBER_TEXT)
    pre, paren = g.struct.field("pre"), g.struct.field("open").is_not_null()
    balanced = paren == g.struct.field("close").is_not_null()
    one_sign = ~(pre.str.contains(_CURRENCY) & g.struct.field("suf").is_not_null())
    negative = pre.str.contains("-", literal=True)
    ok = balanced & one_sign & ~(paren & pre.str.contains("[+-]"))
    value = g.struct.field("num").cast(pl.Float64, strict=False)
    value = pl.when(negative | paren).then(-value).otherwise(value)
    return (
        pl.when(kind.is_in(["int", "float"]))
        .then(text.cast(pl.Float64, strict=False))
        .when((kind == "string") & ok & value.is_finite())
        .then(value)
        .otherwise(None)
    )


# --- normalizers (DECISIONS.md 55) -------------------------------------------------------------


@functools.cache
def _casefold_table() -> tuple[list[str], list[str]]:
    """Every character whose Python casefold differs from itself, and its folding: folding
    is per character, so replacing these is ``str.casefold``."""
    chars = [c for c in map(chr, range(0x110000)) if not 0xD800 <= ord(c) <= 0xDFFF
             and c.casefold() != c]
    return chars, [c.casefold() for c in chars]


def normalized(text: pl.Expr, names: tuple[str, ...]) -> pl.Expr:
    """``text`` through the named normalizers, in order (config.NORMALIZERS)."""
    for name in names:
        if name == "casefold":
            old, new = _casefold_table()
            text = text.str.replace_many(old, new)
        elif name == "nfkc":
            text = text.str.normalize("NFKC")
        elif name == "strip_punctuation":
            text = text.str.replace_all(r"\p{P}+", "")
        elif name == "collapse_whitespace":
            text = text.str.replace_all(r"\s+", " ").str.strip_chars()
        elif name == "digits_only":
            text = text.str.replace_all(r"[^0-9]+", "")
        else:
            raise ValueError(f"unknown normalizer {name!r}")
    return text
