"""Run-vs-run diff: what changed between two scorings of the same documents.

:func:`diff_runs` takes two runs (a :class:`Result` or a results directory each) and returns a
:class:`RunDiff` with three Polars tables and a summary:

- ``fields``: one row per (doc_id, path) whose cell differs between the runs, including the
  rows present in only one run, with both sides' values and cells and a ``change`` label;
- ``attributes``: per attribute, precision / recall / F1 / support of both runs and the delta
  (b - a; null where either side is null, i.e. undefined);
- ``documents``: per document, RQS of both runs, the delta, pass/fail of both and the number of
  changed fields;
- ``summary``: each numeric dataset figure of both runs and its delta, and the count of changed
  fields by transition (``TP -> FP+FN``: 12).

With ``bootstrap=N``, a paired bootstrap over the shared doc ids (bootstrap.py) adds to
``attributes`` the F1 delta's 95 % interval, p-value and ``f1_significant``, and to the summary
``significance``: the same for micro-F1, macro-F1 and mean RQS. That needs the runs'
per-document ``counts`` tables.

Everything is joins on the two runs' tables; nothing is recomputed from counts, so a diff of
two results directories needs only their Parquet files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .bootstrap import paired_bootstrap
from .results import ResultSource, as_tables

__all__ = ["CORRECT_CELLS", "RunDiff", "diff_runs", "render_diff"]

#: Cells that count as a correct decision; a change between this set and the rest is
#: ``fixed`` (wrong -> correct) or ``regressed`` (correct -> wrong).
CORRECT_CELLS = ("TP", "TN")

_ABSENT = "absent"
_SUMMARY_FIGURES = (
    "n_documents", "mean_rqs", "pass_rate", "micro_f1", "macro_f1", "mean_accuracy",
    "mean_completeness", "mean_hallucination", "mean_anls", "n_errors", "n_warnings",
)


@dataclass(frozen=True)
class RunDiff:
    """Tables of a run-vs-run diff; ``a`` is the baseline and ``b`` the candidate."""

    fields: pl.DataFrame
    attributes: pl.DataFrame
    documents: pl.DataFrame
    summary: dict[str, Any]

    def write(self, out_dir: str | Path) -> Path:
        """``fields.parquet``, ``attributes.parquet``, ``documents.parquet``, ``summary.json``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("fields", "attributes", "documents"):
            getattr(self, name).write_parquet(out / f"{name}.parquet")
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        return out


def _cell_label(side: str) -> pl.Expr:
    return pl.col(f"cell_{side}").fill_null(_ABSENT)


def field_changes(a: pl.LazyFrame, b: pl.LazyFrame) -> pl.LazyFrame:
    """Fields whose cell differs, joined on (doc_id, path); a row in one run only is a change."""
    keep = ["doc_id", "path", "attribute", "gt_value", "aio_value", "cell", "similarity"]
    left = a.select(keep).rename({c: f"{c}_a" for c in keep[2:]})
    right = b.select(keep).rename({c: f"{c}_b" for c in keep[2:]})
    correct = list(CORRECT_CELLS)
    was_ok = pl.col("cell_a").is_in(correct).fill_null(False)
    now_ok = pl.col("cell_b").is_in(correct).fill_null(False)
    return (
        left.join(right, on=["doc_id", "path"], how="full", coalesce=True)
        .filter(pl.col("cell_a").ne_missing(pl.col("cell_b")))
        .select(
            "doc_id",
            "path",
            pl.coalesce("attribute_a", "attribute_b").alias("attribute"),
            pl.coalesce("gt_value_a", "gt_value_b").alias("gt_value"),
            "aio_value_a",
            "aio_value_b",
            "cell_a",
            "cell_b",
            "similarity_a",
            "similarity_b",
            pl.concat_str(_cell_label("a"), pl.lit(" -> "), _cell_label("b")).alias("change"),
            pl.when(pl.col("cell_a").is_null())
            .then(pl.lit("only_b"))
            .when(pl.col("cell_b").is_null())
            .then(pl.lit("only_a"))
            .when(~was_ok & now_ok)
            .then(pl.lit("fixed"))
            .when(was_ok & ~now_ok)
            .then(pl.lit("regressed"))
            .otherwise(pl.lit("changed"))
            .alias("direction"),
        )
        .sort("doc_id", "path")
    )


