"""Confidence intervals and run-vs-run significance by resampling documents (issue 13).

A run's per-document additive counts (the ``counts`` table: one row per (doc_id, attribute))
and per-document RQS (``documents``) are all a bootstrap needs: a resample of the documents is
a weight per document (how often it was drawn), and every figure of the resample is a ratio of
weighted sums of those counts. So the resamples are one matrix product, not a loop that
re-scores: ``W`` (resamples x documents, multinomial counts summing to the number of
documents) times the sparse (documents x attributes) TP, FP and FN matrix. Resamples are
taken in chunks that bound ``W``'s size; the seed alone fixes them.

Figures resampled: F1 per attribute, micro-F1, macro-F1 (over the attributes whose F1 is
defined in that resample, as :func:`rates.finish`) and mean RQS. Intervals are 95 %
percentile intervals. :func:`paired_bootstrap` applies the same weights to two runs over their
shared documents and reports each figure's delta (b - a), its interval and a two-sided p-value.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["CONFIDENCE", "DocCounts", "doc_counts", "intervals", "paired_bootstrap"]

CONFIDENCE = 0.95
#: Run figures resampled besides the per-attribute F1.
FIGURES = ("micro_f1", "macro_f1", "mean_rqs")
_CHUNK_CELLS = 1 << 23  # weights (or sums) held at once: 64 MB of float64
_DENSE_CELLS = 1 << 25  # count matrices up to 256 MB are multiplied dense


@dataclass(frozen=True)
class DocCounts:
    """A run's per-document counts over ``doc_ids`` and ``attributes``: ``cells`` is a
    (documents x 3 attributes) matrix (dense unless large) of TP, FP and FN per attribute
    (column blocks in that order), ``rqs`` the documents' RQS."""

    doc_ids: list[str]
    attributes: list[str]
    cells: np.ndarray | sparse.csr_matrix
    rqs: np.ndarray

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)


