"""Calibration of per-field confidences (issue 13): does a high confidence mean a right value?

Extraction systems emit a confidence per field to route documents to human review. Given
those confidences (a confidence document per doc_id with the same paths as the AIO document:
``{"doc_id": "a", "total": 0.93, "vendor": {"name": 0.4}}``), each field whose AIO value is
present (cell TP, FP or FP+FN) and has a confidence is one prediction: confidence ``c`` that
the value is right, outcome ``y`` = the cell is TP. Per attribute and overall (attribute
``"*"``), the ``calibration`` table holds:

- ``auroc``: the area under the ROC curve of ``c`` against ``y`` (ties count one half; null
  when every outcome is the same), from ranks, as ``sklearn.metrics.roc_auc_score``;
- ``brier``: mean of ``(c - y)^2``;
- ``ece``: expected calibration error over 10 equal-width bins of ``c`` (bin ``k`` holds
  ``k/10 <= c < (k+1)/10``, the last bin includes 1): the bins' ``|mean c - accuracy|``
  weighted by their share of predictions;
- ``accuracy_at_<q>`` for coverage ``q`` in 10 %, 20 % ... 100 %: the accuracy of the
  ``ceil(q n)`` most confident predictions (what is left when the rest go to human review;
  among equal confidences the wrong predictions count first);
- ``bin_index``, ``bin_n``, ``bin_confidence``, ``bin_accuracy``: the non-empty bins of the
  ECE in order, as lists (the points of a reliability diagram; the report draws them).

Confidences are written at the AIO document's own paths; list items are renumbered by
alignment (a matched AIO item takes its GT item's index, an unmatched one an index after the GT
list, SPEC §5), so the list indices of those paths are rewritten through the ``alignments``
table before the join (:func:`aligned_paths`): a confidence stays with the value it was
emitted for, and an invented list item's confidence counts as a wrong prediction.

Everything else is Polars expressions over the fields table joined with the confidences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from .flatten import _segments
from .python_values import real_number

__all__ = ["COVERAGES", "N_BINS", "aligned_paths", "calibration", "confidence_table",
           "split_confidences"]

N_BINS = 10
COVERAGES = tuple(round(0.1 * k, 1) for k in range(1, 11))
OVERALL = "*"
_EMITTED = ("TP", "FP", "FP+FN")  # cells where the AIO has a value


def _leaves(value: Any, path: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for key, v in value.items():
            start, after = _segments(str(key))
            _leaves(v, path + after if path else start, out)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _leaves(v, f"{path}[{i}]", out)
    else:
        out.append((path, value))


def _confidence_problem(c: Any) -> bool:
    number = real_number(c)
    return c is not None and (number is None or not 0.0 <= number <= 1.0)


def split_confidences(doc: Any, suffix: str) -> tuple[Any, list[tuple[str, float]], list[str]]:
    """An AIO document without its sibling confidence keys (config ``confidence``, a suffix
    such as ``"_confidence"``), the (path, confidence) of each, and one message per bad one.

    In every object (the root, nested objects, items of lists), a key that ends with the suffix
    and is longer than it is a confidence key, never a field: ``"total_confidence": 0.93`` is
    the confidence of ``total`` in the same object, at that field's path (``line_items[1]``'s
    ``amount_confidence`` is for ``line_items[1].amount``). A null confidence is no confidence;
    a value that is not a number in [0, 1] is a message (a warning row) and ignored. A
    confidence whose field is absent is kept: calibration ignores it, as it ignores a
    confidence for an absent value in a confidence document. The input is not changed: the
    objects that held confidence keys are copied without them."""
    found: list[tuple[str, float]] = []
    problems: list[str] = []

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, dict):
            out, changed = {}, False
            for key, v in value.items():
                key = str(key)
                if len(key) > len(suffix) and key.endswith(suffix):
                    changed = True
                    start, after = _segments(key[:-len(suffix)])
                    field = path + after if path else start
                    if _confidence_problem(v):
                        problems.append(f"confidence {key!r} of {field!r} must be a number in "
                                        f"[0, 1]; got {v!r}; ignored")
                    elif v is not None:
                        found.append((field, real_number(v)))
                    continue
                start, after = _segments(key)
                w = walk(v, path + after if path else start)
                changed |= w is not v
                out[key] = w
            return out if changed else value
        if isinstance(value, list):
            items = [walk(v, f"{path}[{i}]") for i, v in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value)) else value
        return value

    return walk(doc, ""), found, problems


def confidence_table(
    confidences: Iterable[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]] | pl.DataFrame,
    *, id_field: str = "doc_id",
) -> pl.DataFrame:
    """(doc_id, path, confidence) rows from confidence documents: records carrying
    ``id_field``, a mapping doc_id -> document, or a table that already has those columns.
    A confidence must be a number in [0, 1] (or null: no confidence); anything else raises a
    ``ValueError`` naming the document and path."""
    if isinstance(confidences, pl.DataFrame):
        rows = confidences.select(pl.col("doc_id").cast(pl.String), "path",
                                  pl.col("confidence").cast(pl.Float64))
    else:
        if isinstance(confidences, Mapping):
            docs = [(str(k), v) for k, v in confidences.items()]
        else:
            docs = []
            for n, record in enumerate(confidences, start=1):
                if not isinstance(record, Mapping) or id_field not in record:
                    raise ValueError(f"confidence record {n}: not an object with {id_field!r}")
                docs.append((str(record[id_field]),
                             {k: v for k, v in record.items() if k != id_field}))
        data: dict[str, list] = {"doc_id": [], "path": [], "confidence": []}
        for doc_id, doc in docs:
            leaves: list[tuple[str, Any]] = []
            _leaves(doc, "", leaves)
            for path, c in leaves:
                if _confidence_problem(c):
                    raise ValueError(f"confidence of document {doc_id!r} at {path!r} must be "
                                     f"a number in [0, 1]; got {c!r}")
                data["doc_id"].append(doc_id)
                data["path"].append(path)
                data["confidence"].append(None if c is None else real_number(c))
        rows = pl.DataFrame(data, schema={"doc_id": pl.String, "path": pl.String,
                                          "confidence": pl.Float64})
    bad = rows.filter((pl.col("confidence") < 0) | (pl.col("confidence") > 1))
    if bad.height:
        r = bad.row(0, named=True)
        raise ValueError(f"confidence of document {r['doc_id']!r} at {r['path']!r} must be "
                         f"in [0, 1]; got {r['confidence']}")
    return rows.filter(pl.col("confidence").is_not_null())


def _renumbered(alignments: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """(doc_id, list_path, aio_index, final) for the AIO items alignment moved: ``final``,
    the item's index in the fields' paths, is the GT index when matched, else the GT list's
    length plus the item's rank among the unmatched ones (SPEC §5)."""
    al = alignments.lazy()
    instance = ["doc_id", "list_path"]
    n_gt = (al.filter(pl.col("gt_index").is_not_null()).group_by(instance)
            .agg(pl.len().cast(pl.Int32).alias("_n_gt")))
    return (
        al.filter(pl.col("aio_index").is_not_null())
        .join(n_gt, on=instance, how="left")
        .with_columns(pl.coalesce(
            pl.col("gt_index"),
            pl.col("_n_gt").fill_null(0)
            + (pl.col("aio_index").rank("ordinal")
               .over([*instance, pl.col("gt_index").is_null()]) - 1).cast(pl.Int32),
        ).alias("final"))
        .filter(pl.col("final") != pl.col("aio_index"))
        .select(*instance, pl.col("aio_index").cast(pl.Int32), pl.col("final").cast(pl.Int32))
        .collect()
    )


