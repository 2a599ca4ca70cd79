"""Agent, rubric, consistency and monitoring metrics (SPEC §10, seeds 002 and 004).

Every expected value is computed by hand from the seeds' own formulas and examples; the list
metrics are also checked against plain-Python oracles on random runs.
"""

from __future__ import annotations

import doctest
import math
import random
import statistics
from datetime import datetime, timedelta

import polars as pl
import pytest

import jsoneval_polars.runs as runs_module
from jsoneval_polars.runs import (
    BANDS,
    SEED_ANSWER_CHECKS,
    SEED_EXPECTED_TOOLS,
    SEED_RUBRIC_WEIGHTS,
    SEED_TRAJECTORY,
    InRange,
    MinLength,
    OneOf,
    agreement_across_models,
    consistency_within_model,
    filter_runs,
    health_status,
    monitor,
    required_fields_quality,
    rubric_score,
    rubric_summary,
    score_band,
    tool_choice,
    trajectory_match,
)

APPROX = pytest.approx


# --- weighted rubric (seed 002) -------------------------------------------------------------


def _rubric_runs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r3", "r4"],
            "tags": [["finance", "smoke"], ["finance"], ["smoke"], None],
            "complexity": ["high", "medium", "high", "high"],
            # r1: good/excellent/acceptable/poor/good; r2: citation missing; r3: all failed;
            # r4: nothing scored.
            "factual_accuracy": [0.8, 0.8, 0.0, None],
            "completeness": [1.0, 1.0, 0.3, None],
            "citation_accuracy": [0.6, None, 0.0, None],
            "source_quality": [0.3, 0.3, 0.0, None],
            "tool_efficiency": [0.8, 0.8, 0.6, float("nan")],
        }
    )


def test_seed_002_weighted_overall():
    out = rubric_score(_rubric_runs(), SEED_RUBRIC_WEIGHTS)
    # r1: .30*.8 + .25*1 + .15*.6 + .10*.3 + .20*.8 = .24 + .25 + .09 + .03 + .16 = .77 (Σw = 1)
    # r2: citation absent: (.77 - .09) / (1 - .15) = .68 / .85 = .8
    # r3: .25*.3 + .20*.6 = .075 + .12 = .195
    # r4: no dimension present (NaN is null) -> null, not seed 002's 0
    assert out["overall"].to_list() == [APPROX(0.77), APPROX(0.8), APPROX(0.195), None]
    assert out["passed"].to_list() == [True, True, False, None]


def test_rubric_threshold_is_inclusive_and_configurable():
    df = pl.DataFrame({"a": [0.7, 0.69999]})
    assert rubric_score(df, {"a": 1.0})["passed"].to_list() == [True, False]
    assert rubric_score(df, {"a": 1.0}, threshold=0.5)["passed"].to_list() == [True, True]


def test_seed_004_deepeval_overall_example_through_rubric():
    # overall = .25*relevancy + .30*faithfulness + .25*(1-hallucination) + .10*ctx + .10*(1-bias)
    df = pl.DataFrame(
        {
            "answer_relevancy": [0.95],
            "faithfulness": [0.90],
            "hallucination": [0.05],
            "contextual_relevancy": [0.85],
            "bias": [0.10],
        }
    ).with_columns(
        no_hallucination=1 - pl.col("hallucination"), no_bias=1 - pl.col("bias")
    )
    weights = {
        "answer_relevancy": 0.25,
        "faithfulness": 0.30,
        "no_hallucination": 0.25,
        "contextual_relevancy": 0.10,
        "no_bias": 0.10,
    }
    # 0.2375 + 0.27 + 0.2375 + 0.085 + 0.09 = 0.92
    assert rubric_score(df, weights)["overall"].item() == APPROX(0.92)


