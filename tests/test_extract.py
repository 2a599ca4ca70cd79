"""Structured-output extraction (SPEC §8, seed 003), through the public functions."""

from __future__ import annotations

import dataclasses
import doctest
import json
import time

import polars as pl
import pytest

import jsoneval_polars.extract as extract_module
from jsoneval_polars.extract import (
    Extraction,
    extract_column,
    extract_json,
    loads_noting,
    parse_object,
)

# An answer shaped like seed 003's prompt asks for: a JSON block first, then the narrative.
SEED_003_ANSWER = """\
```json
{
  "events_detected": [
    {"event_type": "vm_started", "instance_id": "b9000564-1c2d", "description": "VM started"}
  ],
  "timeline": [],
  "metrics": {"spawn_seconds": 19.84},
  "anomalies": [],
  "compliance_status": "COMPLIANT"
}
```

The VM started and then paused during spawn process; spawn took 19.84 seconds.
"""


def test_whole_text_is_json():
    got = extract_json('  \n{"a": 1, "b": [1, 2]}\n')
    assert got == Extraction({"a": 1, "b": [1, 2]}, "json", "")


def test_seed_003_answer_is_a_code_block_with_narrative():
    got = extract_json(SEED_003_ANSWER)
    assert got.status == "code_block"
    assert got.value["events_detected"][0]["event_type"] == "vm_started"
    assert got.value["metrics"] == {"spawn_seconds": 19.84}
    assert got.narrative == (
        "The VM started and then paused during spawn process; spawn took 19.84 seconds."
    )


def test_prose_before_and_after_fenced_block():
    text = 'Here is the extraction:\n\n```json\n{"vendor": {"name": "ACME"}}\n```\n\nLet me know.'
    got = extract_json(text)
    assert got == Extraction(
        {"vendor": {"name": "ACME"}}, "code_block", "Here is the extraction:\n\n\n\nLet me know."
    )


def test_untagged_block_and_tag_case():
    assert extract_json('x\n```\n{"a": 1}\n```').status == "code_block"
    assert extract_json('x\n```JSON\n{"a": 1}\n```').status == "code_block"
    assert extract_json('x\n~~~json\n{"a": 1}\n~~~').value == {"a": 1}


def test_broken_first_block_then_good_second():
    text = (
        "First try:\n```json\n{\"total\": 12,, }\n```\n"
        "Corrected:\n```json\n{\"total\": 12}\n```\nDone."
    )
    got = extract_json(text)
    assert got.status == "code_block"
    assert got.value == {"total": 12}
    # The broken block stays in the narrative: only the parsed block is removed.
    assert got.narrative == 'First try:\n```json\n{"total": 12,, }\n```\nCorrected:\n\nDone.'


def test_block_tagged_other_language_is_skipped_then_brace_scan():
    text = 'Code:\n```python\nd = {"x": 1}\n```\nAnswer: {"y": 2}'
    got = extract_json(text)
    # No json/untagged block, so the first balanced span that parses wins: the python dict.
    assert got == Extraction({"x": 1}, "embedded", 'Code:\n```python\nd = \n```\nAnswer: {"y": 2}')


def test_block_whose_body_is_an_array_is_not_a_success():
    text = '```json\n[{"a": 1}]\n```\nthen {"b": 2}'
    got = extract_json(text)
    assert got.status == "embedded"
    assert got.value == {"a": 1}  # the first balanced {...} span, inside the array


def test_inline_fenced_block():
    got = extract_json('Result: ```json {"ok": true}``` as requested')
    assert got == Extraction({"ok": True}, "code_block", "Result:  as requested")


def test_embedded_object_with_braces_inside_strings():
    text = 'The answer is {"msg": "use } and { with care \\" {", "n": {"k": [1, 2]}} — done.'
    got = extract_json(text)
    assert got.status == "embedded"
    assert got.value == {"msg": 'use } and { with care " {', "n": {"k": [1, 2]}}
    assert got.narrative == "The answer is  — done."


def test_embedded_skips_unparseable_span_and_quote_in_prose():
    assert extract_json('broken {x} then {"ok": true} after').value == {"ok": True}
    # An opening quote in prose before the object does not derail the string-aware scan.
    assert extract_json('He said "{x" and then {"a": 1}').value == {"a": 1}


def test_object_nested_in_broken_text():
    got = extract_json('{"a": 1,, "b": {"c": 2}}')
    assert got == Extraction({"c": 2}, "embedded", '{"a": 1,, "b": }')


@pytest.mark.parametrize("text", ["[1, 2]", "42", '"a string"', "null", "true", "no json here", ""])
def test_non_objects_end_invalid(text):
    got = extract_json(text)
    assert got.value is None
    assert got.status == "invalid"
    assert got.narrative == text.strip()


def test_whole_text_array_of_objects_is_embedded():
    assert extract_json('[{"a": 1}]') == Extraction({"a": 1}, "embedded", "[]")


