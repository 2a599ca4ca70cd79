"""The hand-written per-document baseline: SPEC scoring the way a careful user writes it by hand.

For each document pair: walk both dicts into ``{path: value}`` (aligning lists of records with
rapidfuzz per pair, greedy by default), put each path in its seed-000 set, score the fields
present on both sides with EXACT / FUZZY / NUMERIC / SEMANTIC (lexical token-set), count the
confusion cells per attribute, and keep running sums. One process, plain dicts and loops, orjson
for parsing. It does not depend on the engine (it reads the config itself), so it doubles as an
independent check of the engine's numbers on the generated invoices.

    python benchmarks/baseline.py --gt DIR/gt.ndjson --aio DIR/aio.ndjson --config config.json
    python benchmarks/baseline.py --conformance ../shared/conformance    # self-check vs SPEC

Not covered (a hand-written loop would not bother): structured-output extraction of AIO text
(SPEC §8: a non-object AIO line is an error here), duplicate-key warnings, huge-integer reports.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

ABSENT = object()  # a path one side does not have (different from a null value)
STRATEGIES = ("EXACT", "FUZZY", "SEMANTIC", "NUMERIC", "IGNORE")

_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_NUMBER = re.compile(
    r"^(?:[+-]?[$€£¥₹]?|[$€£¥₹][+-])(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"
)
_TOP_KEYS = {
    "field_strategies", "default_text_strategy", "fuzzy_threshold", "semantic_threshold",
    "numeric", "weights", "pass_threshold", "lists", "attributes", "empty_containers_are_null",
    "null_extra_is_hallucination", "id_field",
}
_NEEDS_QUOTES = re.compile(r'[.\[\]"\s\x00-\x1f\x7f]')


# --- config -------------------------------------------------------------------------------------


class Config:
    """SPEC §11 config read into plain attributes (a plain {field: strategy} map is accepted)."""

    def __init__(self, raw: Mapping[str, Any] | str | Path | None = None):
        if isinstance(raw, str | Path):
            raw = json.loads(Path(raw).read_text(encoding="utf-8"))
        raw = dict(raw or {})
        if raw and all(
            isinstance(v, str) and v.upper() in STRATEGIES and k not in _TOP_KEYS
            for k, v in raw.items()
        ):
            raw = {"field_strategies": raw}
        self.field_strategies = {k: v.upper() for k, v in raw.get("field_strategies", {}).items()}
        self.default_text_strategy = raw.get("default_text_strategy", "SEMANTIC").upper()
        self.fuzzy_threshold = raw.get("fuzzy_threshold", 0.85)
        self.semantic_threshold = raw.get("semantic_threshold", 0.80)
        numeric = raw.get("numeric", {})
        self.rel_tol = numeric.get("rel_tol", 0.10)
        self.abs_tol = numeric.get("abs_tol", 0.0)
        w = {"accuracy": 0.45, "completeness": 0.25, "safety": 0.15, "hallucination": 0.15}
        w.update(raw.get("weights", {}))
        self.weights = w
        self.pass_threshold = raw.get("pass_threshold", 0.7)
        self.lists = {
            name: {
                "match_fields": spec.get("match_fields"),
                "threshold": spec.get("threshold", 0.8),
                "method": spec.get("method", "greedy").lower(),
            }
            for name, spec in raw.get("lists", {}).items()
        }
        attrs = raw.get("attributes")
        self.attributes = None if attrs is None else set(attrs)
        self.empty_containers_are_null = raw.get("empty_containers_are_null", False)
        self.null_extra_is_hallucination = raw.get("null_extra_is_hallucination", False)
        self.id_field = raw.get("id_field", "doc_id")


# --- values -------------------------------------------------------------------------------------


def is_null(v: Any, cfg: Config) -> bool:
    if v is None:
        return True
    if isinstance(v, str):
        return not v.strip()
    if isinstance(v, float):
        return v != v
    if cfg.empty_containers_are_null and isinstance(v, list | dict):
        return not v
    return False


def canonical(v: Any) -> str:
    if isinstance(v, str):
        return " ".join(v.split()).lower()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v) and v == int(v) and abs(v) < 2**53:
            return str(int(v))
        return repr(v)
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).lower()


_CODES = ("usd|eur|gbp|jpy|chf|cad|aud|nzd|cny|inr|sek|nok|dkk|pln|czk|huf|sgd|hkd|krw|brl|mxn"
          "|zar|try|ils|aed|sar")
# the engine's numbers as text (docs/DECISIONS.md 52), on the lower-cased text, commas removed
_NUMBER_TEXT = re.compile(
    rf"^(\()?\s*(?:(?:{_CODES})\s*)?([+-]?[$€£¥₹]?|[$€£¥₹][+-])\s*"
    r"((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)"
    rf"\s*([$€£¥₹])?\s*(?:{_CODES})?\s*(\))?$"
)
_MONTH_NUMBER = {m: i % 12 + 1 for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec january february march april may june july "
    "august september october november december".split())} | {"sept": 9}
# the engine's dates (docs/DECISIONS.md 51) under the default date_order DMY (the baseline has
# no date_order): (regex, group of year, month, day)
_DATES = [
    (re.compile(r"^([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})$"), 1, 2, 3),
    (re.compile(r"^([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})$"), 3, 2, 1),
    (re.compile(r"^([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{4})$"), 3, 2, 1),
    (re.compile(r"^([0-9]{1,2})[- ]([a-z]+)\.?[- ]([0-9]{4})$"), 3, 2, 1),
    (re.compile(r"^([a-z]+)\.? ([0-9]{1,2}),? ([0-9]{4})$"), 3, 1, 2),
]


def to_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        m = _NUMBER_TEXT.match(" ".join(v.split()).lower().replace(",", ""))
        if not m or (m[1] is None) != (m[5] is None) or (m[1] and m[2] and m[2] in "+-"):
            return None
        if m[4] and m[2].strip("+-"):
            return None  # two currency signs
        x = float(m[3])
        if not math.isfinite(x):
            return None
        return -x if "-" in m[2] or m[1] else x
    return None


def date_key(v: Any) -> tuple[int, int, int] | None:
    """(year, month, day) of a date string in a format the engine reads, else None."""
    if not isinstance(v, str):
        return None
    s = " ".join(v.split()).lower()
    if _ISO_DATE.match(s.upper()):  # the pattern spells T and Z upper-case
        parts = (s[0:4], s[5:7], s[8:10])
    else:
        for rx, y, mo, d in _DATES:
            m = rx.match(s)
            if m:
                month = m[mo] if m[mo].isdigit() else _MONTH_NUMBER.get(m[mo])
                if month is None:
                    return None
                parts = (m[y], month, m[d])
                break
        else:
            return None
    import datetime

    try:
        datetime.date(int(parts[0]), int(parts[1]), int(parts[2]))
    except ValueError:
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def same_value(g: Any, a: Any) -> bool:
    """EXACT beyond equal text: the same calendar day, or a GT number below 2**53 and an AIO
    numeric string of the same value."""
    if isinstance(g, str):
        d = date_key(g)
        return d is not None and d == date_key(a)
    if isinstance(a, str) and isinstance(g, int | float) and not isinstance(g, bool) \
            and abs(g) < 2**53:
        return to_number(a) == float(g)
    return False


def kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def child_path(parent: str, key: str) -> str:
    if not key or _NEEDS_QUOTES.search(key):
        return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"
    return f"{parent}.{key}" if parent else key


# --- flattening with list alignment (SPEC §2, §5) -----------------------------------------------


def _shape(v: Any) -> str | None:
    if v is ABSENT:
        return None
    if isinstance(v, dict):
        return "obj" if v else "leaf"
    if isinstance(v, list):
        if not v:
            return "empty"
        return "lor" if all(isinstance(x, dict) for x in v) else "leaf"
    return "leaf"


def _field_similarity(g: Any, a: Any, cfg: Config) -> float | None:
    """One match field of a pair of list items; None when both sides are empty."""
    g_empty = g is ABSENT or is_null(g, cfg)
    a_empty = a is ABSENT or is_null(a, cfg)
    if g_empty and a_empty:
        return None
    if g_empty or a_empty:
        return 0.0
    if isinstance(g, str) and date_key(g) is None:
        return Levenshtein.normalized_similarity(canonical(g), canonical(a))
    if canonical(g) == canonical(a):
        return 1.0
    if isinstance(g, str):
        return 1.0 if date_key(g) == date_key(a) else 0.0
    small = isinstance(g, int | float) and not isinstance(g, bool) and abs(g) < 2**53
    return 1.0 if small and not isinstance(a, bool) and to_number(a) == float(g) else 0.0


def align(gl: list[dict], al: list[dict], list_attr: str, cfg: Config):
    """Matched (gt_index, aio_index, similarity) pairs of two lists of records."""
    lc = cfg.lists.get(list_attr, {})
    method = lc.get("method", "greedy")
    threshold = lc.get("threshold", 0.8)
    fields = lc.get("match_fields")
    if fields is None:
        fields = {
            k
            for item in gl
            for k, v in item.items()
            if v is None or isinstance(v, str | int | float | bool)
        }
    sims = []
    for g in gl:
        row = []
        for a in al:
            scores = [_field_similarity(g.get(f, ABSENT), a.get(f, ABSENT), cfg) for f in fields]
            scores = [s for s in scores if s is not None]
            row.append(sum(scores) / len(scores) if scores else 0.0)
        sims.append(row)
    if method == "index":
        return [(i, i, sims[i][i]) for i in range(min(len(gl), len(al)))]
    if method == "optimal":
        if not gl or not al:
            return []
        import numpy as np
        from scipy.optimize import linear_sum_assignment

        s = np.array(sims)
        s[s < threshold] = 0.0
        rows, cols = linear_sum_assignment(s, maximize=True)
        return sorted(
            (int(i), int(j), sims[i][j]) for i, j in zip(rows, cols) if sims[i][j] >= threshold
        )
    cands = sorted(
        (-sims[i][j], i, j)
        for i in range(len(gl))
        for j in range(len(al))
        if sims[i][j] >= threshold
    )
    taken_g, taken_a, pairs = set(), set(), []
    for neg, i, j in cands:
        if i not in taken_g and j not in taken_a:
            taken_g.add(i)
            taken_a.add(j)
            pairs.append((i, j, -neg))
    return sorted(pairs)


def flatten_pair(gt: dict, aio: dict, cfg: Config):
    """Both documents as {path: value}, the path's (attribute, bare name), and the alignments."""
    g_leaves: dict[str, Any] = {}
    a_leaves: dict[str, Any] = {}
    names: dict[str, tuple[str, str]] = {}
    alignments: list[dict] = []

    def walk(g: Any, a: Any, path: str, attr: str, bare: str) -> None:
        gs, as_ = _shape(g), _shape(a)
        if gs == "empty":
            gs = "lor" if as_ == "lor" else "leaf"
        if as_ == "empty":
            as_ = "lor" if gs == "lor" else "leaf"
        if gs == "leaf":
            g_leaves[path] = g
            names[path] = (attr, bare)
        if as_ == "leaf":
            a_leaves[path] = a
            names[path] = (attr, bare)
        if gs == "obj" or as_ == "obj":
            members(g if gs == "obj" else {}, a if as_ == "obj" else {}, path, attr)
        if gs == "lor" or as_ == "lor":
            gl = g if gs == "lor" else []
            al = a if as_ == "lor" else []
            pairs = align(gl, al, attr, cfg)
            aio_order = [j for _, j, _ in pairs]  # already sorted by GT index
            n = len(aio_order)
            concordant = sum(
                aio_order[x] < aio_order[y] for x in range(n) for y in range(x + 1, n)
            )
            alignments.append({
                "list_path": path,
                "pairs": [[i, j] for i, j, _ in pairs],
                "order_correct": all(aio_order[x] < aio_order[x + 1] for x in range(n - 1)),
                "order_score": concordant / (n * (n - 1) / 2) if n >= 2 else 1.0,
            })
            item_attr = attr + "[]"
            matched_g = {i for i, _, _ in pairs}
            matched_a = {j for _, j, _ in pairs}
            for i, j, _ in pairs:
                walk(gl[i], al[j], f"{path}[{i}]", item_attr, bare)
            for i, item in enumerate(gl):
                if i not in matched_g:
                    walk(item, ABSENT, f"{path}[{i}]", item_attr, bare)
            extra = len(gl)
            for j, item in enumerate(al):
                if j not in matched_a:
                    walk(ABSENT, item, f"{path}[{extra}]", item_attr, bare)
                    extra += 1

    def members(gd: dict, ad: dict, path: str, attr: str) -> None:
        for k in list(gd) + [k for k in ad if k not in gd]:
            walk(gd.get(k, ABSENT), ad.get(k, ABSENT), child_path(path, k), child_path(attr, k), k)

    members(gt, aio, "", "")
    return g_leaves, a_leaves, names, alignments


