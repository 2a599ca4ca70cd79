"""counts.group_counts, the per (doc, attr) groups of the fields table: the native kernel's
(src/counting.rs) and the numpy path's, both against plain-Python sums."""

from __future__ import annotations

import math
from collections import defaultdict

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import _native
from jsoneval_polars.counts import group_counts_by_numpy

N_BUCKETS, N_CELLS = 3, 4


def _native_counts(rows: pl.DataFrame, n_buckets: int, n_cells: int) -> pl.DataFrame:
    return pl.DataFrame(_native.count_groups(rows, n_buckets, n_cells))


COUNTERS = [group_counts_by_numpy, pytest.param(
    _native_counts, marks=pytest.mark.skipif(_native is None, reason="native kernel not built"))]

row = st.tuples(
    st.integers(0, 6), st.integers(0, 9), st.integers(0, N_BUCKETS - 1),
    st.integers(0, N_CELLS - 1), st.booleans(), st.booleans(), st.booleans(),
    st.one_of(st.none(), st.floats(0, 1)),
)
SCHEMA = {"doc": pl.UInt32, "attr": pl.UInt32, "bucket": pl.UInt32, "cell": pl.UInt32,
          "scored": pl.Boolean, "correct": pl.Boolean, "has_similarity": pl.Boolean,
          "similarity": pl.Float64}


def counted_in_python(rows: list[tuple]) -> list[tuple]:
    groups: dict[tuple, list] = defaultdict(lambda: [0] * (1 + N_BUCKETS + N_CELLS + 3) + [0.0])
    for doc, attr, bucket, cell, scored, correct, has_similarity, similarity in rows:
        g = groups[doc, attr]
        g[0] += 1
        g[1 + bucket] += 1
        g[1 + N_BUCKETS + cell] += 1
        for i, flag in enumerate((scored, correct, has_similarity)):
            g[1 + N_BUCKETS + N_CELLS + i] += flag
        if scored and similarity is not None:
            g[-1] += similarity
    return [(*key, *groups[key]) for key in sorted(groups)]


@pytest.mark.parametrize("count", COUNTERS)
@settings(max_examples=150, deadline=None)
@given(rows=st.lists(row, max_size=80), in_doc_order=st.booleans())
def test_groups_are_counted_in_doc_attr_order(count, rows, in_doc_order):
    if in_doc_order:  # as the fields come; the other order is sorted first
        rows = sorted(rows, key=lambda r: r[0])
    got = count(pl.DataFrame(rows, schema=SCHEMA, orient="row"), N_BUCKETS, N_CELLS)
    assert got.columns == ["doc", "attr", "rows", *[f"bucket_{j}" for j in range(N_BUCKETS)],
                           *[f"cell_{j}" for j in range(N_CELLS)], "scored", "correct",
                           "has_similarity", "sum_similarity"]
    want = counted_in_python(rows)
    assert [r[:-1] for r in got.rows()] == [w[:-1] for w in want]
    for (*_, mine), (*_, theirs) in zip(got.rows(), want, strict=True):
        assert math.isclose(mine, theirs, rel_tol=0, abs_tol=1e-12)
