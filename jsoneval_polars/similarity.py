"""Field similarity and match (SPEC §4): EXACT, FUZZY, NUMERIC, SEMANTIC, IGNORE.

rapidfuzz and the semantic scorer only ever see the distinct (gt, aio) text pairs of a batch;
everything else is Polars expressions.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .config import Config, Strategy
from .scorers import Scorer, resolve_scorer
from .values import is_date_or_email, parse_number

_TINY = 1e-12


def levenshtein_similarity(pairs: pl.DataFrame, a: str, b: str) -> pl.Series:
    """1 − distance / max(len) for each row of two non-null string columns (1 when both empty).

    The integer distances come from rapidfuzz on the distinct pairs; the ratio is taken here in
    float64, which is the formula of rapidfuzz's ``Levenshtein.normalized_similarity``.
    """
    if pairs.height == 0:
        return pl.Series("similarity", [], dtype=pl.Float64)
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    uniq = pairs.select(a, b).unique()
    dist = process.cpdist(
        uniq[a].to_list(),
        uniq[b].to_list(),
        scorer=Levenshtein.distance,
        dtype=np.int32,
        workers=-1,
    )
    longest = pl.max_horizontal(pl.col(a).str.len_chars(), pl.col(b).str.len_chars())
    uniq = uniq.with_columns(pl.Series("_d", dist, dtype=pl.Int64)).with_columns(
        pl.when(longest == 0).then(1.0).otherwise(1.0 - pl.col("_d") / longest).alias("_sim")
    )
    return pairs.select(a, b).join(uniq, on=[a, b], how="left", maintain_order="left")["_sim"]


def _semantic_similarity(pairs: pl.DataFrame, scorer: Scorer) -> pl.Series:
    if pairs.height == 0:
        return pl.Series("similarity", [], dtype=pl.Float64)
    uniq = pairs.select("gt_text", "aio_text").unique(maintain_order=True)
    scores = np.asarray(scorer(uniq["gt_text"].to_list(), uniq["aio_text"].to_list()), dtype=float)
    if scores.shape != (uniq.height,):
        raise ValueError(
            f"semantic scorer returned {scores.shape[0] if scores.ndim else 'a scalar'} scores "
            f"for {uniq.height} pairs"
        )
    uniq = uniq.with_columns(pl.Series("_sim", scores).clip(0.0, 1.0))
    return pairs.join(uniq, on=["gt_text", "aio_text"], how="left", maintain_order="left")["_sim"]


def strategy_expr(config: Config) -> pl.Expr:
    """Strategy of each field row: explicit attribute, then bare field name, then detection."""
    by_attr = {k: v.value for k, v in config.field_strategies.items()}
    gt_has = pl.col("gt_present") & ~pl.col("gt_null")
    kind = (
        pl.when(gt_has)
        .then(pl.col("gt_kind"))
        .when(pl.col("aio_present") & ~pl.col("aio_null"))
        .then(pl.col("aio_kind"))
    )
    text = pl.when(gt_has).then(pl.col("gt_text")).otherwise(pl.col("aio_text"))
    detected = (
        pl.when(kind.is_in(["bool", "int", "float", "array", "object"]))
        .then(pl.lit(Strategy.EXACT.value))
        .when((kind == "string") & is_date_or_email(text))
        .then(pl.lit(Strategy.EXACT.value))
        .otherwise(pl.lit(config.default_text_strategy.value))
    )
    if not by_attr:
        return detected.alias("strategy")
    explicit = pl.col("attribute").replace_strict(by_attr, default=None, return_dtype=pl.String)
    bare = pl.col("key").replace_strict(by_attr, default=None, return_dtype=pl.String)
    return pl.coalesce(explicit, bare, detected).alias("strategy")


def score_fields(
    fields: pl.DataFrame, config: Config, semantic_scorer: Scorer | str | None = None
) -> pl.DataFrame:
    """Add ``similarity`` and ``match`` to the rows of bucket ``both_non_null``.

    Needs columns bucket, strategy, gt_text, aio_text, gt_kind, aio_kind.
    """
    scored = (pl.col("bucket") == "both_non_null").fill_null(False)
    fields = fields.with_row_index("_row")
    need_fuzzy = fields.filter(scored & (pl.col("strategy") == Strategy.FUZZY.value))
    need_sem = fields.filter(scored & (pl.col("strategy") == Strategy.SEMANTIC.value))
    side = pl.concat(
        [
            need_fuzzy.select(
                "_row", levenshtein_similarity(need_fuzzy, "gt_text", "aio_text").alias("_text_sim")
            ),
            need_sem.select(
                "_row",
                _semantic_similarity(need_sem, resolve_scorer(semantic_scorer)).alias("_text_sim"),
            ),
        ]
    )
    fields = fields.join(side, on="_row", how="left", maintain_order="left")

    g = parse_number(pl.col("gt_text"), pl.col("gt_kind"))
    a = parse_number(pl.col("aio_text"), pl.col("aio_kind"))
    diff = (g - a).abs()
    numeric_sim = (
        pl.when(g.is_not_null() & a.is_not_null())
        .then(1.0 - pl.min_horizontal(pl.lit(1.0), diff / pl.max_horizontal(g.abs(), pl.lit(_TINY))))
        .otherwise(0.0)
    )
    numeric_match = (g.is_not_null() & a.is_not_null()) & (
        diff <= pl.max_horizontal(pl.lit(config.abs_tol), config.rel_tol * g.abs())
    )
    strategy = pl.col("strategy")
    similarity = (
        pl.when(~scored | (strategy == Strategy.IGNORE.value))
        .then(None)
        .when(strategy == Strategy.EXACT.value)
        .then((pl.col("gt_text") == pl.col("aio_text")).cast(pl.Float64))
        .when(strategy == Strategy.NUMERIC.value)
        .then(numeric_sim)
        .otherwise(pl.col("_text_sim"))
    )
    match = (
        pl.when(~scored | (strategy == Strategy.IGNORE.value))
        .then(None)
        .when(strategy == Strategy.EXACT.value)
        .then(pl.col("gt_text") == pl.col("aio_text"))
        .when(strategy == Strategy.NUMERIC.value)
        .then(numeric_match)
        .when(strategy == Strategy.FUZZY.value)
        .then(pl.col("_text_sim") >= config.fuzzy_threshold)
        .otherwise(pl.col("_text_sim") >= config.semantic_threshold)
    )
    return fields.with_columns(similarity.alias("similarity"), match.alias("match")).drop(
        "_row", "_text_sim"
    )
