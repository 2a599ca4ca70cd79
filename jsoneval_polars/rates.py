"""Counts -> rates, in one place (SPEC §3, §4, §6, §7).

Undefined ratios are null unless SPEC fixes a value: completeness and accuracy are 1.0 and
hallucination 0.0 on an empty denominator; precision, recall and F1 are null when undefined.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from .config import Config
from .counts import DOCUMENT_COUNTS, RunState, f1_of
from .gate import name_warnings, warning_rows, with_run_check
from .schemas import ATTRIBUTES


def _ratio(num: pl.Expr, den: pl.Expr, empty: float | None) -> pl.Expr:
    return pl.when(den > 0).then(num / den).otherwise(pl.lit(empty, pl.Float64))


def prf(tp: pl.Expr = pl.col("tp"), fp: pl.Expr = pl.col("fp"), fn: pl.Expr = pl.col("fn")):
    """precision, recall, F1 with null where the denominator is 0 (F1 = 2TP/(2TP+FP+FN))."""
    return (
        _ratio(tp, tp + fp, None).alias("precision"),
        _ratio(tp, tp + fn, None).alias("recall"),
        f1_of(tp, fp, fn).alias("f1"),
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
        .select(*by, *ATTRIBUTES)
        .sort(*by, "attribute", nulls_last=True)
    )


def document_rates(sums: pl.DataFrame, docs: pl.DataFrame, config: Config) -> pl.DataFrame:
    """Per-document table from the documents' counts (counts.document_sums' columns, from
    counts.aggregate): ``docs`` has doc, doc_id, safety, presence and parse status.

    Accuracy is the weighted share of correct fields, sum(w * n_correct) / sum(w * n_scored)
    (w_correct / w_scored: field_weights, 1 each without them), 1.0 when that denominator is
    0."""
    w = config.weights
    out = (
        docs.join(sums, on="doc", how="left")
        .with_columns(pl.col(DOCUMENT_COUNTS).fill_null(0))
        .with_columns(
            _ratio(pl.col("n_both_non_null"), pl.col("n_gt_non_null"), 1.0).alias("completeness"),
            _ratio(
                pl.col("n_extra_keys") + pl.col("n_gt_null_aio_has_value"),
                pl.col("n_total_distinct"),
                0.0,
            ).alias("hallucination"),
            _ratio(pl.col("w_correct"), pl.col("w_scored").fill_null(0.0), 1.0)
            .alias("accuracy"),
        )
        .drop("w_correct", "w_scored")
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
        # a document the GT does not have is never passed (DECISIONS.md 53)
        .with_columns(((pl.col("rqs") >= config.pass_threshold) & pl.col("gt_present"))
                      .alias("passed"))
    )
    return out


#: Status of a pass rate (seed 002, SPEC §7), highest band first; below the last: critical.
STATUS_BANDS = ((0.85, "healthy"), (0.70, "warning"))
LOWEST_STATUS = "critical"


def status_of(pass_rate: float | None) -> str | None:
    """healthy / warning / critical from the pass rate (SPEC §7); None with no documents."""
    if pass_rate is None:
        return None
    return next((name for floor, name in STATUS_BANDS if pass_rate >= floor), LOWEST_STATUS)


def status_expr(pass_rate: pl.Expr) -> pl.Expr:
    """:func:`status_of` as an expression (null for a null pass rate)."""
    expr = pl.when(pass_rate.is_null()).then(pl.lit(None, pl.String))
    for floor, name in STATUS_BANDS:
        expr = expr.when(pass_rate >= floor).then(pl.lit(name))
    return expr.otherwise(pl.lit(LOWEST_STATUS))


def micro_rates(attributes: pl.DataFrame, by: Sequence[str] = ()) -> pl.DataFrame:
    """Micro precision, recall and F1 of the summed cells (one row, or one per slice of
    ``by``), null where undefined as per attribute."""
    by = list(by)
    cells = pl.col("tp", "fp", "fn", "tn").sum()
    summed = (
        attributes.group_by(by).agg(cells).sort(by, nulls_last=True) if by
        else attributes.select(cells)
    )
    return summed.with_columns((pl.col("tp") + pl.col("fn")).alias("support"), *prf())


def slice_rates(
    counts: pl.DataFrame | pl.LazyFrame, documents: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
) -> pl.LazyFrame:
    """Per slice of the metadata columns ``by``: documents, passed, pass rate and mean RQS
    (over the slice's documents, as the summary's are over all), and the micro precision,
    recall and F1 of the slice's summed cells; slices in order, the null slice last."""
    by = list(by)
    docs = documents.lazy().group_by(by).agg(
        pl.len().cast(pl.Int64).alias("documents"),
        pl.col("passed").sum().cast(pl.Int64).alias("passed"),
        pl.col("rqs").mean().alias("mean_rqs"),
    )
    cells = counts.lazy().group_by(by).agg(pl.col("tp", "fp", "fn").sum())
    return (
        docs.join(cells, on=by, how="full", coalesce=True, nulls_equal=True)
        .with_columns(pl.col("documents", "passed", "tp", "fp", "fn").fill_null(0))
        .with_columns(_ratio(pl.col("passed"), pl.col("documents"), None).alias("pass_rate"),
                      *prf())
        .select(*by, "documents", "passed", "pass_rate", "mean_rqs", "tp", "fp", "fn",
                "precision", "recall", "f1")
        .sort(by, nulls_last=True)
    )