def attribute_deltas(a: pl.LazyFrame, b: pl.LazyFrame) -> pl.LazyFrame:
    """Per attribute: precision, recall, F1, support of both runs and b - a."""
    metrics = ["precision", "recall", "f1", "support"]
    left = a.select("attribute", *metrics).rename({m: f"{m}_a" for m in metrics})
    right = b.select("attribute", *metrics).rename({m: f"{m}_b" for m in metrics})
    return (
        left.join(right, on="attribute", how="full", coalesce=True)
        .with_columns(
            (pl.col(f"{m}_b") - pl.col(f"{m}_a")).alias(f"{m}_delta") for m in metrics
        )
        .select(
            "attribute",
            *[f"{m}_{s}" for m in metrics for s in ("a", "b", "delta")],
        )
        .sort("attribute")
    )


def document_deltas(a: pl.LazyFrame, b: pl.LazyFrame, changes: pl.LazyFrame) -> pl.LazyFrame:
    """Per document: RQS of both runs, b - a, pass/fail of both, number of changed fields."""
    left = a.select("doc_id", pl.col("rqs").alias("rqs_a"), pl.col("passed").alias("passed_a"))
    right = b.select("doc_id", pl.col("rqs").alias("rqs_b"), pl.col("passed").alias("passed_b"))
    n_changed = changes.group_by("doc_id").agg(pl.len().cast(pl.Int64).alias("n_changed_fields"))
    return (
        left.join(right, on="doc_id", how="full", coalesce=True)
        .with_columns((pl.col("rqs_b") - pl.col("rqs_a")).alias("rqs_delta"))
        .join(n_changed, on="doc_id", how="left")
        .with_columns(pl.col("n_changed_fields").fill_null(0))
        .select("doc_id", "rqs_a", "rqs_b", "rqs_delta", "passed_a", "passed_b", "n_changed_fields")
        .sort("rqs_delta", "doc_id", nulls_last=True)
    )


def diff_runs(a: ResultSource, b: ResultSource, *, bootstrap: int | None = None,
              seed: int | None = None) -> RunDiff:
    """Compare run ``a`` (baseline) with run ``b``; each a :class:`Result` or results directory.
    ``bootstrap=N`` (and ``seed``) adds the paired bootstrap's intervals, p-values and
    significance flags (see the module docstring).

    >>> from jsoneval_polars import evaluate
    >>> gt = [{"doc_id": "d", "name": "Acme", "total": 10}]
    >>> run_a = evaluate(gt, [{"doc_id": "d", "name": "Acme", "total": 12}])
    >>> run_b = evaluate(gt, [{"doc_id": "d", "name": "Acme", "total": 10}])
    >>> d = diff_runs(run_a, run_b)
    >>> d.fields.select("path", "change", "direction").rows()
    [('total', 'FP+FN -> TP', 'fixed')]
    >>> d.attributes.filter(attribute="total")["f1_delta"].item()
    1.0
    """
    ra, rb = as_tables(a), as_tables(b)
    changes = field_changes(ra.lazy("fields"), rb.lazy("fields")).collect()
    attributes = attribute_deltas(ra.lazy("attributes"), rb.lazy("attributes")).collect()
    documents = document_deltas(
        ra.lazy("documents"), rb.lazy("documents"), changes.lazy()
    ).collect()
    figures = {}
    for key in _SUMMARY_FIGURES:
        va, vb = ra.summary.get(key), rb.summary.get(key)
        delta = vb - va if isinstance(va, int | float) and isinstance(vb, int | float) else None
        figures[key] = {"a": va, "b": vb, "delta": delta}
    transitions = (
        changes.group_by("change").len().sort(["len", "change"], descending=[True, False]).rows()
    )
    directions = dict(changes.group_by("direction").len().rows())
    summary = {
        "figures": figures,
        "status": {"a": ra.summary.get("status"), "b": rb.summary.get("status")},
        "n_changed_fields": changes.height,
        "directions": {k: int(directions.get(k, 0)) for k in
                       ("fixed", "regressed", "changed", "only_a", "only_b")},
        "transitions": {change: int(n) for change, n in transitions},
        "n_documents_changed": int(documents["n_changed_fields"].gt(0).sum()),
        "newly_failing": int((documents["passed_a"].fill_null(False)
                              & ~documents["passed_b"].fill_null(True)).sum()),
        "newly_passing": int((~documents["passed_a"].fill_null(True)
                              & documents["passed_b"].fill_null(False)).sum()),
    }
    if bootstrap is not None:
        attributes, summary["significance"] = _significance(ra, rb, attributes, bootstrap, seed)
    return RunDiff(fields=changes, attributes=attributes, documents=documents, summary=summary)


