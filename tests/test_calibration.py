"""Calibration (calibration.py) against scikit-learn's roc_auc_score and brier_score_loss, a
hand-written ECE and accuracy at coverage, on generated documents with confidences."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import polars as pl
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


def _bins(c: np.ndarray, y: np.ndarray, bins: int = 10) -> list[tuple[int, int, float, float]]:
    """The non-empty equal-width bins: (index, count, mean confidence, accuracy)."""
    out = []
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        inside = (c >= lo) & ((c < hi) if k < bins - 1 else (c <= hi))
        if inside.any():
            out.append((k, int(inside.sum()), c[inside].mean(), y[inside].mean()))
    return out


def _ece(c: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    return sum(n / len(c) * abs(mc - my) for _, n, mc, my in _bins(c, y, bins))


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
        # the reliability diagram's points (the report draws the overall row's)
        index, n, mean_c, acc = zip(*_bins(c, y), strict=True)
        assert (row["bin_index"], row["bin_n"]) == (list(index), list(n))
        assert row["bin_confidence"] == pytest.approx(list(mean_c), abs=1e-12)
        assert row["bin_accuracy"] == pytest.approx(list(acc), abs=1e-12)
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
    # the same confidences pretty-printed, as `jq .` writes them
    (tmp_path / "conf.json").write_text("".join(json.dumps(r, indent=2) + "\n" for r in conf))
    assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                 str(tmp_path / "aio.ndjson"), "--confidence", str(tmp_path / "conf.json"),
                 "--out", str(tmp_path / "pretty"), "--quiet"]) == 0
    assert_frame_equal(read_results(tmp_path / "pretty").calibration, stored)
    (tmp_path / "bad.ndjson").write_text('{"doc_id": "d000", "total": 0.5}\n{oops\n')
    (tmp_path / "bad.json").write_text('[{"doc_id": "d000", "total": 0.5},\n {"doc_id": }]')
    for bad, message in (
        ("bad.ndjson", "line 2: not valid JSON (Expecting property name enclosed in double "
                       "quotes at column 2): '{oops'"),
        ("bad.json", "line 2: not valid JSON (Expecting value at column 13): "
                     "' {\"doc_id\": }]'"),
    ):  # the line, the column and the text, as an error row of a bad record shows them
        code = subprocess.run(
            [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(tmp_path / "gt.ndjson"),
             "--aio", str(tmp_path / "aio.ndjson"), "--confidence", str(tmp_path / bad),
             "--out", str(tmp_path / "out2"), "--quiet"], capture_output=True, text=True)
        assert code.returncode == 2
        assert code.stderr == f"jsoneval: error: --confidence {tmp_path / bad}: {message}\n"
    assert read_results(tmp_path / "out").calibration is not None
    assert evaluate(gt, aio).calibration is None  # no confidences, no table


# --- confidences as sibling keys (config confidence: "_confidence") ------------------------

SUFFIX = {"confidence": "_confidence"}


def _with_siblings(aio: list[dict], conf: list[dict]) -> list[dict]:
    """The AIO documents carrying each confidence as a sibling key ``<field>_confidence``
    (top level; nested objects and list items in the tests below)."""
    out = []
    for a, c in zip(aio, conf, strict=True):
        doc = dict(a)
        for key, value in c.items():
            if key != "doc_id":
                doc[f"{key}_confidence"] = value
        out.append(doc)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_sibling_keys_equal_the_confidence_document(seed):
    """The two ways give the same calibration table, and the sibling keys are not fields:
    every other table equals the run without them."""
    gt, aio, conf = _generated(seed)
    by_document = evaluate(gt, aio, confidence=conf)
    by_siblings = evaluate(gt, _with_siblings(aio, conf), config=SUFFIX)
    from polars.testing import assert_frame_equal

    assert_frame_equal(by_siblings.calibration, by_document.calibration)
    for name in ("documents", "attributes", "counts"):
        assert_frame_equal(getattr(by_siblings, name), getattr(by_document, name))
    assert_frame_equal(by_siblings.fields.drop("confidence"),
                       by_document.fields.drop("confidence"))
    assert by_siblings.summary == by_document.summary
    assert by_siblings.errors.height == 0
    # ANLS* does not see them either
    anls = [evaluate(gt, a, config={**c, "anls": True}).documents["anls"].to_list()
            for a, c in ((aio, {}), (_with_siblings(aio, conf), SUFFIX))]
    assert anls[0] == anls[1]


def test_sibling_keys_hand_case_against_scikit_learn():
    """Nested objects and list items carry their confidences in the same object; a
    confidence for a field the AIO left out, a null and a bad one are no predictions."""
    gt = [{"doc_id": "a", "total": 10, "vendor": {"name": "Acme", "city": "Bern"},
           "items": [{"sku": "A1"}, {"sku": "B2"}]},
          {"doc_id": "b", "total": 7, "vendor": {"name": "Beta", "city": "Genf"}}]
    aio = [{"doc_id": "a", "total": 10, "total_confidence": 0.9,
            "vendor": {"name": "Acme", "name_confidence": 0.6, "city": "Zug",
                       "city_confidence": 0.7},
            "items": [{"sku": "A1", "sku_confidence": 0.8}, {"sku": "B2", "sku_confidence": 0.3}]},
           {"doc_id": "b", "total": 9, "total_confidence": 0.4, "vendor_confidence": None,
            "vendor": {"name": "Beta", "name_confidence": "sure", "city_confidence": 0.95}}]
    original = json.loads(json.dumps(aio))
    r = evaluate(gt, aio, config=SUFFIX)
    assert aio == original  # the input documents are not changed
    # predictions by hand: (confidence, right) of each emitted value with a confidence
    preds = {"total": [(0.9, 1), (0.4, 0)], "vendor.name": [(0.6, 1)],
             "vendor.city": [(0.7, 0)], "items[].sku": [(0.8, 1), (0.3, 1)]}
    preds["*"] = [p for v in preds.values() for p in v]
    table = {row["attribute"]: row for row in r.calibration.iter_rows(named=True)}
    assert set(table) == set(preds)
    for attr, rows in preds.items():
        c = np.array([p[0] for p in rows])
        y = np.array([p[1] for p in rows])
        assert table[attr]["n"] == len(rows)
        assert table[attr]["brier"] == pytest.approx(sklearn_metrics.brier_score_loss(y, c))
        if 0 < y.sum() < len(y):
            assert table[attr]["auroc"] == pytest.approx(sklearn_metrics.roc_auc_score(y, c))
        else:
            assert table[attr]["auroc"] is None
    # not fields: no *_confidence attribute, no hallucination from them
    assert not any(a.endswith("_confidence") for a in r.attributes["attribute"].to_list())
    assert r.documents.filter(pl.col("doc_id") == "a")["n_extra_keys"].item() == 0
    # the bad value is one warning row naming the document, the key and the value
    (row,) = r.errors.rows(named=True)
    assert row["severity"] == "warning" and row["doc_id"] == "b"
    assert "'name_confidence' of 'vendor.name'" in row["error"] and "'sure'" in row["error"]
    # the fields table shows each value's confidence
    conf = dict(r.fields.filter(pl.col("doc_id") == "a").select("path", "confidence").iter_rows())
    assert conf == {"total": 0.9, "vendor.name": 0.6, "vendor.city": 0.7,
                    "items[0].sku": 0.8, "items[1].sku": 0.3}


def test_sibling_keys_in_the_files_driver_and_the_cli(tmp_path):
    gt, aio, conf = _generated(5, 40)
    aio = _with_siblings(aio, conf)
    for name, rows in (("gt", gt), ("aio", aio)):
        (tmp_path / f"{name}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "config.json").write_text(json.dumps(SUFFIX))
    assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                 str(tmp_path / "aio.ndjson"), "--config", str(tmp_path / "config.json"),
                 "--out", str(tmp_path / "out"), "--quiet"]) == 0
    from polars.testing import assert_frame_equal

    assert_frame_equal(read_results(tmp_path / "out").calibration,
                       evaluate(gt, aio, confidence=None, config=SUFFIX).calibration,
                       check_exact=False, rel_tol=1e-12)
    (tmp_path / "conf.ndjson").write_text(json.dumps({"doc_id": "d000", "total": 0.5}) + "\n")
    assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                 str(tmp_path / "aio.ndjson"), "--config", str(tmp_path / "config.json"),
                 "--confidence", str(tmp_path / "conf.ndjson"), "--out", str(tmp_path / "o2"),
                 "--quiet"]) == 2  # one way or the other


def test_sibling_key_config_is_checked():
    from jsoneval_polars.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match="confidence must be a sibling-key suffix"):
        parse_config({"confidence": ""})
    with pytest.raises(ValueError, match="not both"):
        evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}], config=SUFFIX,
                 confidence=[{"doc_id": "a", "x": 0.5}])


# --- list items: a confidence stays with the value it was emitted for -----------------------


#: items align on their description, parts on their sku, whatever else is wrong in them
LISTS = {"lists": {"items": {"match_fields": ["desc"]},
                   "items[].parts": {"match_fields": ["sku"]}}}


def _shuffled_lists(seed: int, n: int = 30):
    """AIO line items in another order than the GT's (with nested parts, also shuffled), some
    quantities wrong and some items invented; the confidence of each AIO value is 1.0 when it
    is right and 0.0 when it is wrong, so a confidence joined to another value shows up as a
    Brier score above 0. Returns gt, aio, the confidence documents and the expected (number
    of predictions, number right)."""
    rng = np.random.default_rng(seed)
    gt, aio, conf = [], [], []
    n_pred = n_right = 0
    for d in range(n):
        items = [{"desc": f"item {d}-{k} " + "xyz"[k % 3] * (k + 3), "qty": k + 1,
                  "parts": [{"sku": f"sku-{d}-{k}-{t}" + "ab"[t % 2] * 6, "n": t}
                            for t in range(k % 3 + 1)]} for k in range(4)]
        a_items, c_items = [], []
        for k in rng.permutation(len(items)):
            item = items[k]
            wrong = bool(rng.uniform() < 0.4)
            a_parts, c_parts = [], []
            for t in rng.permutation(len(item["parts"])):
                part = item["parts"][t]
                bad = bool(rng.uniform() < 0.3)
                a_parts.append({"sku": part["sku"], "n": part["n"] + 50 if bad else part["n"]})
                c_parts.append({"sku": 1.0, "n": 0.0 if bad else 1.0})
                n_pred += 2
                n_right += 2 - bad
            a_items.append({"desc": item["desc"], "qty": item["qty"] + 100 if wrong
                            else item["qty"], "parts": a_parts})
            c_items.append({"desc": 1.0, "qty": 0.0 if wrong else 1.0, "parts": c_parts})
            n_pred += 2
            n_right += 2 - wrong
        for k in range(int(rng.integers(0, 3))):  # invented: every value wrong
            at = int(rng.integers(0, len(a_items) + 1))
            a_items.insert(at, {"desc": f"invented {d}-{k} qqqqqqqqqqqq", "qty": 7,
                                "parts": [{"sku": "nothing like it", "n": 1}]})
            c_items.insert(at, {"desc": 0.0, "qty": 0.0, "parts": [{"sku": 0.0, "n": 0.0}]})
            n_pred += 4
        gt.append({"doc_id": f"d{d:02d}", "items": items})
        aio.append({"doc_id": f"d{d:02d}", "items": a_items})
        conf.append({"doc_id": f"d{d:02d}", "items": c_items})
    return gt, aio, conf, n_pred, n_right


def _nested_siblings(value, conf):
    """``value`` with each leaf's confidence from ``conf`` (same shape) as a sibling key, in
    nested objects and list items too."""
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            c = conf.get(key)
            out[key] = _nested_siblings(v, c) if isinstance(v, dict | list) else v
            if isinstance(c, float):
                out[f"{key}_confidence"] = c
        return out
    if isinstance(value, list):
        return [_nested_siblings(v, c) for v, c in zip(value, conf, strict=True)]
    return value


def _check_perfectly_attributed(table: pl.DataFrame, n_pred: int, n_right: int) -> None:
    overall = table.filter(pl.col("attribute") == "*").row(0, named=True)
    assert (overall["n"], overall["accuracy"]) == (n_pred, pytest.approx(n_right / n_pred))
    assert overall["brier"] == pytest.approx(0.0, abs=1e-12)
    assert overall["auroc"] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [1, 2])
def test_list_item_confidences_follow_the_alignment(seed, tmp_path):
    gt, aio, conf, n_pred, n_right = _shuffled_lists(seed)
    # the items really moved and some were invented: otherwise this test proves nothing
    r = evaluate(gt, aio, confidence=conf, config=LISTS)
    moved = r.alignments.filter(pl.col("gt_index") != pl.col("aio_index")).height
    invented = r.alignments.filter(pl.col("gt_index").is_null()).height
    assert moved > 10 and invented > 3
    _check_perfectly_attributed(r.calibration, n_pred, n_right)
    siblings = [_nested_siblings(a, c) for a, c in zip(aio, conf, strict=True)]
    assert siblings[0]["items"][0]["parts"][0]["sku_confidence"] == 1.0
    _check_perfectly_attributed(evaluate(gt, siblings, config={**SUFFIX, **LISTS}).calibration,
                                n_pred, n_right)
    # the files driver and the command line, both ways
    for name, rows in (("gt", gt), ("aio", aio), ("conf", conf), ("sib", siblings)):
        (tmp_path / f"{name}.ndjson").write_text("".join(json.dumps(x) + "\n" for x in rows))
    (tmp_path / "lists.json").write_text(json.dumps(LISTS))
    (tmp_path / "sib.json").write_text(json.dumps({**SUFFIX, **LISTS}))
    for extra, aio_file, out in ((["--confidence", str(tmp_path / "conf.ndjson"), "--config",
                                   str(tmp_path / "lists.json")], "aio", "o1"),
                                 (["--config", str(tmp_path / "sib.json")], "sib", "o2")):
        assert main(["score", "--gt", str(tmp_path / "gt.ndjson"), "--aio",
                     str(tmp_path / f"{aio_file}.ndjson"), *extra, "--out",
                     str(tmp_path / out), "--quiet"]) == 0
        _check_perfectly_attributed(read_results(tmp_path / out).calibration, n_pred, n_right)


def test_aligned_paths_hand_case_with_quoted_keys():
    """List indices are rewritten outer list first, through quoted keys that hold brackets or
    escaped quotes; other documents and paths without a moved item are kept."""
    from jsoneval_polars.calibration import aligned_paths

    # items: AIO 2 -> GT 0, AIO 0 -> GT 1, AIO 1 unmatched -> 2 (after the 2 GT items);
    # the nested list of GT item 0 swaps its two items; x["q\"[2]"]: AIO 1 -> GT 0
    alignments = pl.DataFrame(
        {"doc_id": ["a"] * 6,
         "list_path": ["items", "items", "items", 'items[0]["p[1]"]', 'items[0]["p[1]"]',
                       'x["q\\"[2]"]'],
         "gt_index": [0, 1, None, 0, 1, 0], "aio_index": [2, 0, 1, 1, 0, 1]},
        schema_overrides={"gt_index": pl.Int32, "aio_index": pl.Int32})
    given = {("a", "items[2].q"): "items[0].q",
             ("a", 'items[2]["p[1]"][0].k'): 'items[0]["p[1]"][1].k',
             ("a", "items[1].z"): "items[2].z",
             ("a", "items[0]"): "items[1]",
             ("a", 'x["q\\"[2]"][1]'): 'x["q\\"[2]"][0]',
             ("a", "top"): "top",
             ("b", "items[2].q"): "items[2].q"}
    confidences = pl.DataFrame({"doc_id": [d for d, _ in given], "path": [p for _, p in given],
                                "confidence": [0.1 * k for k in range(len(given))]})
    out = aligned_paths(confidences, alignments)
    expected = {(d, want): 0.1 * k for k, ((d, _), want) in enumerate(given.items())}
    assert {(d, p): c for d, p, c in out.iter_rows()} == pytest.approx(expected)
