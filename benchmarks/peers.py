"""Peers scored on the same generated invoice pairs: stickler-eval and ANLS*.

stickler-eval is no dependency of the project (anls-star is a dev dependency). Install the peers
into a separate environment so they do not move the project's pins (stickler-eval pulls
pydantic, munkres, json-schema-to-pydantic, phonenumberslite); the engine's own ANLS* row runs
in the project's environment (benchmarks/run.py does both)::

    python -m venv --system-site-packages /tmp/peers
    /tmp/peers/bin/pip install stickler-eval anls-star
    /tmp/peers/bin/python benchmarks/peers.py --gt DIR/gt.ndjson --aio DIR/aio.ndjson \\
        --config jsoneval_polars/sample/config.json --n 200 --tools stickler,anls-star
    python benchmarks/peers.py --gt DIR/gt.ndjson --aio DIR/aio.ndjson --n 200 --tools engine

Each ``run_*`` function takes a list of ``(doc_id, gt, aio)`` pairs and returns a dict with
``tool``, ``version``, ``n_docs``, ``n_failed``, ``failures`` (reason -> count, with one example
doc id), ``seconds``, ``docs_per_s`` and the peer's own headline metrics; a peer that is not
installed or fails to import returns ``{"tool", "error"}`` with the exact exception text.

How each peer is used (read from its installed source, stickler-eval 1.0.0, anls-star 1.0.1):

* stickler: ``StructuredModel.from_json_schema(schema)`` builds a pydantic model from a JSON
  schema with ``x-aws-stickler-*`` comparator annotations; per pair
  ``Model.from_json(gt)`` / ``Model.from_json(aio)``, then
  ``BulkStructuredModelEvaluator.update(gt_model, aio_model)`` (which runs ``compare_with`` with
  the confusion matrix) and one ``compute()`` at the end. The schema is derived from our config:
  EXACT -> ExactComparator (case-insensitive), FUZZY -> LevenshteinComparator at
  ``fuzzy_threshold``, SEMANTIC -> FuzzyComparator (token-based) at ``semantic_threshold``,
  NUMERIC -> NumericComparator with the config's tolerances. Numeric fields are typed
  ``number | string | null`` (with ``number | null``, pydantic rejects ``"$1,200.00"`` and the
  whole document fails). Line items are a list of objects (stickler's Hungarian matching, match
  threshold from ``lists.line_items.threshold``).
* ANLS*: ``anls_score(gt, aio)`` per pair, no configuration (strings by normalized Levenshtein,
  lists by Hungarian matching, dicts penalise missing and hallucinated keys). Beside it,
  ``run_engine_anls`` scores the same pairs with jsoneval_polars and ``anls: true`` and reports
  its ``mean_anls``, the largest per-document difference from the package and its speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

Pair = tuple[str, dict, dict]

# The generator's invoice shape: field -> JSON kind, nested objects as dicts, the list of records
# as a one-element list.
INVOICE_SHAPE: dict[str, Any] = {
    "invoice_number": "string", "po_number": "string", "issue_date": "string",
    "due_date": "string", "currency": "string", "payment_terms": "string",
    "customer_name": "string", "customer_email": "string", "notes": "string",
    "subtotal": "number", "tax": "number", "shipping": "number", "total": "number",
    "paid": "boolean",
    "vendor": {
        "name": "string", "vat_id": "string",
        "address": {"street": "string", "city": "string", "country": "string"},
    },
    "line_items": [{
        "description": "string", "quantity": "number", "unit_price": "number",
        "amount": "number", "sku": "string",
    }],
}


def load_pairs(gt_path: str | Path, aio_path: str | Path, n: int | None = None) -> list[Pair]:
    """The first ``n`` GT documents that have an AIO partner, paired by ``doc_id``."""
    with open(aio_path, "rb") as f:
        aio = {}
        for line in f:
            rec = orjson.loads(line)
            aio[str(rec.pop("doc_id"))] = rec
    out = []
    with open(gt_path, "rb") as f:
        for line in f:
            rec = orjson.loads(line)
            doc_id = str(rec.pop("doc_id"))
            if doc_id in aio:
                out.append((doc_id, rec, aio[doc_id]))
                if n is not None and len(out) >= n:
                    break
    return out


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _timed_result(tool: str, dist: str, n: int, seconds: float, failures: Counter,
                  examples: dict, **metrics) -> dict:
    return {
        "tool": tool,
        "version": _version(dist),
        "n_docs": n,
        "n_failed": sum(failures.values()),
        "failures": {k: {"count": v, "example_doc_id": examples[k]} for k, v in failures.items()},
        "seconds": seconds,
        "docs_per_s": n / seconds if seconds else None,
        **metrics,
    }


# --- stickler-eval ------------------------------------------------------------------------------


def stickler_schema(config: Mapping[str, Any] | None = None) -> dict:
    """A JSON schema with ``x-aws-stickler-*`` annotations equivalent to our config (SPEC §11)."""
    config = dict(config or {})
    strategies = {k: v.upper() for k, v in config.get("field_strategies", {}).items()}
    default = config.get("default_text_strategy", "SEMANTIC").upper()
    numeric = config.get("numeric", {})
    item_threshold = config.get("lists", {}).get("line_items", {}).get("threshold", 0.8)

    def leaf(attr: str, bare: str, kind: str) -> dict | None:
        strategy = strategies.get(attr) or strategies.get(bare)
        if strategy is None:
            strategy = default if kind == "string" else "EXACT"
        if strategy == "IGNORE":
            return None
        types = {"string": ["string", "null"], "boolean": ["boolean", "null"],
                 "number": ["number", "string", "null"]}[kind]
        if strategy == "NUMERIC":
            return {
                "type": ["number", "string", "null"],
                "x-aws-stickler-comparator": "NumericComparator",
                "x-aws-stickler-threshold": 1.0,
                "x-aws-stickler-comparator-config": {
                    "relative_tolerance": numeric.get("rel_tol", 0.10),
                    "absolute_tolerance": numeric.get("abs_tol", 0.0),
                },
            }
        if strategy == "EXACT":
            return {"type": types, "x-aws-stickler-comparator": "ExactComparator",
                    "x-aws-stickler-threshold": 1.0,
                    "x-aws-stickler-comparator-config": {"case_sensitive": False}}
        if strategy == "FUZZY":
            return {"type": types, "x-aws-stickler-comparator": "LevenshteinComparator",
                    "x-aws-stickler-threshold": config.get("fuzzy_threshold", 0.85)}
        return {"type": types, "x-aws-stickler-comparator": "FuzzyComparator",
                "x-aws-stickler-threshold": config.get("semantic_threshold", 0.80)}

    def obj(shape: dict, attr: str) -> dict:
        props = {}
        for key, sub in shape.items():
            sub_attr = f"{attr}.{key}" if attr else key
            if isinstance(sub, dict):
                props[key] = obj(sub, sub_attr)
            elif isinstance(sub, list):
                item = obj(sub[0], sub_attr + "[]")
                item["x-aws-stickler-match-threshold"] = item_threshold
                props[key] = {"type": "array", "items": item}
            else:
                spec = leaf(sub_attr, key, sub)
                if spec is not None:
                    props[key] = spec
        return {"type": "object", "properties": props}

    schema = obj(INVOICE_SHAPE, "")
    schema["x-aws-stickler-model-name"] = "Invoice"
    return schema


def run_stickler(pairs: list[Pair], config: Mapping[str, Any] | None = None) -> dict:
    """Score ``pairs`` with stickler-eval; per-document failures are counted, not raised."""
    try:
        from stickler import StructuredModel
        from stickler.structured_object_evaluator.bulk_structured_model_evaluator import (
            BulkStructuredModelEvaluator,
        )
    except Exception as exc:  # report exactly why the peer cannot run
        return {"tool": "stickler-eval", "error": f"{type(exc).__name__}: {exc}"}
    model = StructuredModel.from_json_schema(stickler_schema(config))
    evaluator = BulkStructuredModelEvaluator(target_schema=model, verbose=False)
    failures: Counter = Counter()
    examples: dict = {}
    t0 = time.perf_counter()
    for doc_id, gt, aio in pairs:
        try:
            gt_model = model.from_json(gt)
            aio_model = model.from_json(aio)
        except Exception as exc:  # pydantic ValidationError on the AIO, mostly
            reason = f"{type(exc).__name__}: {_first_lines(exc)}"
            failures[reason] += 1
            examples.setdefault(reason, doc_id)
            continue
        evaluator.update(gt_model, aio_model, doc_id=doc_id)
    result = evaluator.compute()
    seconds = time.perf_counter() - t0
    metrics = result.metrics or {}
    for err in result.errors or []:  # exceptions inside compare_with
        reason = f"{err['error_type']} in compare_with: {err['error'][:120]}"
        failures[reason] += 1
        examples.setdefault(reason, err["doc_id"])
    return _timed_result(
        "stickler-eval", "stickler-eval", len(pairs), seconds, failures, examples,
        precision=metrics.get("cm_precision"), recall=metrics.get("cm_recall"),
        f1=metrics.get("cm_f1"), mean_overall_score=metrics.get("weighted_overall_score"),
        field_metrics=result.field_metrics,
    )


def _first_lines(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    # pydantic: "1 validation error for Invoice" / "<field>" / "<message> [type=...]"
    text = " | ".join(lines[1:3]) if len(lines) >= 3 else " | ".join(lines)
    return text.split(", input_value=")[0]


# --- ANLS* --------------------------------------------------------------------------------------


def run_anls_star(pairs: list[Pair]) -> dict:
    """Score ``pairs`` with ANLS* (``anls_score(gt, aio)``): the mean score over documents."""
    try:
        from anls_star import anls_score
    except Exception as exc:
        return {"tool": "anls-star", "error": f"{type(exc).__name__}: {exc}"}
    failures: Counter = Counter()
    examples: dict = {}
    total = 0.0
    scored = 0
    t0 = time.perf_counter()
    for doc_id, gt, aio in pairs:
        try:
            total += anls_score(gt, aio)
            scored += 1
        except Exception as exc:
            reason = f"{type(exc).__name__}: {str(exc)[:160]}"
            failures[reason] += 1
            examples.setdefault(reason, doc_id)
    seconds = time.perf_counter() - t0
    return _timed_result("anls-star", "anls-star", len(pairs), seconds, failures, examples,
                         mean_anls=total / scored if scored else None)


def run_engine_anls(pairs: list[Pair]) -> dict:
    """Score ``pairs`` with jsoneval_polars and ``anls: true``: its mean_anls and, when anls-star
    is installed, the largest per-document difference from ``anls_score``."""
    from jsoneval_polars import evaluate

    gt = [{"doc_id": d, **g} for d, g, _ in pairs]
    aio = [{"doc_id": d, **a} for d, _, a in pairs]
    t0 = time.perf_counter()
    result = evaluate(gt, aio, config={"anls": True})
    seconds = time.perf_counter() - t0
    out = _timed_result("jsoneval_polars (anls: true)", "jsoneval_polars", len(pairs), seconds,
                        Counter(), {}, mean_anls=result.summary["mean_anls"],
                        anls_seconds=result.timings.get("anls"))
    try:
        from anls_star import anls_score
    except Exception:
        return out
    ours = dict(result.documents.select("doc_id", "anls").iter_rows())
    out["max_abs_diff_vs_anls_star"] = max(
        (abs(ours[d] - anls_score(g, a)) for d, g, a in pairs), default=None)
    return out


TOOLS = ("stickler", "anls-star", "engine")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gt", required=True)
    p.add_argument("--aio", required=True)
    p.add_argument("--config", help="SPEC §11 config (JSON); used to build stickler's schema")
    p.add_argument("--n", type=int, default=200, help="number of pairs to score")
    p.add_argument("--json", action="store_true", help="print the full results as JSON")
    p.add_argument("--tools", default=",".join(TOOLS),
                   help="which of them to run (the engine's row needs jsoneval_polars importable)")
    args = p.parse_args(argv)
    tools = args.tools.split(",")
    if unknown := [t for t in tools if t not in TOOLS]:
        p.error(f"unknown tool {unknown[0]!r}: choose among {', '.join(TOOLS)}")
    config = json.loads(Path(args.config).read_text(encoding="utf-8")) if args.config else {}
    pairs = load_pairs(args.gt, args.aio, args.n)
    runs = {"stickler": lambda: run_stickler(pairs, config),
            "anls-star": lambda: run_anls_star(pairs), "engine": lambda: run_engine_anls(pairs)}
    results = [runs[tool]() for tool in tools]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        if "error" in r:
            print(f"{r['tool']}: cannot run: {r['error']}")
            continue
        extra = {k: r[k] for k in ("precision", "recall", "f1", "mean_overall_score", "mean_anls",
                                   "max_abs_diff_vs_anls_star") if k in r}
        print(f"{r['tool']} {r['version']}: {r['n_docs']} docs in {r['seconds']:.2f} s = "
              f"{r['docs_per_s']:,.0f} docs/s; failed {r['n_failed']}; "
              + ", ".join(f"{k}={v:.1e}" if k.startswith("max_abs") else f"{k}={v:.4f}"
                          for k, v in extra.items() if v is not None))
        for reason, info in r["failures"].items():
            print(f"    {info['count']} x {reason} (e.g. {info['example_doc_id']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