def test_rubric_summary():
    summary = rubric_summary(_rubric_runs().lazy(), SEED_RUBRIC_WEIGHTS)
    assert (summary.total, summary.passed, summary.failed, summary.unscored) == (4, 2, 1, 1)
    assert summary.pass_rate == APPROX(2 / 3)
    assert summary.dimension_means == {
        "factual_accuracy": APPROX(1.6 / 3),
        "completeness": APPROX(2.3 / 3),
        "citation_accuracy": APPROX(0.3),
        "source_quality": APPROX(0.2),
        "tool_efficiency": APPROX(2.2 / 3),
    }
    assert summary.failures["run_id"].to_list() == ["r3"]
    assert summary.failures["overall"].to_list() == [APPROX(0.195)]


def test_rubric_summary_with_nothing_scored():
    df = pl.DataFrame({"a": [None, None]}, schema={"a": pl.Float64})
    summary = rubric_summary(df, {"a": 1.0})
    assert (summary.total, summary.passed, summary.failed, summary.unscored) == (2, 0, 0, 2)
    assert summary.pass_rate is None
    assert summary.dimension_means == {"a": None}


def test_rubric_errors_name_the_problem():
    df = _rubric_runs()
    with pytest.raises(ValueError, match="did you mean 'factual_accuracy'"):
        rubric_score(df, {"factual_acuracy": 1.0})
    with pytest.raises(ValueError, match=r"weights\['completeness'\] must be >= 0"):
        rubric_score(df, {"completeness": -1})
    with pytest.raises(ValueError, match="at least one weight must be > 0"):
        rubric_score(df, {"completeness": 0})


def test_rubric_lazy_in_lazy_out():
    out = rubric_score(_rubric_runs().lazy(), SEED_RUBRIC_WEIGHTS)
    assert isinstance(out, pl.LazyFrame)
    assert out.collect()["overall"][0] == APPROX(0.77)


def test_filter_runs_by_tags_and_equality():
    df = _rubric_runs()
    assert filter_runs(df, tags=["smoke"])["run_id"].to_list() == ["r1", "r3"]
    assert filter_runs(df, tags=["smoke", "finance"])["run_id"].to_list() == ["r1"]
    assert filter_runs(df, tags=["finance"], complexity="medium")["run_id"].to_list() == ["r2"]
    assert filter_runs(df, complexity="high")["run_id"].to_list() == ["r1", "r3", "r4"]
    assert filter_runs(df, citation_accuracy=None)["run_id"].to_list() == ["r2", "r4"]
    assert filter_runs(df)["run_id"].to_list() == ["r1", "r2", "r3", "r4"]
    assert filter_runs(df.lazy(), tags=[]).collect().height == 4
    with pytest.raises(ValueError, match="did you mean 'complexity'"):
        filter_runs(df, complexty="high")


# --- bands and status -----------------------------------------------------------------------


def test_score_bands_seed_004():
    scores = [1.0, 0.9, 0.89, 0.7, 0.69, 0.5, 0.49, 0.3, 0.29, 0.0, None, float("nan")]
    out = pl.DataFrame({"s": scores}).select(score_band("s")).to_series()
    assert out.to_list() == [
        "Excellent", "Excellent", "Good", "Good", "Fair", "Fair",
        "Poor", "Poor", "Critical", "Critical", None, None,
    ]
    assert out.dtype == pl.Enum(BANDS)
    # Enum order is worst to best, so bands sort by quality.
    banded = pl.DataFrame({"s": [0.95, 0.1, 0.6]}).with_columns(b=score_band(pl.col("s")))
    assert banded.sort("b")["s"].to_list() == [0.1, 0.6, 0.95]


def test_health_status_seed_002():
    rates = [1.0, 0.85, 0.8499, 0.70, 0.6999, 0.0, None]
    out = pl.DataFrame({"r": rates}).select(health_status("r")).to_series().to_list()
    assert out == ["healthy", "healthy", "warning", "warning", "critical", "critical", None]


# --- tool choice (seed 004) -----------------------------------------------------------------

SEC, MARKET, WEB, LEGAL = "fetch_sec_data", "fetch_market_data", "web_search", "fetch_legal_data"


