"""ANLS* (issue 13): the engine's ``documents.anls`` and ``mean_anls`` equal the published
package ``anls-star`` (Peer et al.) on generated documents within 1e-9, and hand-computed
values on cases that pin down each rule."""

from __future__ import annotations

import copy
import json
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import datasets

from jsoneval_polars import evaluate
from jsoneval_polars.anls import anls_score

anls_star = pytest.importorskip("anls_star")
ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-9


def published(gt, aio) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return anls_star.anls_score(copy.deepcopy(gt), copy.deepcopy(aio))


# Hand-computed: sum of leaf scores over the pairwise length.
HAND = [
    # "acme" vs "acme inc": 1 - 4/8 = 0.5 (kept: the cut is below 0.5); "10" vs 10: 1
    ({"name": "Acme", "total": 10}, {"name": "acme inc", "total": "10"}, 1.5 / 2),
    # text after strip, lower case and collapsed whitespace; 1 - 1/3 below 0.5 is kept
    ({"a": "  Foo   Bar "}, {"a": "foo bar"}, 1.0),
    ({"a": "abc"}, {"a": "abd"}, 2 / 3),
    ({"a": "abcd"}, {"a": "wxyz"}, 0.0),
    # Python's str: 100.0 is "100.0", True is "true"
    ({"a": 100.0}, {"a": 100}, 1 - 2 / 5),
    ({"a": True}, {"a": "TRUE"}, 1.0),
    # a GT null (or absent key) against null, absent, "", [] or {} scores 1
    ({"a": None, "b": None, "c": None}, {"b": "", "c": []}, 1.0),
    ({"a": None}, {"a": "x"}, 0.0),
    # a GT "" is a leaf: against an absent key it scores 0
    ({"a": ""}, {}, 0.0),
    # an invented key: 0 over one more slot, whether its value is none-like or not
    ({"a": "x"}, {"a": "x", "b": None}, 1 / 2),
    ({"a": "x"}, {"a": "x", "b": "y"}, 1 / 2),
    # lists: optimal matching; unmatched items add their length
    ({"l": ["a", "b"]}, {"l": ["b"]}, 1 / 2),
    ({"l": ["apple", "kiwi"]}, {"l": ["kiwi", "apple", "plum"]}, 2 / 3),
    ({"l": [{"x": "1", "y": "2"}]}, {"l": [{"x": "1"}, {"y": "2"}]}, 1 / 3),
    # kinds that differ score 0 over the longer side; an empty GT list against an absent key
    ({"o": {"x": 1, "y": 2}}, {"o": "x"}, 0.0),
    ({"l": []}, {}, 0.0),
    ({"l": []}, {"l": []}, 1.0),
    ({}, {}, 1.0),
]


@pytest.mark.parametrize("gt,aio,want", HAND)
def test_hand_computed(gt, aio, want):
    assert anls_score(gt, aio) == pytest.approx(want, abs=TOL)
    assert published(gt, aio) == pytest.approx(want, abs=TOL)  # the rule is the package's


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(datasets(with_list=True, with_safety=False))
def test_equals_the_package_on_generated_documents(docs):
    """Nested objects, lists of records and of scalars, nulls, blanks, numbers as text, typos,
    shuffled / dropped / invented items: the tied matchings among them only agree because the
    lists are matched by the package's own solver."""
    for d in docs:
        assert anls_score(d["gt"], d["aio"]) == pytest.approx(published(d["gt"], d["aio"]),
                                                             abs=TOL), json.dumps(d, default=str)


def _invoices(n: int, seed: int) -> list[tuple[dict, dict]]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from generate import generate_pairs
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return list(generate_pairs(n, seed))


def test_documents_column_and_mean_equal_the_package():
    """Generated invoices (benchmarks/generate.py) through evaluate: the ``anls`` column per
    document and ``mean_anls`` against anls_score of the same documents (without the id)."""
    pairs = _invoices(300, seed=11)
    result = evaluate([g for g, _ in pairs], [a for _, a in pairs], config={"anls": True})
    want = {g["doc_id"]: published({k: v for k, v in g.items() if k != "doc_id"},
                                   {k: v for k, v in a.items() if k != "doc_id"})
            for g, a in pairs}
    got = dict(result.documents.select("doc_id", "anls").iter_rows())
    assert got.keys() == want.keys()
    for doc_id, value in want.items():
        assert got[doc_id] == pytest.approx(value, abs=TOL), doc_id
    assert result.summary["mean_anls"] == pytest.approx(sum(want.values()) / len(want), abs=TOL)


def test_missing_documents_and_array_roots():
    """An absent AIO document counts as {} (as the engine scores it); an AIO-only document
    against the GT {}; array roots as the engine wraps them ({"$": [...]})."""
    gt = [{"doc_id": "a", "x": None, "y": "q"}, {"doc_id": "b", "x": "1"}]
    aio = [{"doc_id": "b", "x": "1"}, {"doc_id": "c", "x": "2"}]
    r = evaluate(gt, aio, config={"anls": True})
    got = dict(r.documents.select("doc_id", "anls").iter_rows())
    assert got == {"a": pytest.approx(published({"x": None, "y": "q"}, {})),
                   "b": 1.0, "c": pytest.approx(published({}, {"x": "2"}))}
    assert got["a"] == pytest.approx(0.5) and got["c"] == 0.0
    r = evaluate([["ab", "cd"]], [["cd", "xy"]], config={"anls": True})
    assert r.documents["anls"][0] == pytest.approx(published({"$": ["ab", "cd"]},
                                                             {"$": ["cd", "xy"]}))


def test_off_by_default_and_the_cli_flag(tmp_path):
    r = evaluate([{"doc_id": "a", "x": "1"}], [{"doc_id": "a", "x": "1"}])
    assert r.documents["anls"].to_list() == [None] and r.summary["mean_anls"] is None
    import subprocess
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text('{"doc_id": "a", "x": "abc"}\n{"doc_id": "b", "x": "q"}\n')
    aio.write_text('{"doc_id": "a", "x": "abd"}\n{"doc_id": "b", "x": "q"}\n')
    proc = subprocess.run([sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt),
                           "--aio", str(aio), "--out", str(tmp_path / "out"), "--anls"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    assert "ANLS* 0.833" in proc.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["mean_anls"] == pytest.approx((2 / 3 + 1) / 2)
    from jsoneval_polars.results import read_results
    back = read_results(tmp_path / "out")
    assert back.summary["mean_anls"] == summary["mean_anls"]
    assert sorted(back.documents["anls"].to_list()) == pytest.approx([2 / 3, 1.0])


def test_config_key_is_a_flag(monkeypatch):
    from jsoneval_polars.config import ConfigError, parse_config
    assert parse_config({"anls": True}).anls is True
    with pytest.raises(ConfigError, match="anls"):
        parse_config({"anls": "yes"})
    monkeypatch.setitem(sys.modules, "munkres", None)  # as if the anls extra were missing
    with pytest.raises(ConfigError, match=r"needs the munkres package.*\[anls\]"):
        parse_config({"anls": True})
    assert parse_config({"anls": False}).anls is False
