"""The conformance cases themselves: the copy equals the shared set, and the plain-Python
reference (the oracle) meets every case. The engine's drivers (API, command line, files,
DuckDB, Spark) run the cases in test_drivers.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance import CASE_FILES, SHARED_DIR, assert_matches_case, conformance_dir, load_case
from reference import reference_evaluate


def test_cases_found():
    assert len(CASE_FILES) >= 18, f"conformance cases missing in {conformance_dir()}"


@pytest.mark.skipif(not SHARED_DIR.is_dir(), reason=f"no shared cases at {SHARED_DIR}")
def test_copy_equals_the_shared_cases():
    """The repository's copy is the shared set, case for case (refresh it with
    ``cp ../shared/conformance/*.json tests/conformance_cases/``)."""
    shared = {p.name: load_case(p) for p in SHARED_DIR.glob("*.json")}
    ours = {p.name: load_case(p) for p in CASE_FILES}
    assert sorted(ours) == sorted(shared)
    for name, case in shared.items():
        assert ours[name] == case, f"tests/conformance_cases/{name} differs from {SHARED_DIR}"


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_reference_meets_the_case(path: Path):
    case = load_case(path)
    assert_matches_case(reference_evaluate(case["documents"], case["config"]), case["expected"])