def test_tool_choice_seed_004_examples_by_category():
    df = pl.DataFrame(
        {
            "company_type": ["public_us", "private", "public_us", "public_us"],
            "tools_used": [
                [SEC, MARKET, WEB, LEGAL],  # Example 1 (Apple)
                [WEB, SEC],  # Example 2 (private company)
                [SEC, MARKET, LEGAL],  # precision section: 2/3
                [SEC, MARKET],  # recall section: 2/3
            ],
        }
    )
    out = tool_choice(df, expected_by_category=SEED_EXPECTED_TOOLS, category="company_type")
    assert out["tool_precision"].to_list() == [APPROX(0.75), APPROX(0.5), APPROX(2 / 3), 1.0]
    assert out["tool_recall"].to_list() == [1.0, APPROX(0.5), APPROX(2 / 3), APPROX(2 / 3)]
    assert out["tools_expected"][1].to_list() == [WEB, LEGAL]


def test_tool_choice_edges():
    df = pl.DataFrame(
        {
            "tools_used": [[], [WEB], [WEB, WEB, None], None, [WEB]],
            "tools_expected": [[WEB], [], [WEB], [WEB], None],
        }
    )
    out = tool_choice(df)
    # nothing used -> precision 0; nothing expected -> recall 0; duplicates and null elements
    # ignored; a null list is unknown.
    assert out["tool_precision"].to_list() == [0.0, 0.0, 1.0, None, None]
    assert out["tool_recall"].to_list() == [0.0, 0.0, 1.0, None, None]


def test_tool_choice_unknown_category_is_null_and_conflicts_are_errors():
    df = pl.DataFrame({"category": ["private", "unknown", None], "tools_used": [[WEB]] * 3})
    out = tool_choice(df, expected_by_category=SEED_EXPECTED_TOOLS)
    assert out["tool_precision"].to_list() == [1.0, None, None]
    assert out["tool_recall"].to_list() == [0.5, None, None]
    both = df.with_columns(tools_expected=pl.lit([WEB]))
    with pytest.raises(ValueError, match="pass one of them"):
        tool_choice(both, expected_by_category=SEED_EXPECTED_TOOLS)


def _tool_oracle(used, expected):
    if used is None or expected is None:
        return None, None
    u = {t for t in used if t is not None}
    e = {t for t in expected if t is not None}
    tp = len(u & e)
    return (tp / len(u) if u else 0.0), (tp / len(e) if e else 0.0)


def test_tool_choice_matches_python_oracle():
    rng = random.Random(7)
    tools = ["a", "b", "c", "d", "e"]
    used = [rng.choices(tools, k=rng.randint(0, 6)) for _ in range(300)]
    expected = [rng.sample(tools, rng.randint(0, 4)) for _ in range(300)]
    out = tool_choice(pl.DataFrame({"tools_used": used, "tools_expected": expected}))
    for row, u, e in zip(out.iter_rows(named=True), used, expected, strict=True):
        precision, recall = _tool_oracle(u, e)
        assert row["tool_precision"] == APPROX(precision)
        assert row["tool_recall"] == APPROX(recall)


# --- trajectory match (seed 004) ------------------------------------------------------------


def test_trajectory_seed_004_formula():
    perfect = list(SEED_TRAJECTORY)
    partial = [
        "parse_input", "create_plan", "validate_company", "fetch_api_data",
        "synthesize", "evaluate", "extra_step",
    ]
    df = pl.DataFrame({"steps": [perfect, partial]})
    out = trajectory_match(df, expected=SEED_TRAJECTORY)
    # perfect: jaccard 1, 7 pairs all in order -> 1.0
    # partial: E has 8 steps, A 7; E∩A = 6, E∪A = 9 -> jaccard 2/3.
    #   pairs with both present: (parse, validate) 0<2 ok, (validate, create) 2>1 wrong,
    #   (create, fetch_api) 1<3 ok -> order 2/3; match = .6*2/3 + .4*2/3 = 2/3
    assert out["trajectory_jaccard"].to_list() == [1.0, APPROX(2 / 3)]
    assert out["trajectory_order_pairs"].to_list() == [7, 3]
    assert out["trajectory_order_score"].to_list() == [1.0, APPROX(2 / 3)]
    assert out["trajectory_match"].to_list() == [APPROX(1.0), APPROX(2 / 3)]


