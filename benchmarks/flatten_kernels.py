"""Time flatten() with the C kernel and with the Python walker on the benchmark documents.

    python benchmarks/flatten_kernels.py [--size 100000] [--docs 20000] [--repeats 5]

The first ``--docs`` lines of benchmarks/data/<size>/{gt,aio}.ndjson are parsed with orjson
(without the doc_id member, as ingest hands them to flatten) before any timing. Then, in this one
process, each side is flattened once per kernel untimed, then ``--repeats`` times per kernel, the
kernels alternating run by run so that the noise of a shared machine falls on both, with the
cyclic GC paused as the pipeline pauses it. Medians are printed per document, with their ratio
and the range of the runs. Data missing? ``python benchmarks/generate.py --n 100000 --out
benchmarks/data/100000 --seed 0`` (as benchmarks/run.py makes it).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import sys
import time
from pathlib import Path

import orjson

from jsoneval_polars import flatten as flat

HERE = Path(__file__).resolve().parent


def load(path: Path, n: int) -> list[dict]:
    docs = []
    with path.open("rb") as f:
        for line in itertools.islice(f, n):
            doc = orjson.loads(line)
            doc.pop("doc_id", None)
            docs.append(doc)
    return docs


def time_kernel(kernel: str, docs: list[dict]) -> float:
    flat.KERNEL = kernel
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        flat.flatten(docs)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="100000", help="data set under benchmarks/data/")
    parser.add_argument("--docs", type=int, default=20_000, help="documents per side")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if flat._native is None:
        sys.exit("the C kernel is not built: pip install -e . (needs a C compiler)")

    print(f"flatten() on the first {args.docs:,} documents of benchmarks/data/{args.size}, "
          f"median of {args.repeats} runs per kernel, microseconds per document")
    for side in ("gt", "aio"):
        docs = load(HERE / "data" / args.size / f"{side}.ndjson", args.docs)
        leaves = flat.flatten_c(docs).leaves.height
        times: dict[str, list[float]] = {"python": [], "c": []}
        for kernel in times:  # warm-up, untimed: first-touch memory, the interpreter's caches
            time_kernel(kernel, docs)
        for _ in range(args.repeats):
            for kernel, runs in times.items():
                runs.append(time_kernel(kernel, docs) / len(docs) * 1e6)
        py, c = (statistics.median(times[k]) for k in ("python", "c"))
        spread = "   ".join(f"{k} {min(v):.2f}-{max(v):.2f}" for k, v in times.items())
        print(f"{side:>4}: {len(docs):,} docs, {leaves / len(docs):.1f} leaves/doc   "
              f"python {py:6.2f} us/doc   c {c:5.2f} us/doc   ratio {py / c:5.1f}x   "
              f"(range: {spread})")

if __name__ == "__main__":
    main()
