"""Bootstrap intervals and the paired bootstrap (bootstrap.py, issue 13) against independent
values: a two-document case worked by hand, coverage of a known truth on generated counts,
a planted difference and two samples of one system."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from jsoneval_polars import evaluate
from jsoneval_polars.bootstrap import intervals, paired_bootstrap
from jsoneval_polars.diff import diff_runs, render_diff
from jsoneval_polars.stream import score_files

GT = [{"doc_id": "a", "total": 10, "name": "Acme"}, {"doc_id": "b", "total": 5, "name": "Bo"}]
AIO = [{"doc_id": "a", "total": 10, "name": "Acme"}, {"doc_id": "b", "total": 6, "name": "X"}]


def test_two_documents_by_hand():
    # Resamples of two documents are aa, ab, bb with chances 1/4, 1/2, 1/4, so the 2.5 % and
    # 97.5 % percentiles are the figures of bb and aa exactly. Doc a: both fields TP (F1 1,
    # RQS 0.45 + 0.25 + 0.15 = 0.85); doc b: both FP+FN (F1 0, RQS 0.25 + 0.15 = 0.40).
    r = evaluate(GT, AIO, config={"fuzzy_threshold": 0.99}, bootstrap=2000, seed=7)
    s = r.summary
    assert (s["micro_f1_low"], s["micro_f1_high"]) == (0.0, 1.0)
    assert (s["macro_f1_low"], s["macro_f1_high"]) == (0.0, 1.0)
    assert s["mean_rqs_low"] == pytest.approx(0.40) and s["mean_rqs_high"] == pytest.approx(0.85)
    assert r.attributes.select("attribute", "f1_low", "f1_high").rows() == [
        ("name", 0.0, 1.0), ("total", 0.0, 1.0)]
    assert s["bootstrap"] == {"resamples": 2000, "seed": 7, "confidence": 0.95}
    # the seed alone fixes the resamples
    again = evaluate(GT, AIO, config={"fuzzy_threshold": 0.99}, bootstrap=2000, seed=7)
    assert again.summary == s


def test_without_bootstrap_nothing_is_added():
    r = evaluate(GT, AIO)
    assert "f1_low" not in r.attributes.columns and "micro_f1_low" not in r.summary


@pytest.mark.parametrize("bad", [0, -3, 1.5, True])
def test_bad_resample_count_is_refused(bad):
    with pytest.raises(ValueError, match="bootstrap must be a positive number"):
        evaluate(GT, AIO, bootstrap=bad)


def _generated_counts(rng: np.random.Generator, n_docs: int, p_tp: float, p_fp: float,
                      p_fn: float, attributes: tuple[str, ...] = ("x", "y"),
                      ids: list[str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-document counts of a system whose TP, FP and FN per document and attribute are
    Binomial(4, p): the population F1 of every attribute is 2 p_tp / (2 p_tp + p_fp + p_fn)."""
    ids = ids or [f"d{i:04d}" for i in range(n_docs)]
    rows = {"doc_id": [], "attribute": [], "tp": [], "fp": [], "fn": []}
    for a in attributes:
        rows["doc_id"] += ids
        rows["attribute"] += [a] * n_docs
        for cell, p in (("tp", p_tp), ("fp", p_fp), ("fn", p_fn)):
            rows[cell] += rng.binomial(4, p, n_docs).tolist()
    counts = pl.DataFrame(rows)
    documents = pl.DataFrame({"doc_id": ids, "rqs": rng.uniform(0.0, 1.0, n_docs)})
    return counts, documents


def test_interval_covers_the_truth_about_95_percent_of_the_time():
    p_tp, p_fp, p_fn = 0.6, 0.2, 0.3
    truth_f1 = 2 * p_tp / (2 * p_tp + p_fp + p_fn)
    covered = {"f1": 0, "micro_f1": 0, "macro_f1": 0, "mean_rqs": 0}
    reps = 200
    for rep in range(reps):
        counts, documents = _generated_counts(np.random.default_rng(rep), 80, p_tp, p_fp, p_fn)
        table, s = intervals(counts, documents, 500, seed=10_000 + rep)
        row = table.filter(attribute="x").row(0, named=True)
        covered["f1"] += row["f1_low"] <= truth_f1 <= row["f1_high"]
        for key, truth in (("micro_f1", truth_f1), ("macro_f1", truth_f1), ("mean_rqs", 0.5)):
            covered[key] += s[f"{key}_low"] <= truth <= s[f"{key}_high"]
    for key, n in covered.items():
        # binomial(200, 0.95) lies in [180, 197] with 99.6 % probability; percentile
        # intervals undercover a little at this size
        assert 0.89 <= n / reps <= 0.99, (key, n)