def test_trajectory_edges():
    df = pl.DataFrame(
        {
            "expected_steps": [["a", "b", "c", "d"], ["a", "b"], ["a"], [], [], None, ["a", "a"]],
            "steps": [["a", "c", "b", "x"], ["b", "a", "b"], ["a"], ["x"], [], ["a"], ["a"]],
        }
    )
    out = trajectory_match(df)
    # row 0: jaccard 3/5; pairs (a,b) ok, (b,c) wrong, (c,d) d absent -> .5; .6*.6+.4*.5=.56
    # row 1: first occurrences b@0, a@1 -> (a,b) out of order: .6*1 + .4*0 = .6
    # row 2: one step, no pair -> order bonus 0 (seed 004's "bonus"): .6
    # row 3: expected empty, actual not: jaccard 0, match 0
    # row 4: both empty -> 0/0: null jaccard and match
    # row 5: null expected -> all null
    # row 6: repeated expected steps count once: like row 2
    assert out["trajectory_jaccard"].to_list() == [APPROX(0.6), 1.0, 1.0, 0.0, None, None, 1.0]
    assert out["trajectory_order_pairs"].to_list() == [2, 1, 0, 0, 0, None, 0]
    assert out["trajectory_order_score"].to_list() == [0.5, 0.0, 0.0, 0.0, 0.0, None, 0.0]
    assert out["trajectory_match"].to_list() == [
        APPROX(0.56), APPROX(0.6), APPROX(0.6), 0.0, None, None, APPROX(0.6)
    ]
    again = trajectory_match(df.lazy(), no_pairs_order_score=1.0).collect()
    assert again["trajectory_match"][2] == APPROX(1.0)
    assert again["trajectory_match"][1] == APPROX(0.6)  # a real out-of-order pair still 0


def _trajectory_oracle(expected, actual):
    e = list(dict.fromkeys(expected))
    first = {}
    for i, step in enumerate(actual):
        first.setdefault(step, i)
    union = set(e) | set(actual)
    jaccard = len(set(e) & set(actual)) / len(union) if union else None
    pairs = [(a, b) for a, b in zip(e, e[1:]) if a in first and b in first]
    order = sum(first[a] < first[b] for a, b in pairs) / len(pairs) if pairs else 0.0
    return None if jaccard is None else 0.6 * jaccard + 0.4 * order


def test_trajectory_matches_python_oracle_and_keeps_row_order():
    rng = random.Random(11)
    steps = list("abcdefg")
    expected = [rng.sample(steps, rng.randint(0, 6)) for _ in range(400)]
    actual = [rng.choices(steps, k=rng.randint(0, 8)) for _ in range(400)]
    df = pl.DataFrame({"id": range(400), "expected_steps": expected, "steps": actual})
    out = trajectory_match(df)
    assert out["id"].to_list() == list(range(400))
    for got, e, a in zip(out["trajectory_match"], expected, actual, strict=True):
        want = _trajectory_oracle(e, a)
        assert got == (None if want is None else APPROX(want))


# --- final answer quality (seed 004) --------------------------------------------------------

GOOD_ANSWER = {
    "risk_level": "moderate",
    "credit_score": 72,
    "confidence": 0.85,
    "reasoning": "Strong cash position and stable revenue offset moderate leverage ratios.",
    "recommendations": ["monitor leverage"],
}