# --- scoring one pair (SPEC §3, §4, §6) -------------------------------------------------------


def strategy_for(attr: str, bare: str, value: Any, cfg: Config) -> str:
    s = cfg.field_strategies.get(attr) or cfg.field_strategies.get(bare)
    if s:
        return s
    if value is None or (isinstance(value, str) and not value.strip()):
        return cfg.default_text_strategy
    if isinstance(value, str):
        raw = value.strip()
        if _ISO_DATE.match(raw) or _EMAIL.match(raw) or date_key(raw) is not None:
            return "EXACT"
        return cfg.default_text_strategy
    return "EXACT"  # bool, number, array, object


def similarity(strategy: str, g: Any, a: Any, cfg: Config) -> tuple[float, bool]:
    if strategy == "NUMERIC":
        x, y = to_number(g), to_number(a)
        if x is None or y is None:
            return 0.0, False
        diff = abs(x - y)
        sim = 1.0 - min(1.0, diff / max(abs(x), 1e-12))
        return sim, diff <= max(cfg.abs_tol, cfg.rel_tol * abs(x))
    cg, ca = canonical(g), canonical(a)
    if strategy == "EXACT":
        return (1.0, True) if cg == ca or same_value(g, a) else (0.0, False)
    if strategy == "FUZZY":
        sim = Levenshtein.normalized_similarity(cg, ca)
        return sim, sim >= cfg.fuzzy_threshold
    sim = 1.0 if not cg and not ca else fuzz.token_set_ratio(cg, ca) / 100.0  # SEMANTIC
    return sim, sim >= cfg.semantic_threshold


