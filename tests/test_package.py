"""The package surface: light imports, the README quickstart runs, the sample scores."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from readme_examples import run_readme_block

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "modules, heavy",
    [
        ("jsoneval_polars", ("duckdb", "pyspark", "torch", "sentence_transformers", "scipy")),
        # the semantic scorers and the runs commands load a model only when one is asked for
        ("jsoneval_polars.scorers, jsoneval_polars.runs_cli",
         ("torch", "sentence_transformers", "transformers")),
    ],
)
def test_import_is_light(modules, heavy):
    code = f"import sys, {modules}; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_readme_python_quickstart_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_readme_block()["result"]
    # the invoice of seed 001 as in the conformance case nested_line_items_greedy, with
    # NUMERIC amounts: description F1 0.8, one amount wrong
    attrs = {r["attribute"]: r for r in result.attributes.iter_rows(named=True)}
    assert attrs["line_items[].description"]["f1"] == 0.8
    assert attrs["line_items[].amount"]["tp"] == 1
    assert (tmp_path / "results" / "fields" / "part-000000.parquet").is_file()


def test_readme_opens_with_the_two_setup_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", readme, flags=re.S).group(1).strip().splitlines()
    assert first == [
        "pip install . && jsoneval score --sample --out results",
        "pip install -e '.[dev]' && python -m pytest",
    ]
    assert "python -m pytest" in (ROOT / ".ci" / "run").read_text()


def test_a_source_tree_without_the_native_core_still_scores(tmp_path):
    """`python -m jsoneval_polars` run from a source tree after a non-editable install imports
    the tree, whose extension is not built: one warning saying so, then the Python path."""
    shutil.copytree(ROOT / "jsoneval_polars", tmp_path / "jsoneval_polars",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--sample", "--out",
         str(tmp_path / "out"), "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "the native core is not built" in proc.stderr
    code = "import jsoneval_polars.flatten as f; print(f.KERNEL, f.__file__)"
    kernel = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert kernel.stdout.split()[0] == "python"
    assert kernel.stdout.split()[1].startswith(str(tmp_path))


def test_sample_scores_from_the_command_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--sample", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "micro" in proc.stdout and "pass rate" in proc.stdout
    assert re.search(r"read \d+ GT and \d+ AIO records; scored \d+ documents", proc.stdout)
    for name in ("documents", "fields", "attributes", "alignments", "errors", "counts"):
        assert (tmp_path / name / "part-000000.parquet").is_file()
    assert {"summary.json", "manifest.json"} <= {p.name for p in tmp_path.iterdir()}


def test_score_with_semantic_cache_gives_the_same_result_twice(tmp_path):
    cache = tmp_path / "scores.sqlite"
    outs = []
    for i in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "jsoneval_polars", "score", "--sample", "--json",
             "--semantic-cache", str(cache), "--out", str(tmp_path / f"o{i}")],
            capture_output=True, text=True, timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert cache.is_file() and outs[0] == outs[1]


def _proc_status() -> str:
    try:
        return Path("/proc/self/status").read_text()
    except OSError:
        return ""


def _thp_allowed() -> None:
    """A child's preexec_fn: it starts with transparent huge pages allowed, whatever this
    process (which imported the package) has set; the setting is inherited otherwise."""
    ctypes.CDLL(None).prctl(41, 0, 0, 0, 0)  # PR_SET_THP_DISABLE, off


@pytest.mark.skipif("THP_enabled" not in _proc_status(), reason="no THP_enabled in /proc")
@pytest.mark.parametrize(("setting", "enabled"), [(None, "0"), ("1", "1")])
def test_the_package_turns_transparent_huge_pages_off_unless_told(setting, enabled):
    """docs/DECISIONS.md 75: mimalloc turns THP off for the process as the extension loads
    (with the engine's first name used: ``import jsoneval_polars`` alone loads nothing),
    unless the user's MIMALLOC_ALLOW_THP says otherwise."""
    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ALLOW_THP"}
    if setting is not None:
        env["MIMALLOC_ALLOW_THP"] = setting
    status = subprocess.run(
        [sys.executable, "-c",
         "from jsoneval_polars import evaluate; print(open('/proc/self/status').read())"],
        capture_output=True, text=True, check=True, env=env, timeout=120,
        preexec_fn=_thp_allowed,
    ).stdout
    assert f"THP_enabled:\t{enabled}" in status


def test_a_result_shows_its_headline_not_every_table(tmp_path):
    """repr() of a result (what a notebook cell shows) is the summary's figures and each
    table's rows in two lines; a stored run's is one line; a failed run says why."""
    from jsoneval_polars import evaluate
    from jsoneval_polars.results import read_results

    sample = Path(__file__).resolve().parents[1] / "jsoneval_polars" / "sample"
    result = evaluate(sample / "gt.ndjson", sample / "aio.ndjson", config=sample / "config.json")
    s = result.summary
    headline = (f"{s['n_documents']:,} documents, {s['status']}, micro-F1 {s['micro_f1']:.3f}, "
                f"mean RQS {s['mean_rqs']:.3f}, pass rate {100 * s['pass_rate']:.1f}%; "
                f"{s['n_errors']} errors, {s['n_warnings']} warnings")
    assert repr(result).splitlines() == [
        f"Result: {headline}",
        f"  tables (rows): documents ({result.documents.height}), fields "
        f"({result.fields.height:,}), attributes ({result.attributes.height}), alignments "
        f"({result.alignments.height:,}), errors ({result.errors.height}), counts "
        f"({result.counts.height:,})",
    ]
    stored = read_results(result.write(tmp_path / "run"))
    assert repr(stored) == f"ResultTables({str(tmp_path / 'run')!r}): {headline}"
    failed = repr(evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "b", "x": 1}]))
    assert failed.startswith("Result: 2 documents, failed (no document pairs: 1 GT and 1 AIO")