def test_truncated_block_falls_back_to_brace_scan():
    got = extract_json('```json\n{"a": {"b": 1}, "c": ')
    assert got.status == "embedded"
    assert got.value == {"b": 1}


def test_values_orjson_cannot_keep_use_json_fallback():
    big = 123456789012345678901234567890
    assert extract_json(f'{{"big": {big}}}').value == {"big": big}
    nan = extract_json('{"x": NaN}').value["x"]
    assert nan != nan


def test_values_not_kept_exactly_are_noted():
    """NaN, ±Infinity and numbers beyond a double are kept but noted (DECISIONS.md 22), in
    whichever span the object came from; exact values have no notes."""
    got = extract_json('Here:\n```json\n{"n": [NaN, NaN], "i": -Infinity, "o": 1e400}\n```')
    assert got.status == "code_block"
    assert set(got.notes) == {"NaN (2 times) is not valid JSON; read as null",
                              "-Infinity is not valid JSON; kept as -inf",
                              "number 1e400 overflows a double; kept as inf"}
    assert extract_json('so {"a": Infinity} it is').notes == (
        "Infinity is not valid JSON; kept as inf",)
    big = 123456789012345678901234567890  # exact through the json module: no note
    assert extract_json(f'{{"big": {big}, "s": "NaN"}}').notes == ()
    assert extract_json('{"a": 1.5}').notes == () and extract_json("NaN").notes == ()


def test_numbers_a_double_does_not_show_are_noted_once_per_document():
    """A float read as the nearest double is noted when the double's shortest text does not
    have the literal's value (SPEC §9: not rounded silently); 17 digits that are the double's
    own, or trailing zeros, are kept as written and not noted."""
    value, notes = loads_noting('{"a": 0.30000000000000004, "b": 1.5000000000000000000, '
                                '"c": 123456789012345678901234}')
    assert value == {"a": 0.30000000000000004, "b": 1.5, "c": 123456789012345678901234}
    assert notes == []
    _, notes = loads_noting('{"a": 0.30000000000000001}')
    assert notes == ["number 0.30000000000000001 has more digits than a double keeps; read as "
                     "0.3"]
    _, notes = loads_noting('[1.00000000000000000001, 3.14159265358979323846, 2.5]')
    assert notes == ["2 numbers have more digits than a double keeps; each is read as the "
                     "nearest double (the first, 1.00000000000000000001, as 1.0)"]
    got = extract_json('Total: {"t": 12345678901234567890.5}')
    assert got.status == "embedded" and got.notes == (
        "number 12345678901234567890.5 has more digits than a double keeps; read as "
        "1.2345678901234567e+19",)


def test_deep_and_pathological_text_is_fast():
    start = time.perf_counter()
    assert extract_json("{" * 100_000).status == "invalid"
    assert extract_json("x {" * 50_000).status == "invalid"
    assert time.perf_counter() - start < 5


def test_nesting_limit_is_deterministic():
    def nested(depth: int) -> str:
        return '{"a":' * depth + "1" + "}" * depth

    assert extract_json("note: " + nested(500)).status == "embedded"
    # Deeper than MAX_NESTING: invalid, as a whole text and embedded, and no inner fragment
    # of the deep document is returned.
    deep = nested(extract_module.MAX_NESTING + 1)
    assert extract_json(deep) == Extraction(None, "invalid", deep)
    assert extract_json("note: " + deep).status == "invalid"


def test_extraction_is_frozen_and_type_checked():
    got = extract_json("{}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.status = "invalid"  # type: ignore[misc]
    with pytest.raises(TypeError, match="expects a str"):
        extract_json(b"{}")  # type: ignore[arg-type]


def test_parse_object():
    assert parse_object(' {"a": 1} ') == {"a": 1}
    assert parse_object("[1]") is None
    assert parse_object("nope") is None


def test_extract_column():
    texts = pl.Series(
        "aio",
        ['{"b": 1, "a": 2}', SEED_003_ANSWER, "no json", None, '{"n": NaN, "z": 1e400}', "{}"],
    )
    out = extract_column(texts)
    assert out.schema == pl.Schema(
        {"value_json": pl.String, "status": pl.String, "narrative": pl.String}
    )
    assert out["status"].to_list() == ["json", "code_block", "invalid", None, "json", "json"]
    values = out["value_json"].to_list()
    assert values[0] == '{"b":1,"a":2}'  # compact, key order kept
    assert json.loads(values[1])["compliance_status"] == "COMPLIANT"
    assert values[2] is None and values[3] is None
    assert values[4] == '{"n":NaN,"z":Infinity}'  # not turned into null silently
    assert values[5] == "{}"
    assert out["narrative"].to_list()[2:4] == ["no json", None]


def test_extract_column_rejects_non_string():
    with pytest.raises(TypeError, match="String Series"):
        extract_column(pl.Series([1, 2]))


def test_docstring_examples():
    assert doctest.testmod(extract_module).failed == 0
