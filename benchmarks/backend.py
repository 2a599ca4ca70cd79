"""Time the vectorized back end (align -> score -> aggregate) of one batch, before vs after.

    python benchmarks/backend.py [--n 20000] [--repeats 5] [--ref REV] [--lines | --profile]

Documents are parsed and flattened once and handed to the batch core as already flattened
(``Pairs.flat``, as the files driver hands its batches), so each run of ``core.score_batch``
times only the code after the flatten lap, with the stage clock that ``evaluate`` reports.
The package is imported from a copy (the working tree's, and with ``--ref`` the one committed
at REV under another name), so edits made while it
runs do not mix in; the two alternate on the same flattened batch and their tables are compared
(the machine is shared and noisy: compare within one run, by medians; the cpu row, summed over
threads, moves less with the neighbours' load). ``--lines`` prints the Polars time per engine
source line, ``--profile`` a cProfile of one working-tree run. ``--config default`` runs with
no config file (every text SEMANTIC, every list matched on all its fields), as ``jsoneval
score`` does without ``--config``."""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import importlib
import io
import itertools
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import polars as pl

ROOT = Path(__file__).resolve().parent.parent

STAGES = ("align", "score", "aggregate")


def _records(path: Path, n: int) -> list[dict]:
    with path.open("rb") as f:
        return [orjson.loads(line) for line in itertools.islice(f, n)]


def _package(ref: str | None, name: str):
    """The core module of a copy of the package: the working tree's (``ref`` None) or the
    one committed at ``ref``. Copies keep a run apart from edits made meanwhile; they get this
    tree's native kernel, but the Python walker flattens (JSONEVAL_PURE_PYTHON: only the back
    end is timed here)."""
    os.environ["JSONEVAL_PURE_PYTHON"] = "1"
    tmp = Path(tempfile.mkdtemp(prefix="backend-"))
    if ref is None:
        shutil.copytree(ROOT / "jsoneval_polars", tmp / "jsoneval_polars",
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    else:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "jsoneval_polars"],
            check=True, capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    for native in (ROOT / "jsoneval_polars").glob("_native*.so"):
        shutil.copy(native, tmp / "jsoneval_polars" / native.name)
    (tmp / "jsoneval_polars").rename(tmp / name)
    sys.path.insert(0, str(tmp))
    return importlib.import_module(f"{name}.core")


def _run(core, pairs, config, flat) -> tuple[dict[str, float], dict]:
    """One back-end pass over the batch, its sides flattened beforehand (``flat``)."""
    batch = core.score_batch(dataclasses.replace(pairs, flat=tuple(map(dataclasses.replace, flat))),
                             config)
    tables = {t: getattr(batch, t) for t in core.PER_DOCUMENT_TABLES}
    return {s: batch.timings[s] for s in STAGES}, tables


