"""counts.group_counts, the per (doc, attr) groups of the fields table: the native kernel's
(src/counting.rs) and the numpy path's, both against plain-Python sums; and the per-document
sums of those groups (rates.document_sums), likewise."""

from __future__ import annotations

import math
from collections import defaultdict

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import _native
from jsoneval_polars.counts import group_counts_by_numpy
from jsoneval_polars.rates import DOCUMENT_COUNTS, document_sums

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


group = st.tuples(
    st.integers(0, 6), *[st.integers(0, 50)] * len(DOCUMENT_COUNTS),
    st.one_of(st.none(), st.floats(0, 1)), st.floats(0, 100), st.floats(0, 100),
)


@settings(max_examples=150, deadline=None)
@given(groups=st.lists(group, max_size=60), in_doc_order=st.booleans())
def test_document_sums_are_plain_sums(groups, in_doc_order):
    if in_doc_order:  # as the counts come; the other order is sorted first
        groups = sorted(groups, key=lambda g: g[0])
    counts = pl.DataFrame(
        groups, orient="row",
        schema={"doc": pl.UInt32, **dict.fromkeys(DOCUMENT_COUNTS, pl.Int64), "f1": pl.Float64,
                "w_correct": pl.Float64, "w_scored": pl.Float64},
    )
    got = document_sums(counts)
    assert got.columns == ["doc", "macro_f1", *DOCUMENT_COUNTS, "w_correct", "w_scored"]
    assert got.schema["tp"] == pl.Int64 and got.schema["w_scored"] == pl.Float64
    by_doc: dict[int, list[tuple]] = defaultdict(list)
    for g in groups:
        by_doc[g[0]].append(g)
    assert got["doc"].to_list() == sorted(by_doc)
    for row in got.iter_rows(named=True):
        mine = by_doc[row["doc"]]
        f1s = [g[1 + len(DOCUMENT_COUNTS)] for g in mine if g[1 + len(DOCUMENT_COUNTS)] is not None]
        if f1s:
            assert math.isclose(row["macro_f1"], sum(f1s) / len(f1s), rel_tol=1e-12)
        else:
            assert row["macro_f1"] is None
        for i, name in enumerate(DOCUMENT_COUNTS):
            assert row[name] == sum(g[1 + i] for g in mine)
        for i, name in enumerate(("w_correct", "w_scored")):
            want = sum(g[2 + len(DOCUMENT_COUNTS) + i] for g in mine)
            assert math.isclose(row[name], want, rel_tol=1e-12, abs_tol=1e-12)
