"""Additive integer counts per (document, attribute) (SPEC §3, §4, §6).

Every later figure is a ratio of sums of these columns, so a dataset scored whole equals the
same dataset scored in parts with the counts added up (see rates.py).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .classify import (
    AIO_MISSING_OR_NULL,
    BOTH_NON_NULL,
    BUCKETS,
    CELLS,
    EXTRA_KEYS,
    FN,
    FP,
    FP_FN,
    GT_NULL_AIO_HAS_VALUE,
    TN,
    TP,
)
from .config import Config, Strategy
from .flatten import path_keys
from .similarity import IGNORE

COUNT_COLUMNS = (
    "n_total_distinct",
    "n_gt_non_null",
    "n_both_non_null",
    "n_aio_missing_or_null",
    "n_extra_keys",
    "n_gt_null_aio_has_value",
    "n_scored",
    "n_correct",
    "tp",
    "tn",
    "fp",
    "fn",
    "n_similarity",
)


def _ignored(attribute: str, config: Config) -> bool:
    """An attribute IGNOREd by its own entry or its bare field name gets no cells at all."""
    keys = path_keys(attribute)
    strategy = config.field_strategies.get(attribute) or (
        config.field_strategies.get(keys[-1]) if keys else None
    )
    return strategy == Strategy.IGNORE


def doc_attribute_counts(
    fields: pl.DataFrame, config: Config, docs: pl.Series, attributes: pl.Series
) -> pl.DataFrame:
    """Counts per (doc, attr) from the fields table, in (doc, attribute) order.

    ``attr`` is an id into ``attributes`` (sorted distinct names, config.attributes included);
    bucket, cell and strategy are codes (classify.py, similarity.py). ``docs`` lists the batch's
    scored document positions: with configured attributes, a listed attribute that a document
    lacks adds one TN cell there (SPEC §6).

    Rows are grouped by one stable sort of a packed (doc, attr) key (the fields come in (doc,
    path) order, so the sort is short work) and the integer counts are bincounts of the group
    ids by bucket and cell code: a Polars group_by with fourteen aggregations cost ten times
    more. Only the similarity sum stays a Polars aggregation, over the sorted groups, so that it
    is the same float sum as before.
    """
    key = (pl.col("doc").cast(pl.UInt64) * 2**32 + pl.col("attr").cast(pl.UInt64)).alias("_k")
    scored = (
        (pl.col("bucket") == BOTH_NON_NULL) & (pl.col("strategy") != IGNORE)
    ).fill_null(False)
    rows = fields.select(
        key,
        pl.col("bucket").fill_null(len(BUCKETS)).cast(pl.Int64),
        pl.col("cell").fill_null(len(CELLS)).cast(pl.Int64),
        scored.alias("scored"),
        (scored & pl.col("match")).fill_null(False).alias("correct"),
        (scored & pl.col("similarity").is_not_null()).alias("has_similarity"),
        "similarity",
    )
    k = rows["_k"].to_numpy()
    order = np.argsort(k, kind="stable")
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[order][1:] != k[order][:-1]
    group = np.empty(len(k), dtype=np.int64)
    group[order] = np.cumsum(first) - 1
    n = int(first.sum())

    def per_group(code: str, n_codes: int) -> np.ndarray:
        return np.bincount(
            group * n_codes + rows[code].to_numpy(), minlength=n * n_codes
        ).reshape(n, n_codes)

    def n_true(flag: str) -> np.ndarray:
        return np.bincount(group[rows[flag].to_numpy()], minlength=n)

    b = per_group("bucket", len(BUCKETS) + 1)
    c = per_group("cell", len(CELLS) + 1)
    counts = pl.DataFrame(
        {
            "_k": k[order][first],
            "n_total_distinct": np.bincount(group, minlength=n),
            "n_gt_non_null": b[:, BOTH_NON_NULL] + b[:, AIO_MISSING_OR_NULL],
            "n_both_non_null": b[:, BOTH_NON_NULL],
            "n_aio_missing_or_null": b[:, AIO_MISSING_OR_NULL],
            "n_extra_keys": b[:, EXTRA_KEYS],
            "n_gt_null_aio_has_value": b[:, GT_NULL_AIO_HAS_VALUE],
            "n_scored": n_true("scored"),
            "n_correct": n_true("correct"),
            "tp": c[:, TP],
            "tn": c[:, TN],
            "fp": c[:, FP] + c[:, FP_FN],
            "fn": c[:, FN] + c[:, FP_FN],
            "n_similarity": n_true("has_similarity"),
        },
        schema_overrides={name: pl.Int64 for name in COUNT_COLUMNS},
    ).with_columns(
        rows.select("_k", "similarity", "scored")[order]
        .with_columns(pl.col("_k").set_sorted())
        .group_by("_k", maintain_order=True)
        .agg(pl.col("similarity").filter(pl.col("scored")).sum().alias("sum_similarity"))[
            "sum_similarity"
        ]
    )
    if config.attributes:
        pos = {name: i for i, name in enumerate(attributes.to_list())}
        wanted = [pos[a] for a in config.attributes if not _ignored(a, config)]
        missing = (
            pl.DataFrame({"doc": docs.cast(pl.UInt32)})
            .join(pl.DataFrame({"attr": pl.Series(wanted, dtype=pl.UInt32)}), how="cross")
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
