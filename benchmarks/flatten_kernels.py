"""Time flattening on the benchmark documents: the Python walker, the native kernel on Python
documents, and the native kernel on JSON text (which includes parsing it).

    python benchmarks/flatten_kernels.py [--size 100000] [--docs 20000] [--repeats 5]

The first ``--docs`` lines of benchmarks/data/<size>/{gt,aio}.ndjson are read; the Python
documents are parsed with orjson (without the doc_id member, as ingest hands them to flatten)
before any timing, and orjson's parse is timed beside them (what the text path saves). In this
one process each way runs once untimed, then ``--repeats`` times, the ways alternating run by
run so that the noise of a shared machine falls on all, with the cyclic GC paused as the
pipeline pauses it. Medians are printed per document. Data missing? ``python
benchmarks/generate.py --n 100000 --out benchmarks/data/100000 --seed 0`` (as
benchmarks/run.py makes it).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from jsoneval_polars import flatten as flat

HERE = Path(__file__).resolve().parent


def timed(run: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="100000", help="data set under benchmarks/data/")
    parser.add_argument("--docs", type=int, default=20_000, help="documents per side")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"flattening the first {args.docs:,} documents of benchmarks/data/{args.size}, "
          f"median of {args.repeats} runs, microseconds per document")
    for side in ("gt", "aio"):
        with (HERE / "data" / args.size / f"{side}.ndjson").open("rb") as f:
            texts = list(itertools.islice(f, args.docs))
        docs = [orjson.loads(t) for t in texts]
        for doc in docs:
            doc.pop("doc_id", None)
        ways = {
            "orjson parse": lambda: [orjson.loads(t) for t in texts],
            "python walker": lambda: flat.flatten_python(docs),
            "native, objects": lambda: flat.flatten_native(docs),
            "native, text": lambda: flat.flatten_texts(texts, skip="doc_id"),
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        for run in ways.values():  # warm-up, untimed
            run()
        for _ in range(args.repeats):
            for name, run in ways.items():
                times[name].append(timed(run) / len(texts) * 1e6)
        leaves = flat.flatten_native(docs).leaves.height
        print(f"{side}: {len(texts):,} docs, {leaves / len(texts):.1f} leaves/doc")
        for name, runs in times.items():
            print(f"  {name:<16} {statistics.median(runs):7.2f} us/doc "
                  f"(range {min(runs):.2f}-{max(runs):.2f})")


if __name__ == "__main__":
    main()
