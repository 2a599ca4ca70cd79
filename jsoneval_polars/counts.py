"""Additive integer counts per (document, attribute) (SPEC §3, §4, §6).

Every later figure is a ratio of sums of these columns, so a dataset scored whole equals the
same dataset scored in parts with the counts added up (see rates.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from .config import Config, Strategy
from .flatten import path_keys
from .schemas import (
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
    TN,
    TOTALS,
    TP,
)


def _ignored(attribute: str, config: Config) -> bool:
    """An attribute IGNOREd by its own entry or its bare field name gets no cells at all."""
    keys = path_keys(attribute)
    strategy = config.field_strategies.get(attribute) or (
        config.field_strategies.get(keys[-1]) if keys else None
    )
    return strategy == Strategy.IGNORE


@dataclass(frozen=True)
class Aggregate:
    """A batch's counts three ways (:func:`aggregate`).

    ``counts``: per (doc, attr), in that order: doc, attr, COUNT_COLUMNS, sum_similarity;
    ``documents``: per document with counts, in order: :func:`document_sums`' columns;
    ``attributes``: per attr, in order: attr and the ADDITIVE_COLUMNS' sums."""

    counts: pl.DataFrame
    documents: pl.DataFrame
    attributes: pl.DataFrame


#: The columns of the fields table the counts are taken from.
COUNTED = ("doc", "attr", "bucket", "cell", "strategy", "match", "similarity")


def aggregate(
    fields: pl.DataFrame, config: Config, docs: pl.Series, attributes: pl.Series,
    weights: pl.Series | None = None,
) -> Aggregate:
    """The counts of a batch's fields per (doc, attr), their sums per document and per
    attribute. ``attr`` is an id into ``attributes`` (sorted distinct names, config.attributes
    included); bucket, cell and strategy are codes (classify.py, similarity.py). ``docs``
    lists the batch's scored document positions: with configured attributes, a listed
    attribute that a document lacks adds one TN cell there (SPEC §6). ``weights`` (one per
    attribute id; field_weights) weigh each group's n_correct and n_scored in its document's
    w_correct and w_scored; without them every weight is 1.

    By the native kernel whenever it is built, in one pass over the rows (src/counting.rs);
    else by :func:`aggregate_by_polars`, its reference."""
    from .flatten import _native

    listed = _listed_ids(config, attributes)
    if _native is None:
        return aggregate_by_polars(fields, docs, listed, weights)
    counts, documents, per_attribute = _native.aggregate(
        fields.select(COUNTED), list(BUCKETS), list(CELLS), IGNORE, docs.to_list(), listed,
        None if weights is None else weights.to_list(), attributes.len(),
    )
    return Aggregate(pl.DataFrame(counts).with_columns(pl.col("doc").set_sorted()),
                     pl.DataFrame(documents), pl.DataFrame(per_attribute))


def _listed_ids(config: Config, attributes: pl.Series) -> list[int]:
    """The ids of config.attributes that count where a document lacks them (not IGNOREd)."""
    if not config.attributes:
        return []
    pos = {name: i for i, name in enumerate(attributes.to_list())}
    return [pos[a] for a in config.attributes if not _ignored(a, config)]


def aggregate_by_polars(
    fields: pl.DataFrame, docs: pl.Series, listed: Sequence[int],
    weights: pl.Series | None = None,
) -> Aggregate:
    """:func:`aggregate` by Polars expressions and numpy (``listed``: its attribute ids)."""
    counts = doc_attribute_counts(fields, docs, listed)
    if weights is None:
        weighted = (pl.col("n_correct").cast(pl.Float64).alias("w_correct"),
                    pl.col("n_scored").cast(pl.Float64).alias("w_scored"))
    else:
        w = pl.lit(weights).gather(pl.col("attr"))
        weighted = ((w * pl.col("n_correct")).alias("w_correct"),
                    (w * pl.col("n_scored")).alias("w_scored"))
    per_attribute = counts.group_by("attr").agg(pl.col(*ADDITIVE_COLUMNS).sum()).sort("attr")
    f1 = f1_of(pl.col("tp"), pl.col("fp"), pl.col("fn")).alias("f1")
    return Aggregate(counts, document_sums(counts.with_columns(f1, *weighted)), per_attribute)


