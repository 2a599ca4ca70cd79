"""The batch core: paired documents -> per-document tables and an additive run state.

Every driver (in memory, files, DuckDB, Spark) is the same loop around :func:`score_batch`::

    batches of Pairs (a producer) -> score_batch -> (per-document tables, RunState)
                                                     |                   |
                                 written or concatenated    merge_states -> rates.finish

A *batch producer* is any iterator of :class:`ingest.Pairs`: ``Pairs.batches`` over inputs
paired in memory (:func:`ingest.pair_inputs`), the streaming reader of NDJSON byte ranges
(stream.py), a chunk of a Spark partition. The per-document tables of a batch depend on that
batch only, and its state is additive, so any cut of the input into batches gives the same run.
The core computes no rate of the run: :func:`rates.finish` does, once, on the merged state.

Stages: flatten -> align -> classify -> score -> count -> per-document rates (SPEC §2-§7).
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .align import ALIGNMENT_SCHEMA, align, encode
from .anls import document_anls
from .calibration import aligned_paths, split_confidences
from .classify import bucket_expr, cell_expr, decode, pair_leaves
from .config import Config
from .counts import RunState, aggregate, run_state
from .flatten import flatten, path_keys
from .ingest import ErrorRows, Pairs
from .rates import document_rates
from .schemas import BUCKETS, CELLS, DOCUMENTS, ERRORS, FIELDS, KINDS, STRATEGIES
from .scorers import Scorer
from .similarity import (
    long_text_warnings,
    path_setting,
    path_strategies,
    score_fields,
    with_normalized_text,
    with_strategy,
)

DOCUMENT_COLUMNS = list(DOCUMENTS)
FIELD_COLUMNS = list(FIELDS)
#: The per-document tables of a batch (the ``counts`` table is per document and attribute).
PER_DOCUMENT_TABLES = ("documents", "fields", "alignments", "counts")


@dataclass
class Batch:
    """What the core returns for one batch of pairs."""

    documents: pl.DataFrame
    fields: pl.DataFrame
    alignments: pl.DataFrame
    counts: pl.DataFrame
    errors: pl.DataFrame
    state: RunState
    timings: dict[str, float] = field(default_factory=dict)


def needs_documents(config: Config, safety: Any = None) -> bool:
    """Whether a batch needs its documents as Python objects, not only their leaves tables
    (which a reader may build straight from JSON text): ANLS* scores whole documents, sibling
    confidence keys are read from them, and a safety callable is called with them."""
    return bool(config.anls or config.confidence or callable(safety))


def score_batch(
    pairs: Pairs,
    config: Config,
    *,
    semantic_scorer: Scorer | str | None = None,
    strict: bool = False,
    progress: Callable[..., None] | None = None,
    dictionary: bool = False,
) -> Batch:
    """Score one batch of pairs. The state's counts are summed per (metadata columns,
    attribute); its totals cover this batch's documents and error rows (a flattening error
    leaves a document out, SPEC §9). ``pairs.errors`` and ``pairs.n_read`` belong to the
    producer, which adds them to the run with :func:`counts.run_state`.

    With ``dictionary`` the label columns of ``fields`` (doc_id, path, attribute, bucket,
    strategy, cell) and of ``counts`` (doc_id, attribute) are Enums over this batch's values,
    the codes the core already holds: a Parquet writer stores them as the dictionaries they
    are instead of hashing a string per row (:func:`layout.write_part`). Enums of two batches
    differ, so a driver that concatenates batches in memory leaves it off."""
    clock = Clock(progress)
    clock.start("flatten")
    table = pairs.table
    aio_docs, confidences = pairs.aio, None
    if config.confidence:  # sibling confidence keys: read, then not scored (calibration.py)
        aio_docs, confidences, problems = _sibling_confidences(pairs, config.confidence)
    if pairs.flat is not None:  # flattened from the JSON text already (ingest.pairs_from_texts)
        gt_flat, aio_flat = pairs.flat
    else:
        with collector_paused():
            gt_flat = flatten(pairs.gt,
                              empty_containers_are_null=config.empty_containers_are_null)
            aio_flat = flatten(
                aio_docs, empty_containers_are_null=config.empty_containers_are_null,
                item_base=gt_flat.next_item,
            )
    errors = ErrorRows(strict)
    left_out: set[int] = set()
    invalid: list[int] = []  # AIO documents scored as {}

    # a document's id and lines are looked up only for the few that have a row to report
    def report(side: str, doc: int, message: str, severity: str) -> None:
        errors.add(side, pairs.files.get(side), table[f"{side}_line"][doc],
                   table["doc_id"][doc], message, severity)

    if config.confidence:
        for doc, message in problems:
            report("aio", doc, message, "warning")

    for doc, message in gt_flat.errors:
        left_out.add(doc)
        report("gt", doc, message, "error")
        if table["aio_present"][doc]:
            report("aio", doc, "left out: its GT document is not usable", "error")
    for doc, message in aio_flat.errors:
        if doc not in left_out:
            invalid.append(doc)
            report("aio", doc, message + "; scored as {}", "warning")
    docs = table.with_row_index("doc")
    if invalid:
        docs = docs.with_columns(pl.when(pl.col("doc").is_in(invalid)).then(pl.lit("invalid"))
                                 .otherwise("aio_parse_status").alias("aio_parse_status"))
    if left_out:
        keep = ~pl.col("doc").is_in(sorted(left_out))
        aio_flat.leaves = aio_flat.leaves.filter(keep)
        aio_flat.items = aio_flat.items.filter(keep)
        docs = docs.filter(keep)
    meta_cols = pairs.metadata

    clock.lap("flatten", next_stage="align")
    # stages below work on integer ids (doc, path id, attribute id, codes) and decode strings
    # for the output tables only
    aligned = align(gt_flat, aio_flat, config)
    for doc, message in aligned.failed.items():  # lists too large to align: left out
        report("gt", doc, message, "error")
    if aligned.failed:
        docs = docs.filter(~pl.col("doc").is_in(sorted(aligned.failed)))
    clock.lap("align", next_stage="score")
    paths = aligned.paths
    listed = pl.Series(list(config.attributes or ()), dtype=pl.String)
    attributes, (path_attr, _) = encode([paths["attribute"], listed])
    fields = pair_leaves(aligned.gt, aligned.aio)  # in (doc, path) order
    pid = fields["pid"]
    fields = fields.with_columns(path_attr.gather(pid).alias("attr"), bucket_expr(config))
    if config.attributes is not None:
        fields = fields.with_columns(
            paths["attribute"].is_in(listed.implode()).gather(pid).alias("listed")
        )
    configured = path_strategies(paths["attribute"], paths["key"], config).gather(pid)
    if config.field_thresholds:
        fields = fields.with_columns(path_setting(
            paths["attribute"], paths["key"], config.field_thresholds, pl.Float64, "threshold"
        ).gather(pid))
    fields = with_strategy(fields, configured, config)
    if config.field_normalizers:  # compared normalized, shown as they came (DECISIONS.md 55)
        chains = list(dict.fromkeys(config.field_normalizers.values()))
        by_name = {k: chains.index(v) for k, v in config.field_normalizers.items()}
        shown = fields.select("gt_text", "aio_text")
        fields = with_normalized_text(fields, path_setting(
            paths["attribute"], paths["key"], by_name, pl.UInt32, "chain").gather(pid), chains)
    fields = score_fields(fields, config, semantic_scorer).with_columns(cell_expr(config))
    if config.field_normalizers:
        fields = fields.with_columns(shown)
    for doc, side, message in long_text_warnings(fields, paths["path"], semantic_scorer):
        report(side, doc, message, "warning")
    clock.lap("score", next_stage="aggregate")
    summed = aggregate(fields, config, docs["doc"], attributes,
                       attribute_weights(attributes, config))
    counts = summed.counts
    documents = document_rates(summed.documents, docs, config).sort("doc")
    if config.anls:  # ANLS* of the whole documents (anls.py), beside the engine's figures
        clock.lap("aggregate", next_stage="anls")
        scores = pl.Series("anls", document_anls(pairs.gt, aio_docs), dtype=pl.Float64)
        documents = documents.with_columns(scores.gather(documents["doc"]))
        clock.lap("anls", next_stage="aggregate")
    else:
        documents = documents.with_columns(pl.lit(None, pl.Float64).alias("anls"))
    doc_keys = table.select("doc_id", *meta_cols)  # row i is doc i
    field_keys, label = doc_keys, decode
    if dictionary and confidences is None:  # confidences are joined on the strings
        label = _enum
        ids = doc_keys["doc_id"]
        if ids.null_count() == 0 and ids.is_unique().all():
            field_keys = doc_keys.with_columns(ids.cast(pl.Enum(ids)))

    def per_doc(frame: pl.DataFrame, keys: pl.DataFrame = doc_keys) -> pl.DataFrame:
        return keys[frame["doc"]]

    def kind(side: str) -> str | pl.Expr:
        # Enums from the kernel's codes (classify.pair_leaves) for the dictionary writer
        code = f"{side}_kind_code"
        if label is _enum and code in fields.columns:
            return _enum(code, KINDS).alias(f"{side}_kind")
        return f"{side}_kind"

    counts = pl.concat(
        [per_doc(counts, field_keys),
         counts.select(label("attr", attributes).alias("attribute"), pl.exclude("doc", "attr"))],
        how="horizontal",
    )
    documents = documents.select(*DOCUMENT_COLUMNS[:1], *meta_cols, *DOCUMENT_COLUMNS[1:])
    error_table = pl.DataFrame(errors.rows, schema=ERRORS)
    alignments = aligned.alignments.join(docs.select("doc", "doc_id"), on="doc").select(
        "doc_id", *[c for c in ALIGNMENT_SCHEMA if c != "doc"]
    )
    if confidences is not None:  # at the AIO's own list indices: renumber as the fields
        confidences = aligned_paths(confidences, alignments)
    out = Batch(
        documents=documents,
        fields=pl.concat(
            [
                per_doc(fields, field_keys),
                fields.select(
                    label("pid", paths["path"]).alias("path"),
                    label("attr", attributes).alias("attribute"),
                    pl.col("gt_text").alias("gt_value"),
                    pl.col("aio_text").alias("aio_value"),
                    kind("gt"), kind("aio"), "gt_present", "aio_present",
                    label("bucket", BUCKETS),
                    label("strategy", STRATEGIES),
                    "similarity", "match",
                    label("cell", CELLS),
                ),
            ],
            how="horizontal",
        ).pipe(_with_confidence, confidences).select(*FIELD_COLUMNS, *meta_cols),
        alignments=alignments,
        counts=counts,
        errors=error_table,
        # summed per (metadata, attribute): by document with metadata columns, else the
        # aggregate's sums per attribute
        state=run_state(counts if meta_cols else summed.attributes.select(
            decode("attr", attributes).alias("attribute"), pl.exclude("attr")),
            documents, error_table, keys=meta_cols),
    )
    clock.lap("aggregate")
    out.timings = clock.laps
    return out


def _enum(column: str, names: tuple[str, ...] | pl.Series) -> pl.Expr:
    """Enum column from a code column (``decode``'s strings, as the codes they are)."""
    return pl.col(column).cat.to(pl.Enum(names)).alias(column)


def _sibling_confidences(pairs: Pairs, suffix: str
                         ) -> tuple[list, pl.DataFrame, list[tuple[int, str]]]:
    """The AIO documents without their sibling confidence keys, a (doc_id, path, confidence)
    table of those keys, and (doc, message) for the bad ones (calibration.split_confidences)."""
    docs, problems = [], []
    rows: dict[str, list] = {"doc_id": [], "path": [], "confidence": []}
    for doc, (doc_id, aio) in enumerate(zip(pairs.table["doc_id"].to_list(), pairs.aio)):
        stripped, found, bad = split_confidences(aio, suffix)
        docs.append(stripped)
        problems.extend((doc, message) for message in bad)
        for path, c in found:
            rows["doc_id"].append(doc_id)
            rows["path"].append(path)
            rows["confidence"].append(c)
    table = pl.DataFrame(rows, schema={"doc_id": pl.String, "path": pl.String,
                                       "confidence": pl.Float64})
    return docs, table.unique(["doc_id", "path"], keep="first", maintain_order=True), problems


def _with_confidence(fields: pl.DataFrame, confidences: pl.DataFrame | None) -> pl.DataFrame:
    """The fields with their ``confidence`` column: null without sibling confidence keys."""
    if confidences is None or not confidences.height:
        return fields.with_columns(pl.lit(None, pl.Float64).alias("confidence"))
    return fields.join(confidences, on=["doc_id", "path"], how="left", maintain_order="left")


def attribute_weights(attributes: pl.Series, config: Config) -> pl.Series | None:
    """The field_weights entry of each attribute (its own, else its bare field name's; 1.0
    for none), in the order of ``attributes``; None when the config sets no weight."""
    if not config.field_weights:
        return None
    weights = []
    for name in attributes.to_list():
        keys = path_keys(name)
        weight = config.per_field("field_weights", name, keys[-1] if keys else None)
        weights.append(1.0 if weight is None else weight)
    return pl.Series("weight", weights, dtype=pl.Float64)


_pause_lock = threading.Lock()
_pauses = 0  # batches under way that asked for the pause
_resume = False  # whether the collector ran before the first of them


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector. Parsing and flattening allocate millions of
    containers that all stay alive; the collector's repeated passes over them made these stages
    grow faster than the input (measured: 100k documents 2x slower with it on). Counted, so
    that batches scored on several threads at once resume it only when the last one ends."""
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


class Clock:
    """Seconds per stage, summed over batches; ``progress`` hears each stage as it starts."""

    def __init__(self, progress: Callable[..., None] | None = None) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()
        self._progress = progress

    def start(self, stage: str) -> None:
        if self._progress:
            self._progress(stage)

    def lap(self, name: str, next_stage: str | None = None) -> None:
        now = time.perf_counter()
        self.laps[name] = self.laps.get(name, 0.0) + now - self._last
        self._last = now
        if next_stage:
            self.start(next_stage)

    def add(self, laps: dict[str, float]) -> None:
        for name, seconds in laps.items():
            self.laps[name] = self.laps.get(name, 0.0) + seconds
