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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from .values import canonical_container, canonical_float, canonical_string

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


class _Walker:
    def __init__(self, empty_containers_are_null: bool, item_base: int) -> None:
        self.empty_null = empty_containers_are_null
        self.next_item = item_base
        self.cols: dict[str, list[Any]] = {name: [] for name in LEAF_SCHEMA}
        self.icols: dict[str, list[Any]] = {name: [] for name in ITEM_SCHEMA}

    def leaf(self, doc, item, suffix, attr, key, member, kind, text, is_null, empty=False):
        c = self.cols
        c["doc"].append(doc)
        c["item"].append(item)
        c["suffix"].append(suffix)
        c["attribute"].append(attr)
        c["key"].append(key)
        c["member"].append(member)
        c["kind"].append(kind)
        c["text"].append(text)
        c["is_null"].append(is_null)
        c["empty_array"].append(empty)

    def walk(self, doc, value, suffix, attr, key, item, depth, member):
        """Emit the leaves of ``value`` found at ``suffix`` (relative to ``item``)."""
        t = type(value)
        if t is str:
            text = canonical_string(value)
            if not text.isascii():
                _check_encodable(text, suffix or attr)
            self.leaf(doc, item, suffix, attr, key, member, "string", text, text == "")
        elif t is dict:
            if not value:
                if suffix or item >= 0:  # the root object itself is never a leaf
                    self.leaf(doc, item, suffix, attr, key, member, "object", "{}", self.empty_null)
                return
            at_start = not suffix and item < 0
            for k, v in value.items():
                if type(k) is not str:
                    raise UnrepresentableValue(f"object key {k!r} at '{suffix}' is not a string")
                first, after = _segments(k)
                seg = first if at_start else after
                aseg = first if not attr else after
                # a member of an item's own object is a candidate match field
                mem = k if (not suffix and item >= 0) else None
                self.walk(doc, v, suffix + seg, attr + aseg, k, item, depth, mem)
        elif t is list or t is tuple:
            if value and all(type(x) is dict for x in value):
                for i, x in enumerate(value):
                    self.add_item(doc, item, depth + 1, attr, suffix, i)
                    self.walk(doc, x, "", attr + "[]", key, self.next_item - 1, depth + 1, None)
            elif not value:
                self.leaf(doc, item, suffix, attr, key, member, "array", "[]", self.empty_null, True)
            else:
                self.leaf(
                    doc, item, suffix, attr, key, member, "array", _container_text(value, suffix),
                    False,
                )
        elif value is None:
            self.leaf(doc, item, suffix, attr, key, member, "null", None, True)
        elif t is bool:
            self.leaf(doc, item, suffix, attr, key, member, "bool", "true" if value else "false", False)
        elif t is int:
            self.leaf(doc, item, suffix, attr, key, member, "int", str(value), False)
        elif t is float:
            text = canonical_float(value)
            self.leaf(doc, item, suffix, attr, key, member, "float", text, text is None)
        else:
            raise UnrepresentableValue(
                f"value of type {t.__name__} at '{suffix or attr}' has no JSON meaning"
            )

    def add_item(self, doc, parent, depth, list_attr, list_suffix, index):
        ic = self.icols
        ic["item"].append(self.next_item)
        ic["doc"].append(doc)
        ic["parent"].append(parent)
        ic["depth"].append(depth)
        ic["list_attribute"].append(list_attr)
        ic["list_suffix"].append(list_suffix)
        ic["index"].append(index)
        self.next_item += 1

    def truncate(self, n_leaves: int, n_items: int) -> None:
        for col in self.cols.values():
            del col[n_leaves:]
        for col in self.icols.values():
            del col[n_items:]


def _container_text(value: list | dict, where: str) -> str:
    try:
        return canonical_container(value)
    except (TypeError, ValueError) as exc:
        raise UnrepresentableValue(f"array at '{where}' holds a value with no JSON meaning: {exc}")


def flatten(
    docs: Sequence[dict | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """Flatten the root objects in ``docs`` (None = no document on this side).

    A document that cannot be flattened (an unrepresentable value, nesting deeper than Python's
    recursion limit) contributes nothing and is reported in ``errors`` by position.
    """
    w = _Walker(empty_containers_are_null, item_base)
    errors: list[tuple[int, str]] = []
    for pos, doc in enumerate(docs):
        if doc is None:
            continue
        n_leaves, n_items = len(w.cols["doc"]), len(w.icols["item"])
        try:
            w.walk(pos, doc, "", "", "", -1, 0, None)
        except UnrepresentableValue as exc:
            w.truncate(n_leaves, n_items)
            errors.append((pos, str(exc)))
        except RecursionError:
            w.truncate(n_leaves, n_items)
            errors.append((pos, "document is nested too deeply to score"))
    leaves = pl.DataFrame(w.cols, schema=LEAF_SCHEMA)
    items = pl.DataFrame(w.icols, schema=ITEM_SCHEMA)
    return Flattened(leaves, items, errors, w.next_item)