def _answers() -> list[dict]:
    weak = {  # 3 of 5 present, only the credit score valid
        "risk_level": "High",  # not in the enum (case matters, as in the seed)
        "credit_score": 100,  # inclusive bound
        "confidence": 1.5,
        "reasoning": "",  # blank: absent
    }
    return [GOOD_ANSWER, weak, {}]


def test_final_answer_quality_seed_004_on_json_text():
    import json

    df = pl.DataFrame({"answer": [json.dumps(a) for a in _answers()] + ["not json", None]})
    out = required_fields_quality(df)
    # good: .5*1 + .15 + .15 + .10 + .10 = 1.0
    # weak: .5*(3/5) + .15 (credit score 100 in [0, 100]) = .45
    assert out["required_share"].to_list() == [1.0, APPROX(0.6), 0.0, 0.0, 0.0]
    assert out["answer_quality"].to_list() == [APPROX(1.0), APPROX(0.45), 0.0, 0.0, 0.0]


def test_final_answer_quality_struct_equals_json_text():
    import json

    texts = pl.DataFrame({"answer": [json.dumps(a) for a in _answers()]})
    structs = pl.DataFrame({"answer": _answers()})
    assert isinstance(structs.schema["answer"], pl.Struct)
    a = required_fields_quality(texts)["answer_quality"].to_list()
    b = required_fields_quality(structs.lazy()).collect()["answer_quality"].to_list()
    assert a == APPROX(b)


def test_final_answer_quality_typing_rules():
    import json

    df = pl.DataFrame(
        {
            "answer": [
                json.dumps({"score": "85", "flag": True, "level": 1}),
                json.dumps({"score": 85, "flag": 1, "level": True}),
                json.dumps({"score": None, "flag": False, "level": 1.0}),
            ]
        }
    )
    checks = [
        InRange("score", 0, 100, 0.25),  # a numeric string is not a number
        OneOf("flag", [True], 0.25),  # True is not 1
        OneOf("level", [1], 0.25),  # 1.0 == 1 as JSON numbers
        MinLength("missing", 1, 0.25),
    ]
    out = required_fields_quality(df, required=["score"], checks=checks)
    assert out["required_share"].to_list() == [1.0, 1.0, 0.0]
    assert out["answer_quality"].to_list() == [
        APPROX(0.5 + 0.25 + 0.25), APPROX(0.5 + 0.25), APPROX(0.25)
    ]


def test_final_answer_quality_errors():
    df = pl.DataFrame({"answer": [1]})
    with pytest.raises(ValueError, match="must be a struct or a string"):
        required_fields_quality(df)
    with pytest.raises(ValueError, match=r"checks\[0\]"):
        required_fields_quality(pl.DataFrame({"answer": ["{}"]}), checks=["risk_level"])
    assert SEED_ANSWER_CHECKS[3] == MinLength("reasoning", 51, 0.10)  # seed: len > 50


# --- consistency (seed 004) -----------------------------------------------------------------


def _consistency_runs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "item_id": ["apple"] * 6 + ["xyz"] * 3,
            "model": ["gpt"] * 3 + ["llama"] * 3 + ["gpt", "gpt", "llama"],
            "run_id": [f"r{i}" for i in range(9)],
            "risk_level": ["low", "low", "moderate", "high", "high", "high", "low", "low", None],
            "credit_score": [70, 80, 90, 60, 60, 60, 50, 50, None],
        }
    )