def test_paired_bootstrap_finds_a_planted_difference():
    rng = np.random.default_rng(1)
    ids = [f"d{i:04d}" for i in range(300)]
    a = _generated_counts(rng, 300, 0.6, 0.2, 0.3, ids=ids)
    b = _generated_counts(rng, 300, 0.75, 0.1, 0.15, ids=ids)
    table, s = paired_bootstrap(*a, *b, 1000, seed=2)
    assert s["n_shared_documents"] == 300
    assert s["micro_f1"]["significant"] and s["micro_f1"]["low"] > 0
    assert s["micro_f1"]["p_value"] == pytest.approx(2 / 1001)
    assert table["f1_significant"].all()
    assert not s["mean_rqs"]["significant"] or s["mean_rqs"]["p_value"] < 0.05


def test_two_samples_of_one_system_are_rarely_significant():
    ids = [f"d{i:04d}" for i in range(150)]
    significant = 0
    reps = 120
    for rep in range(reps):
        rng = np.random.default_rng(500 + rep)
        a = _generated_counts(rng, 150, 0.6, 0.2, 0.3, ids=ids)
        b = _generated_counts(rng, 150, 0.6, 0.2, 0.3, ids=ids)
        _, s = paired_bootstrap(*a, *b, 400, seed=rep)
        significant += s["micro_f1"]["significant"]
    # about 5 % expected; 14 of 120 is beyond the 99.5 % point of binomial(120, 0.05)
    assert significant / reps <= 0.12, significant


def test_identical_runs_have_no_difference():
    r = evaluate(GT, AIO)
    d = diff_runs(r, r, bootstrap=200, seed=1)
    sig = d.summary["significance"]
    assert sig["micro_f1"] == {"delta": 0.0, "low": 0.0, "high": 0.0, "p_value": 1.0,
                               "significant": False}
    assert not d.attributes["f1_significant"].any()


def _docs(n: int, wrong_every: int | None) -> tuple[list[dict], list[dict]]:
    gt = [{"doc_id": f"d{i:03d}", "name": f"n{i}", "total": i, "city": "Bern"} for i in range(n)]
    aio = [{**g, "name": "wrong" if wrong_every and i % wrong_every == 0 else g["name"]}
           for i, g in enumerate(gt)]
    return gt, aio


def test_diff_of_result_directories_marks_the_planted_regression(tmp_path):
    gt, good = _docs(120, None)
    _, bad = _docs(120, 3)
    for name, aio in (("gt", gt), ("a", good), ("b", bad)):
        (tmp_path / f"{name}.ndjson").write_text("".join(json.dumps(d) + "\n" for d in aio))
    run_a = score_files(tmp_path / "gt.ndjson", tmp_path / "a.ndjson", tmp_path / "A")
    run_b = score_files(tmp_path / "gt.ndjson", tmp_path / "b.ndjson", tmp_path / "B")
    d = diff_runs(tmp_path / "A", tmp_path / "B", bootstrap=500, seed=3)
    flags = dict(d.attributes.select("attribute", "f1_significant").rows())
    assert flags == {"city": False, "name": True, "total": False}
    assert d.summary["significance"]["micro_f1"]["significant"]
    assert d.summary["significance"]["micro_f1"]["delta"] == pytest.approx(
        run_b.summary["micro_f1"] - run_a.summary["micro_f1"])
    text = render_diff(d)
    assert "micro_f1" in text and "significant" in text


def test_drivers_give_the_same_intervals(tmp_path):
    gt, aio = _docs(60, 4)
    for name, docs in (("gt", gt), ("aio", aio)):
        (tmp_path / f"{name}.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
    mem = evaluate(gt, aio, bootstrap=300, seed=5)
    files = score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", tmp_path / "out",
                        bootstrap=300, seed=5, batch_size=7)
    for key in ("micro_f1_low", "micro_f1_high", "macro_f1_low", "mean_rqs_high"):
        assert files.summary[key] == pytest.approx(mem.summary[key], abs=1e-12)
    cols = ["attribute", "f1_low", "f1_high"]
    assert files.attributes.select(cols).sort("attribute").rows() == \
        mem.attributes.select(cols).sort("attribute").rows()


def test_cli_bootstrap_and_diff(tmp_path):
    from jsoneval_polars.cli import main

    gt, good = _docs(40, None)
    _, bad = _docs(40, 2)
    for name, docs in (("gt", gt), ("a", good), ("b", bad)):
        (tmp_path / f"{name}.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
    for side in ("a", "b"):
        assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                     str(tmp_path / f"{side}.ndjson"), "--out", str(tmp_path / side.upper()),
                     "--bootstrap", "200", "--seed", "1", "--quiet"]) == 0
    summary = json.loads((tmp_path / "A" / "summary.json").read_text())
    assert summary["micro_f1_low"] == summary["micro_f1_high"] == 1.0
    assert main(["diff", str(tmp_path / "A"), str(tmp_path / "B"), "--bootstrap", "300",
                 "--seed", "2", "--json"]) == 0


def test_spark_refuses_a_bad_number_of_resamples_before_any_job():
    pytest.importorskip("pyspark")
    from jsoneval_polars.spark import evaluate_spark

    with pytest.raises(ValueError, match="positive number of resamples"):
        evaluate_spark(None, None, bootstrap=0)  # no frames: it fails before touching them
