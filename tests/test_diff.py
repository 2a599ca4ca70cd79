"""Run-vs-run diff on two real runs of the sample, checked against plain-Python recomputation
from the two runs' own tables (dicts and loops)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sample_runs import AIO, GT, config_a, run_a, run_b

from jsoneval_polars import evaluate
from jsoneval_polars.diff import diff_runs, render_diff

CORRECT = {"TP", "TN"}


def _by(frame: pl.DataFrame, *keys: str) -> dict:
    return {tuple(r[k] for k in keys): r for r in frame.iter_rows(named=True)}


def _expected_changes(a, b) -> dict:
    fa, fb = _by(a.fields, "doc_id", "path"), _by(b.fields, "doc_id", "path")
    out = {}
    for key in fa.keys() | fb.keys():
        ca = fa[key]["cell"] if key in fa else None
        cb = fb[key]["cell"] if key in fb else None
        if ca == cb:
            continue
        if ca is None:
            direction = "only_b"
        elif cb is None:
            direction = "only_a"
        elif ca not in CORRECT and cb in CORRECT:
            direction = "fixed"
        elif ca in CORRECT and cb not in CORRECT:
            direction = "regressed"
        else:
            direction = "changed"
        out[key] = {
            "change": f"{ca or 'absent'} -> {cb or 'absent'}",
            "direction": direction,
            "aio_value_a": fa[key]["aio_value"] if key in fa else None,
            "aio_value_b": fb[key]["aio_value"] if key in fb else None,
        }
    return out


@pytest.fixture(scope="module")
def diff():
    return diff_runs(run_a(), run_b())


def test_changed_fields_are_exactly_the_cells_that_differ(diff):
    want = _expected_changes(run_a(), run_b())
    got = _by(diff.fields, "doc_id", "path")
    assert got.keys() == want.keys()
    for key, w in want.items():
        assert {k: got[key][k] for k in w} == w, key
    # the config change produces fixes, regressions and paths only one run has
    directions = set(diff.fields["direction"])
    assert directions <= {"fixed", "regressed", "changed", "only_a", "only_b"}
    assert {"fixed", "regressed", "only_a"} <= directions
    assert diff.summary["transitions"] == dict(Counter(w["change"] for w in want.values()))
    assert diff.summary["n_changed_fields"] == len(want)


def test_attribute_deltas_match_the_two_attribute_tables(diff):
    aa, ab = _by(run_a().attributes, "attribute"), _by(run_b().attributes, "attribute")
    got = _by(diff.attributes, "attribute")
    assert got.keys() == aa.keys() | ab.keys()
    for key, row in got.items():
        for m in ("precision", "recall", "f1", "support"):
            va = aa[key][m] if key in aa else None
            vb = ab[key][m] if key in ab else None
            assert row[f"{m}_a"] == va and row[f"{m}_b"] == vb
            if va is None or vb is None:
                assert row[f"{m}_delta"] is None  # undefined stays undefined
            else:
                assert row[f"{m}_delta"] == pytest.approx(vb - va)
    # index alignment hurts the list attributes most
    worst = diff.attributes.sort("f1_delta").row(0, named=True)
    assert worst["attribute"].startswith("line_items[]") and worst["f1_delta"] < -0.2


def test_document_rqs_deltas_match_the_two_document_tables(diff):
    da, db = _by(run_a().documents, "doc_id"), _by(run_b().documents, "doc_id")
    n_changed = Counter(doc for doc, _ in _expected_changes(run_a(), run_b()))
    got = _by(diff.documents, "doc_id")
    assert got.keys() == da.keys() == db.keys()
    for key, row in got.items():
        assert row["rqs_delta"] == pytest.approx(db[key]["rqs"] - da[key]["rqs"])
        assert (row["passed_a"], row["passed_b"]) == (da[key]["passed"], db[key]["passed"])
        assert row["n_changed_fields"] == n_changed.get(key[0], 0)
    deltas = diff.documents["rqs_delta"].to_list()
    assert deltas == sorted(deltas)  # most regressed first
    failing = sum(1 for k in da if da[k]["passed"] and not db[k]["passed"])
    assert diff.summary["newly_failing"] == failing > 0


def test_summary_figures_are_b_minus_a(diff):
    for key, fig in diff.summary["figures"].items():
        a, b = run_a().summary[key], run_b().summary[key]
        assert (fig["a"], fig["b"]) == (a, b)
        if a is None or b is None:  # mean_anls without anls: true
            assert fig["delta"] is None
        else:
            assert fig["delta"] == pytest.approx(b - a)
    assert diff.summary["status"] == {"a": "healthy", "b": run_b().summary["status"]}


def test_diff_of_directories_equals_diff_of_results(diff, tmp_path):
    from_dirs = diff_runs(run_a().write(tmp_path / "a"), run_b().write(tmp_path / "b"))
    for name in ("fields", "attributes", "documents"):
        assert_frame_equal(getattr(from_dirs, name), getattr(diff, name))
    assert from_dirs.summary == diff.summary


def test_a_run_against_itself_changes_nothing():
    d = diff_runs(run_a(), run_a())
    assert d.fields.height == 0 and d.summary["n_changed_fields"] == 0
    assert d.documents["rqs_delta"].abs().max() == 0
    assert d.attributes["f1_delta"].drop_nulls().abs().max() == 0


def test_documents_scored_in_one_run_only():
    keep = {"doc-0000000", "doc-0000001", "doc-0000002"}
    gt = [json.loads(x) for x in GT.read_text().splitlines() if x.strip()]
    aio = [json.loads(x) for x in AIO.read_text().splitlines() if x.strip()]
    small = evaluate(
        [r for r in gt if r["doc_id"] in keep], [r for r in aio if r["doc_id"] in keep],
        config=config_a(),
    )
    d = diff_runs(run_a(), small)
    gone = d.documents.filter(pl.col("rqs_b").is_null())
    assert gone.height == run_a().documents.height - 3
    assert gone["rqs_delta"].null_count() == gone.height
    kept = d.documents.filter(pl.col("doc_id").is_in(list(keep)))
    assert kept["rqs_delta"].to_list() == [0, 0, 0]
    only_a = d.fields.filter(direction="only_a")
    assert only_a.height == run_a().fields.filter(~pl.col("doc_id").is_in(list(keep))).height
    assert "documents scored in one run only" in render_diff(d)


def test_render_diff_is_a_readable_summary(diff):
    text = render_diff(diff, top=3)
    assert text.splitlines()[0].split() == ["A", "B", "delta"]
    s = diff.summary
    assert f"{s['n_changed_fields']} fields changed in {s['n_documents_changed']} documents" in text
    assert "attributes whose F1 moved most" in text and "documents whose RQS fell most" in text


def test_cli_diff_prints_and_writes(tmp_path):
    a, b = run_a().write(tmp_path / "a"), run_b().write(tmp_path / "b")
    cmd = [sys.executable, "-m", "jsoneval_polars", "diff", str(a), str(b)]
    proc = subprocess.run(cmd + ["--out", str(tmp_path / "d")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "fields changed in" in proc.stdout and "mean_rqs" in proc.stdout
    written = pl.read_parquet(tmp_path / "d" / "fields.parquet")
    assert written.height == diff_runs(run_a(), run_b()).fields.height
    as_json = subprocess.run(cmd + ["--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(as_json.stdout) == json.loads((tmp_path / "d" / "summary.json").read_text())
    bad = subprocess.run(cmd[:-1] + [str(tmp_path / "missing")], capture_output=True, text=True)
    assert bad.returncode == 2 and "does not exist" in bad.stderr


def test_readme_integrations_example_runs(tmp_path, monkeypatch):
    from readme_examples import run_readme_block

    monkeypatch.chdir(tmp_path)
    namespace = run_readme_block("## SQL, run diffs, HTML reports, notebooks")
    assert namespace["diff"].fields.select("path", "change", "direction").rows() == [
        ("total", "FP+FN -> TP", "fixed")
    ]
    assert namespace["diff"].attributes.filter(attribute="total")["f1_delta"].item() == 0.5
    assert (tmp_path / "report.html").is_file() and (tmp_path / "work.duckdb").is_file()
