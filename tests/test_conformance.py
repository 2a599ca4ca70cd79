"""Every shared conformance case through three runners: the plain-Python reference (which
checks the oracle itself), the public Python API, and the command line in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conformance import (
    CASE_FILES, SHARED_DIR, assert_matches_case, conformance_dir, load_case, tables_as_dict,
)
from reference import reference_evaluate

from jsoneval_polars import evaluate


def _records(case: dict, side: str) -> list[dict]:
    return [{"doc_id": d["doc_id"], **d[side]} for d in case["documents"]]


def _safety(case: dict) -> dict[str, float] | None:
    values = {d["doc_id"]: d["safety"] for d in case["documents"] if "safety" in d}
    return values or None


def run_reference(case: dict, tmp_path: Path) -> dict:
    return reference_evaluate(case["documents"], case["config"])


def run_api(case: dict, tmp_path: Path) -> dict:
    r = evaluate(_records(case, "gt"), _records(case, "aio"), config=case["config"], safety=_safety(case))
    return tables_as_dict(r.documents, r.attributes, r.summary, r.alignments, r.fields)


def run_cli(case: dict, tmp_path: Path) -> dict:
    paths = {}
    for side in ("gt", "aio"):
        paths[side] = tmp_path / f"{side}.ndjson"
        paths[side].write_text(
            "".join(json.dumps(r) + "\n" for r in _records(case, side)), encoding="utf-8"
        )
    config = tmp_path / "config.json"
    config.write_text(json.dumps(case["config"]), encoding="utf-8")
    out = tmp_path / "out"
    cmd = [
        sys.executable, "-m", "jsoneval_polars", "score",
        "--gt", str(paths["gt"]), "--aio", str(paths["aio"]),
        "--config", str(config), "--out", str(out), "--json",
    ]
    if _safety(case):
        safety = tmp_path / "safety.ndjson"
        safety.write_text(
            "".join(json.dumps({"doc_id": k, "safety": v}) + "\n" for k, v in _safety(case).items())
        )
        cmd += ["--safety", str(safety)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    written = json.loads((out / "summary.json").read_text())
    assert printed == written
    return tables_as_dict(
        pl.read_parquet(out / "documents.parquet"),
        pl.read_parquet(out / "attributes.parquet"),
        written,
        pl.read_parquet(out / "alignments.parquet"),
        pl.read_parquet(out / "fields.parquet"),
    )


RUNNERS = {"reference": run_reference, "api": run_api, "cli": run_cli}


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


@pytest.mark.parametrize("runner", list(RUNNERS))
@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_conformance_case(path: Path, runner: str, tmp_path: Path):
    case = load_case(path)
    assert_matches_case(RUNNERS[runner](case, tmp_path), case["expected"])