def f1_of(tp: int, fp: int, fn: int) -> float | None:
    return None if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def score_pair(gt: dict, aio: dict, cfg: Config, safety: float = 1.0) -> dict:
    """One document's sets, metrics and confusion cells ({attribute: [tp, tn, fp, fn]})."""
    g_leaves, a_leaves, names, alignments = flatten_pair(gt, aio, cfg)
    n_gt_non_null = n_both = n_missing = n_extra = n_gt_null_aio = 0
    n_scored = n_correct = 0
    cells: dict[str, list[int]] = {}
    fields = []
    for path, (attr, bare) in names.items():
        gp, ap = path in g_leaves, path in a_leaves
        gv = g_leaves.get(path, ABSENT)
        av = a_leaves.get(path, ABSENT)
        g_empty = not gp or is_null(gv, cfg)
        a_empty = not ap or is_null(av, cfg)
        strategy = strategy_for(
            attr, bare, gv if not g_empty else (av if not a_empty else None), cfg
        )
        bucket, match, sim = None, None, None
        if not g_empty:
            n_gt_non_null += 1
            if a_empty:
                n_missing += 1
                bucket = "aio_missing_or_null"
            else:
                n_both += 1
                bucket = "both_non_null"
                if strategy != "IGNORE":
                    sim, match = similarity(strategy, gv, av, cfg)
                    n_scored += 1
                    n_correct += match
        elif gp:
            if not a_empty:
                n_gt_null_aio += 1
                bucket = "gt_null_aio_has_value"
        elif ap and (not a_empty or cfg.null_extra_is_hallucination):
            n_extra += 1
            bucket = "extra_keys"
        cell = None
        if strategy != "IGNORE" and (cfg.attributes is None or attr in cfg.attributes):
            c = cells.setdefault(attr, [0, 0, 0, 0])
            if g_empty and a_empty:
                c[1] += 1
                cell = "TN"
            elif g_empty:
                c[2] += 1
                cell = "FP"
            elif a_empty:
                c[3] += 1
                cell = "FN"
            elif match:
                c[0] += 1
                cell = "TP"
            else:
                c[2] += 1
                c[3] += 1
                cell = "FP+FN"
        fields.append({"path": path, "attribute": attr, "bucket": bucket,
                       "strategy": strategy, "similarity": sim, "match": match, "cell": cell})
    if cfg.attributes is not None:
        present = {attr for attr, _ in names.values()}
        for attr in cfg.attributes - present:
            cells.setdefault(attr, [0, 0, 0, 0])[1] += 1
    total_distinct = len(names)
    completeness = n_both / n_gt_non_null if n_gt_non_null else 1.0
    hallucination = (n_extra + n_gt_null_aio) / total_distinct if total_distinct else 0.0
    accuracy = n_correct / n_scored if n_scored else 1.0
    w = cfg.weights
    rqs = (
        w["accuracy"] * accuracy
        + w["completeness"] * completeness
        + w["safety"] * safety
        - w["hallucination"] * hallucination
    )
    rqs = min(1.0, max(0.0, rqs))
    f1s = [f for tp, _, fp, fn in cells.values() if (f := f1_of(tp, fp, fn)) is not None]
    return {
        "completeness": completeness,
        "hallucination": hallucination,
        "accuracy": accuracy,
        "rqs": rqs,
        "macro_f1": sum(f1s) / len(f1s) if f1s else None,
        "passed": rqs >= cfg.pass_threshold,
        "n_gt_non_null": n_gt_non_null,
        "n_both_non_null": n_both,
        "n_aio_missing_or_null": n_missing,
        "n_extra_keys": n_extra,
        "n_gt_null_aio_has_value": n_gt_null_aio,
        "n_total_distinct": total_distinct,
        "n_scored": n_scored,
        "n_correct": n_correct,
        "cells": cells,
        "fields": fields,
        "alignments": alignments,
    }


