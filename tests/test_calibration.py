"""Calibration (calibration.py) against scikit-learn's roc_auc_score and brier_score_loss, a
hand-written ECE and accuracy at coverage, on generated documents with confidences."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from jsoneval_polars import evaluate
from jsoneval_polars.calibration import COVERAGES, confidence_table
from jsoneval_polars.cli import main
from jsoneval_polars.results import read_results

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _generated(seed: int, n: int = 120):
    rng = np.random.default_rng(seed)
    gt, aio, conf = [], [], []
    for i in range(n):
        g = {"doc_id": f"d{i:03d}", "total": i, "name": f"name {i}", "city": "Bern"}
        a, c = {"doc_id": g["doc_id"]}, {"doc_id": g["doc_id"]}
        for key in ("total", "name", "city"):
            p = rng.uniform()  # confidence; the value is right with probability p (calibrated)
            c[key] = round(float(p), 2) if key != "city" else float(rng.choice([0.0, 0.5, 1.0]))
            right = rng.uniform() < p
            a[key] = g[key] if right else ("wrong" if key != "total" else -1)
        if i % 10 == 0:
            del a["name"]  # no value emitted: not a prediction, though it has a confidence
        gt.append(g)
        aio.append(a)
        conf.append(c)
    return gt, aio, conf


def _ece(c: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    total = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        inside = (c >= lo) & ((c < hi) if k < bins - 1 else (c <= hi))
        if inside.any():
            total += inside.sum() / len(c) * abs(c[inside].mean() - y[inside].mean())
    return total


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_calibration_matches_scikit_learn(seed):
    gt, aio, conf = _generated(seed)
    r = evaluate(gt, aio, confidence=conf)
    table = {row["attribute"]: row for row in r.calibration.iter_rows(named=True)}
    assert list(table) == ["city", "name", "total", "*"]
    # predictions derived independently: every AIO value that is present, right or wrong
    by_attr: dict[str, list[tuple[float, int]]] = {}
    for g, a, c in zip(gt, aio, conf, strict=True):
        for key in ("total", "name", "city"):
            if key in a:
                by_attr.setdefault(key, []).append((c[key], int(a[key] == g[key])))
    by_attr["*"] = [p for key in ("city", "name", "total") for p in by_attr[key]]
    for attr, preds in by_attr.items():
        c = np.array([p[0] for p in preds])
        y = np.array([p[1] for p in preds])
        row = table[attr]
        assert row["n"] == len(preds)
        assert row["accuracy"] == pytest.approx(y.mean())
        assert row["auroc"] == pytest.approx(sklearn_metrics.roc_auc_score(y, c), abs=1e-12)
        assert row["brier"] == pytest.approx(sklearn_metrics.brier_score_loss(y, c), abs=1e-12)
        assert row["ece"] == pytest.approx(_ece(c, y), abs=1e-12)
        # accuracy at coverage: the top ceil(q n) by confidence, wrong ones first among ties
        order = np.lexsort((y, -c))
        for q in COVERAGES:
            k = math.ceil(round(q * len(c), 9))
            assert row[f"accuracy_at_{round(q * 100)}"] == pytest.approx(y[order[:k]].mean())


def test_hand_case_and_single_class():
    gt = [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 2}, {"doc_id": "c", "x": 3}]
    aio = [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 0}, {"doc_id": "c", "x": 3}]
    conf = {"a": {"x": 0.9}, "b": {"x": 0.8}, "c": {"x": 0.2}}
    row = evaluate(gt, aio, confidence=conf).calibration.row(0, named=True)
    # pairs (right, wrong): (0.9 > 0.8) yes, (0.2 > 0.8) no -> AUROC 1/2
    assert row["auroc"] == pytest.approx(0.5)
    assert row["brier"] == pytest.approx((0.1**2 + 0.8**2 + 0.8**2) / 3)
    # bins: 0.2 -> bin 2 (conf .2, acc 1), 0.8 -> bin 8 (conf .8, acc 0), 0.9 -> bin 9 (.9, 1)
    assert row["ece"] == pytest.approx((0.8 + 0.8 + 0.1) / 3)
    # coverage: ceil(0.1 * 3) = 1 -> [right]; ceil(0.6 * 3) = 2 -> [right, wrong]; 0.7 -> all
    assert row["accuracy_at_10"] == 1.0 and row["accuracy_at_60"] == pytest.approx(0.5)
    assert row["accuracy_at_70"] == pytest.approx(2 / 3)
    same = evaluate(gt, gt, confidence=conf).calibration.row(0, named=True)
    assert same["auroc"] is None  # every value right: AUROC undefined


def test_bad_confidences_name_document_and_path():
    with pytest.raises(ValueError, match=r"document 'a' at 'x' must be a number in \[0, 1\]"):
        confidence_table([{"doc_id": "a", "x": 1.5}])
    with pytest.raises(ValueError, match=r"document 'a' at 'v\[1\]'.*'high'"):
        confidence_table([{"doc_id": "a", "v": [0.5, "high"]}])
    with pytest.raises(ValueError, match="confidence record 2: not an object with 'doc_id'"):
        confidence_table([{"doc_id": "a"}, {"id": "b"}])


def test_files_driver_and_cli_write_the_calibration_table(tmp_path):
    gt, aio, conf = _generated(4, 40)
    for name, rows in (("gt", gt), ("aio", aio), ("conf", conf)):
        (tmp_path / f"{name}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                 str(tmp_path / "aio.ndjson"), "--confidence", str(tmp_path / "conf.ndjson"),
                 "--out", str(tmp_path / "out"), "--quiet"]) == 0
    stored = read_results(tmp_path / "out").calibration
    expected = evaluate(gt, aio, confidence=conf).calibration
    from polars.testing import assert_frame_equal

    assert_frame_equal(stored, expected, check_exact=False, rel_tol=1e-12)
    (tmp_path / "bad.ndjson").write_text('{"doc_id": "d000", "total": 0.5}\n{oops\n')
    assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                 str(tmp_path / "aio.ndjson"), "--confidence", str(tmp_path / "bad.ndjson"),
                 "--out", str(tmp_path / "out2"), "--quiet"]) == 2
    assert read_results(tmp_path / "out").calibration is not None
    assert evaluate(gt, aio).calibration is None  # no confidences, no table
