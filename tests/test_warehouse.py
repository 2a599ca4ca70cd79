"""Metadata slices and warehouse output: metadata travels to the tables, per-slice metrics come
from the additive counts and equal scoring each slice alone, hive partitions are append-safe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jsoneval_polars import evaluate
from jsoneval_polars.results import read_results

GT = Path(__file__).resolve().parents[1] / "jsoneval_polars" / "sample" / "gt.ndjson"
AIO = Path(__file__).resolve().parents[1] / "jsoneval_polars" / "sample" / "aio.ndjson"
CONFIG = {"default_text_strategy": "FUZZY",
          "lists": {"line_items": {"match_fields": ["description"]}}}


def _with_metadata(tmp_path: Path) -> tuple[Path, Path]:
    """The sample, with each AIO record labelled by a model and a run id."""
    gt_lines = GT.read_text().splitlines()
    aio_out = []
    for i, line in enumerate(AIO.read_text().splitlines()):
        rec = json.loads(line)
        rec["model"] = ["m-a", "m-b", "m-c"][i % 3]
        rec["run_id"] = "run-1" if i % 2 else "run-2"
        aio_out.append(json.dumps(rec))
    (tmp_path / "gt.ndjson").write_text("\n".join(gt_lines) + "\n")
    (tmp_path / "aio.ndjson").write_text("\n".join(aio_out) + "\n")
    return tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    return _with_metadata(tmp_path_factory.mktemp("meta"))


def test_metadata_travels_and_is_not_content(labelled):
    r = evaluate(*labelled, config=CONFIG, metadata=["model", "run_id"])
    for table in (r.documents, r.fields, r.counts):
        assert {"model", "run_id"} <= set(table.columns)
    assert not r.fields["path"].is_in(["model", "run_id"]).any()
    plain = evaluate(GT, AIO, config=CONFIG)
    assert_frame_equal(r.attributes, plain.attributes)


def test_slices_equal_scoring_each_slice_alone(labelled):
    gt, aio = labelled
    r = evaluate(gt, aio, config=CONFIG, metadata=["model", "run_id"])
    sliced = r.attributes_by("model")
    gt_recs = {json.loads(line)["doc_id"]: json.loads(line) for line in gt.read_text().splitlines()}
    for model in ("m-a", "m-b", "m-c"):
        aio_recs = [json.loads(x) for x in aio.read_text().splitlines()]
        aio_recs = [a for a in aio_recs if a.get("model") == model]
        alone = evaluate(  # the slice's AIO documents (AIO-only ones too) and their GT
            [gt_recs[a["doc_id"]] for a in aio_recs if a["doc_id"] in gt_recs],
            [{k: v for k, v in a.items() if k not in ("model", "run_id")} for a in aio_recs],
            config=CONFIG,
        ).attributes
        mine = sliced.filter(pl.col("model") == model).drop("model")
        assert_frame_equal(mine, alone, check_exact=False, rel_tol=0, abs_tol=1e-12)


def test_partitioned_write_is_a_hive_dataset_and_reruns_replace(labelled, tmp_path):
    r = evaluate(*labelled, config=CONFIG, metadata=["run_id"])
    out = tmp_path / "warehouse"
    r.write(out, partition_by="run_id")
    r.write(out, partition_by="run_id")  # same runs again: replaced, not duplicated
    docs = pl.read_parquet(out / "documents" / "**" / "*.parquet", hive_partitioning=True)
    assert docs.height == r.documents.height
    # the GT-only document has no run_id: Hive's default partition
    assert sorted(p.name for p in (out / "fields").iterdir()) == [
        "run_id=__HIVE_DEFAULT_PARTITION__", "run_id=run-1", "run_id=run-2"
    ]
    assert json.loads((out / "summary.json").read_text()) == r.summary  # the whole run
    stored = read_results(out)
    # attributes are stored per partition; the run's table is summed from the counts
    per_run = pl.read_parquet(out / "attributes" / "**" / "*.parquet", hive_partitioning=True)
    assert_frame_equal(per_run.sort("run_id", "attribute", nulls_last=True),
                       r.attributes_by("run_id"), check_column_order=False, check_dtypes=False)
    assert_frame_equal(stored.attributes, r.attributes, check_exact=False, abs_tol=1e-12)
    assert_frame_equal(stored.documents.sort("doc_id"),  # read partition by partition
                       r.documents.select(stored.documents.columns).sort("doc_id"))
    assert not [p for p in out.iterdir() if p.name.startswith(".jsoneval-")]


def test_a_failed_write_leaves_no_partition(labelled, tmp_path, monkeypatch):
    r = evaluate(*labelled, config=CONFIG, metadata=["run_id"])
    out = tmp_path / "warehouse"
    original = pl.DataFrame.write_parquet
    calls = {"n": 0}

    def failing(self, path, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:  # part-way through the tables
            raise OSError("disk full")
        return original(self, path, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", failing)
    with pytest.raises(OSError, match="disk full"):
        r.write(out, partition_by="run_id")
    # nothing half-written, no staging and no empty folder of its own left behind
    assert not out.exists()
    out.mkdir()
    calls["n"] = 0
    with pytest.raises(OSError, match="disk full"):
        r.write(out, partition_by="run_id")
    assert list(out.iterdir()) == []  # a folder that was there stays


def test_partition_by_needs_a_metadata_column(tmp_path):
    r = evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}])
    with pytest.raises(KeyError, match="not a metadata column"):
        r.write(tmp_path, partition_by="run_id")


def test_cli_by_and_partition_by(labelled, tmp_path):
    gt, aio = labelled
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(CONFIG))
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt), "--aio", str(aio),
         "--config", str(cfg), "--by", "model", "--partition-by", "run_id",
         "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "per model" in proc.stdout and "m-b" in proc.stdout
    by = pl.read_parquet(tmp_path / "o" / "attributes_by" / "*.parquet")
    assert set(by["model"]) == {"m-a", "m-b", "m-c", None}  # None: the GT-only document
    assert (tmp_path / "o" / "documents" / "run_id=run-2" / "part-000000.parquet").is_file()
    whole = evaluate(gt, aio, config=CONFIG, metadata=["model", "run_id"])
    assert_frame_equal(by, whole.attributes_by("model"), check_exact=False, abs_tol=1e-12)


def test_table_columns_are_metadata():
    gt = pl.DataFrame({"doc_id": ["a", "b"], "json": ['{"x": 1}', '{"x": 2}']})
    aio = pl.DataFrame(
        {"doc_id": ["a", "b"], "json": ['{"x": 1}', '{"x": 5}'], "model": ["m1", "m2"]}
    )
    r = evaluate(gt, aio, json_column="json", metadata=["model"])
    assert dict(zip(r.documents["doc_id"], r.documents["model"], strict=True)) == {
        "a": "m1", "b": "m2",
    }
    assert r.attributes_by("model")["f1"].to_list() == [1.0, 0.0]


def test_batch_size_does_not_change_the_result():
    """Documents are scored in batches; tables and additive counts concatenate exactly."""
    small, whole = (evaluate(GT, AIO, config=CONFIG, batch_size=n) for n in (7, 100_000))
    for name in ("documents", "fields", "attributes", "alignments", "counts"):
        assert_frame_equal(getattr(small, name), getattr(whole, name), check_exact=False,
                           rel_tol=0, abs_tol=1e-12)
    assert small.summary == pytest.approx(whole.summary)