def invented_expr() -> pl.Expr:
    """Attributes that exist only in AIO output (invented keys): never in any GT document
    (support 0, no TN), only false positives. Each has F1 = 0 and counts in macro-F1 as one
    failed attribute, however rare; ``macro_f1_without_invented`` leaves them out."""
    return (pl.col("support") == 0) & (pl.col("tn") == 0) & (pl.col("fp") > 0)


def finish(
    state: RunState, *, config: Config | None = None, metadata: Sequence[str] = ()
) -> tuple[pl.DataFrame, dict, list[dict]]:
    """The attribute table, the summary (SPEC §7) and warning rows of a (merged) run state:
    the one place a run's ratios, its status and its run check (gate.py) are computed.

    The warning rows (counted in the summary's ``n_warnings``) name ``config`` entries and
    ``metadata`` columns that occur in no document; the driver adds them to its errors table.
    """
    attributes = attribute_rates(state.counts)
    t = state.totals.row(0, named=True)
    n = t["n_documents"]

    def mean(name: str) -> float | None:
        return t[f"sum_{name}"] / n if n else None

    micro = micro_rates(attributes).row(0, named=True)
    # beside micro- and macro-F1: weighted_f1 (F1 weighted by support, the number of GT
    # values) and macro-F1 over the attributes that occur in the GT
    known = attributes.filter(~invented_expr())
    known_f1 = known["f1"].drop_nulls()
    weighted = known.filter(pl.col("f1").is_not_null() & (pl.col("support") > 0))
    support = int(weighted["support"].sum())
    f1, precision, recall = (attributes[c].drop_nulls() for c in ("f1", "precision", "recall"))
    pass_rate = t["n_passed"] / n if n else None
    summary = {
        "n_documents": n,
        "mean_completeness": mean("completeness"),
        "mean_hallucination": mean("hallucination"),
        "mean_accuracy": mean("accuracy"),
        "mean_rqs": mean("rqs"),
        "mean_anls": t["sum_anls"] / t["n_anls"] if t["n_anls"] else None,
        "macro_f1": float(f1.mean()) if f1.len() else None,
        "macro_f1_without_invented": float(known_f1.mean()) if known_f1.len() else None,
        "weighted_f1": float((weighted["f1"] * weighted["support"]).sum() / support)
        if support else None,
        "n_invented_attributes": attributes.height - known.height,
        "micro_f1": micro["f1"],
        "pass_rate": pass_rate,
        "status": status_of(pass_rate),
        "n_errors": t["n_errors"],
        "n_warnings": t["n_warnings"],
        "n_read_gt": t["n_read_gt"],
        "n_read_aio": t["n_read_aio"],
        "n_gt_only": t["n_gt_only"],
        "n_aio_only": t["n_aio_only"],
        "micro_precision": micro["precision"],
        "micro_recall": micro["recall"],
        "macro_precision": float(precision.mean()) if precision.len() else None,
        "macro_recall": float(recall.mean()) if recall.len() else None,
    }
    counts = state.counts
    empty = [m for m in metadata if counts.height and m in counts.columns
             and counts[m].null_count() == counts.height]
    warnings = warning_rows(name_warnings(config, attributes["attribute"].to_list(), empty)
                            ) if config is not None else []
    summary["n_warnings"] += len(warnings)
    return attributes, with_run_check(summary), warnings
