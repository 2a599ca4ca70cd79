"""benchmarks/lean_loop.py, the issue's yardstick, computes the engine's metrics: on the bundled
sample (generated invoices plus awkward documents: an empty AIO, invented and null line items,
odd keys, one-sided documents) its per-attribute cells, micro-F1 and mean RQS equal the
engine's, so a speed ratio against it compares the same work."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import pytest

from jsoneval_polars import evaluate, load_config

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(str(resources.files("jsoneval_polars.sample")))


@pytest.fixture
def lean_loop():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import lean_loop

        yield lean_loop
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_lean_loop_equals_the_engine_on_the_sample(lean_loop):
    gt, aio, config = SAMPLE / "gt.ndjson", SAMPLE / "aio.ndjson", SAMPLE / "config.json"
    engine = evaluate(gt, aio, config=load_config(config))
    lean = lean_loop.run_lean(gt, aio, lean_loop.Config(config))
    assert lean["n_documents"] == engine.summary["n_documents"]
    assert lean["micro_f1"] == pytest.approx(engine.summary["micro_f1"], abs=1e-12)
    assert lean["mean_rqs"] == pytest.approx(engine.summary["mean_rqs"], abs=1e-12)
    want = {r["attribute"]: [r["tp"], r["tn"], r["fp"], r["fn"]]
            for r in engine.attributes.iter_rows(named=True)}
    assert lean["cells"] == want


def test_lean_loop_cutoff_keeps_a_similarity_at_the_threshold(lean_loop):
    """rapidfuzz drops 0.8 at score_cutoff 0.8 - 1e-9; the loop's slack keeps it."""
    cfg = lean_loop.Config({"field_strategies": {"d": "FUZZY"}, "fuzzy_threshold": 0.8})
    scorer = lean_loop.LeanScorer(cfg)
    scorer.score({"d": "work boots"}, {"d": "wokr boots"})
    assert scorer.cells == {"d": [1, 0, 0, 0]}


def test_lean_loop_equals_the_engine_without_a_config(lean_loop):
    """The no-config yardstick of benchmarks/run.py: SPEC §11's defaults (every text SEMANTIC
    by the lexical scorer, line items matched on every field) in both."""
    gt, aio = SAMPLE / "gt.ndjson", SAMPLE / "aio.ndjson"
    engine = evaluate(gt, aio)
    lean = lean_loop.run_lean(gt, aio, lean_loop.Config({}))
    assert lean["micro_f1"] == pytest.approx(engine.summary["micro_f1"], abs=1e-12)
    assert lean["mean_rqs"] == pytest.approx(engine.summary["mean_rqs"], abs=1e-12)
    want = {r["attribute"]: [r["tp"], r["tn"], r["fp"], r["fn"]]
            for r in engine.attributes.iter_rows(named=True)}
    assert lean["cells"] == want
