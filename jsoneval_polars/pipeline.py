"""evaluate(): the in-memory driver. Inputs are paired in memory (ingest), scored batch by
batch (core), and the batches' states are merged and finished (rates); see core.py."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from .batch_threads import (
    balanced_batch_size, batch_slices, batch_threads, check_batching, in_order, thread_pool,
)
from .bootstrap import with_intervals
from .calibration import calibration, check_confidence_sources, confidence_table
from .compressed import reads_compressed
from .config import Config, parse_config
from .core import (
    PER_DOCUMENT_TABLES, Batch, Clock, collector_paused, needs_documents, score_batch,
)
from .counts import RunState, merge_states, run_state
from .ingest import (
    content_fields,
    is_ndjson,
    metadata_names,
    pair_inputs,
    plan_ndjson,
    plan_tables,
    read_once,
    read_pairs,
)
from .layout import TABLES, RunWriter, check_partition_column, manifest, now
from .rates import attribute_rates, finish
from .schemas import ERRORS
from .scorers import Scorer

BATCH_SIZE = 20_000  # document pairs scored together; bounds the intermediate tables


def plural(n: int, noun: str) -> str:
    """``1 document``, ``2 documents``, ``1,000 errors``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def summary_line(summary: dict[str, Any]) -> str:
    """``306 documents, healthy, micro-F1 0.906, mean RQS 0.809, pass rate 96.7%; 0 errors,
    1 warning``: a run's headline figures in one line (a failed run's reasons after its
    status)."""
    def figure(name: str, template: str) -> str:
        value = summary.get(name)
        return "-" if value is None else template.format(value)

    def count(name: str, noun: str) -> str:
        return plural(summary.get(name) or 0, noun)

    failure = summary.get("failure")
    return (f"{count('n_documents', 'document')}, {summary.get('status')}"
            f"{f' ({failure})' if failure else ''}, micro-F1 {figure('micro_f1', '{:.3f}')}, "
            f"mean RQS {figure('mean_rqs', '{:.3f}')}, pass rate {figure('pass_rate', '{:.1%}')};"
            f" {count('n_errors', 'error')}, {count('n_warnings', 'warning')}")


@dataclass(repr=False)
class Result:
    """The result tables (SPEC §7) as Polars frames, plus the summary and the additive counts.

    ``counts`` holds one row per (doc_id, attribute) with every additive count; summing it over
    any split of the documents and applying :func:`rates.attribute_rates` gives ``attributes``.
    ``manifest`` describes the run (version, config, inputs, times) as ``manifest.json`` does;
    ``state`` is the run's mergeable state (counts per metadata slice and attribute, totals).
    """

    documents: pl.DataFrame
    fields: pl.DataFrame
    attributes: pl.DataFrame
    alignments: pl.DataFrame
    errors: pl.DataFrame
    counts: pl.DataFrame
    summary: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    manifest: dict[str, Any] = field(default_factory=dict)
    state: RunState | None = None
    calibration: pl.DataFrame | None = None  # with confidences (calibration.py)

    def __repr__(self) -> str:
        """The run in two lines, not every table in full (a notebook cell showing a result
        printed some 18,000 characters for the 306-pair sample)."""
        rows = ", ".join(f"{name} ({getattr(self, name).height:,})" for name in TABLES)
        return f"Result: {summary_line(self.summary)}\n  tables (rows): {rows}"

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
        if table == "calibration" and self.calibration is not None:
            return self.calibration.lazy()
        if table not in TABLES:
            raise KeyError(f"no table {table!r}; tables: {', '.join(TABLES)}")
        return getattr(self, table).lazy()

    def write(
        self, out_dir: str | Path, *, partition_by: str | None = None,
        by: str | Sequence[str] = (),
    ) -> Path:
        """Write the run in the results layout (layout.py): ``<table>/part-000000.parquet``
        per table, ``summary.json`` and ``manifest.json``; with ``partition_by`` (a metadata
        column such as run_id) each table in Hive folders ``<table>/<column>=<value>/``;
        with ``by``, also ``attributes_by/`` (the attribute table per slice). The directory's
        previous run is replaced whole, and only once everything is written."""
        started = time.perf_counter()
        by = [by] if isinstance(by, str) else list(by)
        if partition_by is not None and partition_by not in self.documents.columns:
            raise KeyError(
                f"cannot partition by '{partition_by}': not a metadata column of this result "
                f"(pass metadata=[{partition_by!r}] to evaluate); columns: "
                f"{self.documents.columns}"
            )
        if partition_by is not None:
            check_partition_column(partition_by, self.documents[partition_by],
                                   self.documents.height, self.attributes["attribute"])
        with RunWriter(out_dir, partition_by=partition_by) as writer:
            for name in ("documents", "fields", "counts"):
                writer.write(name, getattr(self, name))
            keys = self.documents.select("doc_id", partition_by) if partition_by else None
            for name in ("alignments", "errors"):
                table = getattr(self, name)
                writer.write(name, table if keys is None else table.join(
                    keys, on="doc_id", how="left", maintain_order="left"))
            writer.write("attributes", self.attributes_by(partition_by) if partition_by
                         else self.attributes)
            if by:
                writer.write("attributes_by", self.attributes_by(by), partitioned=False)
            if self.calibration is not None:
                writer.write("calibration", self.calibration, partitioned=False)
            out = writer.commit(
                self.summary, {**self.manifest, "partition_by": partition_by, "by": by}
            )
        self.timings["write"] = time.perf_counter() - started
        return out


