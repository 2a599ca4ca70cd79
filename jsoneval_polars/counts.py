"""Additive integer counts per (document, attribute) (SPEC §3, §4, §6).

Every later figure is a ratio of sums of these columns, so a dataset scored whole equals the
same dataset scored in parts with the counts added up (see rates.py).
"""

from __future__ import annotations

import polars as pl

from .config import Config, Strategy
from .flatten import path_keys

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


def _n(cond: pl.Expr) -> pl.Expr:
    return cond.sum().cast(pl.Int64)


def doc_attribute_counts(fields: pl.DataFrame, config: Config, docs: pl.Series) -> pl.DataFrame:
    """Counts per (doc, attribute) from the fields table.

    ``docs`` lists the batch's scored document positions: with configured attributes, a listed
    attribute that a document lacks adds one TN cell there (SPEC §6).
    """
    bucket, cell = pl.col("bucket"), pl.col("cell")
    scored = (bucket == "both_non_null") & (pl.col("strategy") != Strategy.IGNORE.value)
    counts = fields.group_by("doc", "attribute").agg(
        pl.len().cast(pl.Int64).alias("n_total_distinct"),
        _n(bucket.is_in(["both_non_null", "aio_missing_or_null"])).alias("n_gt_non_null"),
        _n(bucket == "both_non_null").alias("n_both_non_null"),
        _n(bucket == "aio_missing_or_null").alias("n_aio_missing_or_null"),
        _n(bucket == "extra_keys").alias("n_extra_keys"),
        _n(bucket == "gt_null_aio_has_value").alias("n_gt_null_aio_has_value"),
        _n(scored).alias("n_scored"),
        _n(scored & pl.col("match")).alias("n_correct"),
        _n(cell == "TP").alias("tp"),
        _n(cell == "TN").alias("tn"),
        _n(cell.is_in(["FP", "FP+FN"])).alias("fp"),
        _n(cell.is_in(["FN", "FP+FN"])).alias("fn"),
        _n(scored & pl.col("similarity").is_not_null()).alias("n_similarity"),
        pl.col("similarity").filter(scored).sum().alias("sum_similarity"),
    )
    if config.attributes:
        wanted = pl.DataFrame(
            {"attribute": [a for a in config.attributes if not _ignored(a, config)]},
            schema={"attribute": pl.String},
        )
        missing = (
            pl.DataFrame({"doc": docs.cast(pl.UInt32)})
            .join(wanted, how="cross")
            .join(counts.select("doc", "attribute"), on=["doc", "attribute"], how="anti")
            .with_columns(
                *[pl.lit(0, pl.Int64).alias(c) for c in COUNT_COLUMNS if c != "tn"],
                pl.lit(1, pl.Int64).alias("tn"),
                pl.lit(0.0).alias("sum_similarity"),
            )
        )
        counts = pl.concat([counts, missing.select(counts.columns)])
    return counts
