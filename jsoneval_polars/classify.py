"""Leaves of both sides -> one row per (document, path) with its §3 set and §6 cell."""

from __future__ import annotations

import polars as pl

from .config import Config, Strategy

BUCKETS = (
    "extra_keys",
    "gt_null_aio_has_value",
    "both_non_null",
    "aio_missing_or_null",
)
CELLS = ("TP", "TN", "FP", "FN", "FP+FN")


def pair_leaves(gt: pl.DataFrame, aio: pl.DataFrame) -> pl.DataFrame:
    """Full outer join of the two sides' leaves on (doc, path), presence kept."""
    cols = ["doc", "path", "attribute", "key", "kind", "text", "is_null"]
    g = gt.select(cols).with_columns(pl.lit(True).alias("present"))
    a = aio.select(cols).with_columns(pl.lit(True).alias("present"))
    joined = g.join(a, on=["doc", "path"], how="full", coalesce=True, suffix="_aio")
    return joined.select(
        "doc",
        "path",
        pl.coalesce("attribute", "attribute_aio").alias("attribute"),
        pl.coalesce("key", "key_aio").alias("key"),
        pl.col("text").alias("gt_text"),
        pl.col("text_aio").alias("aio_text"),
        pl.col("kind").alias("gt_kind"),
        pl.col("kind_aio").alias("aio_kind"),
        pl.col("present").fill_null(False).alias("gt_present"),
        pl.col("present_aio").fill_null(False).alias("aio_present"),
        pl.col("is_null").fill_null(True).alias("gt_null"),
        pl.col("is_null_aio").fill_null(True).alias("aio_null"),
    )


def bucket_expr(config: Config) -> pl.Expr:
    gt_value = pl.col("gt_present") & ~pl.col("gt_null")
    aio_value = pl.col("aio_present") & ~pl.col("aio_null")
    extra_null = ~pl.col("gt_present") & pl.col("aio_present") & pl.lit(
        config.null_extra_is_hallucination
    )
    return (
        pl.when(gt_value & aio_value)
        .then(pl.lit("both_non_null"))
        .when(gt_value)
        .then(pl.lit("aio_missing_or_null"))
        .when(pl.col("gt_present") & aio_value)
        .then(pl.lit("gt_null_aio_has_value"))
        .when((~pl.col("gt_present") & aio_value) | extra_null)
        .then(pl.lit("extra_keys"))
        .otherwise(None)
        .alias("bucket")
    )


def cell_expr(config: Config) -> pl.Expr:
    gt_value = pl.col("gt_present") & ~pl.col("gt_null")
    aio_value = pl.col("aio_present") & ~pl.col("aio_null")
    counted = pl.col("strategy") != Strategy.IGNORE.value
    if config.attributes is not None:
        counted = counted & pl.col("attribute").is_in(list(config.attributes))
    return (
        pl.when(~counted)
        .then(None)
        .when(gt_value & aio_value)
        .then(pl.when(pl.col("match")).then(pl.lit("TP")).otherwise(pl.lit("FP+FN")))
        .when(aio_value)
        .then(pl.lit("FP"))
        .when(gt_value)
        .then(pl.lit("FN"))
        .otherwise(pl.lit("TN"))
        .alias("cell")
    )
