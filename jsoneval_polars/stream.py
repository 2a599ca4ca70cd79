"""Scoring NDJSON files of any size on every core, in memory bounded by the batch size.

:func:`evaluate` holds every parsed document of a run at once, so its memory grows with the
dataset. :func:`score_files` instead works in two passes over the files, both spread over a pool
of ``spawn`` worker processes (forking after Polars has started its threads can deadlock):

1. *scan*: each worker parses a byte range of a file and returns, per record, only its line,
   byte offset, length and doc_id (and the error rows of lines that are not records). The main
   process pairs the ids exactly as :func:`ingest.pair_inputs` does (first occurrence wins, GT
   order then AIO-only records) and cuts the pairs into batches.
2. *score*: each worker reads the lines of one batch back by offset, parses them again and runs
   the engine on the batch (:func:`pipeline.score_pairs`), writing that batch's documents, fields
   and alignments as ``<table>/part-NNNNNN.parquet`` and returning its counts summed per
   attribute and its error rows.

The main process then derives the attribute table from the summed counts (counts first, rates
last) and the summary from the documents parts. Every stage works within a document, so the
tables equal a whole-dataset :func:`evaluate` run (tests/test_stream.py); only the order of
error rows differs (scan errors first, then each batch's). Parsing twice costs about 3 µs per
document (orjson) and buys the exact pairing without holding the documents.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .config import Config, parse_config
from .ingest import (
    ERROR_SCHEMA,
    InputError,
    InputFileError,
    Pairs,
    Record,
    _Errors,
    _parse_json,
    iter_records,
    _split_record,
    _take_metadata,
    check_metadata_names,
    build_pairs,
)
from .pipeline import _collector_paused, score_pairs
from .gate import name_warnings, warning_rows, with_run_check
from .rates import attribute_rates, summary
from .results import ResultTables, read_results

# pairs per batch: 1M pairs on 2 workers peak at 1.4 GB in all with 10k, 2.2 GB with 20k, at
# the same speed (benchmarks/scale.py)
STREAM_BATCH_SIZE = 10_000
CHUNK_BYTES = 32 << 20  # scan task size: large enough to amortize a task, small for balance
_PART_TABLES = ("documents", "fields", "alignments")
_RECORD_SCHEMA = {
    "line": pl.Int64, "offset": pl.Int64, "length": pl.Int64, "doc_id": pl.String,
    "has_id": pl.Boolean,
}
_COUNT_COLUMNS = ("tp", "tn", "fp", "fn", "n_scored", "n_correct", "n_similarity", "sum_similarity")


def score_files(
    gt: str | Path,
    aio: str | Path,
    out: str | Path,
    *,
    config: Config | dict | None = None,
    id_field: str | None = None,
    content_field: str | tuple[str | None, str | None] | None = None,
    metadata: Sequence[str] = (),
    workers: int | None = None,
    batch_size: int = STREAM_BATCH_SIZE,
    strict: bool = False,
    progress: Callable[..., None] | None = None,
) -> ResultTables:
    """Score two NDJSON files into the results directory ``out`` and open it.

    Same inputs and meaning as :func:`evaluate` for NDJSON files (``safety`` and semantic
    scorers other than the lexical one are not taken here). ``workers`` processes (default: one
    per core) parse and score; each holds one batch of at most ``batch_size`` document pairs at
    a time (batches are evened out over the workers).
    Writes ``documents``, ``fields`` and ``alignments`` as folders of Parquet parts (one per
    batch, in document order), ``attributes.parquet``, ``errors.parquet`` and ``summary.json``;
    :func:`results.read_results` and the ``sql``, ``diff`` and ``report`` commands read it.
    """
    cfg = parse_config(config)
    id_field = id_field or cfg.id_field
    gt_field, aio_field = (
        content_field if isinstance(content_field, tuple) else (content_field, content_field)
    )
    files = {"gt": _ndjson_path(gt, "gt"), "aio": _ndjson_path(aio, "aio")}
    check_metadata_names(metadata, id_field)
    workers = max(1, workers or os.cpu_count() or 1)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".jsoneval-", dir=out))
    timings: dict[str, float] = {}
    started = time.perf_counter()
    try:
        with _pool(workers) as pool:
            if progress:
                progress("scan")
            scans = {
                side: [
                    pool.submit(_scan_chunk, str(path), side, start, stop, first_line,
                                id_field, field, strict)
                    for start, stop, first_line in _chunks(path, pool)
                ]
                for side, path, field in (("gt", files["gt"], gt_field),
                                          ("aio", files["aio"], aio_field))
            }
            records, errors = {}, []
            for side in ("gt", "aio"):
                parts = [f.result() for f in scans[side]]
                records[side] = pl.concat([p[0] for p in parts]) if parts else pl.DataFrame(
                    schema=_RECORD_SCHEMA
                )
                errors += [row for p in parts for row in p[1]]
            n_read = {
                side: records[side].height
                + sum(1 for e in errors if e["source"] == side and e["severity"] == "error")
                for side in ("gt", "aio")
            }
            plan = _pair_plan(records, id_field, files, _Errors(strict), errors)
            del records
            timings["scan"] = time.perf_counter() - started
            if progress:
                progress("score")
            size = balanced_batch_size(plan.height, batch_size, workers)
            n_pairs = plan.height
            batches: list[Future] = [
                pool.submit(
                    _score_batch_file, b, plan.slice(start, size), files, cfg,
                    (gt_field, aio_field), list(metadata), str(staging), strict,
                )
                for b, start in enumerate(range(0, plan.height, size))
            ]
            del plan
            counts, stage_times = [], {}
            for number, future in enumerate(batches, start=1):
                batch_counts, batch_errors, batch_times = future.result()
                if progress:
                    progress("score", min(number * size, n_pairs), n_pairs)
                counts.append(batch_counts)
                errors += batch_errors
                for k, v in batch_times.items():
                    stage_times[k] = stage_times.get(k, 0.0) + v
        timings.update(stage_times)  # worker seconds, summed over batches
        t = time.perf_counter()
        _finish(staging, counts, errors, n_read, cfg, metadata, batch_size)
        _swap_in(staging, out)
        timings["aggregate_write"] = time.perf_counter() - t
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    result = read_results(out)
    result.summary["seconds"] = time.perf_counter() - started
    result.summary["timings"] = timings
    return result


def balanced_batch_size(n: int, batch_size: int, workers: int) -> int:
    """At most ``batch_size``, with a number of batches that is a multiple of ``workers`` so
    that no worker is left alone with the last batch (100k pairs on 2 workers: 6 batches of
    16,667 rather than 5 of 20,000).

    >>> balanced_batch_size(100_000, 20_000, 2), balanced_batch_size(10, 20_000, 2)
    (16667, 5)
    """
    batches = -(-n // max(1, batch_size))
    batches = max(workers, -(-batches // workers) * workers)
    return max(1, -(-n // batches))


def _ndjson_path(source: Any, side: str) -> Path:
    if not isinstance(source, str | Path):
        raise InputFileError(f"{side}: streaming scores NDJSON files; got {type(source).__name__} "
                         "(use evaluate() for tables and lists of records)")
    path = Path(source)
    if not path.is_file():
        raise InputFileError(f"{side} input {path} does not exist or is not a file")
    if path.suffix.lower() in (".parquet", ".arrow", ".ipc", ".feather"):
        raise InputFileError(f"{side} input {path}: streaming reads NDJSON; score "
                         f"{path.suffix} files with evaluate() or without --stream")
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    if head[:1] == b"[":
        raise InputFileError(f"{side} input {path} holds a JSON array; streaming reads NDJSON "
                         "(one record per line): score it with evaluate() or without --stream")
    return path


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    # One Polars thread per worker: the workers themselves fill the cores. Workers start on
    # demand, so the variable stays set while the pool lives (the parent's Polars has already
    # sized its own thread pool and does not read it again).
    previous = os.environ.get("POLARS_MAX_THREADS")
    os.environ["POLARS_MAX_THREADS"] = "1"
    try:
        # the workers get this process's recursion limit (IPython, for one, raises it), so a
        # deep document is scored or refused exactly as evaluate() in this process would
        pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init, initargs=(sys.getrecursionlimit(),),
        )
        try:
            yield pool
        except BaseException:
            # Ctrl-C or an error: stop now rather than after the batches under way (seconds);
            # the executor has no public way to end its workers
            for process in list((pool._processes or {}).values()):
                process.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    finally:
        if previous is None:
            os.environ.pop("POLARS_MAX_THREADS", None)
        else:
            os.environ["POLARS_MAX_THREADS"] = previous


def _worker_init(recursion_limit: int) -> None:
    # Ctrl-C reaches every process of the terminal's process group: the parent handles it
    # (and ends the workers), so a worker prints no traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.setrecursionlimit(recursion_limit)


def _chunks(path: Path, pool: ProcessPoolExecutor) -> list[tuple[int, int, int]]:
    """(start, stop, first line number) of byte ranges that end at a line end. The lines are
    counted by the workers: reading the file here (or mapping it) would add its size to this
    process's resident memory."""
    total, size = path.stat().st_size, CHUNK_BYTES
    bounds = []
    with open(path, "rb") as f:
        start = 0
        while start < total:
            pos, newline = min(start + size, total) - 1, -1
            while pos < total:  # the first line end at or after pos
                f.seek(pos)
                tail = f.read(1 << 16)
                cut = tail.find(b"\n")
                if cut >= 0:
                    newline = pos + cut
                    break
                pos += len(tail)
            stop = total if newline < 0 else newline + 1
            bounds.append((start, stop))
            start = stop
    counts = pool.map(_count_lines, [str(path)] * len(bounds), *zip(*bounds)) if bounds else []
    out, line = [], 1
    for (start, stop), n in zip(bounds, counts, strict=True):
        out.append((start, stop, line))
        line += n
    return out


