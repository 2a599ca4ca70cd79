"""The plain-Python flattening walker: the oracle the native kernel (src/flatten.rs) is tested
against (tests/test_flatten_kernel.py). It was the package's first kernel; it takes parsed
Python documents and returns exactly the tables of the contract in jsoneval_polars/flatten.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import polars as pl

from jsoneval_polars.flatten import (
    ITEM_SCHEMA,
    LEAF_SCHEMA,
    MEMBER_SCHEMA,
    Flattened,
)
from jsoneval_polars.values import canonical_container, canonical_float

_ROW_COLUMNS = ("item", "suffix", "attribute", "key", "member", "kind", "text")

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


class UnrepresentableValue(ValueError):
    """A Python value with no JSON meaning (a set, a datetime, a lone surrogate...)."""


def _check_encodable(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UnrepresentableValue(
            f"string at '{where}' holds a lone surrogate and cannot be stored as UTF-8"
        ) from None


def flatten_python(
    docs: Sequence[dict | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """:func:`jsoneval_polars.flatten.flatten` by the Python walker.

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

    def walk_dict(d: dict, suffix: str, attr: str, item: int, depth: int, root: bool, item_root: bool):
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
        try:
            walk_dict(doc, "", "", -1, 0, True, False)
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
