"""evaluate(): ingest -> flatten -> align -> classify -> score -> count -> rates -> tables."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import polars as pl

from .align import ALIGNMENT_SCHEMA, align
from .classify import bucket_expr, cell_expr, pair_leaves
from .config import Config, _hint, parse_config
from .counts import doc_attribute_counts
from .flatten import flatten
from .gate import name_warnings, warning_rows, with_run_check
from .ingest import ERROR_SCHEMA, InputError, Pairs, pair_inputs, safety_lookup
from .rates import attribute_rates, document_rates, summary
from .rates import summary as rates_summary
from .scorers import Scorer
from .similarity import score_fields

DOCUMENT_COLUMNS = [
    "doc_id", "completeness", "hallucination", "accuracy", "rqs", "macro_f1", "passed",
    "n_gt_non_null", "n_both_non_null", "n_aio_missing_or_null", "n_extra_keys",
    "n_gt_null_aio_has_value", "n_total_distinct", "n_scored", "n_correct",
    "tp", "tn", "fp", "fn", "safety", "gt_present", "aio_present", "aio_parse_status",
]
FIELD_COLUMNS = [
    "doc_id", "path", "attribute", "gt_value", "aio_value", "gt_kind", "aio_kind",
    "gt_present", "aio_present", "bucket", "strategy", "similarity", "match", "cell",
]
TABLES = ("documents", "fields", "attributes", "alignments", "errors")


@dataclass
class Result:
    """The result tables (SPEC §7) as Polars frames, plus the summary and the additive counts.

    ``counts`` holds one row per (doc_id, attribute) with every additive count; summing it over
    any split of the documents and applying :func:`rates.attribute_rates` gives ``attributes``.
    """

    documents: pl.DataFrame
    fields: pl.DataFrame
    attributes: pl.DataFrame
    alignments: pl.DataFrame
    errors: pl.DataFrame
    counts: pl.DataFrame
    summary: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage

    def attributes_by(self, by: str | Sequence[str]) -> pl.DataFrame:
        """The attribute table per slice of metadata columns, from the additive counts (no
        re-scoring): one row per (slice values, attribute)."""
        by = [by] if isinstance(by, str) else list(by)
        missing = [c for c in by if c not in self.counts.columns]
        if missing:
            raise KeyError(
                f"no metadata column(s) {missing}; pass metadata=[...] to evaluate(); "
                f"columns: {self.counts.columns}"
            )
        return attribute_rates(self.counts, by=by)

    def lazy(self, table: str) -> pl.LazyFrame:
        if table not in TABLES + ("counts",):
            raise KeyError(f"no table {table!r}; tables: {', '.join(TABLES)}")
        return getattr(self, table).lazy()

    def write(self, out_dir: str | Path, *, partition_by: str | None = None) -> Path:
        """Write each table as ``<name>.parquet`` and the summary as ``summary.json``.

        With ``partition_by`` (a metadata column such as run_id) the tables go to a hive layout,
        ``<table>/<column>=<value>/part-0.parquet`` (attributes per partition from the counts,
        ``summary/<column>=<value>/summary.json`` for this run), so runs append to one dataset.
        Everything is written to a temporary folder first and each partition is then swapped in
        with a rename: a failed run leaves no half-written partition, and re-running a partition
        replaces it whole.
        """
        started = time.perf_counter()
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".jsoneval-", dir=out))
        try:
            if partition_by is None:
                for name in TABLES:
                    getattr(self, name).write_parquet(staging / f"{name}.parquet")
                (staging / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
                for f in staging.iterdir():
                    os.replace(f, out / f.name)
            else:
                for rel in self._write_partitions(staging, partition_by):
                    target = out / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if target.exists():
                        trash = staging / ("old-" + uuid.uuid4().hex)
                        os.replace(target, trash)
                    os.replace(staging / rel, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self.timings["write"] = time.perf_counter() - started
        return out

    def _write_partitions(self, staging: Path, column: str) -> list[Path]:
        if column not in self.documents.columns:
            raise KeyError(
                f"cannot partition by '{column}': not a metadata column of this result "
                f"(pass metadata=[{column!r}] to evaluate); columns: {self.documents.columns}"
            )
        keys = self.documents.select("doc_id", column)
        if keys.height and keys[column].null_count() == keys.height:
            # a misspelt name: one Hive default partition would hold the whole run
            top = sorted({a.split(".")[0].split("[")[0] for a in self.attributes["attribute"]})
            raise InputError(
                f"cannot partition by '{column}': none of the {keys.height} documents has "
                f"one.{_hint(column, top)}"
            )
        values = keys[column].unique().to_list()
        only = values[0] if len(values) == 1 else None
        tables = {
            "documents": self.documents,
            "fields": self.fields,
            "counts": self.counts,
            "alignments": self.alignments.join(keys, on="doc_id", how="left"),
            "errors": self.errors.join(keys, on="doc_id", how="left").with_columns(
                pl.col(column).fill_null(pl.lit(only, pl.String))
            ),
            "attributes": self.attributes_by(column),
        }
        written = []
        for name, table in tables.items():
            for (value,), part in table.partition_by(column, as_dict=True).items():
                rel = Path(name) / f"{column}={_partition_name(value)}"
                (staging / rel).mkdir(parents=True)
                part.drop(column).write_parquet(staging / rel / "part-0.parquet")
                written.append(rel)
        for value in values:
            rel = Path("summary") / f"{column}={_partition_name(value)}"
            (staging / rel).mkdir(parents=True)
            part = self.documents.filter(pl.col(column).eq_missing(value))
            summary = {
                **rates_summary(part, self.attributes_by(column).filter(
                    pl.col(column).eq_missing(value)
                ).drop(column), self.summary["n_errors"] if only is not None else 0),
                column: value,
            }
            (staging / rel / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
            written.append(rel)
        return sorted(set(written))


def _partition_name(value: str | None) -> str:
    """Hive partition folder value (null as Hive writes it); '/' cannot appear in a name."""
    if value is None:
        return "__HIVE_DEFAULT_PARTITION__"
    return quote(str(value), safe="")


def evaluate(
    gt: Any,
    aio: Any,
    *,
    config: Config | dict | None = None,
    id_field: str | None = None,
    content_field: str | tuple[str | None, str | None] | None = None,
    json_column: str | None = None,
    safety: Any = None,
    semantic_scorer: Scorer | str | None = None,
    metadata: Sequence[str] = (),
    strict: bool = False,
    progress: Callable[..., None] | None = None,
) -> Result:
    """Score AI output against ground truth.

    ``gt`` and ``aio`` are NDJSON / JSON-array / Parquet / Arrow file paths, lists of records
    (dicts carrying ``id_field``, or bare documents paired by position), or Polars/Arrow tables
    with an id column and one JSON-text or struct column (``json_column``). ``safety`` is a
    mapping doc_id -> score, a table (doc_id, safety) or a callable (gt, aio) -> score.
    ``content_field`` names the record member holding the document, for both sides or as a
    (gt, aio) pair; an AIO document that is a string is raw model text (SPEC §8).
    ``metadata`` names record members (or extra table columns) such as model, run_id or vendor:
    they are not scored, and travel as string columns to ``documents``, ``fields`` and
    ``counts``, so :meth:`Result.attributes_by` slices the metrics without re-scoring.
    ``progress`` is called with each stage's name as it starts, and as
    ``progress("score", done, total)`` after each batch of documents.
    ``strict`` raises :class:`ingest.InputError` on the first bad record instead of recording
    it in ``errors``.

    >>> r = evaluate([{"doc_id": "a", "total": 10}], [{"doc_id": "a", "total": 10.0}])
    >>> r.summary["mean_accuracy"], r.documents["rqs"][0]
    (1.0, 0.85)
    """
    cfg = parse_config(config)
    started = time.perf_counter()
    if progress:
        progress("read")
    with _collector_paused():
        pairs = pair_inputs(
            gt, aio, id_field=id_field or cfg.id_field, content_field=content_field,
            json_column=json_column, strict=strict, metadata=metadata,
        )
    safety_values = safety_lookup(safety, pairs.doc_ids, pairs.gt, pairs.aio)
    read = time.perf_counter() - started
    result = score_pairs(
        pairs, cfg, safety_values, semantic_scorer=semantic_scorer, strict=strict,
        progress=progress,
    )
    result.timings = {"read_parse": read, **result.timings}
    docs = result.documents
    empty = [m for m in metadata if docs.height and docs[m].null_count() == docs.height]
    warnings = name_warnings(cfg, result.attributes["attribute"].to_list(), empty)
    if warnings:
        rows = pl.DataFrame(warning_rows(warnings), schema=ERROR_SCHEMA)
        result.errors = pl.concat([result.errors, rows])
        result.summary["n_warnings"] += len(warnings)
    return result


BATCH_SIZE = 20_000  # document pairs scored together; bounds the intermediate tables


def score_pairs(
    pairs: Pairs,
    config: Config,
    safety: list[float],
    *,
    semantic_scorer: Scorer | str | None = None,
    strict: bool = False,
    progress: Callable[..., None] | None = None,
    batch_size: int = BATCH_SIZE,
) -> Result:
    """Score paired documents in batches of ``batch_size``.

    Every stage works within a document, so the per-document tables of the batches are simply
    concatenated, and the attribute table is derived from the concatenated additive counts:
    the result does not depend on the batch size (tests/test_properties.py checks halves).
    """
    errors = list(pairs.errors)
    status = list(pairs.aio_status)
    clock = _Clock(progress)
    parts: dict[str, list[pl.DataFrame]] = {
        name: [] for name in ("documents", "fields", "alignments", "counts")
    }
    for start in range(0, len(pairs.doc_ids), batch_size):
        stop = min(start + batch_size, len(pairs.doc_ids))
        batch = _score_batch(
            pairs, start, stop, config, safety, status, errors, clock,
            semantic_scorer=semantic_scorer, strict=strict,
        )
        for name, table in batch.items():
            parts[name].append(table)
        if progress:
            progress("score", stop, len(pairs.doc_ids))
    pairs.gt, pairs.aio = [], []  # the parsed documents are not needed past this point

    clock.start("aggregate")
    if parts["documents"]:
        documents, fields_out, alignments, counts = (
            pl.concat(parts[n]) for n in ("documents", "fields", "alignments", "counts")
        )
    else:
        empty = _score_batch(
            pairs, 0, 0, config, safety, status, errors, clock,
            semantic_scorer=semantic_scorer, strict=strict,
        )
        documents, fields_out, alignments, counts = (
            empty[n] for n in ("documents", "fields", "alignments", "counts")
        )
    attributes = attribute_rates(counts)
    error_table = pl.DataFrame(errors, schema=ERROR_SCHEMA)
    n_errors = error_table.filter(pl.col("severity") == "error").height
    clock.lap("aggregate")
    return Result(
        documents=documents,
        fields=fields_out,
        attributes=attributes,
        alignments=alignments,
        errors=error_table,
        counts=counts,
        summary=with_run_check({
            **summary(documents.rechunk(), attributes, n_errors),
            "n_read_gt": pairs.n_read.get("gt", 0),
            "n_read_aio": pairs.n_read.get("aio", 0),
            "n_gt_only": int((~documents["aio_present"]).sum()),
            "n_aio_only": int((~documents["gt_present"]).sum()),
            "n_warnings": error_table.height - n_errors,
        }),
        timings=clock.laps,
    )


def _score_batch(
    pairs: Pairs,
    start: int,
    stop: int,
    config: Config,
    safety: list[float],
    status: list[str],
    errors: list[dict],
    clock: _Clock,
    *,
    semantic_scorer: Scorer | str | None,
    strict: bool,
) -> dict[str, pl.DataFrame]:
    """The per-document tables of pairs[start:stop]; ``doc`` is the position in the batch."""
    clock.start("flatten")
    with _collector_paused():
        gt_flat = flatten(
            pairs.gt[start:stop], empty_containers_are_null=config.empty_containers_are_null
        )
        aio_flat = flatten(
            pairs.aio[start:stop],
            empty_containers_are_null=config.empty_containers_are_null,
            item_base=gt_flat.next_item,
        )
    left_out = set()
    for local, message in gt_flat.errors:
        pos = start + local
        left_out.add(local)
        _flatten_error(errors, pairs, "gt", pos, message, strict, "error")
        if pairs.aio_present[pos]:
            _flatten_error(
                errors, pairs, "aio", pos, "left out: its GT document is not usable", strict,
                "error",
            )
    for local, message in aio_flat.errors:
        if local not in left_out:
            status[start + local] = "invalid"
            _flatten_error(
                errors, pairs, "aio", start + local, message + "; scored as {}", strict, "warning"
            )
    if left_out:
        keep = ~pl.col("doc").is_in(sorted(left_out))
        aio_flat.leaves = aio_flat.leaves.filter(keep)
        aio_flat.items = aio_flat.items.filter(keep)

    docs = pl.DataFrame(
        {
            "doc": pl.Series(range(stop - start), dtype=pl.UInt32),
            "doc_id": pairs.doc_ids[start:stop],
            "safety": safety[start:stop],
            "gt_present": pairs.gt_present[start:stop],
            "aio_present": pairs.aio_present[start:stop],
            "aio_parse_status": status[start:stop],
            **{
                name: pl.Series(values[start:stop], dtype=pl.String)
                for name, values in pairs.meta.items()
            },
        },
        schema_overrides={"doc_id": pl.String, "aio_parse_status": pl.String,
                          "safety": pl.Float64, "gt_present": pl.Boolean,
                          "aio_present": pl.Boolean},
    ).filter(~pl.col("doc").is_in(sorted(left_out)))
    meta_cols = list(pairs.meta)

    clock.lap("flatten", next_stage="align")
    # stages below work on integer ids (doc, path id, attribute id, codes) and decode strings
    # for the output tables only
    from .align import encode
    from .classify import BUCKETS, CELLS, decode
    from .similarity import STRATEGIES, long_text_warnings, path_strategies, with_strategy

    aligned = align(gt_flat, aio_flat, config)
    for local, message in aligned.failed.items():  # lists too large to align: left out
        _flatten_error(errors, pairs, "gt", start + local, message, strict, "error")
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
    fields = with_strategy(fields, configured, config)
    fields = score_fields(fields, config, semantic_scorer).with_columns(cell_expr(config))
    for doc, side, message in long_text_warnings(fields, paths["path"], semantic_scorer):
        _flatten_error(errors, pairs, side, start + doc, message, False, "warning")
    clock.lap("score", next_stage="aggregate")
    counts = doc_attribute_counts(fields, config, docs["doc"], attributes)
    documents = document_rates(counts, docs, config).sort("doc")
    ids = pl.DataFrame({"doc": pl.Series(range(stop - start), dtype=pl.UInt32)}).join(
        docs.select("doc", "doc_id", *meta_cols), on="doc", how="left", maintain_order="left"
    )  # row i is doc i

    def per_doc(table: pl.DataFrame) -> pl.DataFrame:
        return ids.select(pl.exclude("doc").gather(table["doc"]))

    out = {
        "documents": documents.select(*DOCUMENT_COLUMNS[:1], *meta_cols, *DOCUMENT_COLUMNS[1:]),
        "fields": pl.concat(
            [
                per_doc(fields),
                fields.select(
                    decode("pid", paths["path"]).alias("path"),
                    decode("attr", attributes).alias("attribute"),
                    pl.col("gt_text").alias("gt_value"),
                    pl.col("aio_text").alias("aio_value"),
                    "gt_kind", "aio_kind", "gt_present", "aio_present",
                    decode("bucket", BUCKETS),
                    decode("strategy", STRATEGIES),
                    "similarity", "match",
                    decode("cell", CELLS),
                ),
            ],
            how="horizontal",
        ).select(*FIELD_COLUMNS, *meta_cols),
        "alignments": aligned.alignments.join(docs.select("doc", "doc_id"), on="doc").select(
            "doc_id", *[c for c in ALIGNMENT_SCHEMA if c != "doc"]
        ),
        "counts": pl.concat(
            [
                per_doc(counts),
                counts.select(
                    decode("attr", attributes).alias("attribute"), pl.exclude("doc", "attr")
                ),
            ],
            how="horizontal",
        ),
    }
    clock.lap("aggregate")
    return out


@contextlib.contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector. Parsing and flattening allocate millions of
    containers that all stay alive; the collector's repeated passes over them made these stages
    grow faster than the input (measured: 100k documents 2x slower with it on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Clock:
    def __init__(self, progress: Callable[..., None] | None = None) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()
        self._progress = progress

    def start(self, stage: str) -> None:
        if self._progress:
            self._progress(stage)

    def lap(self, name: str, next_stage: str | None = None) -> None:
        now = time.perf_counter()
        self.laps[name] = self.laps.get(name, 0.0) + now - self._last  # summed over batches
        self._last = now
        if next_stage:
            self.start(next_stage)


def _flatten_error(errors: list, pairs: Pairs, side: str, pos: int, message, strict, severity):
    doc_id, file = pairs.doc_ids[pos], pairs.files.get(side)
    line = (pairs.gt_line if side == "gt" else pairs.aio_line)[pos]
    if strict and severity == "error":
        from .ingest import InputError

        where = f"{file or side}" + (f", line {line}" if line is not None else "")
        raise InputError(f"{where} (doc_id '{doc_id}'): {message}")
    errors.append(
        {"source": side, "doc_id": doc_id, "line": line, "error": message,
         "severity": severity, "file": file}
    )