# --- dataset ------------------------------------------------------------------------------------


def evaluate_pairs(
    pairs: Iterable[tuple[str, dict, dict, float]],
    cfg: Config,
    *,
    n_errors: int = 0,
    keep_documents: bool = False,
) -> dict:
    """Score (doc_id, gt, aio, safety) pairs; sum the cells per attribute; summary as SPEC §7."""
    totals: dict[str, list[int]] = {}
    sums = {"completeness": 0.0, "hallucination": 0.0, "accuracy": 0.0, "rqs": 0.0}
    n = n_passed = 0
    documents = {}
    for doc_id, gt, aio, safety in pairs:
        d = score_pair(gt, aio, cfg, safety)
        n += 1
        n_passed += d["passed"]
        for k in sums:
            sums[k] += d[k]
        for attr, c in d["cells"].items():
            t = totals.setdefault(attr, [0, 0, 0, 0])
            for i in range(4):
                t[i] += c[i]
        if keep_documents:
            documents[doc_id] = d
    attributes = {}
    for attr, (tp, tn, fp, fn) in sorted(totals.items()):
        attributes[attr] = {
            "tp": tp, "tn": tn, "fp": fp, "fn": fn, "support": tp + fn,
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
            "f1": f1_of(tp, fp, fn),
        }
    f1s = [a["f1"] for a in attributes.values() if a["f1"] is not None]
    TP, _, FP, FN = (sum(t[i] for t in totals.values()) for i in range(4))
    pass_rate = n_passed / n if n else None
    summary = {
        "n_documents": n,
        **{f"mean_{k}": (v / n if n else None) for k, v in sums.items()},
        "macro_f1": sum(f1s) / len(f1s) if f1s else None,
        "micro_f1": f1_of(TP, FP, FN),
        "pass_rate": pass_rate,
        "status": None if pass_rate is None else (
            "healthy" if pass_rate >= 0.85 else "warning" if pass_rate >= 0.70 else "critical"
        ),
        "n_errors": n_errors,
    }
    out = {"summary": summary, "attributes": attributes}
    if keep_documents:
        out["documents"] = documents
    return out