def doc_attribute_counts(
    fields: pl.DataFrame, docs: pl.Series, listed: Sequence[int]
) -> pl.DataFrame:
    """:func:`aggregate`'s counts per (doc, attr), in that order (``listed``: the ids of the
    attributes a document in ``docs`` that lacks one has a TN cell of).

    The groups and what is added up in them come from :func:`group_counts`; the named
    columns are sums of its bucket and cell code counts.
    """
    key = (pl.col("doc").cast(pl.UInt64) * 2**32 + pl.col("attr").cast(pl.UInt64)).alias("_k")
    scored = (
        (pl.col("bucket") == BOTH_NON_NULL) & (pl.col("strategy") != IGNORE)
    ).fill_null(False)
    groups = group_counts(fields.select(
        "doc",
        "attr",
        pl.col("bucket").fill_null(len(BUCKETS)).cast(pl.UInt32),
        pl.col("cell").fill_null(len(CELLS)).cast(pl.UInt32),
        scored.alias("scored"),
        (scored & pl.col("match")).fill_null(False).alias("correct"),
        (scored & pl.col("similarity").is_not_null()).alias("has_similarity"),
        "similarity",
    ), len(BUCKETS) + 1, len(CELLS) + 1)

    def b(code: int) -> pl.Expr:
        return pl.col(f"bucket_{code}")

    def c(code: int) -> pl.Expr:
        return pl.col(f"cell_{code}")

    counts = groups.select(
        key,
        pl.col("rows").alias("n_total_distinct"),
        (b(BOTH_NON_NULL) + b(AIO_MISSING_OR_NULL)).alias("n_gt_non_null"),
        b(BOTH_NON_NULL).alias("n_both_non_null"),
        b(AIO_MISSING_OR_NULL).alias("n_aio_missing_or_null"),
        b(EXTRA_KEYS).alias("n_extra_keys"),
        b(GT_NULL_AIO_HAS_VALUE).alias("n_gt_null_aio_has_value"),
        pl.col("scored").alias("n_scored"),
        pl.col("correct").alias("n_correct"),
        c(TP).alias("tp"),
        c(TN).alias("tn"),
        (c(FP) + c(FP_FN)).alias("fp"),
        (c(FN) + c(FP_FN)).alias("fn"),
        pl.col("has_similarity").alias("n_similarity"),
        "sum_similarity",
    )
    if listed:
        missing = (
            pl.DataFrame({"doc": docs.cast(pl.UInt32)})
            .join(pl.DataFrame({"attr": pl.Series(listed, dtype=pl.UInt32)}), how="cross")
            .select(key)
            .join(counts.select("_k"), on="_k", how="anti")
            .with_columns(
                *[pl.lit(0, pl.Int64).alias(c) for c in COUNT_COLUMNS if c != "tn"],
                pl.lit(1, pl.Int64).alias("tn"),
                pl.lit(0.0).alias("sum_similarity"),
            )
        )
        counts = pl.concat([counts, missing.select(counts.columns)]).sort("_k", maintain_order=True)
    return counts.select(
        (pl.col("_k") // 2**32).cast(pl.UInt32).set_sorted().alias("doc"),
        (pl.col("_k") % 2**32).cast(pl.UInt32).alias("attr"),
        pl.exclude("_k"),
    )


def group_counts(rows: pl.DataFrame, n_buckets: int, n_cells: int) -> pl.DataFrame:
    """Per (doc, attr) group of the fields ``rows`` (doc, attr, bucket and cell codes below
    ``n_buckets`` / ``n_cells``, the flags scored, correct, has_similarity, and similarity), in
    (doc, attr) order: doc, attr, rows, rows per bucket code (bucket_0...) and per cell code
    (cell_0...), flagged rows (Int64), and sum_similarity, the scored rows' similarities.

    By one stable sort of a packed (doc, attr) key (the rows come in
    document order, so the sort is short work) and bincounts of the group ids; only the
    similarity sum is a Polars aggregation, over the sorted groups (a Polars group_by with
    fourteen aggregations cost ten times more)."""
    k = rows.select(
        pl.col("doc").cast(pl.UInt64) * 2**32 + pl.col("attr").cast(pl.UInt64)
    ).to_series().to_numpy()
    order = np.argsort(k, kind="stable")
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[order][1:] != k[order][:-1]
    group = np.empty(len(k), dtype=np.int64)
    group[order] = np.cumsum(first) - 1
    n = int(first.sum())

    def per_group(code: str, n_codes: int) -> np.ndarray:
        return np.bincount(
            group * n_codes + rows[code].to_numpy().astype(np.int64), minlength=n * n_codes
        ).reshape(n, n_codes)

    def n_true(flag: str) -> np.ndarray:
        return np.bincount(group[rows[flag].to_numpy()], minlength=n)

    buckets, cells = per_group("bucket", n_buckets), per_group("cell", n_cells)
    keys = k[order][first]
    return pl.DataFrame(
        {
            "doc": (keys >> 32).astype(np.uint32),
            "attr": (keys & 0xFFFFFFFF).astype(np.uint32),
            "rows": np.bincount(group, minlength=n),
            **{f"bucket_{j}": buckets[:, j] for j in range(n_buckets)},
            **{f"cell_{j}": cells[:, j] for j in range(n_cells)},
            **{flag: n_true(flag) for flag in ("scored", "correct", "has_similarity")},
        },
        schema_overrides={
            "rows": pl.Int64, "scored": pl.Int64, "correct": pl.Int64, "has_similarity": pl.Int64,
            **{f"bucket_{j}": pl.Int64 for j in range(n_buckets)},
            **{f"cell_{j}": pl.Int64 for j in range(n_cells)},
        },
    ).with_columns(
        rows.select("similarity", "scored")[order]
        .with_columns(pl.Series("_g", group[order]).set_sorted())
        .group_by("_g", maintain_order=True)
        .agg(pl.col("similarity").filter(pl.col("scored")).sum().alias("sum_similarity"))[
            "sum_similarity"
        ]
    )


def f1_of(tp: pl.Expr, fp: pl.Expr, fn: pl.Expr) -> pl.Expr:
    """F1 = 2TP / (2TP + FP + FN), null where that denominator is 0 (rates.prf's F1; a
    document's macro_f1 is the mean of its attributes')."""
    den = 2 * tp + fp + fn
    return pl.when(den > 0).then(2 * tp / den).otherwise(pl.lit(None, pl.Float64))


#: The (doc, attribute) counts a document's row sums: all but n_similarity.
DOCUMENT_COUNTS = [c for c in COUNT_COLUMNS if c != "n_similarity"]


def document_sums(counts: pl.DataFrame) -> pl.DataFrame:
    """Per document (``doc``, one row each, in order): the sums of DOCUMENT_COUNTS and of
    w_correct and w_scored, and macro_f1, the mean of the attributes' non-null ``f1``.

    The counts come grouped by document (:func:`group_counts` numbers each document's groups
    in turn), so each sum is one pass over a column's runs (numpy's ``reduceat``), where a
    hash group-by took 3x as long (11 against 3.3 ms on a 7,000-pair batch); counts in any
    other order are sorted first."""
    if not counts["doc"].is_sorted():
        counts = counts.sort("doc", maintain_order=True)
    doc = counts["doc"].to_numpy()
    if not len(doc):
        return counts.select("doc", pl.lit(None, pl.Float64).alias("macro_f1"),
                             *DOCUMENT_COUNTS, "w_correct", "w_scored")
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    f1 = counts["f1"]
    n_f1 = np.add.reduceat(f1.is_not_null().to_numpy().astype(np.int64), starts)
    sum_f1 = np.add.reduceat(f1.fill_null(0.0).to_numpy(), starts)
    columns = {name: np.add.reduceat(counts[name].to_numpy(), starts)
               for name in (*DOCUMENT_COUNTS, "w_correct", "w_scored")}
    return pl.DataFrame({
        "doc": counts["doc"].gather(starts),
        "macro_f1": pl.Series(sum_f1 / np.maximum(n_f1, 1)).scatter(
            np.flatnonzero(n_f1 == 0), None),
        **{name: pl.Series(name, values, dtype=counts.schema[name])
           for name, values in columns.items()},
    })


# --- the run state --------------------------------------------------------------------------



@dataclass(frozen=True)
class RunState:
    """Everything a run's rates are derived from, and nothing that is not additive.

    ``counts``: the additive columns per (key columns, attribute), where the key columns are
    ``doc_id`` and/or metadata columns (a driver drops ``doc_id`` before shipping a state);
    ``totals``: one row of :data:`TOTALS`. Two states merge by a group-by sum
    (:func:`merge_states`); :func:`rates.finish` turns a state into the attribute table and
    the summary.
    """

    counts: pl.DataFrame
    totals: pl.DataFrame

    def keyed_by(self, keys: Sequence[str]) -> RunState:
        """The same state with its counts summed per (``keys``, attribute)."""
        keys = [k for k in keys if k in self.counts.columns]
        return RunState(_sum_by(self.counts, keys), self.totals)


def _sum_by(counts: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    return (
        counts.group_by(*keys, "attribute", maintain_order=True)
        .agg(pl.col(*ADDITIVE_COLUMNS).sum())
        .select(*keys, "attribute", *ADDITIVE_COLUMNS)
    )


def run_state(
    counts: pl.DataFrame | None = None,
    documents: pl.DataFrame | None = None,
    errors: pl.DataFrame | None = None,
    n_read: Mapping[str, int] | None = None,
    keys: Sequence[str] = (),
) -> RunState:
    """The state of some documents: their ``counts`` (per doc and attribute, summed here per
    (``keys``, attribute)), their ``documents`` rows, error rows and records read per side."""
    totals = {name: 0 for name in TOTALS}
    if documents is not None and documents.height:
        totals.update(documents.select(
            pl.len().alias("n_documents"),
            (~pl.col("aio_present")).sum().alias("n_gt_only"),
            (~pl.col("gt_present")).sum().alias("n_aio_only"),
            pl.col("passed").sum().alias("n_passed"),
            *[pl.col(m).sum().alias(f"sum_{m}")
              for m in ("completeness", "hallucination", "accuracy", "rqs")],
            pl.col("anls").count().alias("n_anls"),
            pl.col("anls").sum().alias("sum_anls"),
        ).row(0, named=True))
    if errors is not None and errors.height:
        n_errors = errors.filter(pl.col("severity") == "error").height
        totals.update(n_errors=n_errors, n_warnings=errors.height - n_errors)
    if n_read:
        totals.update(n_read_gt=n_read.get("gt", 0), n_read_aio=n_read.get("aio", 0))
    if counts is None:
        counts = pl.DataFrame(schema={
            "attribute": pl.String,
            **{c: (pl.Float64 if c == "sum_similarity" else pl.Int64) for c in ADDITIVE_COLUMNS},
        })
    summed = _sum_by(counts, [k for k in keys if k in counts.columns])
    # a batch's counts may label attributes with an Enum of its own (core.score_batch's
    # dictionary); states of batches merge on the strings
    return RunState(summed.with_columns(pl.col("attribute").cast(pl.String)),
                    pl.DataFrame([totals], schema=TOTALS))


def merge_states(states: Iterable[RunState]) -> RunState:
    """One state from several: the group-by sum of their counts and the sum of their totals."""
    states = list(states)
    counts = pl.concat([s.counts for s in states], how="diagonal_relaxed")
    keys = [c for c in counts.columns if c not in ADDITIVE_COLUMNS and c != "attribute"]
    totals = pl.concat([s.totals for s in states]).sum()
    return RunState(_sum_by(counts, keys), totals)
