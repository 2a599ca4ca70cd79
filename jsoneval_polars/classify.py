"""Leaves of both sides -> one row per (document, path) with its §3 set and §6 cell.

``bucket`` and ``cell`` are codes into ``BUCKETS`` and ``CELLS`` (UInt8) until the output tables
are built: counting and comparing small integers is cheaper than strings.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .config import Config
from .schemas import (
    AIO_MISSING_OR_NULL,
    BOTH_NON_NULL,
    CODE,
    EXTRA_KEYS,
    FN,
    FP,
    FP_FN,
    GT_NULL_AIO_HAS_VALUE,
    IGNORE,
    TN,
    TP,
)


def pair_leaves(gt: pl.DataFrame, aio: pl.DataFrame) -> pl.DataFrame:
    """Full outer join of the two sides' leaves on (doc, pid), presence kept, in (doc, pid)
    order; a side's rows whose ``keep`` column (if it has one) is false take no part. The
    native kernel gathers the leaves' columns too (sharing their text buffers) when it is
    built and the texts are string views, as Polars hands them over."""
    from .flatten import _native

    if _native is not None:
        table = _native.pair_leaves(
            *(side.select("doc", pl.col("pid").cast(pl.UInt32), "kind", "text", "is_null",
                          *_keep(side)) for side in (gt, aio)),
            gather=True,
        )
        if table is not None:
            return pl.DataFrame(table)
    return pair_leaves_by_polars(gt, aio)


def pair_leaves_by_polars(gt: pl.DataFrame, aio: pl.DataFrame) -> pl.DataFrame:
    """:func:`pair_leaves` with the leaves' columns gathered by Polars."""
    at = paired_rows(gt, aio)
    cols = ["kind", "text", "is_null"]
    g = gt.select(pl.col(cols).gather(at["g"]))
    a = aio.select(pl.col(cols).gather(at["a"]))
    return pl.DataFrame(
        [
            at["doc"],
            at["pid"],
            g["text"].alias("gt_text"),
            a["text"].alias("aio_text"),
            g["kind"].alias("gt_kind"),
            a["kind"].alias("aio_kind"),
            at["g"].is_not_null().alias("gt_present"),
            at["a"].is_not_null().alias("aio_present"),
            g["is_null"].fill_null(True).alias("gt_null"),
            a["is_null"].fill_null(True).alias("aio_null"),
        ]
    )


def paired_rows(gt: pl.DataFrame, aio: pl.DataFrame) -> pl.DataFrame:
    """doc, pid (UInt32) and the row of each side's leaf there (g, a; null for none), in
    (doc, pid) order: by the native merge (src/pairing.rs), which sorts each document's few
    leaves on their own, whenever the extension is built."""
    from .flatten import _native

    if _native is None:
        return paired_rows_by_numpy(gt, aio)
    return pl.DataFrame(_native.pair_leaves(
        *(side.select("doc", pl.col("pid").cast(pl.UInt32), *_keep(side)) for side in (gt, aio))
    ))


def _keep(side: pl.DataFrame) -> list[str]:
    return ["keep"] if "keep" in side.columns else []


def paired_rows_by_numpy(gt: pl.DataFrame, aio: pl.DataFrame) -> pl.DataFrame:
    """:func:`paired_rows` by one sort: every leaf gets the key doc << 33 | pid << 1 | side, so
    after sorting the keys a path's GT row (if any) directly precedes its AIO row (if any). A
    path is unique within a document and side. Each side comes in document order, so the
    stable sort (timsort over runs) is several times faster than Polars' sort here."""
    n_gt = gt.height
    key = np.concatenate(
        [side.select(_key(s)).to_series().to_numpy() for s, side in enumerate((gt, aio))]
    )
    kept = np.concatenate([side["keep"].to_numpy() if "keep" in side.columns
                           else np.ones(side.height, dtype=bool) for side in (gt, aio)])
    rows = np.flatnonzero(kept)
    order = rows[np.argsort(key[rows], kind="stable")]
    key = key[order]
    if np.any(key[1:] == key[:-1]):
        raise ValueError("a document has two leaves with the same path on one side")
    path = key >> 1
    new_path = np.ones(len(path), dtype=bool)
    new_path[1:] = path[1:] != path[:-1]
    starts = np.flatnonzero(new_path)
    nxt = np.minimum(starts + 1, len(key) - 1)
    paired = (path[nxt] == path[starts]) & (starts + 1 < len(key))
    from_gt = (key[starts] & 1) == 0
    g_at = np.where(from_gt, order[starts], -1)
    a_at = np.where(from_gt, np.where(paired, order[nxt], -1), order[starts]) - n_gt
    return pl.DataFrame({
        "doc": pl.Series(path[starts] >> 32, dtype=pl.UInt32),
        "pid": pl.Series(path[starts] & 0xFFFFFFFF, dtype=pl.UInt32),
        "g": g_at, "a": a_at,
    }).with_columns(
        pl.when(pl.col(c) >= 0).then(pl.col(c)).cast(pl.UInt32).alias(c) for c in ("g", "a")
    )


def _key(side: int) -> pl.Expr:
    return (
        pl.col("doc").cast(pl.UInt64) * 2**33 + pl.col("pid").cast(pl.UInt64) * 2 + side
    ).alias("_k")


def _lit(c: int) -> pl.Expr:
    return pl.lit(c, CODE)


def bucket_expr(config: Config) -> pl.Expr:
    gt_value = pl.col("gt_present") & ~pl.col("gt_null")
    aio_value = pl.col("aio_present") & ~pl.col("aio_null")
    extra_null = ~pl.col("gt_present") & pl.col("aio_present") & pl.lit(
        config.null_extra_is_hallucination
    )
    return (
        pl.when(gt_value & aio_value)
        .then(_lit(BOTH_NON_NULL))
        .when(gt_value)
        .then(_lit(AIO_MISSING_OR_NULL))
        .when(pl.col("gt_present") & aio_value)
        .then(_lit(GT_NULL_AIO_HAS_VALUE))
        .when((~pl.col("gt_present") & aio_value) | extra_null)
        .then(_lit(EXTRA_KEYS))
        .otherwise(None)
        .alias("bucket")
    )


def cell_expr(config: Config) -> pl.Expr:
    """Needs ``listed`` (the attribute is one of config.attributes) when those are set."""
    gt_value = pl.col("gt_present") & ~pl.col("gt_null")
    aio_value = pl.col("aio_present") & ~pl.col("aio_null")
    counted = pl.col("strategy") != IGNORE
    if config.attributes is not None:
        counted = counted & pl.col("listed")
    return (
        pl.when(~counted)
        .then(None)
        .when(gt_value & aio_value)
        .then(pl.when(pl.col("match")).then(_lit(TP)).otherwise(_lit(FP_FN)))
        .when(aio_value)
        .then(_lit(FP))
        .when(gt_value)
        .then(_lit(FN))
        .otherwise(_lit(TN))
        .alias("cell")
    )


def decode(column: str, names: tuple[str, ...] | pl.Series) -> pl.Expr:
    """String column from a code column."""
    return pl.lit(pl.Series(names, dtype=pl.String)).gather(pl.col(column)).alias(column)