def _read_ndjson(path: str | Path, id_field: str, errors: list) -> Iterator[tuple[str, dict]]:
    with open(path, "rb") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                errors.append((str(path), line_no, f"not JSON: {exc}"))
                continue
            if not isinstance(rec, dict) or id_field not in rec:
                errors.append((str(path), line_no, f"not an object with '{id_field}'"))
                continue
            doc_id = str(rec.pop(id_field))
            yield doc_id, rec


def run_baseline(
    gt_path: str | Path,
    aio_path: str | Path,
    config: Mapping[str, Any] | str | Path | None = None,
    *,
    keep_documents: bool = False,
) -> dict:
    """Score two NDJSON files paired by ``id_field``; returns ``{"summary", "attributes"}``.

    A GT-only document is scored against ``{}`` (AIO missing), an AIO-only one against a GT
    ``{}``; unparsable lines and duplicate ids are counted in ``summary["n_errors"]``.
    """
    cfg = config if isinstance(config, Config) else Config(config)
    errors: list = []
    aio_docs: dict[str, dict] = {}
    for doc_id, rec in _read_ndjson(aio_path, cfg.id_field, errors):
        if doc_id in aio_docs:
            errors.append((str(aio_path), None, f"duplicate doc_id {doc_id!r}"))
        else:
            aio_docs[doc_id] = rec

    def pairs():
        seen = set()
        for doc_id, gt in _read_ndjson(gt_path, cfg.id_field, errors):
            if doc_id in seen:
                errors.append((str(gt_path), None, f"duplicate doc_id {doc_id!r}"))
                continue
            seen.add(doc_id)
            yield doc_id, gt, aio_docs.pop(doc_id, {}), 1.0
        for doc_id, aio in list(aio_docs.items()):  # AIO-only documents
            yield doc_id, {}, aio, 1.0

    result = evaluate_pairs(pairs(), cfg, keep_documents=keep_documents)
    result["summary"]["n_errors"] = len(errors)
    result["errors"] = errors
    return result


