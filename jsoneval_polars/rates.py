"""Counts -> rates, in one place (SPEC §3, §4, §6, §7).

Undefined ratios are null unless SPEC fixes a value: completeness and accuracy are 1.0 and
hallucination 0.0 on an empty denominator; precision, recall and F1 are null when undefined.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from .config import Config


def _ratio(num: pl.Expr, den: pl.Expr, empty: float | None) -> pl.Expr:
    return pl.when(den > 0).then(num / den).otherwise(pl.lit(empty, pl.Float64))


def prf(tp: pl.Expr = pl.col("tp"), fp: pl.Expr = pl.col("fp"), fn: pl.Expr = pl.col("fn")):
    """precision, recall, F1 with null where the denominator is 0 (F1 = 2TP/(2TP+FP+FN))."""
    return (
        _ratio(tp, tp + fp, None).alias("precision"),
        _ratio(tp, tp + fn, None).alias("recall"),
        _ratio(2 * tp, 2 * tp + fp + fn, None).alias("f1"),
    )


def attribute_rates(
    counts: pl.DataFrame | pl.LazyFrame, by: Sequence[str] = ()
) -> pl.DataFrame | pl.LazyFrame:
    """Per-attribute table from (doc, attribute) counts (or already summed counts), optionally
    per slice of the ``by`` columns."""
    by = list(by)
    summed = counts.group_by(*by, "attribute").agg(
        pl.col("tp", "tn", "fp", "fn", "n_scored", "n_correct", "n_similarity").sum(),
        pl.col("sum_similarity").sum(),
    )
    return (
        summed.filter((pl.col("tp") + pl.col("tn") + pl.col("fp") + pl.col("fn")) > 0)
        .with_columns(
            (pl.col("tp") + pl.col("fn")).alias("support"),
            *prf(),
            _ratio(pl.col("n_correct"), pl.col("n_scored"), None).alias("accuracy"),
            _ratio(pl.col("sum_similarity"), pl.col("n_similarity"), None).alias(
                "mean_similarity"
            ),
        )
        .select(
            *by, "attribute", "tp", "tn", "fp", "fn", "support", "precision", "recall", "f1",
            "accuracy", "mean_similarity", "n_scored", "n_correct", "n_similarity",
            "sum_similarity",
        )
        .sort(*by, "attribute", nulls_last=True)
    )


def document_rates(
    counts: pl.DataFrame, docs: pl.DataFrame, config: Config
) -> pl.DataFrame:
    """Per-document table: ``docs`` has doc, doc_id, safety, presence and parse status."""
    per_attr_f1 = prf()[2]
    sums = counts.with_columns(per_attr_f1).group_by("doc").agg(
        pl.col("f1").mean().alias("macro_f1"),
        pl.col(
            "n_total_distinct", "n_gt_non_null", "n_both_non_null", "n_aio_missing_or_null",
            "n_extra_keys", "n_gt_null_aio_has_value", "n_scored", "n_correct",
            "tp", "tn", "fp", "fn",
        ).sum(),
    )
    w = config.weights
    out = (
        docs.join(sums, on="doc", how="left")
        .with_columns(
            pl.col(
                "n_total_distinct", "n_gt_non_null", "n_both_non_null", "n_aio_missing_or_null",
                "n_extra_keys", "n_gt_null_aio_has_value", "n_scored", "n_correct",
                "tp", "tn", "fp", "fn",
            ).fill_null(0)
        )
        .with_columns(
            _ratio(pl.col("n_both_non_null"), pl.col("n_gt_non_null"), 1.0).alias("completeness"),
            _ratio(
                pl.col("n_extra_keys") + pl.col("n_gt_null_aio_has_value"),
                pl.col("n_total_distinct"),
                0.0,
            ).alias("hallucination"),
            _ratio(pl.col("n_correct"), pl.col("n_scored"), 1.0).alias("accuracy"),
        )
        .with_columns(
            (
                w.accuracy * pl.col("accuracy")
                + w.completeness * pl.col("completeness")
                + w.safety * pl.col("safety")
                - w.hallucination * pl.col("hallucination")
            )
            .clip(0.0, 1.0)
            .alias("rqs")
        )
        .with_columns((pl.col("rqs") >= config.pass_threshold).alias("passed"))
    )
    return out


def status_of(pass_rate: float | None) -> str | None:
    """healthy / warning / critical from the pass rate (SPEC §7); None with no documents."""
    if pass_rate is None:
        return None
    if pass_rate >= 0.85:
        return "healthy"
    if pass_rate >= 0.70:
        return "warning"
    return "critical"


def invented_expr() -> pl.Expr:
    """Attributes that exist only in AIO output (invented keys): never in any GT document
    (support 0, no TN), only false positives. Each has F1 = 0 and counts in macro-F1 as one
    failed attribute, however rare; ``macro_f1_without_invented`` leaves them out."""
    return (pl.col("support") == 0) & (pl.col("tn") == 0) & (pl.col("fp") > 0)


def summary(documents: pl.DataFrame, attributes: pl.DataFrame, n_errors: int) -> dict:
    """Dataset summary (SPEC §7) from the documents table and the attribute counts.

    Beside micro- and macro-F1: ``weighted_f1`` (the attributes' F1 weighted by support, the
    number of GT values, so a field present in every document counts more than a rare one) and
    ``macro_f1_without_invented`` (macro-F1 over the attributes that occur in the GT)."""
    n = documents.height
    means = documents.select(
        pl.col("completeness").mean(),
        pl.col("hallucination").mean(),
        pl.col("accuracy").mean(),
        pl.col("rqs").mean(),
        pl.col("passed").mean(),
    ).row(0, named=True) if n else dict.fromkeys(
        ("completeness", "hallucination", "accuracy", "rqs", "passed")
    )
    f1 = attributes["f1"].drop_nulls()
    known = attributes.filter(~invented_expr())
    known_f1 = known["f1"].drop_nulls()
    weighted = known.filter(pl.col("f1").is_not_null() & (pl.col("support") > 0))
    support = int(weighted["support"].sum())
    tp, fp, fn = (int(attributes[c].sum()) for c in ("tp", "fp", "fn"))
    micro = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else None
    pass_rate = means["passed"]
    return {
        "n_documents": n,
        "mean_completeness": means["completeness"],
        "mean_hallucination": means["hallucination"],
        "mean_accuracy": means["accuracy"],
        "mean_rqs": means["rqs"],
        "macro_f1": float(f1.mean()) if f1.len() else None,
        "macro_f1_without_invented": float(known_f1.mean()) if known_f1.len() else None,
        "weighted_f1": float((weighted["f1"] * weighted["support"]).sum() / support)
        if support else None,
        "n_invented_attributes": attributes.height - known.height,
        "micro_f1": micro,
        "pass_rate": pass_rate,
        "status": status_of(pass_rate),
        "n_errors": n_errors,
    }
