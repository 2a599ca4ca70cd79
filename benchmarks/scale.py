"""One streaming run on a large generated set, with its memory over time.

    python benchmarks/scale.py --n 10000000 [--batch-size 10000] [--workers 2] [--sorted]

Generates the set into benchmarks/data/<n>-shuffled/ when missing (10M pairs: ~19 GB, not kept
in the repository; each file in its own random order, ``generate.py --shuffle``, so pairs meet
anywhere in the files; ``--sorted`` uses benchmarks/data/<n>/ in id order), runs ``jsoneval
score`` in a subprocess and prints, every 30 s and at the end, the batches written so far and
the peak resident memory of the process and its children (sampled every 50 ms). Ends with one
JSON line: seconds, docs/s, peak RSS, micro-F1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from run import CONFIG, HERE, _tree_rss_mb, ensure_data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sorted", action="store_true",
                        help="both files in id order (default: each shuffled its own way)")
    args = parser.parse_args()
    data = ensure_data(args.n, shuffled=not args.sorted)
    out = HERE / "data" / f"out-{args.n}-stream"
    cmd = [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(data / "gt.ndjson"),
           "--aio", str(data / "aio.ndjson"), "--config", str(CONFIG), "--out", str(out),
           "--workers", str(args.workers), "--batch-size", str(args.batch_size),
           "--json"]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak, last = 0.0, started
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid))
        if time.perf_counter() - last >= 30:
            last = time.perf_counter()
            done = len(list(out.glob(".jsoneval-*/documents/*.parquet")))
            print(f"{last - started:7.0f} s: {done} batches written, peak RSS {peak:,.0f} MB",
                  flush=True)
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        print(stderr[-3000:], file=sys.stderr)
        return proc.returncode
    summary = json.loads(stdout.strip().splitlines()[-1])
    print(json.dumps({"n": args.n, "seconds": round(seconds, 1),
                      "docs_per_s": round(summary["n_documents"] / seconds),
                      "peak_rss_mb": round(peak), "batch_size": args.batch_size,
                      "workers": args.workers, "shuffled": not args.sorted,
                      "micro_f1": summary["micro_f1"],
                      "n_documents": summary["n_documents"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