# --- self-check against the shared conformance cases --------------------------------------------


def check_conformance(directory: str | Path, tol: float = 1e-9) -> list[str]:
    """Differences between this baseline and SPEC's conformance cases (empty list: all agree)."""
    problems = []

    def close(x, y):
        if isinstance(x, float) or isinstance(y, float):
            return x is not None and y is not None and abs(x - y) <= tol
        return x == y

    for case_path in sorted(Path(directory).glob("*.json")):
        case = json.loads(case_path.read_text(encoding="utf-8"))
        cfg = Config(case["config"])
        docs = [(d["doc_id"], d["gt"], d["aio"], d.get("safety", 1.0)) for d in case["documents"]]
        got = evaluate_pairs(docs, cfg, keep_documents=True)
        exp = case["expected"]
        name = case_path.stem
        for k, v in exp.get("summary", {}).items():
            if not close(got["summary"].get(k), v):
                problems.append(f"{name}: summary.{k} = {got['summary'].get(k)!r}, expected {v!r}")
        for doc_id, e in exp.get("documents", {}).items():
            d = got["documents"][doc_id]
            for k, v in e.items():
                if not close(d.get(k), v):
                    problems.append(f"{name}/{doc_id}: {k} = {d.get(k)!r}, expected {v!r}")
        if set(exp.get("attributes", {})) != set(got["attributes"]):
            problems.append(
                f"{name}: attributes {sorted(got['attributes'])} != {sorted(exp['attributes'])}"
            )
        for attr, e in exp.get("attributes", {}).items():
            a = got["attributes"].get(attr, {})
            for k, v in e.items():
                if k in a and not close(a[k], v):
                    problems.append(f"{name}: {attr}.{k} = {a[k]!r}, expected {v!r}")
        for al in exp.get("alignments", []):
            mine = [
                x for x in got["documents"][al["doc_id"]]["alignments"]
                if x["list_path"] == al["list_path"]
            ]
            if not mine or any(not close(mine[0][k], al[k]) for k in al if k in mine[0]):
                problems.append(f"{name}: alignment {al} != {mine}")
        for doc_id, rows in exp.get("fields", {}).items():
            mine = {f["path"]: f for f in got["documents"][doc_id]["fields"]}
            for row in rows:
                f = mine.get(row["path"])
                if f is None:
                    problems.append(f"{name}/{doc_id}: no field {row['path']!r}")
                    continue
                for k, v in row.items():
                    if k in f and not close(f[k], v):
                        problems.append(f"{name}/{doc_id}/{row['path']}: {k}={f[k]!r}, exp {v!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gt")
    p.add_argument("--aio")
    p.add_argument("--config", help="SPEC §11 config (JSON)")
    p.add_argument("--conformance", help="check against SPEC's conformance cases in this folder")
    args = p.parse_args(argv)
    if args.conformance:
        problems = check_conformance(args.conformance)
        print("\n".join(problems) or "baseline agrees with every conformance case")
        return 1 if problems else 0
    if not (args.gt and args.aio):
        p.error("--gt and --aio are required (or --conformance)")
    t0 = time.perf_counter()
    result = run_baseline(args.gt, args.aio, args.config)
    dt = time.perf_counter() - t0
    n = result["summary"]["n_documents"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result["summary"], indent=2))
    print(
        f"baseline: {n} documents in {dt:.2f} s = {n / dt:,.0f} docs/s, peak RSS {peak_mb:.0f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
