"""Issue 12: wrong input fails loudly. Each test here passed silently (or crashed with a
traceback) before: a bad config value, a misspelt name, a run that pairs nothing."""

from __future__ import annotations

import json
import math

import pytest

from jsoneval_polars import ConfigError, parse_config
from jsoneval_polars.config import Config, ListConfig, MatchField, Weights, load_config

# ----------------------------------------------------------------------------------------------
# Config validated at construction, the same rules as parse_config


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Config(fuzzy_threshold=5.0), "fuzzy_threshold must be between 0.0 and 1.0"),
        (lambda: Config(pass_threshold=-0.1), "pass_threshold must be between"),
        (lambda: Config(rel_tol=math.inf), "numeric.rel_tol must be a finite number"),
        (lambda: Config(abs_tol=math.nan), "numeric.abs_tol must be a finite number"),
        (lambda: Weights(accuracy=math.inf), "weights.accuracy must be a finite number"),
        (lambda: Weights(safety=-1), "weights.safety must be >= 0"),
        (lambda: Config(default_text_strategy="FUZZZY"), "default_text_strategy must be one of"),
        (lambda: Config(field_strategies={"a": "LEVENSHTEIN"}), "field_strategies.a must be"),
        (lambda: ListConfig(method="hungarian"), "method must be one of 'greedy'"),
        (lambda: ListConfig(threshold=2), "threshold must be between"),
        (lambda: MatchField("id", prefix=0), "prefix must be a positive integer"),
        (lambda: Config(id_field=""), "id_field must be a non-empty string"),
        (lambda: Config(empty_containers_are_null="yes"), "must be true or false"),
        (lambda: Config(fuzzy_treshold=0.9), "no field 'fuzzy_treshold'.*did you mean 'fuzzy_threshold'"),
        (lambda: Weights(acuracy=1), "did you mean 'accuracy'"),
    ],
)
def test_config_objects_are_validated_at_construction(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_config_construction_normalizes_like_parse_config():
    built = Config(default_text_strategy="fuzzy", field_strategies={"total": "numeric"},
                   lists={"items": ListConfig(match_fields=["sku"], method="OPTIMAL")})
    parsed = parse_config({"default_text_strategy": "FUZZY", "field_strategies": {"total": "NUMERIC"},
                           "lists": {"items": {"match_fields": ["sku"], "method": "optimal"}}})
    assert built == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"weights": {"accuracy": Infinity}}', "weights.accuracy must be a finite number"),
        ('{"numeric": {"rel_tol": Infinity}}', "numeric.rel_tol must be a finite number"),
        ('{"numeric": {"abs_tol": NaN}}', "numeric.abs_tol must be a finite number"),
        ('{"fuzzy_threshold": -Infinity}', "fuzzy_threshold must be a finite number"),
        ("null", "the config is null"),
    ],
)
def test_config_files_with_non_finite_numbers_or_null_are_errors(tmp_path, text, message):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_empty_yaml_config_is_an_error(tmp_path):
    pytest.importorskip("yaml")
    path = tmp_path / "config.yaml"
    path.write_text("# nothing here\n")
    with pytest.raises(ConfigError, match="the config is null"):
        load_config(path)


def test_json_infinity_reaches_the_check():
    """Python's json module reads Infinity as float('inf'): the config check must see it."""
    assert json.loads('{"a": Infinity}')["a"] == math.inf