def _significance(ra: Any, rb: Any, attributes: pl.DataFrame, n: int, seed: int | None
                  ) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The paired bootstrap of the two runs joined to the attribute deltas."""
    for side, run in (("A", ra), ("B", rb)):
        try:
            run.lazy("counts")
        except KeyError:
            raise ValueError(
                f"run {side} has no per-document counts table (written before counts were "
                "stored): score it again to compare it with --bootstrap") from None
    table, figures = paired_bootstrap(ra.lazy("counts"), ra.lazy("documents"),
                                      rb.lazy("counts"), rb.lazy("documents"), n, seed)
    table = table.rename({"f1_delta": "f1_delta_shared"})
    return attributes.join(table, on="attribute", how="left", maintain_order="left"), figures


def _num(x: Any, signed: bool = False) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:+d}" if signed else str(x)
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def render_diff(diff: RunDiff, *, top: int = 10, name_a: str = "A", name_b: str = "B") -> str:
    """A readable text summary: headline figures, transitions, attributes and documents that
    moved most."""
    s = diff.summary
    lines = [f"{'':<20} {name_a[:12]:>12} {name_b[:12]:>12} {'delta':>9}"]
    for key, v in s["figures"].items():
        lines.append(f"{key:<20} {_num(v['a']):>12} {_num(v['b']):>12} {_num(v['delta'], True):>9}")
    lines.append(f"{'status':<20} {str(s['status']['a']):>12} {str(s['status']['b']):>12}")
    d = s["directions"]
    lines += [
        "",
        f"{s['n_changed_fields']} fields changed in {s['n_documents_changed']} documents: "
        f"{d['fixed']} fixed, {d['regressed']} regressed, {d['changed']} changed otherwise, "
        f"{d['only_a']} only in {name_a}, {d['only_b']} only in {name_b}; "
        f"{s['newly_passing']} documents newly passing, {s['newly_failing']} newly failing",
    ]
    if s["transitions"]:
        lines.append("transitions: " + ", ".join(f"{k}: {n}" for k, n in s["transitions"].items()))
    if "significance" in s:
        sig = s["significance"]
        lines += ["", f"paired bootstrap over {sig['n_shared_documents']} shared documents "
                  f"({sig['resamples']} resamples), delta {name_b} - {name_a} and its "
                  f"{sig['confidence']:.0%} interval:"]
        for key in ("micro_f1", "macro_f1", "mean_rqs"):
            e = sig[key]
            lines.append(
                f"  {key:<10} {_num(e['delta'], True):>7} [{_num(e['low'], True)}, "
                f"{_num(e['high'], True)}]  p={_num(e['p_value'])}  "
                + ("significant" if e["significant"] else "not significant"))
    moved = (
        diff.attributes.filter(pl.col("f1_delta").fill_null(0) != 0)
        .sort(pl.col("f1_delta").abs(), descending=True)
        .head(top)
    )
    tested = "f1_significant" in diff.attributes.columns
    if moved.height:
        width = min(max(len("attribute"), *(len(x) for x in moved["attribute"])), 40)
        lines += ["", f"attributes whose F1 moved most (of {diff.attributes.height}):",
                  f"{'attribute':<{width}} {'F1 ' + name_a[:6]:>9} {'F1 ' + name_b[:6]:>9} "
                  f"{'delta':>8} {'P delta':>8} {'R delta':>8}"
                  + (f" {'p':>6} significant" if tested else "")]
        for r in moved.iter_rows(named=True):
            name = r["attribute"]
            name = name if len(name) <= width else name[: width - 1] + "…"
            lines.append(
                f"{name:<{width}} {_num(r['f1_a']):>9} {_num(r['f1_b']):>9} "
                f"{_num(r['f1_delta'], True):>8} {_num(r['precision_delta'], True):>8} "
                f"{_num(r['recall_delta'], True):>8}"
                + (f" {_num(r['f1_p_value']):>6} {'yes' if r['f1_significant'] else 'no'}"
                   if tested else "")
            )
    docs = diff.documents.filter(pl.col("rqs_delta").fill_null(0) != 0)
    for title, frame in (
        ("documents whose RQS fell most", docs.filter(pl.col("rqs_delta") < 0).head(top)),
        ("documents whose RQS rose most",
         docs.filter(pl.col("rqs_delta") > 0).sort("rqs_delta", descending=True).head(top)),
    ):
        if frame.height:
            lines += ["", f"{title}:"]
            for r in frame.iter_rows(named=True):
                lines.append(
                    f"  {r['doc_id']:<24} {_num(r['rqs_a'])} -> {_num(r['rqs_b'])} "
                    f"({_num(r['rqs_delta'], True)}), {r['n_changed_fields']} fields changed"
                )
    only = diff.documents.filter(pl.col("rqs_a").is_null() | pl.col("rqs_b").is_null())
    if only.height:
        lines += ["", f"{only.height} documents scored in one run only: "
                  + ", ".join(only["doc_id"].head(top).to_list())
                  + (" …" if only.height > top else "")]
    return "\n".join(lines)
