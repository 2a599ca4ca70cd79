"""The files driver: NDJSON files of any size, in memory bounded by the batch size.

:func:`evaluate` holds every parsed document of a run at once. :func:`score_files` instead
works in two passes over the files, on threads of this process (a thread per core: the kernel,
Polars and pyarrow do most of a batch without the GIL; DECISIONS 119):

1. *scan*: each thread parses a byte range of a file and returns, per record, only its line
   in the range, byte offset, length and doc_id, with the range's number of line ends
   (:func:`ingest.scan_range`); the main thread numbers the ranges' lines in file order and
   writes the error rows of the lines that are not records (:func:`ingest.number_range`). A
   JSON array or a file of pretty-printed objects is scanned from its start by one thread, a
   chunk at a time (:func:`ingest.scan_whole_file`). The run
   hands them to a :class:`pair_plan.PairPlan`, which pairs the ids with
   :func:`ingest.pair_records`, the pairing every driver uses: at once for small inputs, in
   hash buckets spilled to disk beyond a million records a side, so memory does not grow with
   the input. The plan is cut into batches bucket by bucket, a few batches in flight per
   thread.
2. *score*: each thread reads the records of one batch back by offset
   (:func:`ingest.read_records_at`), pairs them (:func:`ingest.build_pairs`), runs the batch
   core (:func:`core.score_batch`), writes the batch's per-document tables as parts of the
   results layout (layout.py) and returns its run state and error rows.

Files with the same increasing ids on both sides skip the scan: :mod:`sorted_pass` cuts both
into batches as they come, each batch's walk reading its ids, and hands the scan only the rest
of the files, from the first line where that order breaks (DECISIONS 132).

The run merges the states and finishes them (:func:`rates.finish`), exactly as
:func:`evaluate` does, so the tables equal a whole-dataset run (tests/test_drivers.py); only
the order of rows differs (scan and pairing errors first, then each batch's; spilled, the
documents come bucket by bucket). Parsing twice costs
about 2 µs per document (the kernel's scan) and buys the exact pairing without holding the
documents.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from . import flatten
from .batch_threads import (
    balanced_batch_size, batch_slices, batch_threads, check_batching, in_order,
    thread_pool, threads_for,
)
from .bootstrap import with_intervals
from .calibration import calibration, check_confidence_sources, confidence_table
from .compressed import plain_copies, with_names
from .config import Config, parse_config
from .core import PER_DOCUMENT_TABLES, Clock, collector_paused, needs_documents, score_batch
from .counts import RunState, merge_states, run_state
from .file_ranges import (
    CHUNK_BYTES, STREAM_BATCH_SIZE, EarlyPass, EarlyScan, byte_ranges, expected_lines,
    walk_lines,
)
from .flatten import KERNEL
from .ingest import (
    SCAN_SCHEMA,
    ErrorRows,
    InputError,
    Pairs,
    check_safety_columns,
    content_fields,
    metadata_names,
    name_list,
    ndjson_path,
    number_range,
    plan_tables,
    read_once,
    read_pairs,
    read_sorted_pairs,
    scan_range,
    scan_whole_file,
    text_kind,
)
from .layout import RunWriter, check_partition_column, manifest, now, write_part
from .pair_plan import SIDES, PairPlan
from .pipeline import evaluate
from .rates import attribute_rates, finish
from .results import ResultTables, read_results
from .schemas import ERRORS
from .scorers import Scorer
from .sorted_pass import Chunk, Passed, score_sorted


def score_files(
    gt: str | Path,
    aio: str | Path,
    out: str | Path,
    *,
    config: Config | dict | str | Path | None = None,
    id_field: str | None = None,
    content_field: str | tuple[str | None, str | None] | None = None,
    safety: Any = None,
    semantic_scorer: Scorer | str | None = None,
    metadata: Sequence[str] = (),
    by: Sequence[str] = (),
    partition_by: str | None = None,
    workers: int | None = None,
    batch_size: int = STREAM_BATCH_SIZE,
    strict: bool = False,
    progress: Callable[..., None] | None = None,
    bootstrap: int | None = None,
    seed: int | None = None,
    confidence: Any = None,
    early_scan: EarlyScan | EarlyPass | None = None,
) -> ResultTables:
    """Score two NDJSON files (or JSON arrays of records, or pretty-printed objects) into the
    results directory ``out`` (layout.py) and open it.

    Same inputs and meaning as :func:`evaluate` for those files; ``safety`` is a mapping or a
    (doc_id, safety) table, or a callable. ``by`` adds ``attributes_by/``; ``partition_by``
    writes Hive folders, as :meth:`Result.write`. ``workers`` threads (default one per core;
    one with a semantic scorer of the user's own, as in :func:`evaluate`) parse and score;
    each holds one batch of at most ``batch_size`` document pairs at a time (batches are
    evened out over the threads). ``bootstrap``/``seed`` add intervals as in
    :func:`evaluate`, from the per-document ``counts`` and ``documents`` parts the batches
    wrote; ``confidence`` adds the
    ``calibration`` table as in :func:`evaluate`, from the ``fields`` parts. ``early_scan``:
    ranges of these files read before the call (the command's :class:`file_ranges.EarlyScan`),
    taken instead of reading them again, or for sorted files the first batches walked before
    it (:class:`file_ranges.EarlyPass`).
    """
    cfg = parse_config(config)
    check_confidence_sources(cfg, confidence)
    check_batching(batch_size, workers)
    id_field = id_field or cfg.id_field
    gt_field, aio_field = content_fields(content_field)
    inputs = {"gt": ndjson_path(gt, "gt"), "aio": ndjson_path(aio, "aio")}
    metadata, by = metadata_names(metadata, by, partition_by, id_field=id_field), name_list(by)
    safety_table = _safety_table(safety)
    started_at = now()
    clock = Clock(progress)
    spill_parent = Path(out).absolute().parent
    with contextlib.ExitStack() as run:
        # a compressed input is read through a decompressed copy beside the spill
        files, names = run.enter_context(plain_copies(inputs, spill_parent))
        workers = threads_for(workers, semantic_scorer)
        pairing = run.enter_context(PairPlan(spill_parent))
        writer = run.enter_context(RunWriter(out, partition_by=partition_by))
        pool = run.enter_context(thread_pool(workers))
        fields = {"gt": gt_field, "aio": aio_field}
        # a safety callable runs on each batch's pairs; a table or mapping is the plan's column
        scored_safety = safety if callable(safety) else None
        native = not needs_documents(cfg, scored_safety)
        read = functools.partial(
            read_pairs, files=files, id_field=cfg.id_field, fields=(gt_field, aio_field),
            metadata=metadata, strict=strict,
            empty_containers_are_null=cfg.empty_containers_are_null, native=native)
        score = functools.partial(
            _score_pairs, config=cfg, staging=writer.staging, strict=strict,
            partition_by=partition_by, scorer=semantic_scorer, safety=scored_safety)
        task = functools.partial(_score_plan, read=read, score=score)
        states: list[RunState] = []
        error_parts: list[pl.DataFrame] = []
        count = {"done": 0, "pairs": 0}  # the pairs, or the lines expected, for the progress

        def scored(rows: int, result: tuple[RunState, pl.DataFrame, dict]) -> None:
            state, batch_errors, laps = result
            count["done"] += rows
            if progress:
                progress("score", count["done"], max(count["done"], count["pairs"]))
            states.append(state)
            if len(states) >= 64:  # states are small, but 10M pairs make 1,000 batches
                states[:] = [merge_states(states)]
            error_parts.append(batch_errors)
            clock.add(laps)  # thread seconds, summed over batches

        passed = None
        # the pass over sorted files, where a batch reads its pairs as read_pairs would
        if (native and KERNEL == "native" and id_field == cfg.id_field and not metadata
                and safety_table is None and gt_field is None and aio_field is None
                and all(text_kind(files[side]) == "ndjson" for side in SIDES)):
            count["pairs"] = max(expected_lines(files[side]) for side in SIDES)
            pairing.expect(count["pairs"])
            clock.start("score")

            def passed_batch(chunk: Chunk, result: tuple, doc_ids: pl.Series) -> None:
                for side in SIDES:
                    pairing.add(side, _pass_records(chunk.plan, side, doc_ids))
                scored(chunk.plan.height, result)

            # the command's early pass walked the first batches while the libraries loaded
            reading = (id_field, cfg.empty_containers_are_null, flatten._SEGMENT)
            early = early_scan if isinstance(early_scan, EarlyPass) and early_scan.matches(
                files, reading) else None
            if early is not None:
                early.stop()

            def read_sorted(chunk: Chunk) -> Pairs | None:
                walked = early.take(chunk.number, chunk.cut) if early and chunk.number >= 0 \
                    else None
                return read_sorted_pairs(
                    chunk.plan, walked or walk_lines(files, chunk.cut, reading), files,
                    id_field=id_field, empty_containers_are_null=cfg.empty_containers_are_null)

            passed = score_sorted(
                files, pool=pool, workers=workers, batch_size=batch_size,
                expected=count["pairs"], read=read_sorted, score=score, scored=passed_batch,
                sorted_files=early_scan.close if isinstance(early_scan, EarlyScan)
                else lambda: None)
            clock.lap("sorted_pass")
        if passed is not None and passed.complete:
            n_read = dict(pairing.n_records)
            states.insert(0, run_state(errors=pl.DataFrame(schema=ERRORS), n_read=n_read))
        else:
            n_read = _scan_and_score(
                files, fields, pairing, passed, pool=pool, workers=workers,
                batch_size=batch_size, id_field=id_field, strict=strict,
                early_scan=early_scan if isinstance(early_scan, EarlyScan) else None,
                safety_table=safety_table, task=task, scored=scored,
                states=states, error_parts=error_parts, clock=clock, count=count)
        t = time.perf_counter()
        _finish_run(writer, states, error_parts, cfg, metadata=metadata, by=by,
                    partition_by=partition_by, bootstrap=bootstrap, seed=seed,
                    confidence=confidence, id_field=id_field, names=names, manifest_of=dict(
                        driver="files", inputs=inputs, n_read=n_read, started=started_at,
                        batch_size=batch_size, workers=workers))
        clock.laps["aggregate_write"] = time.perf_counter() - t
    return dataclasses.replace(read_results(out), timings=clock.laps)


def _scan_and_score(
    files: Mapping[str, Path], fields: Mapping[str, str | None], pairing: PairPlan,
    passed: Passed | None, *, pool: Any, workers: int, batch_size: int, id_field: str,
    strict: bool, early_scan: EarlyScan | None, safety_table: pl.DataFrame | None,
    task: Callable, scored: Callable, states: list, error_parts: list, clock: Clock,
    count: dict[str, int],
) -> dict[str, int]:
    """The two passes over the files, or over the rest of them after the pass over sorted
    files (``passed``: its records are in ``pairing`` already, and its pairs are left out of
    the plan): scan, pair, then score the plan's batches (``count["pairs"]``: the pairs in
    all). Returns the records read per side."""
    clock.start("scan")
    first_byte = {side: passed.offsets[side] if passed else 0 for side in SIDES}
    # an NDJSON file is scanned in byte ranges on every thread; a JSON array or
    # pretty-printed objects by one thread from its start (where a record ends is known
    # only from there)
    whole_scans = {side: pool.submit(scan_whole_file, str(files[side]), side, id_field,
                                     fields[side], strict)
                   for side in SIDES if text_kind(files[side]) != "ndjson"}
    chunks = {side: [] if side in whole_scans else byte_ranges(files[side], CHUNK_BYTES,
                                                               first_byte[side])
              for side in SIDES}
    # submitted alternately and taken in that order, so that finished ranges do not wait
    # long; each side's ranges reach the plan in line order, numbered as they come
    scans = [*whole_scans.items()] + [
        (side, pool.submit(scan_range, str(files[side]), start, stop, id_field,
                           fields[side], early_scan and early_scan.take(
                               files[side], start, stop, id_field, fields[side])))
        for pair in itertools.zip_longest(*([(side, *bounds) for bounds in chunks[side]]
                                            for side in SIDES))
        for side, start, stop in filter(None, pair)
    ]
    if passed is None:
        # the buckets are sized before the first range is added: by the lines expected of an
        # NDJSON side, and the records of an array or objects (waited for only now, so that
        # an NDJSON side's ranges are scanned meanwhile)
        pairing.expect(max([expected_lines(files[side]) for side in SIDES
                            if side not in whole_scans]
                           + [future.result()[0].height for future in whole_scans.values()]))
    rows: list[dict] = []
    next_line = {side: passed.next_line[side] if passed else 1 for side in SIDES}
    while scans:
        side, future = scans.pop(0)
        if side in whole_scans:
            table, chunk_rows = future.result()
        else:
            scanned = future.result()
            table, chunk_rows = number_range(scanned, side, next_line[side], strict)
            next_line[side] += scanned.line_ends
        pairing.add(side, table)
        rows += chunk_rows
    n_read = {
        side: pairing.n_records[side]
        + sum(1 for e in rows if e["source"] == side and e["severity"] == "error")
        for side in SIDES
    }
    errors = ErrorRows(strict)
    n_pairs = count["pairs"] = pairing.pair(id_field, {side: str(path) for side, path
                                                       in files.items()}, errors)
    scan_errors = pl.DataFrame(rows + errors.rows, schema=ERRORS)
    clock.lap("scan", next_stage="score")
    states.insert(0, run_state(errors=scan_errors, n_read=n_read))
    error_parts.insert(0, scan_errors)
    # a few batches in flight per thread: the plan is read bucket by bucket, never whole
    plans = _batch_plans(pairing, n_pairs - (passed.n_pairs if passed else 0), batch_size,
                         workers, safety_table, passed)
    for plan, result in in_order(pool, task, plans, 2 * workers,
                                 first=passed.batches if passed else 0):
        scored(plan.height, result)
    return n_read


def _pass_records(plan: pl.DataFrame, side: str, doc_ids: pl.Series) -> pl.DataFrame:
    """One side's records of a batch the pass over sorted files scored, as the scan gives
    them to the pairing."""
    return plan.select(
        pl.col(f"{side}_line").alias("line"), doc_ids.alias("doc_id"),
        pl.lit(True).alias("has_id"), pl.col(f"{side}_offset").alias("offset"),
        pl.col(f"{side}_length").alias("length"),
    ).select(list(SCAN_SCHEMA))


def score_tables(
    gt: Any,
    aio: Any,
    out: str | Path,
    *,
    config: Config | dict | str | Path | None = None,
    id_field: str | None = None,
    content_field: str | tuple[str | None, str | None] | None = None,
    json_column: str | None = None,
    safety: Any = None,
    semantic_scorer: Scorer | str | None = None,
    metadata: Sequence[str] = (),
    by: Sequence[str] = (),
    partition_by: str | None = None,
    batch_size: int = STREAM_BATCH_SIZE,
    strict: bool = False,
    progress: Callable[..., None] | None = None,
    bootstrap: int | None = None,
    seed: int | None = None,
    confidence: Any = None,
    workers: int | None = None,
) -> ResultTables:
    """Score two tables whose JSON column holds text (Parquet, Arrow, Polars, DuckDB results)
    into the results directory ``out``, a batch at a time: each batch's per-document tables are
    written as parts once it is scored, so this process holds a few batches (``workers``
    threads, default one per core, each scoring one, and as many read ahead), where
    :func:`evaluate` and :meth:`Result.write` hold every result table at once. A Parquet or
    Arrow file is read a record batch at a time, its texts spilled beside ``out`` (a hidden
    folder, removed when the run ends): the run holds its ids and metadata, not its texts
    (:mod:`table_texts`); a table in memory is read where it is. The inputs and
    options mean what they mean for :func:`evaluate`; inputs the text path does not read (a
    struct column, a JSON array, documents ANLS* needs whole) are scored by :func:`evaluate`
    and written whole."""
    cfg = parse_config(config)
    check_confidence_sources(cfg, confidence)
    check_batching(batch_size, workers)
    id_field = id_field or cfg.id_field
    metadata, by = metadata_names(metadata, by, partition_by, id_field=id_field), name_list(by)
    gt, aio = read_once(gt), read_once(aio)
    plan = None if needs_documents(cfg, safety) else plan_tables(
        gt, aio, id_field=id_field, json_column=json_column, strict=strict, metadata=metadata,
        content_field=content_field, spill=Path(out).absolute().parent)
    if plan is None:
        result = evaluate(gt, aio, config=cfg, id_field=id_field, content_field=content_field,
                          json_column=json_column, safety=safety,
                          semantic_scorer=semantic_scorer, metadata=metadata, strict=strict,
                          progress=progress, batch_size=batch_size, bootstrap=bootstrap,
                          seed=seed, confidence=confidence, workers=workers)
        if progress:
            progress("write")
        return read_results(result.write(out, partition_by=partition_by, by=by))
    started_at = now()
    clock = Clock(progress)
    with contextlib.closing(plan), RunWriter(out, partition_by=partition_by) as writer:
        clock.start("score")
        read_errors = pl.DataFrame(plan.errors, schema=ERRORS)
        states = [run_state(errors=read_errors, n_read=plan.n_read)]
        error_parts = [read_errors]
        read = functools.partial(plan.read_pairs, strict=strict,
                                 empty_containers_are_null=cfg.empty_containers_are_null)
        threads = batch_threads(workers, semantic_scorer, plan.plan.height, batch_size)
        score_part = functools.partial(_score_plan, read=read, score=functools.partial(
            _score_pairs, config=cfg, staging=writer.staging, strict=strict,
            partition_by=partition_by, scorer=semantic_scorer, safety=safety))

        slices = batch_slices(plan.plan,
                              balanced_batch_size(plan.plan.height, batch_size, threads))
        done = 0
        with thread_pool(threads) as pool:
            for rows, (state, errors, laps) in in_order(pool, score_part, slices, 2 * threads):
                states.append(state)
                error_parts.append(errors)
                clock.add(laps)  # thread seconds, summed over batches
                done += rows.height
                if progress:
                    progress("score", done, plan.plan.height)
        _finish_run(writer, states, error_parts, cfg, metadata=metadata, by=by,
                    partition_by=partition_by, bootstrap=bootstrap, seed=seed,
                    confidence=confidence, id_field=id_field, manifest_of=dict(
                        driver="tables", inputs={"gt": gt, "aio": aio}, n_read=plan.n_read,
                        started=started_at, batch_size=batch_size))
    return dataclasses.replace(read_results(out), timings=clock.laps)


def _finish_run(writer: RunWriter, states: list[RunState], error_parts: list[pl.DataFrame],
                cfg: Config, *, metadata: list[str], by: Sequence[str],
                partition_by: str | None, bootstrap: int | None, seed: int | None,
                confidence: Any, id_field: str, manifest_of: dict[str, Any],
                names: Mapping[str, str] | None = None) -> None:
    """The run's end, once its batches' parts are written: merge the states, finish them
    (:func:`rates.finish`, as every driver does), add what reads the parts back (intervals,
    calibration), write the run-wide tables and commit the directory. ``names``: the paths of
    decompressed copies (compressed.plain_copies) and the user's files to show instead."""
    state = merge_states(states)
    attributes, summary, warnings = finish(state, config=cfg, metadata=metadata)
    error_parts.append(pl.DataFrame(warnings, schema=ERRORS))
    if bootstrap is not None:
        parts = {name: pl.scan_parquet(sorted((writer.staging / name).rglob("*.parquet")),
                                       hive_partitioning=False)
                 for name in ("counts", "documents")}
        attributes, summary = with_intervals(attributes, summary, parts["counts"],
                                             parts["documents"], bootstrap, seed)
    if confidence is not None or cfg.confidence:
        fields, alignments = (
            pl.scan_parquet(sorted((writer.staging / name).rglob("*.parquet")),
                            hive_partitioning=False) for name in ("fields", "alignments"))
        writer.write("calibration", calibration(
            fields, None if confidence is None else
            confidence_table(confidence, id_field=id_field), alignments),
            partitioned=False)
    if partition_by:
        check_partition_column(partition_by, state.counts[partition_by],
                               summary["n_documents"], attributes["attribute"])
        attributes = attribute_rates(state.counts, by=[partition_by])
    writer.write("attributes", attributes)
    if by:
        writer.write("attributes_by", attribute_rates(state.counts, by=list(by)),
                     partitioned=False)
    writer.write("errors", with_names(pl.concat(error_parts, how="diagonal_relaxed"),
                                      names or {}))
    writer.commit(summary, manifest(config=cfg, partition_by=partition_by, by=by,
                                    **manifest_of))


def _batch_plans(pairing: PairPlan, n_pairs: int, batch_size: int, workers: int,
                 safety_table: pl.DataFrame | None, passed: Passed | None = None,
                 ) -> Iterator[pl.DataFrame]:
    """The pair plan cut into batches, bucket by bucket (each bucket's batches evened out over
    the threads), less the pairs the pass over sorted files scored (``passed``: every pair of
    its GT lines); no pairs at all: one empty batch, which still writes every table with its
    schema, unless that pass wrote them."""
    for plan in pairing.plans():
        if passed is not None:
            plan = plan.filter(pl.col("gt_line").is_null()
                               | (pl.col("gt_line") >= passed.next_line["gt"]))
            if n_pairs == 0 and passed.batches:
                return
        if safety_table is not None:
            plan = plan.join(safety_table, on="doc_id", how="left", maintain_order="left")
        if n_pairs == 0:
            yield plan
            return
        size = balanced_batch_size(plan.height, batch_size, workers)
        for start in range(0, plan.height, size):
            yield plan.slice(start, size)


def _safety_table(safety: Any) -> pl.DataFrame | None:
    """A mapping or table of safety scores as (doc_id, safety); None otherwise."""
    if safety is None or callable(safety):
        return None
    if isinstance(safety, Mapping):
        safety = pl.DataFrame({"doc_id": list(map(str, safety)), "safety": list(safety.values())},
                              strict=False)
    if not isinstance(safety, pl.DataFrame):
        raise InputError("safety must be a mapping, a table with doc_id and safety columns, or "
                         f"a callable; got {type(safety).__name__}")
    check_safety_columns(safety)
    return safety.select(pl.col("doc_id").cast(pl.String), pl.col("safety").alias("_safety"))


def _score_plan(number: int, plan: pl.DataFrame, *, read: Callable[[pl.DataFrame], Pairs],
                score: Callable[..., tuple[RunState, pl.DataFrame, dict]],
                ) -> tuple[RunState, pl.DataFrame, dict]:
    """Score batch ``number`` of a plan on a thread, for the files and the tables drivers: read
    its pairs (``read``: :func:`ingest.read_pairs` or a table plan's), then :func:`_score_pairs`
    (``score``), with the plan's ``_safety`` column if it has one."""
    t = time.perf_counter()
    # paused for the whole batch, so the collector's next pass comes after its documents are
    # freed instead of walking all of them (measured: 0.2 s per 20k-document batch)
    with collector_paused():
        pairs = read(plan)
        if "_safety" in plan.columns:
            known = plan.filter(pl.col("_safety").is_not_null())
            pairs = pairs.with_safety(dict(zip(known["doc_id"], known["_safety"], strict=True)))
        return score(number, pairs, time.perf_counter() - t)


def _score_pairs(number: int, pairs: Pairs, read_s: float, *, config: Config, staging: Path,
                 strict: bool, partition_by: str | None, scorer: Scorer | str | None,
                 safety: Any) -> tuple[RunState, pl.DataFrame, dict]:
    """Score batch ``number``'s pairs on a thread (read in ``read_s`` seconds): give them their
    safety (a callable's, ``safety``), run the core, write its per-document tables as parts;
    return its state, error rows and times."""
    with collector_paused():
        if safety is not None:
            pairs = pairs.with_safety(safety)
        batch = score_batch(pairs, config, semantic_scorer=scorer, strict=strict,
                            dictionary=True)
    t = time.perf_counter()
    state, errors = _write_batch(staging, partition_by, number, pairs, batch)
    return state, errors, {"read_parse": read_s, "write": time.perf_counter() - t,
                           **batch.timings}


def _write_batch(staging: str | Path, partition_by: str | None, number: int, pairs: Pairs,
                 batch: Any) -> tuple[RunState, pl.DataFrame]:
    """Write a scored batch's per-document tables as parts ``number``; its state and error
    rows (its pairs' reading errors first). With ``partition_by``, the rows of a table without
    that column (alignments, errors) are labelled with their document's value, as
    :meth:`Result.write` labels them."""
    keys = batch.documents.select("doc_id", partition_by) if partition_by else None
    for name in PER_DOCUMENT_TABLES:
        frame = getattr(batch, name)
        if keys is not None and partition_by not in frame.columns:
            frame = frame.join(keys, on="doc_id", how="left", maintain_order="left")
        write_part(staging, name, frame, number, partition_by, on_this_thread=True)
    state, errors = batch.state, batch.errors
    if pairs.errors:  # most batches have none, and keep the core's state (a merge: 2.5 ms)
        pairing_errors = pl.DataFrame(pairs.errors, schema=ERRORS)
        state = merge_states([run_state(errors=pairing_errors), state])
        errors = pl.concat([pairing_errors, errors])
    if partition_by:
        errors = errors.join(pairs.table.select("doc_id", partition_by), on="doc_id",
                             how="left", maintain_order="left")
    return state, errors
