"""counts.aggregate, a batch's counts per (doc, attr), per document and per attribute: the
native kernel's (src/counting.rs) and the Polars path's, both against the rules written out in
plain Python; and the Polars path's parts, counts.group_counts and counts.document_sums, against
plain-Python sums."""

from __future__ import annotations

import math
from collections import defaultdict

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import _native
from jsoneval_polars.config import Config
from jsoneval_polars.counts import (
    DOCUMENT_COUNTS,
    aggregate,
    aggregate_by_polars,
    document_sums,
    group_counts,
)
from jsoneval_polars.schemas import (
    ADDITIVE_COLUMNS,
    AIO_MISSING_OR_NULL,
    BOTH_NON_NULL,
    BUCKETS,
    CELLS,
    COUNT_COLUMNS,
    EXTRA_KEYS,
    FN,
    FP,
    FP_FN,
    GT_NULL_AIO_HAS_VALUE,
    IGNORE,
    STRATEGIES,
    TN,
    TP,
)

N_BUCKETS, N_CELLS = 3, 4

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


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(row, max_size=80), in_doc_order=st.booleans())
def test_groups_are_counted_in_doc_attr_order(rows, in_doc_order):
    if in_doc_order:  # as the fields come; the other order is sorted first
        rows = sorted(rows, key=lambda r: r[0])
    got = group_counts(pl.DataFrame(rows, schema=SCHEMA, orient="row"), N_BUCKETS, N_CELLS)
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


# --- counts.aggregate ------------------------------------------------------------------------

N_ATTRIBUTES = 6
field = st.tuples(
    st.integers(0, 5), st.integers(0, N_ATTRIBUTES - 1),
    st.one_of(st.none(), st.integers(0, len(BUCKETS) - 1)),
    st.one_of(st.none(), st.integers(0, len(CELLS) - 1)),
    st.one_of(st.none(), st.integers(0, len(STRATEGIES) - 1)),
    st.one_of(st.none(), st.booleans()),
    st.one_of(st.none(), st.floats(0, 1)),
)
FIELD_SCHEMA = {"doc": pl.UInt32, "attr": pl.UInt32, "bucket": pl.UInt8, "cell": pl.UInt8,
                "strategy": pl.UInt8, "match": pl.Boolean, "similarity": pl.Float64}


def aggregated_in_python(rows, docs, listed, weights):
    """SPEC §3, §4, §6 field by field: counts per (doc, attr), with a TN cell for each listed
    attribute a scored document lacks; then per document and per attribute."""
    groups: dict[tuple, dict] = {}

    def group(doc, attr):
        return groups.setdefault((doc, attr), dict.fromkeys(ADDITIVE_COLUMNS, 0))

    for doc, attr, bucket, cell, strategy, match, similarity in rows:
        g = group(doc, attr)
        g["n_total_distinct"] += 1
        g["n_gt_non_null"] += bucket in (BOTH_NON_NULL, AIO_MISSING_OR_NULL)
        g["n_both_non_null"] += bucket == BOTH_NON_NULL
        g["n_aio_missing_or_null"] += bucket == AIO_MISSING_OR_NULL
        g["n_extra_keys"] += bucket == EXTRA_KEYS
        g["n_gt_null_aio_has_value"] += bucket == GT_NULL_AIO_HAS_VALUE
        scored = bucket == BOTH_NON_NULL and strategy is not None and strategy != IGNORE
        g["n_scored"] += scored
        g["n_correct"] += scored and match is True
        g["tp"] += cell == TP
        g["tn"] += cell == TN
        g["fp"] += cell in (FP, FP_FN)
        g["fn"] += cell in (FN, FP_FN)
        if scored and similarity is not None:
            g["n_similarity"] += 1
            g["sum_similarity"] += similarity
    for doc in docs:
        for attr in listed:
            if (doc, attr) not in groups:
                group(doc, attr)["tn"] = 1
    counts = [(doc, attr, g) for (doc, attr), g in sorted(groups.items())]
    documents: dict[int, dict] = {}
    attributes: dict[int, dict] = {}
    for doc, attr, g in counts:
        d = documents.setdefault(doc, {**dict.fromkeys(DOCUMENT_COUNTS, 0), "f1": [],
                                       "w_correct": 0.0, "w_scored": 0.0})
        for name in DOCUMENT_COUNTS:
            d[name] += g[name]
        w = 1.0 if weights is None else weights[attr]
        d["w_correct"] += w * g["n_correct"]
        d["w_scored"] += w * g["n_scored"]
        if 2 * g["tp"] + g["fp"] + g["fn"]:
            d["f1"].append(2 * g["tp"] / (2 * g["tp"] + g["fp"] + g["fn"]))
        a = attributes.setdefault(attr, dict.fromkeys(ADDITIVE_COLUMNS, 0))
        for name in ADDITIVE_COLUMNS:
            a[name] += g[name]
    return counts, documents, attributes