def test_consistency_within_model():
    out = consistency_within_model(
        _consistency_runs(), value=["risk_level", "credit_score"], scale={"credit_score": (0, 100)}
    )
    assert out.select("item_id", "model", "n_runs").rows() == [
        ("apple", "gpt", 3), ("apple", "llama", 3), ("xyz", "gpt", 2), ("xyz", "llama", 1)
    ]
    # apple/gpt: risk low,low,moderate -> mode low, 2/3; scores 70,80,90: population std
    # sqrt(200/3) = 8.1650, consistency 1 - 8.1650/100 = .91835
    std = math.sqrt(200 / 3)
    assert out["risk_level_mode"].to_list() == ["low", "high", "low", None]
    assert out["risk_level_agreement"].to_list() == [APPROX(2 / 3), 1.0, 1.0, None]
    assert out["credit_score_mean"].to_list() == [80.0, 60.0, 50.0, None]
    assert out["credit_score_std"].to_list() == [APPROX(std), 0.0, 0.0, None]
    assert out["credit_score_consistency"].to_list() == [APPROX(1 - std / 100), 1.0, 1.0, None]
    overall = (2 / 3 + 1 - std / 100) / 2
    assert out["consistency"].to_list() == [APPROX(overall), 1.0, 1.0, None]


def test_consistency_range_defaults_to_observed_range_and_ddof():
    df = _consistency_runs()
    out = consistency_within_model(df, value="credit_score", ddof=1)
    # observed range over the whole input: 90 - 50 = 40; sample std of 70, 80, 90 = 10
    assert out["credit_score_std"].to_list() == [APPROX(10.0), 0.0, 0.0, None]
    assert out["credit_score_consistency"].to_list() == [APPROX(0.75), 1.0, 1.0, None]
    assert out["consistency"].to_list() == [APPROX(0.75), 1.0, 1.0, None]
    # range 0: every value equal -> consistency 1.0
    flat = df.with_columns(credit_score=pl.lit(55))
    flat_out = consistency_within_model(flat, value="credit_score")
    assert flat_out["credit_score_consistency"].to_list() == [1.0] * 4
    assert statistics.stdev([70, 80, 90]) == 10.0


def test_consistency_mode_ties_are_deterministic():
    df = pl.DataFrame(
        {"item_id": ["i"] * 4, "model": ["m"] * 4, "risk_level": ["low", "high", "high", "low"]}
    )
    for frame in (df, df.reverse()):
        out = consistency_within_model(frame, value="risk_level")
        assert out.select("risk_level_mode", "risk_level_agreement").row(0) == ("high", 0.5)


def test_agreement_across_models():
    out = agreement_across_models(
        _consistency_runs().lazy(),
        value=["risk_level", "credit_score"],
        scale={"credit_score": (0, 100)},
    ).collect()
    # apple: modal risk gpt=low, llama=high -> tie, consensus "high" (smallest), agreement 1/2;
    #   mean scores 80 and 60 -> range 20 -> agreement 1 - 20/100 = .8; overall .65
    # xyz: llama has no value -> only gpt's "low" counts: 1/1; range over one mean: 0 -> 1.0
    assert out["item_id"].to_list() == ["apple", "xyz"]
    assert out["n_models"].to_list() == [2, 2]
    assert out["risk_level_consensus"].to_list() == ["high", "low"]
    assert out["risk_level_agreement"].to_list() == [0.5, 1.0]
    assert out["credit_score_range"].to_list() == [20.0, 0.0]
    assert out["credit_score_agreement"].to_list() == [APPROX(0.8), 1.0]
    assert out["agreement"].to_list() == [APPROX(0.65), 1.0]


def test_agreement_across_three_models():
    df = pl.DataFrame(
        {
            "item_id": ["i"] * 3,
            "model": ["a", "b", "c"],
            "risk_level": ["high", "high", "low"],
            "credit_score": [40.0, 50.0, 60.0],
        }
    )
    out = agreement_across_models(df, value=["risk_level", "credit_score"])
    # 2 of 3 models agree; score range 20 over an observed range of 20 -> 0.0
    assert out.select("risk_level_agreement", "credit_score_agreement", "agreement").row(0) == (
        APPROX(2 / 3), 0.0, APPROX(1 / 3)
    )


def test_consistency_errors():
    with pytest.raises(ValueError, match="did you mean 'risk_level'"):
        consistency_within_model(_consistency_runs(), value="risk_levl")
    with pytest.raises(ValueError, match=r"scale\['credit_score'\]"):
        agreement_across_models(
            _consistency_runs(), value="credit_score", scale={"credit_score": (100, 0)}
        )


