"""Regenerate benchmarks/RESULTS.md: the engine beside the hand-written baseline (and the peers).

    python benchmarks/run.py --sizes 10000,100000,1000000 --repeats 3 [--peers-n 200]

Each measurement runs in a fresh subprocess; peak memory is the sum of the resident sizes of
that process and its children, sampled every 50 ms. The engine runs two ways: streaming
(``stream.score_files``, a thread per core: what ``jsoneval score`` does with NDJSON) and in
memory (``evaluate`` + ``Result.write``, a thread per core). Beside them, in the same run and on the
same data: the two yardsticks (the lean per-document loop of issue 11, lean_loop.py, and the
fuller baseline.py) and two floors (parse-only: every line of both files parsed, nothing else;
write-only: the engine's result tables written as Parquet, nothing else). The streaming engine
and the two yardsticks also run without a config (SPEC §11's defaults: every text SEMANTIC, lists
matched on all their fields), as ``jsoneval score`` runs without ``--config``; leave that pair
out with ``--no-default-config``. The report quotes
medians and the ratio of each engine run to the yardstick run next to it (the machine is shared
and noisy). Data is generated once per size into benchmarks/data/ (not committed). Before any
timing the package's and the yardsticks' bytecode is compiled, as ``pip install`` leaves an
installed package. The text below the ANALYSIS marker of an existing RESULTS.md is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jsoneval_polars.__main__ import QUIET_BLAS_THREADS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: the cores a run may use: the floors' CPU seconds spread over them bound any engine's wall
CORES = len(os.sched_getaffinity(0))
CONFIG = ROOT / "jsoneval_polars" / "sample" / "config.json"
#: no config at all: an empty one is SPEC §11's defaults, for the engine and the lean loop alike
NO_CONFIG = HERE / "no_config.json"
#: the peers' own environment, as benchmarks/peers.py sets it up
PEERS_PYTHON = Path("/tmp/peers/bin/python")

_ENGINE = """
import json, resource, sys, time
from jsoneval_polars import evaluate, load_config
gt, aio, config, out = sys.argv[1:5]
t = time.perf_counter()
r = evaluate(gt, aio, config=load_config(config))
r.write(out)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "n": r.summary["n_documents"], "timings": r.timings,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "micro_f1": r.summary["micro_f1"]}))
"""

_STREAM = """
import json, sys, time
from jsoneval_polars import load_config
from jsoneval_polars.stream import score_files
if __name__ == "__main__":
    gt, aio, config, out = sys.argv[1:5]
    t, c = time.perf_counter(), time.process_time()
    r = score_files(gt, aio, out, config=load_config(config))  # as jsoneval score does
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({"seconds": seconds, "cpu": cpu, "n": r.summary["n_documents"],
                      "timings": r.timings, "micro_f1": r.summary["micro_f1"]}))
"""

_BASELINE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[4])
from baseline import run_baseline
gt, aio, config = sys.argv[1:4]
t = time.perf_counter()
r = run_baseline(gt, aio, config)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "n": r["summary"]["n_documents"],
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "micro_f1": r["summary"]["micro_f1"]}))
"""

_LEAN = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[4])
from lean_loop import run_lean
gt, aio, config = sys.argv[1:4]
t = time.perf_counter()
r = run_lean(gt, aio, config)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "n": r["n_documents"],
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "micro_f1": r["micro_f1"]}))
"""

# The parse-only floor: read both files and parse every line with the engine's own parser (the
# native kernel's serde_json, into its document tree), on both cores (rayon), keeping nothing.
_PARSE = """
import json, sys, time
from jsoneval_polars import _native

