"""field_thresholds and field_weights (issue 13): hand-computed cases, engine and reference."""

from __future__ import annotations

import polars as pl
import pytest
import reference

from jsoneval_polars import evaluate
from jsoneval_polars.config import Config, ConfigError, parse_config


def _run(gt: dict, aio: dict, config: dict):
    result = evaluate([{"doc_id": "d", **gt}], [{"doc_id": "d", **aio}], config=config)
    ref = reference.reference_evaluate([{"doc_id": "d", "gt": gt, "aio": aio}], config)
    for key in ("accuracy", "rqs", "macro_f1"):
        assert result.documents[key].item() == pytest.approx(ref["documents"]["d"][key], abs=1e-12)
    return result


def test_field_thresholds_by_attribute_then_bare_name():
    # Levenshtein: "acme corp" vs "acme corp." = 1 - 1/10 = 0.9; "jon" vs "john" = 0.75
    gt = {"vendor": {"name": "Acme Corp"}, "name": "John", "city": "Berlin"}
    aio = {"vendor": {"name": "ACME Corp."}, "name": "Jon", "city": "Berlin"}
    base = {"default_text_strategy": "FUZZY"}
    r = _run(gt, aio, base)
    match = dict(r.fields.select("path", "match").iter_rows())
    assert match == {"vendor.name": True, "name": False, "city": True}
    config = {**base, "field_thresholds": {"vendor.name": 0.95, "name": 0.7}}
    r = _run(gt, aio, config)
    match = dict(r.fields.select("path", "match").iter_rows())
    # vendor.name by its attribute (0.9 < 0.95); the bare "name" entry does not reach it
    assert match == {"vendor.name": False, "name": True, "city": True}
    assert r.documents["accuracy"].item() == pytest.approx(2 / 3)


def test_field_weights_weigh_accuracy():
    gt = {"total": 10, "note": "x", "id": "a"}
    aio = {"total": 11, "note": "x", "id": "a"}
    r = _run(gt, aio, {"field_weights": {"total": 3}})
    # weights total 3, note 1, id 1; correct: note, id -> 2 / 5
    assert r.documents["accuracy"].item() == pytest.approx(2 / 5)
    assert r.documents["n_correct"].item() == 2 and r.documents["n_scored"].item() == 3
    # per-attribute accuracy is unweighted (one weight per attribute)
    assert r.attributes.filter(pl.col("attribute") == "total")["accuracy"].item() == 0.0
    r = _run(gt, aio, {"field_weights": {"total": 0}})
    assert r.documents["accuracy"].item() == 1.0
    r = _run(gt, aio, {"field_weights": {"total": 0, "note": 0, "id": 0}})
    assert r.documents["accuracy"].item() == 1.0  # nothing weighted: as no field scored


def test_list_match_field_threshold():
    # one match field: "bolt m8" vs "bolts m8" = 1 - 1/8 = 0.875 >= list threshold 0.8
    gt = {"items": [{"desc": "bolt m8"}]}
    aio = {"items": [{"desc": "bolts m8"}]}
    lists = {"items": {"match_fields": ["desc"], "threshold": 0.8}}
    r = _run(gt, aio, {"lists": lists})
    assert r.alignments["aio_index"].to_list() == [0]
    assert r.alignments["similarity"].item() == pytest.approx(0.875)
    for name in ("items[].desc", "desc"):
        r = _run(gt, aio, {"lists": lists, "field_thresholds": {name: 0.9}})
        # 0.875 is below the field's 0.9: the field scores 0 and the items do not align
        assert _matched(r).height == 0


def test_list_match_field_threshold_on_a_long_list():
    n = 70  # 70 x 70 pairs: the bounded path of align.py
    gt = {"items": [{"desc": f"item number {i:03d}", "k": i % 2} for i in range(n)]}
    aio = {"items": [{"desc": f"item numbr {i:03d}", "k": i % 2} for i in range(n)]}
    lists = {"items": {"match_fields": ["desc", "k"], "threshold": 0.5}}
    r = _run(gt, aio, {"lists": lists})
    assert _matched(r).height == n
    # "item number 007" vs "item numbr 007" = 1 - 1/15; a 0.95 threshold zeroes every desc,
    # leaving k alone: a mean of 0.5 for the n*n/2 pairs of equal k, matched greedily by index
    r = _run(gt, aio, {"lists": lists, "field_thresholds": {"desc": 0.95}})
    sims = _matched(r)["similarity"]
    assert sims.len() == n and (sims == 0.5).all()


def test_validation_and_unknown_names():
    with pytest.raises(ConfigError, match=r"field_thresholds.name must be between 0.0 and 1.0"):
        parse_config({"field_thresholds": {"name": 1.5}})
    with pytest.raises(ConfigError, match=r"field_weights.total must be >= 0.0; got -1"):
        Config(field_weights={"total": -1})
    with pytest.raises(ConfigError, match="field_weights must be an object"):
        parse_config({"field_weights": [1]})
    r = evaluate([{"doc_id": "d", "total": 1}], [{"doc_id": "d", "total": 1}],
                 config={"field_weights": {"totl": 2}, "field_thresholds": {"nme": 0.5}})
    messages = r.errors["error"].to_list()
    assert any("field_weights names 'totl'" in m and "did you mean 'total'" in m for m in messages)
    assert any("field_thresholds names 'nme'" in m for m in messages)


def _matched(result) -> pl.DataFrame:
    return result.alignments.filter(pl.col("gt_index").is_not_null()
                                    & pl.col("aio_index").is_not_null())
