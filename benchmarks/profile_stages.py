"""Where the time goes: seconds per stage of one in-memory run, and the files driver on one
thread against a thread per core (benchmarks/RESULTS.md, "Where the time goes (issue 11)").

    python benchmarks/profile_stages.py --n 100000
    python benchmarks/profile_stages.py --n 100000 --runs files-1,files-2 --repeats 3

Data: benchmarks/generate.py (seed 0), generated into ``--data`` unless it is there already.
Each configuration runs in a process of its own (``--one``), so one run's memory and
collector state do not slow the next. Stages (seconds, wall clock in that process):
read_parse (read both inputs, parse, pair: ``ingest.pair_inputs``), flatten, align, score,
aggregate (``core.score_batch`` and the finish), write (``Result.write``, every table as
Parquet). The files driver reports its wall time only (its threads' stage seconds overlap).
``--repeats`` alternates the runs and reports medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAGES = ("read_parse", "flatten", "align", "score", "aggregate", "write")


def _data(n: int, root: Path) -> Path:
    data = root / f"{n}"
    if not (data / "gt.ndjson").exists():
        subprocess.run([sys.executable, str(HERE / "generate.py"), "--n", str(n), "--seed", "0",
                        "--out", str(data)], check=True, stdout=subprocess.DEVNULL)
    return data


def _cpu() -> float:
    """CPU seconds of this process and its finished children: on a shared machine the wall
    clock also counts the time spent waiting for a core."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _one(kind: str, data: Path, out: Path) -> dict:
    """One run in this process: {"wall": seconds, "stages": {...}, "micro_f1", "rss_mb"}."""
    from jsoneval_polars import evaluate
    from jsoneval_polars.stream import score_files

    gt, aio = data / "gt.ndjson", data / "aio.ndjson"
    started, cpu_started = time.perf_counter(), _cpu()
    if kind == "memory":
        result = evaluate(gt, aio)
        result.write(out)
        stages = dict(result.timings)
    else:  # "files-1": one thread; "files-2": two
        result = score_files(gt, aio, out, workers=int(kind.split("-")[1]))
        stages = {}
    wall, cpu = time.perf_counter() - started, _cpu() - cpu_started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss += resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"wall": wall, "cpu": cpu, "stages": stages, "micro_f1": result.summary["micro_f1"],
            "rss_mb": rss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="document pairs")
    ap.add_argument("--data", type=Path, default=HERE / "data", help="generated data root")
    ap.add_argument("--runs", default="memory,files-1,files-2",
                    help="comma-separated: memory, files-N (the files driver on N threads)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs of each kind, alternating; medians reported")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one kind, print JSON
    args = ap.parse_args()
    data = _data(args.n, args.data)
    if args.one:
        out = Path(tempfile.mkdtemp(prefix="jsoneval-profile-")) / "out"
        try:
            print(json.dumps(_one(args.one, data, out)))
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)
        return
    runs: dict[str, list[dict]] = {kind: [] for kind in args.runs.split(",")}
    for _ in range(args.repeats):
        for kind, done in runs.items():
            proc = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--data",
                                   str(args.data), "--one", kind], check=True,
                                  stdout=subprocess.PIPE, text=True)
            done.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    results = {kind: min(done, key=lambda r: abs(r["wall"] - statistics.median(
        d["wall"] for d in done))) for kind, done in runs.items()}  # the median run
    print(f"{args.n:,} pairs, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    if "memory" in results:
        st = results["memory"]["stages"]
        print("| stage | seconds | share |\n|---|---:|---:|")
        total = sum(st.get(s, 0.0) for s in STAGES)
        for s in STAGES:
            print(f"| {s} | {st.get(s, 0.0):.2f} | {st.get(s, 0.0) / total:.0%} |")
        print(f"| total (stages) | {total:.2f} | |\n")
    print("| run | wall s (median; each run) | CPU s | docs/s (wall) "
          "| peak RSS MB | micro-F1 |\n|---|---:|---:|---:|---:|---:|")
    for kind, r in results.items():
        walls = ", ".join(f"{d['wall']:.2f}" for d in runs[kind])
        print(f"| {kind} | {r['wall']:.2f} ({walls}) | {r['cpu']:.1f} "
              f"| {args.n / r['wall']:,.0f} | {r['rss_mb']:,.0f} | {r['micro_f1']:.6f} |")


if __name__ == "__main__":
    main()
