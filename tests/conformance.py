"""Loading the shared conformance cases (SPEC §12) and comparing a result with them.

Results are compared in one shape, the reference implementation's dict; engine tables are
converted to it by :func:`tables_as_dict`, so the same assertions check every runner.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl

TOLERANCE = 1e-9


#: The repository's own copy of the shared conformance cases (SPEC §12): the suite runs on a
#: fresh clone without ``../shared``; tests/test_conformance.py checks the copy is current
#: when the shared folder is there.
CASES_DIR = Path(__file__).resolve().parent / "conformance_cases"
SHARED_DIR = Path(__file__).resolve().parents[2] / "shared" / "conformance"


def conformance_dir() -> Path:
    return CASES_DIR


CASE_FILES = sorted(conformance_dir().glob("*.json"))


def load_case(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def tables_as_dict(
    documents: pl.DataFrame,
    attributes: pl.DataFrame,
    summary: dict,
    alignments: pl.DataFrame,
    fields: pl.DataFrame,
) -> dict:
    lists: dict[tuple, dict] = {}
    for row in alignments.iter_rows(named=True):
        entry = lists.setdefault(
            (row["doc_id"], row["list_path"]),
            {
                "doc_id": row["doc_id"],
                "list_path": row["list_path"],
                "pairs": [],
                "order_correct": row["order_correct"],
                "order_score": row["order_score"],
            },
        )
        if row["gt_index"] is not None and row["aio_index"] is not None:
            entry["pairs"].append([row["gt_index"], row["aio_index"]])
    for entry in lists.values():
        entry["pairs"].sort()
    by_doc: dict[str, list] = {}
    for row in fields.iter_rows(named=True):
        by_doc.setdefault(row["doc_id"], []).append(row)
    return {
        "documents": {r["doc_id"]: r for r in documents.iter_rows(named=True)},
        "attributes": {r["attribute"]: r for r in attributes.iter_rows(named=True)},
        "summary": summary,
        "alignments": list(lists.values()),
        "fields": by_doc,
    }


def assert_value(actual, expected, where: str) -> None:
    if expected is None:
        assert actual is None, f"{where}: expected null, got {actual!r}"
    elif isinstance(expected, bool):
        assert isinstance(actual, bool) and actual == expected, (
            f"{where}: expected {expected!r}, got {actual!r}"
        )
    elif isinstance(expected, int | float):
        assert isinstance(actual, int | float) and not isinstance(actual, bool), (
            f"{where}: expected {expected!r}, got {actual!r}"
        )
        assert math.isclose(actual, expected, rel_tol=0, abs_tol=TOLERANCE), (
            f"{where}: expected {expected!r}, got {actual!r}"
        )
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def assert_record(actual: dict, expected: dict, where: str) -> None:
    for key, value in expected.items():
        assert key in actual, f"{where}: missing key {key!r}"
        assert_value(actual[key], value, f"{where}.{key}")


def assert_matches_case(result: dict, expected: dict) -> None:
    """Every expected value of a case: documents, attributes, summary, alignments, fields."""
    assert set(result["documents"]) == set(expected["documents"])
    for doc_id, row in expected["documents"].items():
        assert_record(result["documents"][doc_id], row, f"documents[{doc_id}]")

    assert set(result["attributes"]) == set(expected["attributes"])
    for attribute, row in expected["attributes"].items():
        assert_record(result["attributes"][attribute], row, f"attributes[{attribute}]")

    assert_record(result["summary"], expected["summary"], "summary")

    want = {(a["doc_id"], a["list_path"]): a for a in expected["alignments"]}
    got = {(a["doc_id"], a["list_path"]): a for a in result["alignments"]}
    assert len(got) == len(result["alignments"]), "duplicate alignment entries"
    assert set(got) == set(want)
    for key, entry in want.items():
        where = f"alignments[{key}]"
        assert got[key]["pairs"] == sorted(entry["pairs"]), where
        assert_value(got[key]["order_correct"], entry["order_correct"], f"{where}.order_correct")
        assert_value(got[key]["order_score"], entry["order_score"], f"{where}.order_score")

    for doc_id, rows in expected.get("fields", {}).items():
        actual = {row["path"]: row for row in result["fields"][doc_id]}
        assert len(actual) == len(result["fields"][doc_id]), "duplicate paths"
        assert set(actual) == {row["path"] for row in rows}, f"fields[{doc_id}] paths"
        for row in rows:
            assert_record(actual[row["path"]], row, f"fields[{doc_id}][{row['path']}]")