def _by_line(fn) -> None:
    """Seconds of Polars collect per engine source line (eager calls all end in a collect)."""
    from polars.lazyframe import engine

    spent: dict[str, float] = {}
    cls = engine._LocalEngine  # eager and lazy collects both end in its collect
    original = cls.collect

    def timed(self, *a, **kw):
        f = sys._getframe(1)
        while f and "jsoneval_polars" not in f.f_code.co_filename:
            f = f.f_back
        where = f"{Path(f.f_code.co_filename).name}:{f.f_lineno} {f.f_code.co_name}" if f else "?"
        t = time.perf_counter()
        try:
            return original(self, *a, **kw)
        finally:
            spent[where] = spent.get(where, 0.0) + time.perf_counter() - t

    cls.collect = timed
    try:
        t = time.perf_counter()
        laps, _ = fn()
        total = time.perf_counter() - t
    finally:
        cls.collect = original
    print({k: round(v, 3) for k, v in laps.items()}, f"total {total:.3f}, in collect "
          f"{sum(spent.values()):.3f}")
    for where, s in sorted(spent.items(), key=lambda kv: -kv[1]):
        if s >= 0.005:
            print(f"{s:8.3f}  {where}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "benchmarks" / "data" / "100000"))
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ref", help="git revision to compare against (same process, alternating)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--lines", action="store_true", help="Polars time per source line")
    ap.add_argument("--config", default=str(ROOT / "jsoneval_polars" / "sample" / "config.json"),
                    help="config file, or 'default' for no config (SPEC §11's defaults)")
    args = ap.parse_args()

    variants = {"new": _package(None, "jsoneval_polars_new")}
    if args.ref:
        variants = {"ref": _package(args.ref, "jsoneval_polars_ref"), **variants}
    new = importlib.import_module("jsoneval_polars_new")
    ingest = importlib.import_module("jsoneval_polars_new.ingest")
    flatten = importlib.import_module("jsoneval_polars_new.flatten").flatten

    data = Path(args.data)
    config = (importlib.import_module("jsoneval_polars_new.config").Config()
              if args.config == "default" else new.load_config(args.config))
    pairs = ingest.pair_inputs(
        _records(data / "gt.ndjson", args.n), _records(data / "aio.ndjson", args.n)
    )
    opts = {"empty_containers_are_null": config.empty_containers_are_null}
    gt_flat = flatten(pairs.gt, **opts)
    aio_flat = flatten(pairs.aio, item_base=gt_flat.next_item, **opts)
    flat = (gt_flat, aio_flat)
    pairs = dataclasses.replace(pairs, gt=[], aio=[])
    print(f"{len(pairs)} pairs, {gt_flat.leaves.height + aio_flat.leaves.height} leaves, "
          f"{pl.thread_pool_size()} Polars threads")

    if args.lines:
        _run(variants["new"], pairs, config, flat)  # warm-up
        _by_line(lambda: _run(variants["new"], pairs, config, flat))
        return

    if args.profile:
        _run(variants["new"], pairs, config, flat)  # warm-up
        prof = cProfile.Profile()
        prof.enable()
        laps, _ = _run(variants["new"], pairs, config, flat)
        prof.disable()
        print({k: round(v, 3) for k, v in laps.items()})
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
        print(out.getvalue())
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats("jsoneval", 40)
        print(out.getvalue())
        return

    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    tables = {}
    for name, core in variants.items():  # warm-up (imports, rapidfuzz, regex caches)
        _, tables[name] = _run(core, pairs, config, flat)
    if "ref" in tables:
        from polars.testing import assert_frame_equal

        for t in tables["new"]:
            assert_frame_equal(tables["ref"][t], tables["new"][t])
            try:
                assert_frame_equal(tables["ref"][t], tables["new"][t], check_exact=True)
            except AssertionError as exc:
                print(f"{t}: equal within float tolerance only: {str(exc).splitlines()[0]}")
        print("batch tables equal to the reference")
    for _ in range(args.repeats):
        for name, core in variants.items():
            t, cpu = time.perf_counter(), time.process_time()
            laps, _ = _run(core, pairs, config, flat)
            laps["total"] = time.perf_counter() - t
            laps["cpu"] = time.process_time() - cpu  # all threads: less sensitive to neighbours
            results[name].append(laps)

    n = len(pairs)
    print(f"median of {args.repeats} (seconds; µs per document in brackets)")
    header = f"{'stage':<10}" + "".join(f"{v:>20}" for v in variants)
    print(header + ("       ratio" if len(variants) == 2 else ""))
    for stage in (*STAGES, "total", "cpu"):
        meds = [statistics.median(r[stage] for r in results[v]) for v in variants]
        line = f"{stage:<10}" + "".join(f"{m:>10.3f} [{m / n * 1e6:>6.1f}]" for m in meds)
        if len(meds) == 2:
            line += f"{meds[0] / meds[1]:>11.2f}x"
        print(line)


if __name__ == "__main__":
    main()
