"""Null test and canonical text (SPEC §1), and the value tests used for strategy detection.

The flattener computes canonical text once per leaf while it walks the parsed JSON (the one place
where every value is a Python object anyway): strings inline there, as
``" ".join(s.split()).lower()`` (a call per string leaf costs measurably), floats and containers
through the functions below. Everything downstream works on the canonical text columns with
Polars expressions.
"""

from __future__ import annotations

import json
import math

import polars as pl

KINDS = ("null", "bool", "int", "float", "string", "array", "object")
_INT_EXACT = 2**53


def canonical_float(value: float) -> str | None:
    """Canonical text of a float; None for NaN (a null)."""
    if value != value:
        return None
    if math.isfinite(value) and value == int(value) and abs(value) < _INT_EXACT:
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
# Numbers as NUMERIC reads them (DECISIONS.md 7): sign and currency sign in either order,
# thousands separators removed first.
_CURRENCY = r"[$€£¥₹]"
_NUMBER_TEXT = (
    rf"^(?:[+-]?{_CURRENCY}?|{_CURRENCY}[+-])(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
)


def is_date_or_email(raw: pl.Expr) -> pl.Expr:
    """True where a (stripped) raw string looks like an ISO-8601 date/datetime or an e-mail."""
    s = raw.str.strip_chars()
    return s.str.contains(_ISO_DATE) | s.str.contains(_EMAIL)


def parse_number(text: pl.Expr, kind: pl.Expr) -> pl.Expr:
    """Float value of a leaf for NUMERIC: numbers, and numeric strings (thousands separators and
    one currency sign ignored); null for anything else, booleans included."""
    # the string branch only matters for strings; null elsewhere, the regexes skip those rows
    s = (
        pl.when(kind == "string")
        .then(text)
        .str.strip_chars()
        .str.replace_all(",", "", literal=True)
    )
    ok = s.str.contains(_NUMBER_TEXT)
    prefix = s.str.extract(r"^([^0-9.]*)", 1)  # sign and currency sign, in either order
    sign = pl.when(prefix.str.contains("-", literal=True)).then(-1.0).otherwise(1.0)
    mantissa = s.str.slice(prefix.str.len_chars())
    value = mantissa.cast(pl.Float64, strict=False) * sign
    return (
        pl.when(kind.is_in(["int", "float"]))
        .then(text.cast(pl.Float64, strict=False))
        .when((kind == "string") & ok & value.is_finite())
        .then(value)
        .otherwise(None)
    )