#: The start of a path up to its first list index: keys (plain, which hold no bracket, or
#: quoted as ["..."] with JSON escapes), then [digits].
_TO_FIRST_INDEX = r'^((?:\["(?:[^"\\]|\\.)*"\]|[^\[])*)\[(\d+)\]'


def aligned_paths(confidences: pl.DataFrame, alignments: pl.DataFrame | pl.LazyFrame
                  ) -> pl.DataFrame:
    """(doc_id, path, confidence) with the paths rewritten from the AIO document's own list
    indices to the fields' (see the module docstring). One list depth per round, outer first,
    so a nested list is looked up under its parent's final path; rows of documents where no
    item moved are kept as they are."""
    moved = _renumbered(alignments)
    if not moved.height or not confidences.height:
        return confidences
    touched = (pl.col("doc_id").is_in(moved["doc_id"].unique().implode())
               & pl.col("path").str.contains("[", literal=True))
    # _done: the path rewritten so far; _rest: what is left to read
    rows = confidences.filter(touched).with_columns(
        pl.lit("").alias("_done"), pl.col("path").alias("_rest"))
    finished = [confidences.filter(~touched)]
    while rows.height:
        has_index = pl.col("_rest").str.contains(_TO_FIRST_INDEX)
        finished.append(rows.filter(~has_index).select(
            "doc_id", (pl.col("_done") + pl.col("_rest")).alias("path"), "confidence"))
        rows = (
            rows.filter(has_index)
            .with_columns(
                (pl.col("_done") + pl.col("_rest").str.extract(_TO_FIRST_INDEX, 1))
                .alias("list_path"),
                pl.col("_rest").str.extract(_TO_FIRST_INDEX, 2).cast(pl.Int32).alias("aio_index"),
                pl.col("_rest").str.replace(_TO_FIRST_INDEX, ""),
            )
            .join(moved, on=["doc_id", "list_path", "aio_index"], how="left",
                  maintain_order="left")
            .select("doc_id", "path", "confidence", "_rest", (
                pl.col("list_path") + "[" + pl.coalesce("final", "aio_index").cast(pl.String)
                + "]").alias("_done"))
        )
    return pl.concat(finished).select(confidences.columns)


def check_confidence_sources(config: Any, confidence: Any) -> None:
    """Confidences come one way: sibling keys (config ``confidence``) or a confidence
    document (``confidence=`` / ``--confidence``), not both."""
    if confidence is not None and getattr(config, "confidence", None):
        raise ValueError(f"confidences come from sibling keys (config confidence: "
                         f"{config.confidence!r}) or from a confidence document, not both")


