"""The JSON meaning of the Python values users' records hold besides JSON's own types.

Records built in Python rarely hold only dict, list, str, int, float, bool and None:
pydantic's ``model_dump()`` keeps enums, dates, Decimals and UUIDs; pandas' ``to_dict()``
gives Timestamps and ``pd.NA``; numpy gives its own scalars and arrays; code builds
``defaultdict`` and ``OrderedDict``. Each of these has one JSON text that every JSON writer
agrees on (pydantic's JSON mode, orjson), and :func:`json_value` gives it, so such a record
scores as its JSON would. The walkers read JSON's exact types only (``flatten.py``,
``src/python.rs``); they call this when a document holds anything else, and a value with no
such meaning (a set, bytes, an object) is still refused by name (docs/DECISIONS.md 113).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import numbers
import uuid
from typing import Any

_JSON_SCALARS = (str, int, float, bool, type(None))


class NoJsonMeaning(ValueError):
    """A value no JSON writer agrees on (a set, bytes, an arbitrary object)."""


def json_value(value: Any, keep_unknown: bool = False) -> Any:
    """``value`` with every member of JSON's own types: dict, list, str, int, float, bool
    or None (the same object when it already is; containers are copied only where a member
    changes). Subclasses of dict, list, tuple, str, int and float (StrEnum, IntEnum,
    defaultdict, OrderedDict) read as their base type; another enum as its value; numpy
    scalars and arrays as Python numbers and lists; a Decimal as its text, as a table's
    decimal column reads (DECISIONS 105); a date, datetime or time as ISO 8601 text; a
    UUID as its text; NaT and ``pd.NA`` as null, as a NaN float is. A value with no JSON
    meaning raises :class:`NoJsonMeaning`, or with ``keep_unknown`` stays as it is (for the
    walker to name it with its path).

    >>> import datetime, decimal, enum
    >>> class Color(enum.StrEnum):
    ...     RED = "red"
    >>> json_value({"c": Color.RED, "d": datetime.date(2024, 1, 2), "x": decimal.Decimal("1.10")})
    {'c': 'red', 'd': '2024-01-02', 'x': '1.10'}
    >>> json_value({1, 2})
    Traceback (most recent call last):
    jsoneval_polars.python_values.NoJsonMeaning: value of type set has no JSON meaning
    """
    t = type(value)
    if t in _JSON_SCALARS:
        return value
    if t is dict or isinstance(value, dict):
        return _object(value, keep_unknown)
    if t is list or isinstance(value, (list, tuple)):
        items = [json_value(v, keep_unknown) for v in value]
        if t is list and all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items
    try:
        scalar = _scalar(value)
    except NoJsonMeaning:
        if keep_unknown:
            return value
        raise
    return json_value(scalar, keep_unknown)


def _object(value: dict, keep_unknown: bool) -> dict:
    out, changed = {}, type(value) is not dict
    for k, v in value.items():
        key = k if type(k) is str else str.__str__(k) if isinstance(k, str) else None
        if key is None:
            return value  # a key that is not a string: the walker names it
        new = json_value(v, keep_unknown)
        changed |= key is not k or new is not v
        out[key] = new
    return out if changed else value


def _scalar(value: Any) -> Any:
    """One value of a type JSON writers agree on, as a value of JSON's own types (or a
    container to convert further)."""
    if isinstance(value, enum.Enum) and not isinstance(value, (str, int, float)):
        return value.value
    for base in (str, int, float):  # StrEnum, IntEnum and other subclasses: their base value
        if isinstance(value, base):
            return base.__str__(value) if base is str else base(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return None if value != value else value.isoformat()  # NaT is not equal to itself
    if isinstance(value, uuid.UUID):
        return str(value)
    module = type(value).__module__.split(".")[0]
    if module == "numpy" and hasattr(value, "tolist"):  # scalars and arrays
        return value.tolist()
    if module == "pandas" and type(value).__name__ == "NAType":
        return None
    raise NoJsonMeaning(f"value of type {type(value).__name__} has no JSON meaning")


def real_number(value: Any) -> float | None:
    """A score given as a number (a safety or a confidence) as a float: any real number, a
    numpy one or a Decimal too (a model's float32 score was refused); None for anything else,
    a bool included.

    >>> real_number(decimal.Decimal("0.5")), real_number(True), real_number("0.5")
    (0.5, None, None)
    """
    if isinstance(value, bool):  # numpy's bool_ is no numbers.Real
        return None
    if isinstance(value, numbers.Real | decimal.Decimal):
        return float(value)
    return None