# --- monitoring (seed 002) ------------------------------------------------------------------


def _stream() -> pl.DataFrame:
    t0 = datetime(2024, 5, 1, 9, 0)
    scores = [0.9, 0.8, 0.5, 0.9, 0.9, 0.9, 0.1, 0.8, 0.8, 0.8, 0.8, None, 0.2, 0.3]
    return pl.DataFrame(
        {
            "ts": [t0 + timedelta(minutes=10 * i) for i in range(14)],
            "overall": scores,
            "model": ["a", "b"] * 7,
        }
    ).reverse()  # unsorted input


def test_monitor_windows_and_status():
    out = monitor(_stream())
    # 09:00 window: .9 .8 .5 .9 .9 .9 -> 5/6 = .833 warning
    # 10:00 window: .1 .8 .8 .8 .8 None -> 4/5 = .8 warning, mean (.1+3.2)/5 = .66
    # 11:00 window: .2 .3 -> 0/2 critical
    assert out["ts"].dt.hour().to_list() == [9, 10, 11]
    assert out["n_runs"].to_list() == [6, 6, 2]
    assert out["n_scored"].to_list() == [6, 5, 2]
    assert out["n_passed"].to_list() == [5, 4, 0]
    assert out["pass_rate"].to_list() == [APPROX(5 / 6), APPROX(0.8), 0.0]
    assert out["mean_score"].to_list() == [APPROX(4.9 / 6), APPROX(0.66), APPROX(0.25)]
    assert out["status"].to_list() == ["warning", "warning", "critical"]
    wide = monitor(_stream().lazy(), every="3h").collect()
    assert wide["pass_rate"].to_list() == [APPROX(9 / 13)]
    assert wide["status"].to_list() == ["critical"]


def test_monitor_passed_column_group_by_and_no_scores():
    df = _stream().with_columns(ok=pl.col("overall") >= 0.5, overall=None)
    out = monitor(df, passed="ok", group_by="model", every="2h")
    # 2h windows start on even hours (08:00, 10:00). Model a at 09:00, 09:20, ..., 11:00 has
    # scores .9 .5 .9 | .1 .8 .8 .2; model b at 09:10, ..., 11:10 has .8 .9 .9 | .8 .8 None .3
    # (None -> pass flag unknown).
    assert out.select("model", pl.col("ts").dt.hour()).rows() == [
        ("a", 8), ("a", 10), ("b", 8), ("b", 10)
    ]
    assert out["n_runs"].to_list() == [3, 4, 3, 4]
    assert out["n_scored"].to_list() == [3, 4, 3, 3]
    assert out["n_passed"].to_list() == [3, 2, 3, 2]
    assert out["pass_rate"].to_list() == [1.0, 0.5, 1.0, APPROX(2 / 3)]
    assert out["status"].to_list() == ["healthy", "critical", "healthy", "critical"]
    assert out["mean_score"].to_list() == [None] * 4
    empty = _stream().with_columns(overall=pl.lit(None, dtype=pl.Float64))
    assert monitor(empty)["status"].to_list() == ["insufficient_data"] * 3


def test_monitor_sampling_is_seeded_and_sized():
    big = pl.DataFrame(
        {
            "ts": [datetime(2024, 1, 1) + timedelta(minutes=i) for i in range(1000)],
            "overall": [(i % 10) / 10 for i in range(1000)],
        }
    )
    first = monitor(big, sample_rate=0.1, seed=42, every="1d")
    again = monitor(big.lazy(), sample_rate=0.1, seed=42, every="1d").collect()
    assert first["n_runs"].to_list() == [100]
    assert first.equals(again)
    assert monitor(big, every="1d")["pass_rate"].to_list() == [APPROX(0.3)]
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="sample_rate"):
            monitor(big, sample_rate=bad)


def test_docstring_examples():
    assert doctest.testmod(runs_module).failed == 0