if __name__ == "__main__":
    gt, aio = sys.argv[1:3]
    t, c = time.perf_counter(), time.process_time()
    n = 0
    for path in (gt, aio):
        with open(path, "rb") as f:
            n += _native.parse_count([line for line in f.read().split(b"\\n") if line])
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({"seconds": seconds, "cpu": cpu, "n": n}))
"""

#: the columns of each table core.score_batch hands the writer as Enums (its ``dictionary``):
#: the write-only floor gives them back to the parts it reads (tests/test_benchmarks.py checks
#: them against the core)
LABELS = {"fields": ["doc_id", "path", "attribute", "gt_kind", "aio_kind", "bucket", "strategy",
                     "cell"],
          "counts": ["doc_id", "attribute"]}

# The write-only floor: the parts the engine wrote in this run (read from its output, not timed)
# written again as the engine writes them: each batch's part, its labels as Enums, by
# layout.write_part, on a thread per core, one table in memory at a time. (Whole tables of strings
# through Polars' writer cost more CPU than the engine's own write stage: no floor.)
_WRITE = """
import json, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import polars as pl
from jsoneval_polars.core import PER_DOCUMENT_TABLES
from jsoneval_polars.layout import write_part
out, cores, labels = Path(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
seconds, cpu, rows = 0.0, 0.0, 0
with tempfile.TemporaryDirectory(dir=out.parent) as target, ThreadPoolExecutor(cores) as pool:
    for table in sorted(p for p in out.iterdir() if p.is_dir()):  # one table in memory at a time
        parts = [pl.read_parquet(path) for path in sorted(table.rglob("*.parquet"))]
        parts = [part.with_columns(
            pl.col(c).cast(pl.Enum(part[c].unique(maintain_order=True).drop_nulls()))
            for c in labels.get(table.name, ())) for part in parts]
        t, c = time.perf_counter(), time.process_time()
        batch = table.name in PER_DOCUMENT_TABLES  # written by the batch threads, as in the run
        list(pool.map(lambda n: write_part(target, table.name, parts[n], n, on_this_thread=batch),
                      range(len(parts))))
        seconds, cpu = seconds + time.perf_counter() - t, cpu + time.process_time() - c
        rows += sum(part.height for part in parts)
        del parts
print(json.dumps({"seconds": seconds, "cpu": cpu, "rows": rows}))
"""


ANALYSIS = "<!-- ANALYSIS: text below this line is kept when the tables are regenerated -->"


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants."""
    total_kb, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total_kb += next((int(x.split()[1]) for x in f if x.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # the process ended between two reads
    return total_kb / 1024


def _run(code: str, *args: str, python: str = sys.executable) -> dict:
    """One measurement in a fresh process, with the environment ``jsoneval`` gives its own
    process (NumPy's BLAS threads quieted, DECISIONS 116: the engine's snippets call the
    library, which sets nothing itself; the yardsticks load no NumPy)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)  # a file, not -c: spawned workers re-import the main module by path
    env = dict(os.environ)
    env.setdefault(*QUIET_BLAS_THREADS)
    proc = subprocess.Popen([python, f.name, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    peak = _peak_rss_mb(proc)
    stdout, stderr = proc.communicate()
    os.unlink(f.name)
    if proc.returncode != 0:
        raise RuntimeError(stderr[-2000:])
    result = json.loads(stdout.strip().splitlines()[-1])
    result["rss_mb"] = max(peak, result.get("rss_mb", 0.0))
    return result


def _peak_rss_mb(proc: subprocess.Popen) -> float:
    """The peak RSS of a process and its children until it ends, sampled every 50 ms."""
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid))
        time.sleep(0.05)
    return peak


def _whole(argv: list[str]) -> dict:
    """A command timed from outside, as a user meets it: from its start to its exit, the
    interpreter's start, the imports and the teardown included; its stdout and peak RSS."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = _peak_rss_mb(proc)
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(stderr[-2000:])
    return {"seconds": seconds, "rss_mb": peak, "stdout": stdout}


def _commands(gt: str, aio: str, out: str) -> tuple[dict, dict]:
    """``jsoneval score`` (``python -m jsoneval_polars``, the same entry point) and the lean
    loop's own command on the same files, each a whole process; with their micro-F1."""
    command = _whole([sys.executable, "-m", "jsoneval_polars", "score", "--gt", gt, "--aio", aio,
                      "--config", str(CONFIG), "--out", out, "--quiet"])
    command["micro_f1"] = json.loads((Path(out) / "summary.json").read_text())["micro_f1"]
    lean = _whole([sys.executable, str(HERE / "lean_loop.py"), "--gt", gt, "--aio", aio,
                   "--config", str(CONFIG)])
    lean["micro_f1"] = json.loads(lean["stdout"])["micro_f1"]
    return command, lean


def ensure_data(n: int, *, shuffled: bool = False) -> Path:
    """benchmarks/data/<n>/ (``shuffled``: <n>-shuffled/, each file in its own order)."""
    out = HERE / "data" / (f"{n}-shuffled" if shuffled else str(n))
    if not (out / "aio.ndjson").is_file() or (out / "piles").exists():
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--n", str(n), "--seed", "0",
             "--out", str(out), "--workers", "2", *(["--shuffle"] if shuffled else [])],
            check=True,
        )
    return out


def measure(n: int, repeats: int, in_memory: bool, baseline_repeats: int,
            default_config: bool = True) -> dict:
    """Engines, the lean loop and the two floors, alternating on the same data."""
    data = ensure_data(n)
    gt, aio = str(data / "gt.ndjson"), str(data / "aio.ndjson")
    runs: dict[str, list[dict]] = {name: [] for name in (*ENGINE_NAMES, *YARDSTICKS, *FLOORS,
                                                         *NO_CONFIG_RUNS, *WHOLE_RUNS)}
    out = str(HERE / "data" / f"out-{n}")
    for i in range(repeats):
        runs["stream"].append(_run(_STREAM, gt, aio, str(CONFIG), out + "-stream"))
        runs["write_only"].append(_run(_WRITE, out + "-stream", str(CORES), json.dumps(LABELS)))
        runs["parse_only"].append(_run(_PARSE, gt, aio))
        runs["lean"].append(_run(_LEAN, gt, aio, str(CONFIG), str(HERE)))
        for name, run in zip(WHOLE_RUNS, _commands(gt, aio, out + "-command"), strict=True):
            runs[name].append(run)
        if default_config:
            runs["stream_no_config"].append(
                _run(_STREAM, gt, aio, str(NO_CONFIG), out + "-no-config"))
            runs["lean_no_config"].append(_run(_LEAN, gt, aio, str(NO_CONFIG), str(HERE)))
            if i < baseline_repeats:
                runs["baseline_no_config"].append(
                    _run(_BASELINE, gt, aio, str(NO_CONFIG), str(HERE)))
        if in_memory:
            runs["memory"].append(_run(_ENGINE, gt, aio, str(CONFIG), out))
        if i < baseline_repeats:
            runs["baseline"].append(_run(_BASELINE, gt, aio, str(CONFIG), str(HERE)))
        print(f"  n={n} run {i + 1}: " + ", ".join(
            f"{k} {v[-1]['seconds']:.2f}s" for k, v in runs.items() if len(v) > i
        ), flush=True)
    row = {"n": n, "engines": {}, "yardsticks": {}, "floors": {}}
    if runs["stream_no_config"]:
        eng, lean = runs["stream_no_config"], runs["lean_no_config"]
        base = runs["baseline_no_config"]
        row["no_config"] = {
            "s": statistics.median(e["seconds"] for e in eng),
            "lean_s": statistics.median(e["seconds"] for e in lean),
            "ratios": [lean[i]["seconds"] / e["seconds"] for i, e in enumerate(eng)],
            "base_s": statistics.median(b["seconds"] for b in base),
            "base_ratios": [base[min(i, len(base) - 1)]["seconds"] / e["seconds"]
                            for i, e in enumerate(eng)],
            "rss": max(e["rss_mb"] for e in eng), "lean_rss": max(e["rss_mb"] for e in lean),
            "runs": len(eng),
            "same_micro_f1": all(abs(eng[0]["micro_f1"] - y[0]["micro_f1"]) < 1e-9
                                 for y in (lean, base)),
            "micro_f1": eng[0]["micro_f1"],
        }
    command, lean = (runs[name] for name in WHOLE_RUNS)
    row["whole"] = {
        "s": statistics.median(r["seconds"] for r in command),
        "lean_s": statistics.median(r["seconds"] for r in lean),
        "ratios": [lean[i]["seconds"] / r["seconds"] for i, r in enumerate(command)],
        "rss": max(r["rss_mb"] for r in command),
        "same_micro_f1": all(abs(r["micro_f1"] - lean[0]["micro_f1"]) < 1e-9
                             for r in command + lean),
    }
    for name in YARDSTICKS:
        runs_ = runs[name]
        row["yardsticks"][name] = {"s": statistics.median(r["seconds"] for r in runs_),
                                   "rss": max(r["rss_mb"] for r in runs_), "runs": len(runs_),
                                   "micro_f1": runs_[0]["micro_f1"]}
    for name in FLOORS:
        row["floors"][name] = {"s": statistics.median(r["seconds"] for r in runs[name]),
                               "cpu": statistics.median(r["cpu"] for r in runs[name]),
                               "runs": len(runs[name])}
    for name in ENGINE_NAMES:
        eng = runs[name]
        if not eng:
            continue
        ratios = {}
        for y in YARDSTICKS:
            # each engine run against the yardstick run beside it (the last one when fewer)
            base = runs[y]
            ratios[y] = [base[min(i, len(base) - 1)]["seconds"] / e["seconds"]
                         for i, e in enumerate(eng)]
        row["engines"][name] = {
            "s": statistics.median(e["seconds"] for e in eng),
            "rss": max(e["rss_mb"] for e in eng),
            "cpu": statistics.median(e.get("cpu", float("nan")) for e in eng),
            "ratios": ratios,
            "stages": {k: statistics.median(e["timings"].get(k, 0.0) for e in eng)
                       for k in eng[0]["timings"]},
            "same_micro_f1": all(abs(eng[0]["micro_f1"] - runs[y][0]["micro_f1"]) < 1e-9
                                 for y in YARDSTICKS),
        }
    return row


def measure_peers(n: int, python: Path) -> list[dict]:
    if not python.is_file():
        print(f"peers left out: no {python} (benchmarks/peers.py says how to make it)",
              file=sys.stderr)
        return []
    data = ensure_data(10_000)
    results = []
    # the peers in their environment; the engine's own ANLS* row in this one
    for exe, tools in ((python, "stickler,anls-star"), (Path(sys.executable), "engine")):
        proc = subprocess.run(
            [str(exe), str(HERE / "peers.py"), "--gt", str(data / "gt.ndjson"),
             "--aio", str(data / "aio.ndjson"), "--config", str(CONFIG), "--n", str(n), "--json",
             "--tools", tools],
            capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            return [{"tool": tools, "error": proc.stderr[-500:]}]
        results += json.loads(proc.stdout)
    return results


ENGINE_NAMES = {
    "stream": "the default `jsoneval score` on NDJSON (`stream.score_files`: a thread per "
              "core, one process)",
    "memory": "in memory, 1 process (`evaluate` + `write`, a thread per core)",
}
YARDSTICKS = {
    "lean": "benchmarks/lean_loop.py, the lean per-document loop (1 process)",
    "baseline": "benchmarks/baseline.py, the fuller hand-written baseline (1 process)",
}
#: ``jsoneval score`` and the lean loop's command, each a whole process timed from outside
WHOLE_RUNS = ("command", "lean_command")
#: the streaming engine and the lean loop without a config (``measure(default_config=True)``)
NO_CONFIG_RUNS = ("stream_no_config", "lean_no_config", "baseline_no_config")
FLOORS = {
    "parse_only": "read both files and parse every line with the engine's parser (the native "
                  "kernel, 2 threads), nothing else",
    "write_only": "write this size's result tables (the engine's own parts, already in memory, "
                  "their labels as dictionaries) as Parquet with the engine's writer, a thread "
                  "per core, nothing else",
}


def report(rows: list[dict], peers: list[dict], repeats: int) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"Generated by `python benchmarks/run.py` on {time.strftime('%Y-%m-%d')} "
        f"({platform.machine()}, {platform.python_version()}, {os.cpu_count()} cores shared with "
        f"other work: medians of up to {repeats} runs, each in its own process; ratios are taken "
        "run by run against the yardstick run beside it). Data: `benchmarks/generate.py`, seed 0, "
        "invoice-like pairs (~1 KB, ~38 leaves, 0–8 line items). End to end: NDJSON in, every "
        "result table (the full `fields` table included) written as Parquet. Config: the bundled "
        "sample config. Peak RSS is the sum over the process and its children, sampled every "
        "50 ms.",
        "",
        ("| documents | engine | runs | engine docs/s | lean loop docs/s | baseline docs/s | "
         "engine ÷ lean (median; per run) | engine ÷ baseline (median; per run) | "
         "engine peak RSS | lean / baseline peak RSS | same micro-F1 |"),
        "|---:|---|---:|---:|---:|---:|---|---|---:|---:|---|",
    ]
    for r in rows:
        y = r["yardsticks"]
        for name, e in r["engines"].items():
            cells = []
            for k in YARDSTICKS:
                rs = e["ratios"][k]
                cells.append(f"{statistics.median(rs):.2f}× ("
                             + ", ".join(f"{x:.2f}" for x in rs) + ")")
            lines.append(
                f"| {r['n']:,} | {name} | {len(e['ratios']['lean'])} | {r['n'] / e['s']:,.0f} | "
                f"{r['n'] / y['lean']['s']:,.0f} ({y['lean']['runs']}) | "
                f"{r['n'] / y['baseline']['s']:,.0f} ({y['baseline']['runs']}) | "
                + " | ".join(cells) + f" | {e['rss']:,.0f} MB | "
                f"{y['lean']['rss']:,.0f} / {y['baseline']['rss']:,.0f} MB | "
                f"{'yes' if e['same_micro_f1'] else 'NO'} |"
            )
    lines += ["", "End to end as a user runs them, each a whole process timed from outside (the "
              "interpreter's start, the imports and the exit included): `python -m "
              "jsoneval_polars score --config … --quiet` (what `jsoneval score` runs) against "
              "`python benchmarks/lean_loop.py`:", "",
              ("| documents | runs | command s | lean loop command s | command ÷ lean (median; "
               "per run) | command peak RSS | same micro-F1 |"),
              "|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        w = r["whole"]
        lines.append(f"| {r['n']:,} | {len(w['ratios'])} | {w['s']:.2f} | {w['lean_s']:.2f} | "
                     f"{statistics.median(w['ratios']):.2f}× ("
                     + ", ".join(f"{x:.2f}" for x in w["ratios"]) + f") | {w['rss']:,.0f} MB | "
                     f"{'yes' if w['same_micro_f1'] else 'NO'} |")
    measured = [r for r in rows if "no_config" in r]
    if measured:
        lines += ["", "Without a config (`jsoneval score` with no `--config`: SPEC §11's "
                  "defaults, every text SEMANTIC by the lexical token-set scorer, the line "
                  "items matched on all their fields), the streaming engine beside the lean "
                  "loop and the baseline given the same empty config:", "",
                  ("| documents | runs | engine docs/s | lean loop docs/s | baseline docs/s | "
                   "engine ÷ lean (median; per run) | engine ÷ baseline (median; per run) | "
                   "engine / lean peak RSS | micro-F1 | same micro-F1 |"),
                  "|---:|---:|---:|---:|---:|---|---|---:|---:|---|"]
        for r in measured:
            c = r["no_config"]
            ratios = [(statistics.median(rs), ", ".join(f"{x:.2f}" for x in rs))
                      for rs in (c["ratios"], c["base_ratios"])]
            lines.append(
                f"| {r['n']:,} | {c['runs']} | {r['n'] / c['s']:,.0f} | "
                f"{r['n'] / c['lean_s']:,.0f} | {r['n'] / c['base_s']:,.0f} | "
                + " | ".join(f"{m:.2f}× ({each})" for m, each in ratios)
                + f" | {c['rss']:,.0f} / {c['lean_rss']:,.0f} MB | {c['micro_f1']:.6f} | "
                f"{'yes' if c['same_micro_f1'] else 'NO'} |")
    lines += ["", "Engines: " + "; ".join(f"**{k}** = {v}" for k, v in ENGINE_NAMES.items())
              + ". Yardsticks: " + "; ".join(f"**{k}** = {v}" for k, v in YARDSTICKS.items())
              + ".", ""]
    lines += ["Floors beside the streaming engine (median seconds, and the CPU seconds of all "
              "the process's threads; " + "; ".join(
        f"**{k}** = {v}" for k, v in FLOORS.items()) + "). The floors' CPU spread over "
        f"the {CORES} cores is the least wall time any engine that parses every line and writes "
        "these tables could take here:", "",
        ("| documents | engine s (CPU s) | parse-only s (CPU s) | write-only s (CPU s) | "
         f"parse + write, one after the other s | parse + write CPU over {CORES} cores s | "
         "engine ÷ the CPU bound |"), "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "stream" not in r["engines"]:
            continue
        e, f = r["engines"]["stream"], r["floors"]
        parse, write = f["parse_only"], f["write_only"]
        bound = (parse["cpu"] + write["cpu"]) / CORES
        lines.append(f"| {r['n']:,} | {e['s']:.2f} ({e['cpu']:.2f}) | {parse['s']:.2f} "
                     f"({parse['cpu']:.2f}) | {write['s']:.2f} ({write['cpu']:.2f}) | "
                     f"{parse['s'] + write['s']:.2f} | {bound:.2f} | {e['s'] / bound:.1f}× |")
    lines.append("")
    for name in ENGINE_NAMES:
        measured = [r for r in rows if name in r["engines"]]
        if not measured:
            continue
        stage_names = list(measured[0]["engines"][name]["stages"])
        lines += [f"Time per stage, {name} (median seconds"
                  + "; the batch stages summed over its threads, so they add up to about "
                  "twice the wall time" + "):", ""]
        lines.append("| documents | " + " | ".join(stage_names) + " |")
        lines.append("|---:|" + "---:|" * len(stage_names))
        for r in measured:
            st = r["engines"][name]["stages"]
            lines.append(f"| {r['n']:,} | " + " | ".join(f"{st[s]:.2f}" for s in stage_names)
                         + " |")
        lines.append("")
    if peers:
        lines += ["Peers (one document at a time, measured on a subset of the 10k set):", ""]
        lines.append("| tool | documents | docs/s | failures |")
        lines.append("|---|---:|---:|---:|")
        for p in peers:
            if "error" in p:
                lines.append(f"| {p.get('tool')} | - | - | {p['error']} |")
            else:
                lines.append(
                    f"| {p['tool']} {p.get('version') or ''} | {p['n_docs']} | "
                    f"{p['docs_per_s']:,.1f} | {p['n_failed']} |"
                )
    return "\n".join(lines) + "\n"


def _compile_sources() -> None:
    """Bytecode for the package and for the yardsticks' modules, as ``pip install`` leaves an
    installed package: in a shell with PYTHONDONTWRITEBYTECODE set, every timed process would
    otherwise compile each module changed since its bytecode was written (ingest.py alone
    takes 0.02-0.04 s), on the engine's side far more than on the yardsticks'."""
    import compileall

    for folder in (ROOT / "jsoneval_polars", HERE):
        compileall.compile_dir(folder, maxlevels=0, quiet=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers-n", type=int, default=200)
    parser.add_argument("--peers-python", type=Path, default=PEERS_PYTHON,
                        help="the Python of the environment holding the peers")
    parser.add_argument("--in-memory-max", type=int, default=100_000,
                        help="also run the in-memory engine up to this size")
    parser.add_argument("--baseline-repeats", type=int, default=None,
                        help="baseline runs per size above 100k (default: --repeats)")
    parser.add_argument("--no-default-config", action="store_true",
                        help="leave out the runs without a config")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    _compile_sources()
    rows = []
    for n in map(int, args.sizes.split(",")):
        b = args.repeats if n <= 100_000 or args.baseline_repeats is None else args.baseline_repeats
        rows.append(measure(n, args.repeats, n <= args.in_memory_max, b,
                            not args.no_default_config))
    peers = measure_peers(args.peers_n, args.peers_python) if args.peers_n else []
    text = report(rows, peers, args.repeats)
    out = Path(args.out)
    kept = out.read_text(encoding="utf-8").partition(ANALYSIS)[2] if out.is_file() else ""
    out.write_text(text + "\n" + ANALYSIS + kept, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