def predictions(fields: pl.DataFrame | pl.LazyFrame, confidences: pl.DataFrame | None
                ) -> pl.LazyFrame:
    """(attribute, confidence, correct) for each emitted AIO value that has a confidence:
    from ``confidences`` (doc_id, path, confidence), or with None from the fields' own
    ``confidence`` column (sibling confidence keys, read by the batch core)."""
    emitted = fields.lazy().filter(pl.col("cell").is_in(list(_EMITTED)))
    if confidences is None:
        return emitted.filter(pl.col("confidence").is_not_null()).select(
            "attribute", "confidence", (pl.col("cell") == "TP").alias("correct"))
    return (
        emitted
        .select("doc_id", "path", "attribute", (pl.col("cell") == "TP").alias("correct"))
        .join(confidences.lazy(), on=["doc_id", "path"], how="inner")
        .select("attribute", "confidence", "correct")
    )


def _summaries(preds: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    c, y = pl.col("confidence"), pl.col("correct").cast(pl.Float64)
    n = pl.len()
    n_pos = y.sum()
    n_neg = n - n_pos
    # Mann-Whitney: AUROC = (sum of the positives' ranks - n_pos (n_pos + 1) / 2) / (n_pos n_neg)
    rank_sum = c.rank("average").filter(pl.col("correct")).sum()
    auroc = pl.when((n_pos > 0) & (n_neg > 0)).then(
        (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).otherwise(None)
    # accuracy of the most confident ceil(q n) predictions; among equal confidences the wrong
    # ones come first (a pessimistic order that does not depend on the rows' order)
    ordered = pl.col("correct").sort_by(["confidence", "correct"], descending=[True, False])
    at = [
        ordered.head(
            (n.cast(pl.Float64) * q - 1e-9).ceil().cast(pl.UInt32)
        ).cast(pl.Float64).mean().alias(f"accuracy_at_{int(round(q * 100))}")
        for q in COVERAGES
    ]
    return preds.group_by(by).agg(
        n.cast(pl.Int64).alias("n"),
        y.mean().alias("accuracy"),
        c.mean().alias("mean_confidence"),
        auroc.alias("auroc"),
        ((c - y) ** 2).mean().alias("brier"),
        *at,
    )


def _per_bin(preds: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Predictions in N_BINS equal-width confidence bins (1.0 in the last): count, mean
    confidence and accuracy of each non-empty bin."""
    binned = preds.with_columns(
        (pl.col("confidence") * N_BINS).floor().clip(0, N_BINS - 1).cast(pl.Int32).alias("_bin"))
    return binned.group_by(*by, "_bin").agg(
        pl.len().alias("_n"), pl.col("confidence").mean().alias("_c"),
        pl.col("correct").cast(pl.Float64).mean().alias("_y"))


def _ece(preds: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """ECE and the reliability diagram's points (the non-empty bins in order: their index,
    count, mean confidence and accuracy, as lists)."""
    return _per_bin(preds, by).sort("_bin").group_by(by).agg(
        ((pl.col("_c") - pl.col("_y")).abs() * pl.col("_n")).sum().truediv(
            pl.col("_n").sum()).alias("ece"),
        pl.col("_bin").alias("bin_index"),
        pl.col("_n").cast(pl.Int64).alias("bin_n"),
        pl.col("_c").alias("bin_confidence"),
        pl.col("_y").alias("bin_accuracy"),
    )


def calibration(fields: pl.DataFrame | pl.LazyFrame, confidences: pl.DataFrame | None = None,
                alignments: pl.DataFrame | pl.LazyFrame | None = None) -> pl.DataFrame:
    """The calibration table (confidences as in :func:`predictions`): one row per attribute
    with confidences, then the overall row
    (attribute ``"*"``); columns ``attribute, n, accuracy, mean_confidence, auroc, brier, ece,
    accuracy_at_10 ... accuracy_at_100`` and the bins. A confidence document's list indices
    are the AIO's own: pass the run's ``alignments`` to renumber them as the fields are."""
    if confidences is not None and alignments is not None:
        confidences = aligned_paths(confidences, alignments)
    preds = predictions(fields, confidences).cache()
    overall = preds.with_columns(pl.lit(OVERALL).alias("attribute"))
    parts = []
    for frame in (preds, overall):
        parts.append(_summaries(frame, ["attribute"]).join(
            _ece(frame, ["attribute"]), on="attribute", how="left"))
    cols = ["attribute", "n", "accuracy", "mean_confidence", "auroc", "brier", "ece",
            *[f"accuracy_at_{int(round(q * 100))}" for q in COVERAGES],
            "bin_index", "bin_n", "bin_confidence", "bin_accuracy"]
    per_attribute, total = (p.select(cols).collect() for p in parts)
    total = total.filter(pl.col("n") > 0) if total.height else total
    return pl.concat([per_attribute.sort("attribute"), total])

