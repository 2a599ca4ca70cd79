"""Seed 003's events and timelines worked example (examples/events/).

The baseline run must give the seed's own test-run numbers: event detection 3/9, timeline order
correct, metrics 0/6, anomalies 0/0 = 100 %, structured method. Every other expected value is
counted by hand from the example files, as the comments show.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from jsoneval_polars import evaluate, load_config

APPROX = pytest.approx
HERE = Path(__file__).resolve().parents[1] / "examples" / "events"
BASELINE = HERE / "aio_baseline_single_agent.ndjson"
VOCABULARY = HERE / "aio_with_vocabulary.ndjson"
DOC = "scenario_001_vm_lifecycle"


def _load_example():
    spec = importlib.util.spec_from_file_location("seed_metrics", HERE / "seed_metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


seed_metrics = _load_example()


def _config(**changes) -> dict:
    raw = json.loads((HERE / "config.json").read_text())
    raw.update(changes)
    return raw


def _score(aio: Path, config: dict | None = None):
    return evaluate(
        HERE / "gt.ndjson", aio, config=config or _config(), content_field=(None, "output")
    )


def test_baseline_reproduces_seed_003_test_run():
    m = seed_metrics.seed_003_metrics(seed_metrics.score_run(BASELINE), DOC)
    assert (m["events_found"], m["events_total"]) == (3, 9)
    assert m["event_detection_accuracy"] == APPROX(1 / 3)  # "33.33% (3/9 events)"
    assert m["timeline_sequence_accuracy"] == 1.0  # "100.00% (order correct)"
    assert (m["metrics_correct"], m["metrics_total"], m["metrics_accuracy"]) == (0, 6, 0.0)
    assert (m["anomalies_found"], m["anomalies_total"], m["anomaly_detection"]) == (0, 0, 1.0)
    assert m["method"] == "code_block"  # the JSON came from a ```json block: "structured"


def test_seed_metrics_script_prints_the_seed_lines():
    proc = subprocess.run(
        [sys.executable, str(HERE / "seed_metrics.py"), str(BASELINE)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Event Detection Accuracy:    33.33% (3/9 events) [method: code_block]" in proc.stdout
    assert "Timeline Sequence Accuracy:  100.00% (order correct)" in proc.stdout
    assert "Metrics Accuracy:            0.00% (0/6 metrics)" in proc.stdout
    assert "Anomaly Detection:           100.00% (0/0 detected)" in proc.stdout


def test_events_match_on_type_and_instance_prefix():
    result = _score(BASELINE)
    events = result.alignments.filter(pl.col("list_path") == "events_detected")
    pairs = events.drop_nulls(["gt_index", "aio_index"]).select("gt_index", "aio_index").rows()
    # vm_started, vm_paused, vm_resumed are GT events 4, 5, 7 and AIO events 0, 1, 2
    assert sorted(pairs) == [(4, 0), (5, 1), (7, 2)]
    # AIO event 3 (vm_stopped) did not happen: unmatched
    assert events.filter(pl.col("gt_index").is_null())["aio_index"].to_list() == [3]
    attrs = {r["attribute"]: r for r in result.attributes.iter_rows(named=True)}
    e = attrs["events_detected[].event_type"]
    # precision 3/4 and recall 3/9: seed 003's first bug was computing both alike
    assert (e["tp"], e["fp"], e["fn"]) == (3, 1, 6)
    assert (e["precision"], e["recall"]) == APPROX((3 / 4, 3 / 9))
    # matched on the prefix, scored in full: the cut ids "b9000564" are wrong values (FP+FN)
    i = attrs["events_detected[].instance_id"]
    assert (i["tp"], i["fp"], i["fn"]) == (0, 4, 9)


def test_without_the_prefix_transform_no_event_matches():
    lists = _config()["lists"]
    lists["events_detected"]["match_fields"] = ["event_type", "instance_id"]
    result = _score(BASELINE, _config(lists=lists))
    events = result.alignments.filter(pl.col("list_path") == "events_detected")
    # "b9000564" vs the 36-character id: Levenshtein 8/36, pair mean (1 + 8/36)/2 < 1.0
    assert events.drop_nulls(["gt_index", "aio_index"]).height == 0


def test_baseline_document_metrics_by_hand():
    doc = _score(BASELINE).documents.row(0, named=True)
    # GT leaves: 9 events × 4 + 9 timeline × 2 + 6 metrics + anomalies + compliance = 62.
    # Both present: 3 events × 4 + 3 timeline × 2 + anomalies + compliance = 20.
    assert (doc["n_gt_non_null"], doc["n_both_non_null"]) == (62, 20)
    assert doc["completeness"] == APPROX(20 / 62)
    # Extra: the vm_stopped event's 4 leaves + metric_1..3 = 7, over 62 + 7 distinct paths.
    assert (doc["n_extra_keys"], doc["n_total_distinct"]) == (7, 69)
    assert doc["hallucination"] == APPROX(7 / 69)
    # Wrong among the 20: the three cut instance ids -> 17/20.
    assert (doc["n_scored"], doc["n_correct"]) == (20, 17)
    assert doc["accuracy"] == APPROX(0.85)
    assert doc["rqs"] == APPROX(0.45 * 0.85 + 0.25 * 20 / 62 + 0.15 * 1.0 - 0.15 * 7 / 69)


def test_timeline_order_score_of_the_swapped_run():
    m = seed_metrics.seed_003_metrics(seed_metrics.score_run(VOCABULARY), DOC)
    # all 9 entries matched; "VM paused" and "Network VIF plugged" swapped: 1 discordant pair of
    # C(9, 2) = 36 -> order score 35/36, and the seed's binary check fails
    assert m["timeline_order_correct"] is False
    assert m["timeline_order_score"] == APPROX(35 / 36)
    assert (m["events_found"], m["events_total"]) == (8, 9)  # block_device_mapped missed
    assert m["method"] == "json"


def test_metric_values_with_relative_tolerance():
    result = _score(VOCABULARY)
    metrics = result.fields.filter(pl.col("path").str.starts_with("metrics."))
    got = {
        p.removeprefix("metrics."): (s, ok)
        for p, s, ok in metrics.select("path", "similarity", "match").rows()
    }
    assert got == {
        "build_time_seconds": (APPROX(1 - 0.04 / 19.84), True),  # 19.8: |.04| <= 1.984
        "spawn_time_seconds": (APPROX(1 - 0.91 / 10.91), True),  # 10: |.91| <= 1.091
        "vif_plug_wait_seconds": (APPROX(1 - 0.18 / 1.32), False),  # 1.5: |.18| > .132
        "memory_mb": (1.0, True),  # "2,048": thousands separator read as 2048
        "vcpus": (1.0, True),
        "disk_gb": (0.0, False),  # 40 vs 20: |20| / 20 = 1 -> similarity 0
    }
    assert seed_metrics.seed_003_metrics(result, DOC)["metrics_accuracy"] == APPROX(4 / 6)
    # 1 % tolerance: spawn_time_seconds (|.91| > .1091) fails too -> 3/6
    tight = _score(VOCABULARY, _config(numeric={"rel_tol": 0.01}))
    assert seed_metrics.seed_003_metrics(tight, DOC)["metrics_accuracy"] == APPROX(3 / 6)
    # an absolute floor of 0.2 s rescues vif_plug_wait_seconds (|.18| <= .2) -> 5/6
    floor = _score(VOCABULARY, _config(numeric={"rel_tol": 0.10, "abs_tol": 0.2}))
    assert seed_metrics.seed_003_metrics(floor, DOC)["metrics_accuracy"] == APPROX(5 / 6)


def test_cli_gives_the_same_tables(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jsoneval_polars",
            "score",
            "--gt",
            str(HERE / "gt.ndjson"),
            "--aio",
            str(BASELINE),
            "--aio-field",
            "output",
            "--config",
            str(HERE / "config.json"),
            "--out",
            str(tmp_path),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    api = evaluate(
        HERE / "gt.ndjson",
        BASELINE,
        config=load_config(HERE / "config.json"),
        content_field=(None, "output"),
    )
    for table in ("documents", "alignments", "attributes"):
        assert pl.read_parquet(tmp_path / table / "*.parquet").equals(getattr(api, table)), table
