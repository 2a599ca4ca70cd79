"""evaluate() on tables with a JSON-text column (Parquet, as DuckDB or a warehouse export
hands them): the text path (ingest.plan_tables, cells flattened from their text) against the
Python-object path (every cell parsed with orjson, then flattened as Python documents).

    python benchmarks/tables.py [--n 100000] [--repeats 3] [--data benchmarks/data/100000]
                                [--shape plain|members|float-meta]

The first ``--n`` lines of the generated ``--data``/{gt,aio}.ndjson become two Parquet files of
(doc_id, json). ``--shape members``: each cell is a record holding its document in ``doc``
beside a ``model`` member, scored with ``content_field="doc", metadata=["model"]``;
``float-meta``: a Float64 column ``temp`` beside, with ``metadata=["temp"]`` (DECISIONS 88).
Each run is a process of its own (``--one``), the two ways alternating run by run on the
shared machine; wall seconds and peak RSS (``wait4``) are reported as medians,
with the Parquet read alone as the floor. The tables of the two ways are compared once.
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
    result = evaluate(gt, aio, config=config, json_column="json", **SHAPES[shape])
    seconds = time.perf_counter() - start
    result.fields.write_parquet(folder / f"fields-{way}.parquet")
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
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _one(args.one[0], Path(args.one[1]), args.one[2])
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_tables(args.data, args.n, folder, args.shape)
        runs: dict[str, list[dict]] = {way: [] for way in WAYS}
        for _ in range(args.repeats):
            for way in WAYS:
                runs[way].append(_measured(way, folder, args.shape))
        text, objects = (pl.read_parquet(folder / f"fields-{w}.parquet") for w in WAYS[:2])
        same = text.sort("doc_id", "path").equals(objects.sort("doc_id", "path"))
    print(f"{args.n:,} pairs, Parquet (doc_id, json) on each side, shape {args.shape} "
          f"({SHAPES[args.shape]}); medians of {args.repeats} runs; fields tables equal: {same}")
    print(f"{'way':<10} {'seconds':>8} {'docs/s':>8} {'peak RSS MB':>12} {'micro-F1':>9}")
    for way, rs in runs.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        f1 = rs[0].get("micro_f1")
        print(f"{way:<10} {seconds:>8.2f} {args.n / seconds:>8,.0f} "
              f"{statistics.median(r['rss_mb'] for r in rs):>12,.0f} "
              f"{'' if f1 is None else f'{f1:.6f}':>9}")
    for way in WAYS[:2]:
        stages = {k: round(statistics.median(r["timings"].get(k, 0) for r in runs[way]), 2)
                  for k in runs[way][0]["timings"]}
        print(f"{way} stages (s): {stages}")


if __name__ == "__main__":
    main()