def _count_lines(path: str, start: int, stop: int) -> int:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(stop - start).count(b"\n")


def _scan_chunk(
    path: str, side: str, start: int, stop: int, first_line: int, id_field: str,
    content_field: str | None, strict: bool,
) -> tuple[pl.DataFrame, list[dict]]:
    """Records of one byte range: line, offset, length, doc_id, has_id; plus error rows."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(stop - start)
    lines = data.split(b"\n")
    offsets = list(itertools.accumulate((len(raw) + 1 for raw in lines), initial=start))
    errors = _Errors(strict)
    # each parsed document is dropped at once: only its id is kept
    kept = [
        (r.line, r.doc_id, r.has_id)
        for r in iter_records(
            enumerate(lines, start=first_line), side, path, id_field, content_field, errors
        )
    ]
    table = pl.DataFrame(
        kept, schema={"line": pl.Int64, "doc_id": pl.String, "has_id": pl.Boolean}, orient="row"
    )
    starts = np.asarray(offsets, dtype=np.int64)  # line i spans starts[i] .. starts[i + 1] - 2
    i = table["line"].to_numpy() - first_line
    table = table.with_columns(
        offset=pl.Series(starts[i], dtype=pl.Int64),
        length=pl.Series(starts[i + 1] - starts[i] - 1, dtype=pl.Int64),
    ).select(list(_RECORD_SCHEMA))
    return table, errors.rows


def _pair_plan(
    records: dict[str, pl.DataFrame], id_field: str, files: dict[str, Path], errors: _Errors,
    rows: list[dict],
) -> pl.DataFrame:
    """One row per document pair, in :func:`ingest.pair_inputs` order: doc_id and, per side,
    line, offset and length (null when the side has no record). Error rows for records without
    an id and for repeated ids are appended to ``rows``."""
    gt, aio = records["gt"], records["aio"]
    if gt["has_id"].any() and aio["has_id"].any():
        kept = {}
        for side, table in (("gt", gt), ("aio", aio)):
            file = str(files[side])
            no_id = table.filter(pl.col("doc_id").is_null())
            with_id = table.filter(pl.col("doc_id").is_not_null()).with_columns(
                pl.col("line").first().over("doc_id").alias("first_line")
            )
            repeated = with_id.filter(pl.col("line") != pl.col("first_line"))
            problems = pl.concat([
                no_id.select("line", pl.lit(None, pl.String).alias("doc_id"),
                             pl.lit(None, pl.Int64).alias("first_line")),
                repeated.select("line", "doc_id", "first_line"),
            ]).sort("line")
            for line, doc_id, first in problems.iter_rows():
                message = (
                    f"record has no '{id_field}'" if doc_id is None
                    else f"duplicate {id_field} '{doc_id}' (first on line {first}); left out"
                )
                errors.add(side, file, line, doc_id, message)
            kept[side] = with_id.filter(pl.col("line") == pl.col("first_line")).select(
                "doc_id", *[pl.col(c).alias(f"{side}_{c}") for c in ("line", "offset", "length")]
            )
        both = kept["gt"].join(kept["aio"], on="doc_id", how="left", maintain_order="left")
        aio_only = kept["aio"].join(kept["gt"], on="doc_id", how="anti", maintain_order="left")
        plan = pl.concat([both, aio_only], how="diagonal")
    else:  # positional pairing, as pair_inputs does when either side has no ids
        n = max(gt.height, aio.height)
        sides = [
            t.select(*[pl.col(c).alias(f"{s}_{c}") for c in ("doc_id", "line", "offset", "length")])
            .with_row_index("i")
            for s, t in (("gt", gt), ("aio", aio))
        ]
        plan = (
            pl.int_range(n, dtype=pl.UInt32, eager=True).alias("i").to_frame()
            .join(sides[0], on="i", how="left").join(sides[1], on="i", how="left")
            .sort("i")
            .select(
                pl.coalesce("gt_doc_id", "aio_doc_id", pl.col("i").cast(pl.String)).alias("doc_id"),
                pl.exclude("i", "gt_doc_id", "aio_doc_id"),
            )
        )
    rows += errors.rows
    return plan.select(
        "doc_id", *[f"{s}_{c}" for s in ("gt", "aio") for c in ("line", "offset", "length")]
    )


def _read_records(
    path: Path, side: str, plan: pl.DataFrame, id_field: str, content_field: str | None,
) -> list[Record | None]:
    """The records of one side of a batch, read back by offset (None where the side has none)."""
    offsets, lengths, lines = (plan[f"{side}_{c}"].to_list() for c in ("offset", "length", "line"))
    present = [o for o in offsets if o is not None]
    out: list[Record | None] = []
    if not present:
        return [None] * len(offsets)
    with open(path, "rb") as f:
        lo = min(present)
        hi = max(o + n for o, n in zip(offsets, lengths, strict=True) if o is not None)
        span = sum(n for n in lengths if n is not None)
        # a batch of an aligned file is one contiguous range: read it at once
        whole = os.pread(f.fileno(), hi - lo, lo) if hi - lo <= 4 * span + (1 << 20) else None
        for offset, length, line in zip(offsets, lengths, lines, strict=True):
            if offset is None:
                out.append(None)
                continue
            raw = (whole[offset - lo: offset - lo + length] if whole is not None
                   else os.pread(f.fileno(), length, offset))
            try:
                obj, notes = _parse_json(raw)
            except ValueError as exc:
                raise InputError(f"{path}, line {line}: changed while it was being scored "
                                 f"({exc})") from None
            doc_id, has_id, content, _ = _split_record(obj, id_field, content_field)
            out.append(Record(doc_id, content, line, has_id, raw, notes, obj))
    return out


def _score_batch_file(
    number: int, plan: pl.DataFrame, files: dict[str, Path], config: Config,
    fields: tuple[str | None, str | None], metadata: list[str], staging: str, strict: bool,
) -> tuple[pl.DataFrame, list[dict], dict[str, float]]:
    """Score one batch of the plan; write its part files; return its counts summed per
    attribute, its error rows and its stage times."""
    t = time.perf_counter()
    # paused for the whole batch, so the collector's next pass comes after its documents are
    # freed instead of walking all of them (measured: 0.2 s per 20k-document batch)
    with _collector_paused():
        pairs = _batch_pairs(plan, files, config.id_field, fields, metadata, strict)
        read = time.perf_counter() - t
        return _score_written(pairs, config, metadata, number, Path(staging), strict, read)


def _batch_pairs(
    plan: pl.DataFrame, files: dict[str, Path], id_field: str,
    fields: tuple[str | None, str | None], metadata: list[str], strict: bool,
) -> Pairs:
    recs = {
        side: _read_records(files[side], side, plan, id_field, fld)
        for side, fld in zip(("gt", "aio"), fields, strict=True)
    }
    if metadata:
        for side, fld in zip(("gt", "aio"), fields, strict=True):
            _take_metadata([r for r in recs[side] if r is not None], metadata, fld is None,
                           str(files[side]))
    pairs = Pairs(files={side: str(files[side]) for side in ("gt", "aio")})
    pairs.meta = {name: [] for name in metadata}
    errors = _Errors(strict)
    build_pairs(pairs, zip(plan["doc_id"].to_list(), recs["gt"], recs["aio"], strict=True), errors)
    pairs.errors = errors.rows
    return pairs


def _score_written(
    pairs: Pairs, config: Config, metadata: list[str], number: int, staging: Path, strict: bool,
    read: float = 0.0,
) -> tuple[pl.DataFrame, list[dict], dict[str, float]]:
    result = score_pairs(pairs, config, [1.0] * len(pairs.doc_ids), strict=strict,
                         batch_size=max(1, len(pairs.doc_ids)))
    for name in _PART_TABLES:
        folder = staging / name
        folder.mkdir(exist_ok=True)
        getattr(result, name).write_parquet(folder / f"part-{number:06d}.parquet")
    counts = result.counts.group_by("attribute").agg(pl.col(*_COUNT_COLUMNS).sum())
    return counts, result.errors.to_dicts(), {"read_parse": read, **result.timings}


def _finish(
    staging: Path, counts: list[pl.DataFrame], errors: list[dict], n_read: dict[str, int],
    config: Config, metadata: Sequence[str], batch_size: int,
) -> None:
    """attributes, errors and summary of the whole run from the batches' results."""
    parts = sorted((staging / "documents").glob("*.parquet")) if counts else []
    if not parts:  # no documents: the tables of an empty batch, so the schemas are right
        empty = Pairs(meta={name: [] for name in metadata})
        counts = [_score_written(empty, config, list(metadata), 0, staging, strict=False)[0]]
        parts = sorted((staging / "documents").glob("*.parquet"))
    summed = pl.concat(counts).group_by("attribute").agg(pl.col(*_COUNT_COLUMNS).sum())
    attributes = attribute_rates(summed)
    documents = pl.scan_parquet(parts, glob=False).select(
        "completeness", "hallucination", "accuracy", "rqs", "passed", "gt_present", "aio_present",
        *metadata,
    ).collect()
    n = documents.height
    empty = [m for m in metadata if n and documents[m].null_count() == n]
    errors = errors + warning_rows(name_warnings(config, attributes["attribute"].to_list(), empty))
    error_table = pl.DataFrame(errors, schema=ERROR_SCHEMA)
    n_errors = error_table.filter(pl.col("severity") == "error").height
    attributes.write_parquet(staging / "attributes.parquet")
    error_table.write_parquet(staging / "errors.parquet")
    result_summary = with_run_check({
        **summary(documents.rechunk(), attributes, n_errors),
        "n_read_gt": n_read["gt"],
        "n_read_aio": n_read["aio"],
        "n_gt_only": int((~documents["aio_present"]).sum()),
        "n_aio_only": int((~documents["gt_present"]).sum()),
        "n_warnings": error_table.height - n_errors,
        "batch_size": batch_size,
    })
    (staging / "summary.json").write_text(json.dumps(result_summary, indent=2) + "\n")


def _swap_in(staging: Path, out: Path) -> None:
    """Move the finished tables into ``out``, replacing an earlier run's (either layout)."""
    for entry in staging.iterdir():
        stem = entry.name.removesuffix(".parquet")
        for old in (out / stem, out / f"{stem}.parquet"):
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
        os.replace(entry, out / entry.name)
