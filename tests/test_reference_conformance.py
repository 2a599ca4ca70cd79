"""Runs every shared conformance case through the reference implementation (tests/reference.py).

This checks the oracle itself: if these pass, the reference agrees with the conformance cases,
and the engine can then be compared against the reference on any input.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import reference_evaluate  # noqa: E402

TOLERANCE = 1e-9


def _conformance_dir() -> Path:
    env = os.environ.get("JSONEVAL_CONFORMANCE_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "conformance"


CASE_FILES = sorted(_conformance_dir().glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _assert_value(actual, expected, where: str) -> None:
    if expected is None:
        assert actual is None, f"{where}: expected null, got {actual!r}"
    elif isinstance(expected, bool):
        assert isinstance(actual, bool) and actual == expected, (
            f"{where}: expected {expected!r}, got {actual!r}"
        )
    elif isinstance(expected, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), (
            f"{where}: expected {expected!r}, got {actual!r}"
        )
        assert math.isclose(actual, expected, rel_tol=0, abs_tol=TOLERANCE), (
            f"{where}: expected {expected!r}, got {actual!r}"
        )
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def _assert_record(actual: dict, expected: dict, where: str) -> None:
    for key, value in expected.items():
        assert key in actual, f"{where}: missing key {key!r}"
        _assert_value(actual[key], value, f"{where}.{key}")


@pytest.fixture(scope="module", params=CASE_FILES, ids=[p.stem for p in CASE_FILES])
def case(request):
    data = _load(request.param)
    data["result"] = reference_evaluate(data["documents"], data["config"])
    return data


def test_cases_found():
    assert CASE_FILES, f"no conformance cases in {_conformance_dir()}"


def test_documents(case):
    expected = case["expected"]["documents"]
    actual = case["result"]["documents"]
    assert set(actual) == set(expected)
    for doc_id, row in expected.items():
        _assert_record(actual[doc_id], row, f"documents[{doc_id}]")


def test_attributes(case):
    expected = case["expected"]["attributes"]
    actual = case["result"]["attributes"]
    assert set(actual) == set(expected)
    for attribute, row in expected.items():
        _assert_record(actual[attribute], row, f"attributes[{attribute}]")


def test_summary(case):
    _assert_record(case["result"]["summary"], case["expected"]["summary"], "summary")


def test_alignments(case):
    expected = {(a["doc_id"], a["list_path"]): a for a in case["expected"]["alignments"]}
    actual = {(a["doc_id"], a["list_path"]): a for a in case["result"]["alignments"]}
    assert len(actual) == len(case["result"]["alignments"]), "duplicate alignment entries"
    assert set(actual) == set(expected)
    for key, entry in expected.items():
        where = f"alignments[{key}]"
        assert actual[key]["pairs"] == entry["pairs"], where
        _assert_value(actual[key]["order_correct"], entry["order_correct"], f"{where}.order_correct")
        _assert_value(actual[key]["order_score"], entry["order_score"], f"{where}.order_score")


def test_fields(case):
    expected_fields = case["expected"].get("fields")
    if not expected_fields:
        pytest.skip("case gives no fields")
    for doc_id, rows in expected_fields.items():
        actual = {row["path"]: row for row in case["result"]["fields"][doc_id]}
        assert len(actual) == len(case["result"]["fields"][doc_id]), "duplicate paths"
        assert set(actual) == {row["path"] for row in rows}, f"fields[{doc_id}] paths"
        for row in rows:
            _assert_record(actual[row["path"]], row, f"fields[{doc_id}][{row['path']}]")