def _close(mine, theirs) -> bool:
    if mine is None or theirs is None:
        return mine is theirs
    return math.isclose(mine, theirs, rel_tol=1e-12, abs_tol=1e-12)


AGGREGATES = [
    pytest.param(aggregate, marks=pytest.mark.skipif(_native is None,
                                                     reason="native kernel not built")),
    pytest.param(None, id="aggregate_by_polars"),
]


@pytest.mark.parametrize("how", AGGREGATES)
@settings(max_examples=200, deadline=None)
@given(rows=st.lists(field, max_size=80), in_doc_order=st.booleans(),
       docs=st.sets(st.integers(0, 7)), listed=st.sets(st.integers(0, N_ATTRIBUTES - 1)),
       weights=st.one_of(st.none(), st.lists(st.floats(0, 5), min_size=N_ATTRIBUTES,
                                             max_size=N_ATTRIBUTES)))
def test_aggregate_counts_each_field_once(how, rows, in_doc_order, docs, listed, weights):
    if in_doc_order:  # as the fields come; the other order is sorted first
        rows = sorted(rows, key=lambda r: r[0])
    fields = pl.DataFrame(rows, schema=FIELD_SCHEMA, orient="row")
    docs_in = pl.Series("doc", sorted(docs), dtype=pl.UInt32)
    weights_in = None if weights is None else pl.Series(weights, dtype=pl.Float64)
    names = pl.Series([f"a{i}" for i in range(N_ATTRIBUTES)])
    if how is None:
        got = aggregate_by_polars(fields, docs_in, sorted(listed), weights_in)
    else:  # the attributes listed by name in a config, as counts.aggregate takes them
        config = Config(attributes=[f"a{i}" for i in sorted(listed)] or None)
        got = how(fields, config, docs_in, names, weights_in)
    counts, documents, attributes = aggregated_in_python(rows, sorted(docs), listed, weights)

    assert got.counts.columns == ["doc", "attr", *COUNT_COLUMNS, "sum_similarity"]
    assert [(r["doc"], r["attr"]) for r in got.counts.iter_rows(named=True)] == [
        (doc, attr) for doc, attr, _ in counts]
    for row, (_, _, want) in zip(got.counts.iter_rows(named=True), counts, strict=True):
        assert {c: row[c] for c in COUNT_COLUMNS} == {c: want[c] for c in COUNT_COLUMNS}
        assert _close(row["sum_similarity"], want["sum_similarity"])

    assert got.documents.columns == ["doc", "macro_f1", *DOCUMENT_COUNTS, "w_correct",
                                     "w_scored"]
    assert got.documents["doc"].to_list() == sorted(documents)
    for row in got.documents.iter_rows(named=True):
        want = documents[row["doc"]]
        assert {c: row[c] for c in DOCUMENT_COUNTS} == {c: want[c] for c in DOCUMENT_COUNTS}
        assert _close(row["w_correct"], want["w_correct"])
        assert _close(row["w_scored"], want["w_scored"])
        f1s = want["f1"]
        assert _close(row["macro_f1"], sum(f1s) / len(f1s) if f1s else None)

    assert got.attributes.columns == ["attr", *ADDITIVE_COLUMNS]
    assert got.attributes["attr"].to_list() == sorted(attributes)
    for row in got.attributes.iter_rows(named=True):
        want = attributes[row["attr"]]
        assert {c: row[c] for c in COUNT_COLUMNS} == {c: want[c] for c in COUNT_COLUMNS}
        assert _close(row["sum_similarity"], want["sum_similarity"])
