"""Seed 003's four structured metrics, read off jsoneval's result tables.

    python examples/events/seed_metrics.py            # both runs in this folder

prints, for the baseline run, the seed's own test-run numbers:

    Event Detection Accuracy:    33.33% (3/9 events) [method: code_block]
    Timeline Sequence Accuracy:  100.00% (order correct) [order score 1.000]
    Metrics Accuracy:            0.00% (0/6 metrics)
    Anomaly Detection:           100.00% (0/0 detected)

- event detection = matched GT events / GT events, events matched on ``event_type`` and the
  first 8 characters of ``instance_id`` (config.json ``lists.events_detected``);
- timeline = 1.0 when the matched timeline entries are in GT order (``order_correct``), as the
  seed's binary check; the engine's ``order_score`` (share of concordant pairs) is shown beside;
- metrics = GT metrics whose value is within 10 % of the truth (NUMERIC, ``rel_tol`` 0.10);
- anomalies = matched GT anomalies / GT anomalies; with none in the truth, 1.0 when the output
  reports none either (the seed's "100% (0/0 detected)").

``method`` is the AIO parse status (SPEC §8): the seed's "structured" method is ``json``,
``code_block`` or ``embedded``; ``invalid`` is a free-form answer with no JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from jsoneval_polars import Result, evaluate, load_config

HERE = Path(__file__).resolve().parent


def seed_003_metrics(result: Result, doc_id: str) -> dict:
    """Event detection, timeline order, metrics accuracy and anomaly detection of one document."""
    al = result.alignments.filter(pl.col("doc_id") == doc_id)
    fields = result.fields.filter(pl.col("doc_id") == doc_id)

    def matched(list_path: str) -> tuple[int, int]:
        rows = al.filter(pl.col("list_path") == list_path)
        n_gt = rows["gt_index"].drop_nulls().len()
        n_matched = rows.filter(
            pl.col("gt_index").is_not_null() & pl.col("aio_index").is_not_null()
        ).height
        return n_matched, n_gt

    events_found, events_total = matched("events_detected")
    timeline = al.filter(pl.col("list_path") == "timeline")
    order_correct = bool(timeline["order_correct"][0]) if timeline.height else True
    order_score = float(timeline["order_score"][0]) if timeline.height else 1.0

    gt_metrics = fields.filter(
        pl.col("path").str.starts_with("metrics.")
        & pl.col("bucket").is_in(["both_non_null", "aio_missing_or_null"])
    )
    metrics_ok = int(gt_metrics["match"].fill_null(False).sum())

    anomalies_found, anomalies_total = matched("anomalies")
    if anomalies_total:
        anomaly_accuracy = anomalies_found / anomalies_total
    else:  # nothing to find: right when nothing is reported (the `anomalies` leaf is [] == [])
        leaf = fields.filter(pl.col("path") == "anomalies")
        anomaly_accuracy = 1.0 if leaf.height and bool(leaf["match"][0]) else 0.0

    status = result.documents.filter(pl.col("doc_id") == doc_id)["aio_parse_status"][0]
    return {
        "method": status,
        "events_found": events_found,
        "events_total": events_total,
        "event_detection_accuracy": events_found / events_total if events_total else 1.0,
        "timeline_order_correct": order_correct,
        "timeline_sequence_accuracy": 1.0 if order_correct else 0.0,
        "timeline_order_score": order_score,
        "metrics_correct": metrics_ok,
        "metrics_total": gt_metrics.height,
        "metrics_accuracy": metrics_ok / gt_metrics.height if gt_metrics.height else 1.0,
        "anomalies_found": anomalies_found,
        "anomalies_total": anomalies_total,
        "anomaly_detection": anomaly_accuracy,
    }


def score_run(aio_file: str | Path) -> Result:
    """Score one AIO file of this folder (raw model text in its ``output`` member)."""
    return evaluate(
        HERE / "gt.ndjson",
        Path(aio_file),
        config=load_config(HERE / "config.json"),
        content_field=(None, "output"),
    )


def render(m: dict) -> str:
    order = "order correct" if m["timeline_order_correct"] else "order wrong"
    lines = [
        (
            f"Event Detection Accuracy:    {m['event_detection_accuracy']:.2%} "
            f"({m['events_found']}/{m['events_total']} events) [method: {m['method']}]"
        ),
        (
            f"Timeline Sequence Accuracy:  {m['timeline_sequence_accuracy']:.2%} ({order}) "
            f"[order score {m['timeline_order_score']:.3f}]"
        ),
        (
            f"Metrics Accuracy:            {m['metrics_accuracy']:.2%} "
            f"({m['metrics_correct']}/{m['metrics_total']} metrics)"
        ),
        (
            f"Anomaly Detection:           {m['anomaly_detection']:.2%} "
            f"({m['anomalies_found']}/{m['anomalies_total']} detected)"
        ),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    files = argv if argv else sorted(str(p) for p in HERE.glob("aio_*.ndjson"))
    for name in files:
        result = score_run(name)
        for doc_id in result.documents["doc_id"]:
            print(f"== {Path(name).stem} / {doc_id}")
            print(render(seed_003_metrics(result, doc_id)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
