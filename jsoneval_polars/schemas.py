"""The result tables' columns and types, and the codes the stages share: declared once.

Every driver writes these tables (layout.py) and every reader opens them, so their columns are
a contract: the batch core selects them in this order, Spark derives its Arrow schemas from
them, and tests/test_schemas.py checks each driver's output against them.
Metadata columns (``--meta``/``--by``) follow ``doc_id`` in ``documents`` and come last in
``fields``.

The stages work on small integer codes until the output tables decode them: a strategy is an
index into :data:`STRATEGIES`, a bucket into :data:`BUCKETS`, a cell into :data:`CELLS`.
"""

from __future__ import annotations

import polars as pl

from .config import Strategy

#: The dtype of every code column (strategy, bucket, cell).
CODE = pl.UInt8

STRATEGIES = tuple(s.value for s in Strategy)
EXACT, FUZZY, SEMANTIC, NUMERIC, IGNORE, DATE = (
    STRATEGIES.index(s.value)
    for s in (Strategy.EXACT, Strategy.FUZZY, Strategy.SEMANTIC, Strategy.NUMERIC, Strategy.IGNORE,
              Strategy.DATE)
)

#: Null buckets of a (GT, AIO) field (SPEC §3).
BUCKETS = (
    "extra_keys",
    "gt_null_aio_has_value",
    "both_non_null",
    "aio_missing_or_null",
)
EXTRA_KEYS, GT_NULL_AIO_HAS_VALUE, BOTH_NON_NULL, AIO_MISSING_OR_NULL = range(len(BUCKETS))

#: A leaf's kinds (src/flatten.rs ``KIND_NAMES``, the codes the kernel's pairing hands over).
KINDS = ("null", "bool", "int", "float", "string", "array", "object")

#: Confusion cells of a field (SPEC §7).
CELLS = ("TP", "TN", "FP", "FN", "FP+FN")
TP, TN, FP, FN, FP_FN = range(len(CELLS))

#: The additive integer counts per (document, attribute); ``sum_similarity`` completes them.
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
ADDITIVE_COLUMNS = (*COUNT_COLUMNS, "sum_similarity")

DOCUMENTS = {
    "doc_id": pl.String,
    "completeness": pl.Float64,
    "hallucination": pl.Float64,
    "accuracy": pl.Float64,
    "rqs": pl.Float64,
    "macro_f1": pl.Float64,
    "anls": pl.Float64,
    "passed": pl.Boolean,
    "n_gt_non_null": pl.Int64,
    "n_both_non_null": pl.Int64,
    "n_aio_missing_or_null": pl.Int64,
    "n_extra_keys": pl.Int64,
    "n_gt_null_aio_has_value": pl.Int64,
    "n_total_distinct": pl.Int64,
    "n_scored": pl.Int64,
    "n_correct": pl.Int64,
    "tp": pl.Int64,
    "tn": pl.Int64,
    "fp": pl.Int64,
    "fn": pl.Int64,
    "safety": pl.Float64,
    "gt_present": pl.Boolean,
    "aio_present": pl.Boolean,
    "aio_parse_status": pl.String,
}
FIELDS = {
    "doc_id": pl.String,
    "path": pl.String,
    "attribute": pl.String,
    "gt_value": pl.String,
    "aio_value": pl.String,
    "gt_kind": pl.String,
    "aio_kind": pl.String,
    "gt_present": pl.Boolean,
    "aio_present": pl.Boolean,
    "bucket": pl.String,
    "strategy": pl.String,
    "similarity": pl.Float64,
    "match": pl.Boolean,
    "cell": pl.String,
    "confidence": pl.Float64,
}
COUNTS = {
    "doc_id": pl.String,
    "attribute": pl.String,
    **{c: pl.Int64 for c in COUNT_COLUMNS},
    "sum_similarity": pl.Float64,
}
ALIGNMENTS = {
    "doc_id": pl.String,
    "list_path": pl.String,
    "gt_index": pl.Int32,
    "aio_index": pl.Int32,
    "similarity": pl.Float64,
    "order_correct": pl.Boolean,
    "order_score": pl.Float64,
}
ERRORS = {
    "source": pl.String,
    "doc_id": pl.String,
    "line": pl.Int64,
    "error": pl.String,
    "severity": pl.String,
    "file": pl.String,
}
ATTRIBUTES = {
    "attribute": pl.String,
    "tp": pl.Int64,
    "tn": pl.Int64,
    "fp": pl.Int64,
    "fn": pl.Int64,
    "support": pl.Int64,
    "precision": pl.Float64,
    "recall": pl.Float64,
    "f1": pl.Float64,
    "accuracy": pl.Float64,
    "mean_similarity": pl.Float64,
    "n_scored": pl.Int64,
    "n_correct": pl.Int64,
    "n_similarity": pl.Int64,
    "sum_similarity": pl.Float64,
}
#: The one row of run totals of a run state: records read, documents, GT-only, AIO-only, error
#: and warning rows, and each summary mean as its sum (the n is ``n_documents``).
TOTALS = {
    "n_read_gt": pl.Int64,
    "n_read_aio": pl.Int64,
    "n_documents": pl.Int64,
    "n_gt_only": pl.Int64,
    "n_aio_only": pl.Int64,
    "n_passed": pl.Int64,
    "n_errors": pl.Int64,
    "n_warnings": pl.Int64,
    "sum_completeness": pl.Float64,
    "sum_hallucination": pl.Float64,
    "sum_accuracy": pl.Float64,
    "sum_rqs": pl.Float64,
    "n_anls": pl.Int64,
    "sum_anls": pl.Float64,
}

#: Columns that hold a value in every row of their table, whatever the input: a dictionary part
#: (layout.py) writes them as Parquet REQUIRED columns, which store no definition levels.
NEVER_NULL = {
    "fields": ("doc_id", "path", "attribute", "gt_present", "aio_present", "strategy"),
    "counts": tuple(COUNTS),
}

#: The tables of the results layout, by name (``summary.json`` and ``manifest.json`` aside).
TABLES: dict[str, dict[str, pl.DataType]] = {
    "documents": DOCUMENTS,
    "fields": FIELDS,
    "attributes": ATTRIBUTES,
    "alignments": ALIGNMENTS,
    "errors": ERRORS,
    "counts": COUNTS,
}

