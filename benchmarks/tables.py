"""evaluate() on tables with a JSON-text column (Parquet, as DuckDB or a warehouse export
hands them): the text path (ingest.plan_tables, cells flattened from their text) against the
Python-object path (every cell parsed with orjson, then flattened as Python documents).

    python benchmarks/tables.py [--n 100000] [--repeats 3] [--data benchmarks/data/100000]
                                [--shape plain|members|float-meta] [--threads]

The first ``--n`` lines of the generated ``--data``/{gt,aio}.ndjson become two Parquet files of
(doc_id, json). ``--shape members``: each cell is a record holding its document in ``doc``
beside a ``model`` member, scored with ``content_field="doc", metadata=["model"]``;
``float-meta``: a Float64 column ``temp`` beside, with ``metadata=["temp"]`` (DECISIONS 88).
Each run is a process of its own (``--one``), the two ways alternating run by run on the
shared machine; wall seconds and peak RSS (``wait4``) are reported as medians,
with the Parquet read alone as the floor. The tables of the two ways are compared once.

``--threads`` compares the batches on one thread and on one per core instead (DECISIONS 100):
``stream.score_tables`` (what ``jsoneval score`` runs on Parquet, every table written) and
``evaluate()``, each with ``workers=1`` and by default.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import polars as pl

HERE = Path(__file__).resolve().parent
WAYS = ("text", "objects", "read-only")
THREAD_WAYS = ("score_tables-1", "score_tables", "evaluate-1", "evaluate")


#: evaluate()'s options per --shape
SHAPES = {"plain": {}, "members": {"content_field": "doc", "metadata": ["model"]},
          "float-meta": {"metadata": ["temp"]}}


def _write_tables(data: Path, n: int, out: Path, shape: str) -> None:
    for side in ("gt", "aio"):
        with (data / f"{side}.ndjson").open("rb") as f:
            records = [orjson.loads(line) for line in itertools.islice(f, n)]
        ids = [r.pop("doc_id") for r in records]
        columns = {}
        if shape == "members":
            records = [{"doc": r, "model": f"m{i % 3}"} for i, r in enumerate(records)]
        elif shape == "float-meta":
            columns["temp"] = pl.Series([i % 11 / 10 for i in range(len(records))])
        pl.DataFrame({"doc_id": ids, "json": [json.dumps(r) for r in records],
                      **columns}).write_parquet(out / f"{side}.parquet")


def _one(way: str, folder: Path, shape: str) -> None:
    """One timed run in this process; prints seconds and micro-F1 as JSON."""
    from jsoneval_polars import evaluate, load_config, pipeline

    config = load_config(HERE.parent / "jsoneval_polars" / "sample" / "config.json")
    gt, aio = folder / "gt.parquet", folder / "aio.parquet"
    start = time.perf_counter()
    if way == "read-only":
        pl.read_parquet(gt), pl.read_parquet(aio)
        print(json.dumps({"seconds": time.perf_counter() - start}))
        return
    if way == "objects":
        pipeline.plan_tables = lambda *a, **k: None
    name, _, threads = way.partition("-")
    workers = int(threads) if threads else None  # None: one thread per core
    if name == "score_tables":
        from jsoneval_polars.stream import score_tables

        out = folder / f"out-{way}"
        result = score_tables(gt, aio, out, config=config, json_column="json",
                              workers=workers, **SHAPES[shape])
        seconds = time.perf_counter() - start
        fields = None  # read back by the parent: the run's peak RSS is its own
    else:
        options = {"workers": workers} if name == "evaluate" else {}
        result = evaluate(gt, aio, config=config, json_column="json", **SHAPES[shape],
                          **options)
        seconds = time.perf_counter() - start
        fields = result.fields
    if fields is not None:
        fields.write_parquet(folder / f"fields-{way}.parquet")
    print(json.dumps({"seconds": seconds, "micro_f1": result.summary["micro_f1"],
                      "timings": result.timings}))


def _measured(way: str, folder: Path, shape: str) -> dict:
    proc = subprocess.Popen([sys.executable, __file__, "--one", way, str(folder), shape],
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{way} failed ({status})")
    return {**json.loads(out), "rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "100000",
                    help="generated pairs (benchmarks/generate.py)")
    ap.add_argument("--shape", choices=list(SHAPES), default="plain")
    ap.add_argument("--threads", action="store_true",
                    help="one thread against one per core, score_tables and evaluate()")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _one(args.one[0], Path(args.one[1]), args.one[2])
        return
    ways = THREAD_WAYS if args.threads else WAYS
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_tables(args.data, args.n, folder, args.shape)
        runs: dict[str, list[dict]] = {way: [] for way in ways}
        for _ in range(args.repeats):
            for way in ways:
                runs[way].append(_measured(way, folder, args.shape))
        compared = [w for w in ways if w != "read-only"]
        first, *rest = (pl.read_parquet(
            folder / (f"out-{w}/fields/*.parquet" if w.startswith("score_tables")
                      else f"fields-{w}.parquet")).sort("doc_id", "path") for w in compared)
        same = all(first.equals(other) for other in rest)
    print(f"{args.n:,} pairs, Parquet (doc_id, json) on each side, shape {args.shape} "
          f"({SHAPES[args.shape]}); medians of {args.repeats} runs; fields tables equal: {same}")
    print(f"{'way':<16} {'seconds':>8} {'docs/s':>8} {'peak RSS MB':>12} {'micro-F1':>9}")
    for way, rs in runs.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        f1 = rs[0].get("micro_f1")
        print(f"{way:<16} {seconds:>8.2f} {args.n / seconds:>8,.0f} "
              f"{statistics.median(r['rss_mb'] for r in rs):>12,.0f} "
              f"{'' if f1 is None else f'{f1:.6f}':>9}")
    for way in compared:
        stages = {k: round(statistics.median(r["timings"].get(k, 0) for r in runs[way]), 2)
                  for k in runs[way][0]["timings"]}
        print(f"{way} stages (s): {stages}")


if __name__ == "__main__":
    main()
