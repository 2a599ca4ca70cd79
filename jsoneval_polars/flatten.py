"""Parsed documents or JSON text -> long leaves table and list-item table (SPEC §2).

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
unused item id (ids drawn by a document that was left out stay used; a document refused before
its walk, as invalid JSON text or nested deeper than :data:`MAX_DEPTH`, draws none).

The kernel is native (Rust, ``src/flatten.rs``, module ``jsoneval_polars._native``): it walks
the documents in parallel and hands the columns over as Arrow arrays (the PyCapsule stream
interface), which Polars takes without a copy. :func:`flatten` takes Python documents,
:func:`flatten_json` their JSON text. Both give, row for row, the tables of the plain-Python
walker kept in tests/flatten_reference.py as the oracle (DECISIONS.md 44 lists where the two
differ on Python values that JSON cannot hold).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from . import _native

#: Deepest nesting of arrays and objects a document may have (the root object counts 1);
#: a deeper document is reported in ``errors``.
MAX_DEPTH: int = _native.MAX_DEPTH

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


@dataclass
class Flattened:
    leaves: pl.DataFrame
    items: pl.DataFrame
    errors: list[tuple[int, str]]  # (doc position, message) for documents left out
    next_item: int
    # item members whose value is a non-empty object or list of records (those are not leaves
    # themselves): item, member, kind, text (canonical JSON), is_null
    members: pl.DataFrame | None = None


MEMBER_SCHEMA = {
    "item": pl.Int64, "member": pl.String, "kind": pl.String, "text": pl.String,
    "is_null": pl.Boolean,
}


def flatten(
    docs: Sequence[dict | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """Flatten the root objects in ``docs`` (None = no document on this side).

    A document that cannot be flattened (a value with no JSON meaning, a lone surrogate,
    nesting deeper than :data:`MAX_DEPTH`) contributes nothing and is reported in ``errors`` by
    position. Item members holding a container are also kept, as canonical JSON in
    ``members``, for list alignment (DECISIONS.md 9).
    """
    out = _native.flatten_objects(
        docs if type(docs) is list else list(docs), item_base, empty_containers_are_null
    )
    return _flattened(*out)


def flatten_json(
    texts: Sequence[bytes | None],
    *,
    empty_containers_are_null: bool = False,
    item_base: int = 0,
) -> Flattened:
    """:func:`flatten` from each document's JSON text (None = no document), parsed natively in
    parallel. Text that is not one JSON object is reported in ``errors``; NaN and Infinity are
    not JSON and are refused there (DECISIONS.md 44)."""
    out = _native.flatten_json(
        texts if type(texts) is list else list(texts), item_base, empty_containers_are_null
    )
    return _flattened(*out)


def _flattened(leaves, items, members, errors, next_item) -> Flattened:
    return Flattened(
        pl.DataFrame(leaves), pl.DataFrame(items), errors, next_item, pl.DataFrame(members)
    )
