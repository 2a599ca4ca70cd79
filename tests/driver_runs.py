"""The drivers as one interface for the tests: ``DRIVERS[name](documents, config, tmp_path)``
returns a :class:`Run` (the tables as Polars frames and the summary) whether the Python API,
the command line, the files driver, DuckDB or Spark scored them; :func:`assert_same_run` is
the one comparison of two runs. Used by test_drivers.py (and test_stream.py, test_spark.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jsoneval_polars import evaluate
from jsoneval_polars.results import read_results
from jsoneval_polars.stream import score_files, score_tables

TOL = 1e-9
KEYS = {
    "documents": ["doc_id"],
    "fields": ["doc_id", "path"],
    "attributes": ["attribute"],
    "alignments": ["doc_id", "list_path", "gt_index", "aio_index"],
    "counts": ["doc_id", "attribute"],
}


@dataclass
class Run:
    """What a driver returns: the tables as Polars frames and the summary."""

    documents: pl.DataFrame
    fields: pl.DataFrame
    attributes: pl.DataFrame
    alignments: pl.DataFrame
    counts: pl.DataFrame
    summary: dict[str, Any]

    @classmethod
    def of(cls, result: Any) -> Run:
        return cls(*(getattr(result, t) for t in KEYS), summary=dict(result.summary))


Documents = list[dict]  # {"doc_id", "gt", "aio", optional "safety"}


def _records(docs: Documents, side: str) -> list[dict]:
    return [{"doc_id": d["doc_id"], **d[side]} for d in docs]


def _safety(docs: Documents) -> dict[str, float] | None:
    return {d["doc_id"]: d["safety"] for d in docs if "safety" in d} or None


def _ndjson(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def score_api(docs: Documents, config: dict, tmp_path: Path) -> Run:
    return Run.of(evaluate(_records(docs, "gt"), _records(docs, "aio"), config=config,
                           safety=_safety(docs)))


def score_api_threads(docs: Documents, config: dict, tmp_path: Path) -> Run:
    """evaluate() of NDJSON files (the text path) in batches of 2 pairs on two threads."""
    gt = _ndjson(tmp_path / "gt.ndjson", _records(docs, "gt"))
    aio = _ndjson(tmp_path / "aio.ndjson", _records(docs, "aio"))
    return Run.of(evaluate(gt, aio, config=config, safety=_safety(docs), batch_size=2,
                           workers=2))


def score_cli(docs: Documents, config: dict, tmp_path: Path) -> Run:
    gt = _ndjson(tmp_path / "gt.ndjson", _records(docs, "gt"))
    aio = _ndjson(tmp_path / "aio.ndjson", _records(docs, "aio"))
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    cmd = [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt), "--aio", str(aio),
           "--config", str(tmp_path / "config.json"), "--out", str(tmp_path / "out"), "--json"]
    if _safety(docs):
        safety = [{"doc_id": k, "safety": v} for k, v in _safety(docs).items()]
        cmd += ["--safety", str(_ndjson(tmp_path / "safety.ndjson", safety))]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a run the gate calls failed
    run = Run.of(read_results(tmp_path / "out"))
    assert json.loads(proc.stdout) == run.summary  # printed = written
    return run


def score_files_driver(docs: Documents, config: dict, tmp_path: Path) -> Run:
    """Two batch threads and batches of 7 pairs: pairs meet across batches."""
    gt = _ndjson(tmp_path / "gt.ndjson", _records(docs, "gt"))
    aio = _ndjson(tmp_path / "aio.ndjson", _records(docs, "aio"))
    return Run.of(score_files(gt, aio, tmp_path / "out", config=config, safety=_safety(docs),
                              workers=2, batch_size=7))


def score_tables_driver(docs: Documents, config: dict, tmp_path: Path) -> Run:
    """Parquet files of (doc_id, json) scored a batch of 7 pairs at a time, each batch's
    tables written as parts (the command line's reading of table inputs)."""
    for side in ("gt", "aio"):
        pl.DataFrame({"doc_id": [d["doc_id"] for d in docs],
                      "json": [json.dumps(d[side]) for d in docs]},
                     schema={"doc_id": pl.String, "json": pl.String}).write_parquet(
            tmp_path / f"{side}.parquet")
    safety = _safety(docs)
    table = None if safety is None else pl.DataFrame(
        {"doc_id": list(safety), "safety": list(safety.values())})
    return Run.of(score_tables(tmp_path / "gt.parquet", tmp_path / "aio.parquet",
                               tmp_path / "out", config=config, safety=table, batch_size=7))


def score_duckdb(docs: Documents, config: dict, tmp_path: Path) -> Run:
    duckdb = pytest.importorskip("duckdb")
    from jsoneval_polars.duckdb_sql import evaluate_duckdb

    frame = pl.DataFrame({
        "doc_id": [d["doc_id"] for d in docs],
        "gt": [json.dumps(d["gt"]) for d in docs],
        "aio": [json.dumps(d["aio"]) for d in docs],
        "safety": [d.get("safety", 1.0) for d in docs],
    }, schema={"doc_id": pl.String, "gt": pl.String, "aio": pl.String, "safety": pl.Float64})
    con = duckdb.connect()
    con.register("pairs", frame.to_arrow())
    return Run.of(evaluate_duckdb(con, "SELECT * FROM pairs", config=config,
                                  safety_column="safety"))


def score_spark(docs: Documents, config: dict, tmp_path: Path, spark=None) -> Run:
    from jsoneval_polars.spark import evaluate_spark

    frame = pl.DataFrame({
        "doc_id": [d["doc_id"] for d in docs],
        "gt": [json.dumps(d["gt"]) for d in docs],
        "aio": [json.dumps(d["aio"]) for d in docs],
        "safety": [d.get("safety") for d in docs],
    }, schema={"doc_id": pl.String, "gt": pl.String, "aio": pl.String, "safety": pl.Float64})
    res = evaluate_spark(spark.createDataFrame(frame.to_arrow()), config=config,
                         safety_column="safety")
    try:
        return Run.of(res.to_polars())
    finally:
        res.unpersist()


DRIVERS: dict[str, Callable[..., Run]] = {
    "api": score_api,
    "api-threads": score_api_threads,
    "cli": score_cli,
    "files": score_files_driver,
    "tables": score_tables_driver,
    "duckdb": score_duckdb,
    "spark": score_spark,
}


def assert_same_run(got: Run, want: Run) -> None:
    """Every table equal row for row in key order (floats within 1e-9), and the summary."""
    for name, keys in KEYS.items():
        a, b = getattr(got, name), getattr(want, name)
        try:
            assert_frame_equal(a.select(b.columns).sort(keys, nulls_last=True),
                               b.sort(keys, nulls_last=True), check_exact=False, rel_tol=0,
                               abs_tol=TOL)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    assert got.summary.keys() >= want.summary.keys()
    for key, value in want.summary.items():
        if isinstance(value, float):
            assert got.summary[key] == pytest.approx(value, abs=TOL), key
        else:
            assert got.summary[key] == value, key


