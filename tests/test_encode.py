"""align.encode, the dictionary encoding of string columns together: the native kernel's
(src/dictionary.rs) against Polars' unique, sort and Enum cast, and both against Python's
sorted() of the UTF-8 bytes."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_series_equal

from jsoneval_polars import _native
from jsoneval_polars.align import encode, encode_by_polars

columns = st.lists(st.lists(st.text(max_size=6), max_size=40), min_size=1, max_size=4)


@pytest.mark.skipif(_native is None, reason="native kernel not built")
@settings(max_examples=200, deadline=None)
@given(columns=columns)
def test_native_encoding_equals_polars_and_sorts_by_utf8_bytes(columns):
    values = [pl.Series(f"c{i}", c, dtype=pl.String) for i, c in enumerate(columns)]
    names, ids = encode(values)
    want_names, want_ids = encode_by_polars(values)
    assert_series_equal(names, want_names)
    for got, want in zip(ids, want_ids, strict=True):
        assert_series_equal(got, want)
    distinct = sorted({s for c in columns for s in c}, key=lambda s: s.encode("utf-8"))
    assert names.to_list() == distinct
    assert [i.to_list() for i in ids] == [[distinct.index(s) for s in c] for c in columns]


@pytest.mark.skipif(_native is None, reason="native kernel not built")
def test_native_encoding_of_long_columns_of_long_strings():
    """Past the kernel's trial rows (src/dictionary.rs: strings looked up by their Arrow view
    while views repeat, by their text once they do not): long strings that repeat (one
    view shared, as the flatten kernel writes a path), long strings that are each written
    anew and short ones, in one dictionary (the Polars path takes no nulls)."""
    shared = pl.Series("s", ["vendor.address.street", "x", "line_items[].amount"]).gather(
        [0, 1, 2] * 2000)  # a gather copies views, not text
    fresh = pl.Series("f", [f"line_items[{i % 7}].description" for i in range(5000)])
    short_and_long = pl.Series("f", ["a", "vendor.address.street", "line_items[3]"] * 900)
    mixed = pl.concat([fresh.head(1500), short_and_long])
    for values in ([shared, fresh], [fresh, mixed], [mixed.rename("s"), shared]):
        names, ids = encode(values)
        want_names, want_ids = encode_by_polars(values)
        assert_series_equal(names, want_names)
        for got, want in zip(ids, want_ids, strict=True):
            assert_series_equal(got, want)
