"""One test body, every driver: the shared conformance cases and generated data through the
Python API, the command line, the files driver, DuckDB and Spark (marked ``spark``; skipped
without pyspark).

The ``score`` fixture is parametrized by driver (narwhals' ``constructor`` fixture is the
model): a test asks it to score documents and gets the same tables back whatever ran them.
Conformance cases are compared with their expected values; generated data with the API's
tables, by the one helper ``driver_runs.assert_same_run``. Counts and strings must be equal,
floats within 1e-9 (SPEC §12).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from conformance import CASE_FILES, assert_matches_case, load_case, tables_as_dict
from driver_runs import DRIVERS, Documents, Run, assert_same_run, score_api

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=[
    *[d for d in DRIVERS if d != "spark"], pytest.param("spark", marks=pytest.mark.spark),
])
def score(request, tmp_path) -> Callable[[Documents, dict], Run]:
    """``score(documents, config) -> Run`` by one driver."""
    driver = DRIVERS[request.param]
    if request.param == "spark":
        spark = request.getfixturevalue("spark")
        return lambda docs, config: driver(docs, config, tmp_path, spark=spark)
    return lambda docs, config: driver(docs, config, tmp_path)


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_conformance_case(score, path):
    case = load_case(path)
    run = score(case["documents"], case["config"])
    assert_matches_case(
        tables_as_dict(run.documents, run.attributes, run.summary, run.alignments, run.fields),
        case["expected"],
    )


def _generated(n: int, seed: int) -> Documents:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from generate import generate_pairs
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    docs = []
    for i, (g, a) in enumerate(generate_pairs(n, seed)):
        doc = {"doc_id": g["doc_id"], "gt": {k: v for k, v in g.items() if k != "doc_id"},
               "aio": {k: v for k, v in a.items() if k != "doc_id"}}
        if i % 5 == 0:
            doc["safety"] = (i % 7) / 7
        docs.append(doc)
    return docs


GENERATED_CONFIG = {
    "default_text_strategy": "FUZZY",
    "field_strategies": {
        "subtotal": "NUMERIC", "tax": "NUMERIC", "total": "NUMERIC", "amount": "NUMERIC",
        "unit_price": "NUMERIC", "notes": "SEMANTIC",
    },
    "lists": {"line_items": {"match_fields": ["description"], "threshold": 0.7}},
}


@pytest.fixture(scope="module")
def generated() -> tuple[Documents, Run]:
    docs = _generated(120, seed=5)
    return docs, score_api(docs, GENERATED_CONFIG, Path("."))


def test_generated_data_equals_the_api(score, generated):
    docs, want = generated
    assert_same_run(score(docs, GENERATED_CONFIG), want)


@pytest.fixture(scope="module")
def generated_anls(generated) -> dict[str, float]:
    """ANLS* of each generated pair by the published package (anls-star)."""
    anls_star = pytest.importorskip("anls_star")
    docs, _ = generated
    return {d["doc_id"]: anls_star.anls_score(d["gt"], d["aio"]) for d in docs}


def test_anls_in_every_driver(score, generated, generated_anls):
    """``anls: true``: ANLS* per document and mean_anls in every driver (the batch core
    computes it), equal to the published package."""
    docs, _ = generated
    run = score(docs, {**GENERATED_CONFIG, "anls": True})
    got = dict(run.documents.select("doc_id", "anls").iter_rows())
    assert got.keys() == generated_anls.keys()
    for doc_id, want in generated_anls.items():
        assert got[doc_id] == pytest.approx(want, abs=1e-9), doc_id
    mean = sum(generated_anls.values()) / len(generated_anls)
    assert run.summary["mean_anls"] == pytest.approx(mean, abs=1e-9)


def test_sibling_confidences_in_every_driver(score, generated):
    """``confidence: "_confidence"``: every driver strips the sibling keys in the batch core
    and carries each value's confidence in ``fields.confidence``; the other tables equal the
    run without the keys."""
    docs, want = generated
    with_keys = []
    for i, d in enumerate(docs):
        aio = dict(d["aio"])
        for j, key in enumerate(sorted(k for k, v in d["aio"].items()
                                       if not isinstance(v, dict | list))):
            aio[f"{key}_confidence"] = ((i + j) % 10) / 10
        with_keys.append({**d, "aio": aio})
    config = {**GENERATED_CONFIG, "confidence": "_confidence"}
    run = score(with_keys, config)
    assert_same_run(replace(run, fields=run.fields.drop("confidence")),
                    replace(want, fields=want.fields.drop("confidence")))
    got = {(r["doc_id"], r["path"]): r["confidence"]
           for r in run.fields.filter(pl.col("confidence").is_not_null()).iter_rows(named=True)}
    expected = {}
    for i, d in enumerate(docs):
        for j, key in enumerate(sorted(k for k, v in d["aio"].items()
                                       if not isinstance(v, dict | list))):
            expected[(d["doc_id"], key)] = ((i + j) % 10) / 10
    # every confidence lands on its field's row (a field both sides lack has no row)
    fields = {(r["doc_id"], r["path"]) for r in run.fields.iter_rows(named=True)}
    assert got == {k: v for k, v in expected.items() if k in fields}