def _frame(table: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    return table.lazy() if isinstance(table, pl.DataFrame) else table


def doc_counts(
    counts: pl.DataFrame | pl.LazyFrame,
    documents: pl.DataFrame | pl.LazyFrame,
    *,
    doc_ids: list[str] | None = None,
    attributes: list[str] | None = None,
) -> DocCounts:
    """Arrays of a run's ``counts`` and ``documents`` tables, over ``doc_ids`` (default: the
    documents of the run, in doc_id order) and ``attributes`` (default: the run's)."""
    docs = _frame(documents).select("doc_id", "rqs")
    if doc_ids is None:
        docs = docs.sort("doc_id").collect()
        doc_ids = docs["doc_id"].to_list()
    else:
        docs = pl.DataFrame({"doc_id": doc_ids}, schema={"doc_id": pl.String}).join(
            docs.collect(), on="doc_id", how="left", maintain_order="left")
    rows = (
        _frame(counts)
        .group_by("doc_id", "attribute")
        .agg(pl.col("tp", "fp", "fn").sum())
        .collect()
    )
    if attributes is None:
        attributes = sorted(rows["attribute"].unique().drop_nulls().to_list())
    index = pl.DataFrame({"doc_id": doc_ids, "_d": np.arange(len(doc_ids))},
                         schema={"doc_id": pl.String, "_d": pl.Int64})
    names = pl.DataFrame({"attribute": attributes, "_a": np.arange(len(attributes))},
                         schema={"attribute": pl.String, "_a": pl.Int64})
    rows = rows.join(index, on="doc_id").join(names, on="attribute")
    n_attr = len(attributes)
    doc, attr = rows["_d"].to_numpy(), rows["_a"].to_numpy()
    from scipy import sparse  # imported when used: `import jsoneval_polars` stays light

    cells = sparse.csr_matrix(
        (np.concatenate([rows[c].to_numpy().astype(np.float64) for c in ("tp", "fp", "fn")]),
         (np.tile(doc, 3), np.concatenate([attr, attr + n_attr, attr + 2 * n_attr]))),
        shape=(len(doc_ids), 3 * n_attr),
    )
    if len(doc_ids) * 3 * n_attr <= _DENSE_CELLS:
        cells = cells.toarray()  # a dense product (BLAS) is 20 times faster than the sparse
    return DocCounts(
        doc_ids=list(doc_ids),
        attributes=list(attributes),
        cells=cells,
        rqs=docs["rqs"].fill_null(np.nan).to_numpy().astype(np.float64),
    )


def figures(weights: np.ndarray, run: DocCounts) -> dict[str, np.ndarray]:
    """Each figure of each resample: ``f1`` (resamples, attributes) and the run figures
    (resamples,); NaN where undefined (an attribute with no TP, FP or FN in that resample)."""
    if isinstance(run.cells, np.ndarray):
        summed = weights @ run.cells  # (resamples, 3 attributes)
    else:
        summed = np.asarray((run.cells.T @ weights.T).T)
    tp, fp, fn = np.split(summed, 3, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)
        stp, sfp, sfn = tp.sum(axis=1), fp.sum(axis=1), fn.sum(axis=1)
        micro = np.where(2 * stp + sfp + sfn > 0, 2 * stp / (2 * stp + sfp + sfn), np.nan)
        defined = (~np.isnan(f1)).sum(axis=1)
        macro = np.where(defined > 0, np.nansum(f1, axis=1) / np.maximum(defined, 1), np.nan)
        n = weights.sum(axis=1)
        rqs = np.where(n > 0, weights @ np.nan_to_num(run.rqs) / np.maximum(n, 1), np.nan)
    return {"f1": f1, "micro_f1": micro, "macro_f1": macro, "mean_rqs": rqs}


def resample_weights(n_docs: int, n_resamples: int, seed: int | None,
                     row_width: int) -> Iterator[np.ndarray]:
    """Multinomial document weights (each row sums to ``n_docs``: how often each document was
    drawn with replacement), in chunks of rows. Drawn as indices and counted per row, which
    is ten times faster than numpy's multinomial over ``n_docs`` categories."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // max(row_width, n_docs, 1))
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        drawn = rng.integers(0, max(n_docs, 1), size=(size, n_docs), dtype=np.int64)
        drawn += np.arange(size)[:, None] * n_docs
        yield np.bincount(drawn.ravel(), minlength=size * n_docs).reshape(
            size, n_docs).astype(np.float64)
        done += size


def _resampled(runs: list[DocCounts], n_resamples: int, seed: int | None
               ) -> list[dict[str, np.ndarray]]:
    """Each run's figures over the same resamples of their (shared) documents."""
    width = max(r.cells.shape[1] for r in runs)
    parts: list[list[dict[str, np.ndarray]]] = [[] for _ in runs]
    for w in resample_weights(runs[0].n_docs, n_resamples, seed, width):
        for run, out in zip(runs, parts, strict=True):
            out.append(figures(w, run))
    return [{k: np.concatenate([p[k] for p in out]) for k in out[0]} for out in parts]


def _percentiles(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % percentile interval along the resamples (axis 0); NaN where every resample's
    figure is undefined (numpy's all-NaN warning is that case, not a fault)."""
    tail = (1 - CONFIDENCE) / 2 * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(x, [tail, 100 - tail], axis=0)
    return low, high


def _value(x: Any) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def check_resamples(n_resamples: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"bootstrap must be a positive number of resamples; got {n_resamples!r}")


def intervals(
    counts: pl.DataFrame | pl.LazyFrame,
    documents: pl.DataFrame | pl.LazyFrame,
    n_resamples: int,
    seed: int | None = None,
) -> tuple[pl.DataFrame, dict[str, float | None]]:
    """95 % percentile intervals of a run: a table (attribute, f1_low, f1_high) and the
    summary entries ``micro_f1_low`` ... ``mean_rqs_high``."""
    check_resamples(n_resamples)
    run = doc_counts(counts, documents)
    res = _resampled([run], n_resamples, seed)[0]
    low, high = _percentiles(res["f1"]) if run.attributes else (np.array([]), np.array([]))
    table = pl.DataFrame(
        {"attribute": run.attributes, "f1_low": low, "f1_high": high},
        schema={"attribute": pl.String, "f1_low": pl.Float64, "f1_high": pl.Float64},
    ).fill_nan(None)
    summary: dict[str, float | None] = {}
    for name in FIGURES:
        lo, hi = _percentiles(res[name])
        summary[f"{name}_low"], summary[f"{name}_high"] = _value(lo), _value(hi)
    return table, summary


def with_intervals(
    attributes: pl.DataFrame, summary: dict[str, Any], counts: pl.DataFrame | pl.LazyFrame,
    documents: pl.DataFrame | pl.LazyFrame, n_resamples: int, seed: int | None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A finished run's attribute table and summary with the bootstrap intervals added (what
    every driver calls when asked for ``bootstrap``)."""
    table, extra = intervals(counts, documents, n_resamples, seed)
    attributes = attributes.join(table, on="attribute", how="left", maintain_order="left")
    return attributes, {**summary, **extra, "bootstrap": {"resamples": n_resamples,
                                                          "seed": seed,
                                                          "confidence": CONFIDENCE}}


def _p_value(deltas: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p-value of "no difference": twice the smaller share of resampled
    deltas on either side of 0 (each share counted with +1, so never exactly 0), at most 1."""
    valid = ~np.isnan(deltas)
    n = valid.sum(axis=0)
    below = ((deltas <= 0) & valid).sum(axis=0)
    above = ((deltas >= 0) & valid).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.minimum(1.0, 2 * np.minimum(below + 1, above + 1) / (n + 1))
    return np.where(n > 0, p, np.nan)


def paired_bootstrap(
    counts_a: pl.DataFrame | pl.LazyFrame, documents_a: pl.DataFrame | pl.LazyFrame,
    counts_b: pl.DataFrame | pl.LazyFrame, documents_b: pl.DataFrame | pl.LazyFrame,
    n_resamples: int, seed: int | None = None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The paired bootstrap of run ``b`` against run ``a`` over their shared doc ids.

    Returns a table per attribute (``f1_delta``, ``f1_delta_low``, ``f1_delta_high``,
    ``f1_p_value``, ``f1_significant``) and, for micro-F1, macro-F1 and mean RQS, a dict of
    the same entries plus ``n_shared_documents``. A delta is computed on the shared documents
    (so it can differ from the difference of the two runs' own figures when they scored
    different documents); it is significant when its 95 % interval excludes 0.
    """
    check_resamples(n_resamples)
    ids_a = set(_frame(documents_a).select("doc_id").collect()["doc_id"].to_list())
    ids_b = set(_frame(documents_b).select("doc_id").collect()["doc_id"].to_list())
    shared = sorted(ids_a & ids_b)
    names = sorted(set(_frame(counts_a).select("attribute").collect()["attribute"].drop_nulls())
                   | set(_frame(counts_b).select("attribute").collect()["attribute"]
                         .drop_nulls()))
    a = doc_counts(counts_a, documents_a, doc_ids=shared, attributes=names)
    b = doc_counts(counts_b, documents_b, doc_ids=shared, attributes=names)
    ones = np.ones((1, len(shared)))
    observed = [figures(ones, run) for run in (a, b)]
    res_a, res_b = _resampled([a, b], n_resamples, seed)

    def entry(key: str) -> dict[str, np.ndarray]:
        deltas = res_b[key] - res_a[key]
        low, high = _percentiles(deltas)
        return {
            "delta": (observed[1][key] - observed[0][key])[0],
            "low": low, "high": high, "p_value": _p_value(deltas),
            "significant": (low > 0) | (high < 0),
        }

    f1 = entry("f1")
    table = pl.DataFrame(
        {"attribute": names, "f1_delta": f1["delta"], "f1_delta_low": f1["low"],
         "f1_delta_high": f1["high"], "f1_p_value": f1["p_value"],
         "f1_significant": f1["significant"]},
        schema={"attribute": pl.String, "f1_delta": pl.Float64, "f1_delta_low": pl.Float64,
                "f1_delta_high": pl.Float64, "f1_p_value": pl.Float64,
                "f1_significant": pl.Boolean},
    ).fill_nan(None)
    summary: dict[str, Any] = {"n_shared_documents": len(shared), "resamples": n_resamples,
                               "seed": seed, "confidence": CONFIDENCE}
    for name in FIGURES:
        e = entry(name)
        summary[name] = {"delta": _value(e["delta"]), "low": _value(e["low"]),
                         "high": _value(e["high"]), "p_value": _value(e["p_value"]),
                         "significant": bool(e["significant"])}
    return table, summary
