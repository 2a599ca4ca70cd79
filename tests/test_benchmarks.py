"""The benchmark scripts the README and RESULTS.md cite still run, on a few hundred generated
pairs: a script that falls behind the code it times fails here, not on the day its figures are
needed. They print figures only (timing is not asserted); where a script compares two ways of
scoring, its own check that their tables agree is read from its output."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(),
                                reason="cpu_use.py reads each thread's CPU from Linux's /proc")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pairs")
    _run("generate.py", "--n", "300", "--seed", "0", "--out", str(out))
    return out


def _bench_module(name: str):
    """A script of benchmarks/ as a module, for its snippets and helpers."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def run():
    return _bench_module("run")


def _run(script: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("shape", ["plain", "members", "float-meta"])
def test_tables_benchmark_runs_and_both_ways_agree(data, shape):
    out = _run("tables.py", "--data", str(data), "--n", "300", "--repeats", "1",
               "--shape", shape)
    assert "fields tables equal: True" in out


def test_tables_benchmark_threads_agree(data):
    out = _run("tables.py", "--data", str(data), "--n", "300", "--repeats", "1", "--threads")
    assert "fields tables equal: True" in out and "score_tables-1" in out


def test_backend_benchmark_runs(data):
    out = _run("backend.py", "--data", str(data), "--n", "300", "--repeats", "1")
    assert "align" in out and "total" in out


def test_flatten_kernels_benchmark_runs(data):
    out = _run("flatten_kernels.py", "--size", str(data), "--docs", "300", "--repeats", "1")
    assert "native, text" in out


def test_write_parts_benchmark_runs_and_the_part_reads_back(data):
    for table in ("fields", "counts"):
        out = _run("write_parts.py", "--data", str(data), "--n", "300", "--repeats", "1",
                   "--table", table)
        assert f"{table} part of 300 pairs" in out
        assert "reads back as the strings: True" in out


def test_options_benchmark_runs_and_documents_in_members_score_the_same(data):
    out = _run("options.py", "--data", str(data), "--n", "300", "--repeats", "1")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    f1 = {r[0].strip(): r[7].strip() for r in rows[1:]}
    assert set(f1) == {"plain", "--by currency", "--gt-field/--aio-field",
                       "the same, 1 in 5 fenced"}
    assert f1["plain"] == f1["--gt-field/--aio-field"] == f1["the same, 1 in 5 fenced"]
    assert all(r[8].strip() == "yes" for r in rows[1:])


def test_json_layouts_benchmark_runs_and_every_layout_scores_the_same(data):
    """The script stops when NDJSON, the arrays and the indented objects disagree on micro-F1."""
    out = _run("json_layouts.py", "--data", str(data), "--repeats", "1")
    assert "micro-F1" in out and "in every run" in out
    assert out.count("| objects, indented (jq .) |") == 1


def test_profile_stages_benchmark_runs_and_every_driver_scores_the_same(tmp_path):
    """In memory, and the files driver on one thread and on two, give the same micro-F1."""
    out = _run("profile_stages.py", "--n", "300", "--data", str(tmp_path),
               "--runs", "memory,files-1,files-2", "--repeats", "1")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    f1 = {r[0].strip(): r[-1].strip() for r in rows if r[0].strip() in
          ("memory", "files-1", "files-2")}
    assert len(f1) == 3 and len(set(f1.values())) == 1, f1


def test_run_floors_parse_every_line_and_rewrite_every_row(data, run, tmp_path):
    """benchmarks/run.py's floors: the parse-only run parses every line of both files, and the
    write-only run writes again every row of every table the engine wrote."""
    import polars as pl

    gt, aio, out = str(data / "gt.ndjson"), str(data / "aio.ndjson"), tmp_path / "out"
    engine = run._run(run._STREAM, gt, aio, str(run.CONFIG), str(out))
    assert engine["n"] == 300 and engine["cpu"] > 0
    parse = run._run(run._PARSE, gt, aio)
    assert parse["n"] == 600  # 300 lines a side
    written = sum(pl.read_parquet(table / "**/*.parquet").height
                  for table in out.iterdir() if table.is_dir())
    write = run._run(run._WRITE, str(out), "2", json.dumps(run.LABELS))
    assert write["rows"] == written > 0 and write["cpu"] > 0


def test_run_times_both_commands_whole_and_they_score_the_same(data, run, tmp_path):
    """benchmarks/run.py's end-to-end rows: `jsoneval score` and the lean loop's command, each
    a whole process, agree on micro-F1 (the lean loop computes it on its own)."""
    command, lean = run._commands(str(data / "gt.ndjson"), str(data / "aio.ndjson"),
                                  str(tmp_path / "out"))
    assert command["seconds"] > 0 and lean["seconds"] > 0
    assert abs(command["micro_f1"] - lean["micro_f1"]) < 1e-9


def test_run_write_floor_labels_are_the_cores_enums(data, run):
    """The write-only floor makes Enums of the columns that core.score_batch hands the writer
    as Enums (``dictionary=True``), and of no others."""
    import polars as pl

    from jsoneval_polars import load_config
    from jsoneval_polars.core import score_batch
    from jsoneval_polars.ingest import pair_inputs

    batch = score_batch(pair_inputs(data / "gt.ndjson", data / "aio.ndjson"),
                        load_config(run.CONFIG), dictionary=True)
    for table in ("documents", "fields", "alignments", "counts"):
        frame = getattr(batch, table)
        enums = sorted(c for c, dtype in frame.schema.items() if isinstance(dtype, pl.Enum))
        assert enums == sorted(run.LABELS.get(table, ())), table


def test_run_measures_in_the_environment_the_command_gives_itself(run, monkeypatch):
    """benchmarks/run.py runs each measurement with NumPy's BLAS threads quieted, as ``jsoneval``
    quiets them in its own process (__main__.QUIET_BLAS_THREADS), and a user's own setting wins."""
    from jsoneval_polars.__main__ import QUIET_BLAS_THREADS

    name, value = QUIET_BLAS_THREADS
    show = f"import json, os; print(json.dumps({{'value': os.environ.get('{name}')}}))"
    monkeypatch.delenv(name, raising=False)
    assert run._run(show)["value"] == value
    monkeypatch.setenv(name, "12")
    assert run._run(show)["value"] == "12"


def test_run_compiles_the_bytecode_every_timed_process_imports(run):
    """benchmarks/run.py compiles the package's and the yardsticks' modules before timing, as
    ``pip install`` does: a process started with PYTHONDONTWRITEBYTECODE then finds current
    bytecode for each module it imports instead of compiling the changed ones itself."""
    import importlib.util

    run._compile_sources()
    sources = [*(ROOT / "jsoneval_polars").glob("*.py"), BENCH / "baseline.py",
               BENCH / "lean_loop.py"]
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached.is_file() and cached.stat().st_mtime >= source.stat().st_mtime, source


@needs_proc
def test_cpu_use_benchmark_runs_and_the_halves_hold_every_document(data):
    """benchmarks/cpu_use.py reports each role's CPU; its two half runs together score as many
    documents as the whole run (its own check, read from its output)."""
    out = _run("cpu_use.py", "--data", str(data), "--repeats", "1", "--halves")
    assert "batch threads" in out and "cores in use" in out
    assert "same documents: True" in out


@needs_proc
def test_cpu_use_reads_every_thread_and_splits_every_line(data, tmp_path):
    """cpu_use's readings name each live thread of a process with its CPU seconds, and its
    halves are the files' lines, cut once, in order."""
    import threading

    cpu_use = _bench_module("cpu_use")
    done = threading.Event()
    worker = threading.Thread(target=done.wait)
    worker.start()
    try:
        threads = cpu_use.thread_times(os.getpid())
    finally:
        done.set()
        worker.join()
    assert {threading.main_thread().native_id, worker.native_id} <= set(threads)
    assert all(cpu >= 0 for _, cpu in threads.values())
    # the process's own count, read after them, holds every thread's, ended ones too
    assert cpu_use._stat(f"/proc/{os.getpid()}/stat")[1] >= sum(
        cpu for _, cpu in threads.values()) - 0.01 * len(threads)
    halves = cpu_use.split(data, tmp_path)
    for side in ("gt", "aio"):
        whole = (data / f"{side}.ndjson").read_bytes()
        parts = [(half / f"{side}.ndjson").read_bytes() for half in halves]
        assert b"".join(parts) == whole and all(parts)
