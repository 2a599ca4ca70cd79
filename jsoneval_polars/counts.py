"""Additive integer counts per (document, attribute) (SPEC §3, §4, §6).

Every later figure is a ratio of sums of these columns, so a dataset scored whole equals the
same dataset scored in parts with the counts added up (see rates.py).
"""

from __future__ import annotations

import polars as pl

from .classify import (
    AIO_MISSING_OR_NULL,
    BOTH_NON_NULL,
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
    fields: pl.DataFrame,
    config: Config,
    docs: pl.Series,
    attributes: pl.Series,
    path_attr: pl.Series,
) -> pl.DataFrame:
    """Counts per (doc, attr) from the fields table, in (doc, attribute) order.

    ``attr`` is an id into ``attributes`` (sorted distinct names, config.attributes included),
    ``path_attr`` the attr of each path id; bucket, cell and strategy are codes (classify.py,
    similarity.py). ``docs`` lists the batch's scored document positions: with configured
    attributes, a listed attribute that a document lacks adds one TN cell there (SPEC §6).
    """
    bucket, cell = pl.col("bucket"), pl.col("cell")
    scored = (bucket == BOTH_NON_NULL) & (pl.col("strategy") != IGNORE)
    conditions = {
        "n_gt_non_null": bucket.is_in([BOTH_NON_NULL, AIO_MISSING_OR_NULL]),
        "n_both_non_null": bucket == BOTH_NON_NULL,
        "n_aio_missing_or_null": bucket == AIO_MISSING_OR_NULL,
        "n_extra_keys": bucket == EXTRA_KEYS,
        "n_gt_null_aio_has_value": bucket == GT_NULL_AIO_HAS_VALUE,
        "n_scored": scored,
        "n_correct": scored & pl.col("match"),
        "tp": cell == TP,
        "tn": cell == TN,
        "fp": cell.is_in([FP, FP_FN]),
        "fn": cell.is_in([FN, FP_FN]),
        "n_similarity": scored & pl.col("similarity").is_not_null(),
    }
    # one integer key: grouping and sorting on (doc, attr) pairs costs several times more
    key = (pl.col("doc").cast(pl.UInt64) * 2**32 + pl.col("attr").cast(pl.UInt64)).alias("_k")
    rows = fields.select(
        key,
        # an attribute with one path (no list in it) has one row per document: no grouping
        pl.lit(path_attr.is_duplicated()).gather(pl.col("pid")).alias("_grouped"),
        *[c.fill_null(False).alias(name) for name, c in conditions.items()],
        "similarity",
    )
    single = rows.filter(~pl.col("_grouped")).select(
        "_k",
        pl.lit(1, pl.Int64).alias("n_total_distinct"),
        *[pl.col(name).cast(pl.Int64) for name in conditions],
        pl.when(pl.col("n_similarity"))
        .then(pl.col("similarity"))
        .otherwise(0.0)
        .alias("sum_similarity"),
    )
    grouped = rows.filter(pl.col("_grouped")).group_by("_k").agg(
        pl.len().cast(pl.Int64).alias("n_total_distinct"),
        *[pl.col(name).sum().cast(pl.Int64) for name in conditions],
        # the same sum as over the whole group: Polars' grouped float sum, in row order
        pl.col("similarity").filter(pl.col("n_scored")).sum().alias("sum_similarity"),
    )
    counts = pl.concat([single, grouped])
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
        counts = pl.concat([counts, missing.select(counts.columns)])
    return counts.sort("_k").select(
        (pl.col("_k") // 2**32).cast(pl.UInt32).set_sorted().alias("doc"),
        (pl.col("_k") % 2**32).cast(pl.UInt32).alias("attr"),
        pl.exclude("_k"),
    )