@reads_compressed
def evaluate(
    gt: Any,
    aio: Any,
    *,
    config: Config | dict | str | Path | None = None,
    id_field: str | None = None,
    content_field: str | tuple[str | None, str | None] | None = None,
    json_column: str | None = None,
    safety: Any = None,
    semantic_scorer: Scorer | str | None = None,
    metadata: Sequence[str] = (),
    strict: bool = False,
    progress: Callable[..., None] | None = None,
    batch_size: int = BATCH_SIZE,
    bootstrap: int | None = None,
    seed: int | None = None,
    confidence: Any = None,
    workers: int | None = None,
) -> Result:
    """Score AI output against ground truth.

    ``gt`` and ``aio`` are NDJSON / JSON-array / Parquet / Arrow / CSV file paths, lists of records
    (dicts carrying ``id_field``, or bare documents paired by position), or Polars/Arrow tables
    with an id column and one JSON-text or struct column (``json_column``). ``config`` is a
    mapping (SPEC §11), a :class:`Config` or the path of a JSON, YAML or TOML config file
    (:func:`load_config`). ``safety`` is a
    mapping doc_id -> score, a table (doc_id, safety) or a callable (gt, aio) -> score.
    ``content_field`` names the record member holding the document, for both sides or as a
    (gt, aio) pair; an AIO document that is a string is raw model text (SPEC §8).
    ``metadata`` names record members (or extra table columns) such as model, run_id or vendor:
    they are not scored, and travel as string columns to ``documents``, ``fields`` and
    ``counts``, so :meth:`Result.attributes_by` slices the metrics without re-scoring.
    ``progress`` is called with each stage's name as it starts, and as
    ``progress("score", done, total)`` after each batch of documents.
    ``strict`` raises :class:`ingest.InputError` on the first bad record instead of recording
    it in ``errors``. Documents are scored ``batch_size`` pairs at a time on ``workers`` threads
    (default one per core; docs/DECISIONS.md 100); the result depends on neither.
    ``bootstrap=N`` resamples the documents N times (``seed`` fixes them) and adds 95 %
    intervals: ``f1_low``/``f1_high`` to ``attributes`` and ``micro_f1_low`` ...
    ``mean_rqs_high`` to the summary (bootstrap.py). ``confidence`` holds per-field
    confidences: records with the id field and the AIO's paths (or a mapping doc_id ->
    document, or a (doc_id, path, confidence) table); the result then has a ``calibration``
    table (AUROC, Brier, ECE, accuracy at coverage; calibration.py).

    >>> r = evaluate([{"doc_id": "a", "total": 10}], [{"doc_id": "a", "total": 10.0}])
    >>> r.summary["mean_accuracy"], r.documents["rqs"][0]
    (1.0, 0.85)
    """
    cfg = parse_config(config)
    check_confidence_sources(cfg, confidence)
    check_batching(batch_size, workers)
    started, clock = now(), Clock(progress)
    t = time.perf_counter()
    clock.start("read")
    gt, aio = read_once(gt), read_once(aio)  # an Arrow stream is looked at more than once
    id_field = id_field or cfg.id_field
    # whole documents as JSON text (NDJSON lines, table cells) go from text to the leaves
    # table in batches; other inputs are read as Python objects first
    # (metadata and content members too, from NDJSON lines; a table's may be its own columns)
    plain = not needs_documents(cfg, safety)
    reader = {"strict": strict, "empty_containers_are_null": cfg.empty_containers_are_null}
    metadata = metadata_names(metadata, id_field=id_field)
    fields = content_fields(content_field)
    with collector_paused():
        if plain and is_ndjson(gt) and is_ndjson(aio):  # read as the files driver: ids first
            plan, rows, n_read = plan_ndjson(gt, aio, id_field, strict, fields)
            read = functools.partial(read_pairs, files={"gt": gt, "aio": aio},
                                     id_field=id_field, metadata=metadata, fields=fields,
                                     **reader)
        elif plain and (texts := plan_tables(
                gt, aio, id_field=id_field, json_column=json_column, strict=strict,
                metadata=metadata, content_field=content_field)):
            plan, rows, n_read = texts.plan, texts.errors, texts.n_read
            read = functools.partial(texts.read_pairs, **reader)
        else:
            plain = False
        if plain:
            total = plan.height
        else:
            pairs = pair_inputs(
                gt, aio, id_field=id_field, content_field=content_field,
                json_column=json_column, strict=strict, metadata=metadata,
            )
            if safety is not None:
                pairs = pairs.with_safety(safety)
            rows, n_read, total = pairs.errors, pairs.n_read, len(pairs)
        threads = batch_threads(workers, semantic_scorer, total, batch_size)
        size = balanced_batch_size(total, batch_size, threads)
        if plain:
            parts_in: Iterable[Any] = batch_slices(plan, size)
        else:
            parts_in = list(pairs.batches(size)) or [pairs]
            del pairs
    clock.laps["read_parse"] = time.perf_counter() - t
    pairing_errors = pl.DataFrame(rows, schema=ERRORS)
    parts: dict[str, list[pl.DataFrame]] = {name: [] for name in PER_DOCUMENT_TABLES}
    parts["errors"] = [pairing_errors]
    states = [run_state(errors=pairing_errors, n_read=n_read)]

    def score_part(number: int, part: Any) -> tuple[pl.DataFrame, Batch, float]:
        """Score one part: plan rows read back from text, or pairs already in memory."""
        t = time.perf_counter()
        batch_pairs = part
        if plain:
            with collector_paused():
                batch_pairs = read(part)
                if safety is not None:
                    batch_pairs = batch_pairs.with_safety(safety)
        read_s = time.perf_counter() - t
        # a batch's own reading errors (records read back from text in this batch)
        read_errors = pl.DataFrame(batch_pairs.errors if plain else [], schema=ERRORS)
        # the stages' progress only from one thread; several report batches done
        batch = score_batch(batch_pairs, cfg, semantic_scorer=semantic_scorer, strict=strict,
                            progress=progress if threads == 1 else None)
        return read_errors, batch, read_s

    done = 0
    with thread_pool(threads) as pool:
        for part, (read_errors, batch, read_s) in in_order(pool, score_part, parts_in,
                                                           2 * threads):
            clock.laps["read_parse"] += read_s
            for name in parts:
                parts[name].append(getattr(batch, name))
            if read_errors.height:
                parts["errors"].insert(-1, read_errors)
                states.append(run_state(errors=read_errors))
            states.append(batch.state)
            clock.add(batch.timings)
            done += len(part)
            if progress:
                progress("score", done, total)
    del part, batch, parts_in  # the parsed documents are not needed past this point
    t = time.perf_counter()
    state = merge_states(states)
    attributes, summary, warnings = finish(state, config=cfg, metadata=metadata)
    parts["errors"].append(pl.DataFrame(warnings, schema=ERRORS))
    tables = {name: pl.concat(frames) for name, frames in parts.items()}
    calibrated = None
    if confidence is not None:
        calibrated = calibration(tables["fields"], confidence_table(
            confidence, id_field=id_field), tables["alignments"])
    elif cfg.confidence:  # sibling confidence keys, in the fields' confidence column
        calibrated = calibration(tables["fields"])
    if bootstrap is not None:
        attributes, summary = with_intervals(attributes, summary, tables["counts"],
                                             tables["documents"], bootstrap, seed)
    clock.laps["aggregate"] = clock.laps.get("aggregate", 0.0) + time.perf_counter() - t
    return Result(
        **tables, attributes=attributes, summary=summary, timings=clock.laps, state=state,
        calibration=calibrated,
        manifest=manifest(driver="in-memory", config=cfg, inputs={"gt": gt, "aio": aio},
                          n_read=n_read, started=started, partition_by=None,
                          batch_size=batch_size),
    )
