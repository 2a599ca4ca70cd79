"""Time the native flattening kernel against the plain-Python reference walker, with floors.

    python benchmarks/flatten_kernels.py [--size 100000] [--docs 20000] [--repeats 5]
                                         [--c-ref REF]

The first ``--docs`` lines of benchmarks/data/<size>/{gt,aio}.ndjson are parsed with orjson
(without the doc_id member, as ingest hands them to flatten) and written back as compact JSON
text before any timing. Then, in this one process, each variant runs once untimed, then
``--repeats`` times, the variants alternating run by run so that the noise of a shared machine
falls on all, with the cyclic GC paused as the pipeline pauses it. Medians are printed in
microseconds per document, with the range of the runs:

- ``reference``: the plain-Python walker (tests/flatten_reference.py) on the parsed documents;
- ``native``: ``flatten()`` on the parsed documents (read under the GIL, walked in parallel);
- ``native text``: ``flatten_json()`` on the JSON text (parsed and walked in parallel);
- ``parse floor``: the native parse of the text alone (serde_json into the kernel's tree, in
  parallel, nothing flattened), and ``orjson floor``: ``orjson.loads`` of every line;
- ``c``: with ``--c-ref REF``, the C kernel of that commit (``_flatten.c``, removed since), built
  here in a temporary directory with the system C compiler and never installed.

Data missing? ``python benchmarks/generate.py --n 100000 --out benchmarks/data/100000 --seed 0``
(as benchmarks/run.py makes it).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import itertools
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from jsoneval_polars import _native
from jsoneval_polars import flatten as flat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from flatten_reference import flatten_python  # noqa: E402  (the oracle lives in tests/)


def load(path: Path, n: int) -> list[dict]:
    docs = []
    with path.open("rb") as f:
        for line in itertools.islice(f, n):
            doc = orjson.loads(line)
            doc.pop("doc_id", None)
            docs.append(doc)
    return docs


def old_c_kernel(ref: str) -> Callable:
    """flatten_c of commit ``ref``: its package copied out of git, _flatten.c compiled in place."""
    tmp = Path(tempfile.mkdtemp(prefix="c-kernel-"))
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", ref, "jsoneval_polars"],
        check=True, capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    package = tmp / "jsoneval_polars"
    package.rename(tmp / "old_jsoneval_polars")
    package = tmp / "old_jsoneval_polars"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    subprocess.run(
        ["cc", "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
         str(package / "_flatten.c"), "-o", str(package / f"_flatten{suffix}")],
        check=True,
    )
    sys.path.insert(0, str(tmp))
    module = importlib.import_module("old_jsoneval_polars.flatten")
    if module._native is None:
        sys.exit(f"the C kernel of {ref} did not build")
    return module.flatten_c


def timed(fn: Callable, arg) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn(arg)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="100000", help="data set under benchmarks/data/")
    parser.add_argument("--docs", type=int, default=20_000, help="documents per side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--c-ref", help="also time the C kernel of this git commit")
    args = parser.parse_args()
    c_kernel = old_c_kernel(args.c_ref) if args.c_ref else None

    print(f"flatten on the first {args.docs:,} documents of benchmarks/data/{args.size}, "
          f"median of {args.repeats} runs, microseconds per document")
    for side in ("gt", "aio"):
        docs = load(HERE / "data" / args.size / f"{side}.ndjson", args.docs)
        texts = [orjson.dumps(d) for d in docs]
        variants: dict[str, tuple[Callable, list]] = {
            "reference": (flatten_python, docs),
            "native": (flat.flatten, docs),
            "native text": (flat.flatten_json, texts),
            "parse floor": (_native.parse_json, texts),
            "orjson floor": (lambda ts: [orjson.loads(t) for t in ts], texts),
        }
        if c_kernel is not None:
            variants["c"] = (c_kernel, docs)
        leaves = flat.flatten(docs).leaves.height
        times: dict[str, list[float]] = {name: [] for name in variants}
        for fn, arg in variants.values():  # warm-up, untimed
            fn(arg)
        for _ in range(args.repeats):
            for name, (fn, arg) in variants.items():
                times[name].append(timed(fn, arg) / len(docs) * 1e6)
        kb = sum(map(len, texts)) / len(texts) / 1e3
        print(f"{side}: {len(docs):,} docs, {kb:.2f} KB and {leaves / len(docs):.1f} leaves "
              "per doc")
        ref = statistics.median(times["reference"])
        for name, runs in times.items():
            med = statistics.median(runs)
            print(f"  {name:>12}: {med:7.2f} us/doc  ({ref / med:5.1f}x the reference; "
                  f"range {min(runs):.2f}-{max(runs):.2f})")


if __name__ == "__main__":
    main()
