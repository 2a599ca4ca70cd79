"""The lean loop: the yardstick of issue 11, a per-document Python loop written for speed.

The same metrics as the engine on the invoice data — per-field null/match classes (SPEC §3),
EXACT / NUMERIC / FUZZY (rapidfuzz Levenshtein) / SEMANTIC (rapidfuzz token-set) per pair,
greedy line-item alignment (SPEC §5), per-attribute TP/TN/FP/FN (SPEC §6), per-document
completeness, hallucination, accuracy and RQS, micro-F1 — the way a competent engineer writes
it when speed matters: one process, orjson, one recursive walk per pair that counts as it goes
(no path strings, no per-field records, no pandas), strategies resolved once per attribute,
Levenshtein with ``score_cutoff`` where only the match decision is needed. The AIO file is
held as raw lines keyed by id (parsed once for the id, again when its pair comes), so memory
stays near the file's size.

    python benchmarks/lean_loop.py --gt DIR/gt.ndjson --aio DIR/aio.ndjson --config CONFIG

prints one JSON line: documents, seconds, docs/s, micro-F1, macro-F1, mean RQS. The semantics
are benchmarks/baseline.py's (its Config, number parsing and rules), which equal the engine's
on the generated invoices; what it leaves out, like the baseline: duplicate-key warnings,
extraction of AIO text, the fields/alignments tables.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import orjson
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import (
    _EMAIL, _ISO_DATE, Config, canonical, child_path, date_key, same_value, to_number,
)

_levenshtein = Levenshtein.normalized_similarity
_LEAF, _OBJ, _LOR, _EMPTY, _ABSENT = range(5)
_MISSING = object()
# rapidfuzz turns score_cutoff into a distance bound through 1 - cutoff, which drops a
# similarity at or just above the cutoff (0.8 for "work boots" / "wokr boots" with a cutoff
# of 0.8 - 1e-9): cut 1e-6 below it and compare with the threshold afterwards
_SLACK = 1e-6


def _shape(v) -> int:
    if v is _MISSING:
        return _ABSENT
    t = type(v)
    if t is dict:
        return _OBJ if v else _LEAF
    if t is list:
        if not v:
            return _EMPTY
        for x in v:
            if type(x) is not dict:
                return _LEAF
        return _LOR
    return _LEAF


def _text(v) -> str:
    return " ".join(v.split()).lower() if type(v) is str else canonical(v)


class LeanScorer:
    """Counts of one run; :meth:`score` adds one document pair."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.cells: dict[str, list[int]] = {}  # attribute -> [tp, tn, fp, fn]
        self.n = 0
        self.rqs_sum = 0.0
        self.fixed: dict[tuple[str, str], str | None] = {}  # configured strategy per attribute
        self.empty_null = cfg.empty_containers_are_null
        self.paths: dict[tuple[str, str], str] = {}  # (attribute, key) -> child attribute

    def _null(self, v) -> bool:
        if v is None:
            return True
        t = type(v)
        if t is str:
            return not v.strip()
        if t is float:
            return math.isnan(v)
        if self.empty_null and (t is list or t is dict):
            return not v
        return False

    def _strategy(self, attr: str, bare: str, value) -> str:
        key = (attr, bare)
        s = self.fixed.get(key, _MISSING)
        if s is _MISSING:
            fs = self.cfg.field_strategies
            s = self.fixed[key] = fs.get(attr) or fs.get(bare)
        if s:
            return s
        if type(value) is str:
            raw = value.strip()
            if not raw or not (_ISO_DATE.match(raw) or _EMAIL.match(raw)
                               or date_key(raw) is not None):
                return self.cfg.default_text_strategy
            return "EXACT"
        return self.cfg.default_text_strategy if value is None else "EXACT"

    def _match(self, strategy: str, g, a) -> bool:
        cfg = self.cfg
        if strategy == "NUMERIC":
            x, y = to_number(g), to_number(a)
            return x is not None and y is not None and abs(x - y) <= max(
                cfg.abs_tol, cfg.rel_tol * abs(x))
        cg, ca = _text(g), _text(a)
        if strategy == "EXACT":
            return cg == ca or same_value(g, a)
        if strategy == "FUZZY":
            t = cfg.fuzzy_threshold
            return _levenshtein(cg, ca, score_cutoff=t - _SLACK) >= t
        sim = 1.0 if not cg and not ca else fuzz.token_set_ratio(cg, ca) / 100.0
        return sim >= cfg.semantic_threshold

    def _field(self, g, a, attr: str, bare: str, doc: list[int]) -> None:
        """One field (a leaf on at least one side): its bucket, match and confusion cell.
        ``doc`` = [gt_non_null, both, extra, gt_null_aio_value, distinct, scored, correct]."""
        g_empty = g is _MISSING or self._null(g)
        a_empty = a is _MISSING or self._null(a)
        strategy = self._strategy(attr, bare, g if not g_empty else (a if not a_empty else None))
        doc[4] += 1
        match = False
        if not g_empty:
            doc[0] += 1
            if not a_empty:
                doc[1] += 1
                if strategy != "IGNORE":
                    match = self._match(strategy, g, a)
                    doc[5] += 1
                    doc[6] += match
        elif g is not _MISSING:
            if not a_empty:
                doc[3] += 1
        elif not a_empty or self.cfg.null_extra_is_hallucination:
            doc[2] += 1
        attributes = self.cfg.attributes
        if strategy == "IGNORE" or (attributes is not None and attr not in attributes):
            return
        c = self.cells.get(attr)
        if c is None:
            c = self.cells[attr] = [0, 0, 0, 0]
        if g_empty:
            c[1 if a_empty else 2] += 1
        elif a_empty:
            c[3] += 1
        elif match:
            c[0] += 1
        else:
            c[2] += 1
            c[3] += 1

    def _walk(self, g, a, attr: str, bare: str, doc: list[int]) -> None:
        gs, as_ = _shape(g), _shape(a)
        if gs == _EMPTY:
            gs = _LOR if as_ == _LOR else _LEAF
        if as_ == _EMPTY:
            as_ = _LOR if gs == _LOR else _LEAF
        if gs == _LEAF or as_ == _LEAF:
            self._field(g if gs == _LEAF else _MISSING, a if as_ == _LEAF else _MISSING,
                        attr, bare, doc)
        if gs == _OBJ or as_ == _OBJ:
            self._members(g if gs == _OBJ else {}, a if as_ == _OBJ else {}, attr, doc)
        if gs == _LOR or as_ == _LOR:
            gl = g if gs == _LOR else []
            al = a if as_ == _LOR else []
            item = attr + "[]"
            matched_g, matched_a = set(), set()
            for i, j in self._align(gl, al, attr):
                matched_g.add(i)
                matched_a.add(j)
                self._walk(gl[i], al[j], item, bare, doc)
            for i, x in enumerate(gl):
                if i not in matched_g:
                    self._walk(x, _MISSING, item, bare, doc)
            for j, x in enumerate(al):
                if j not in matched_a:
                    self._walk(_MISSING, x, item, bare, doc)

    def _child(self, attr: str, key: str) -> str:
        path = self.paths.get((attr, key))
        if path is None:
            path = self.paths[(attr, key)] = child_path(attr, key)
        return path

    def _members(self, gd: dict, ad: dict, attr: str, doc: list[int]) -> None:
        for k, v in gd.items():
            self._walk(v, ad.get(k, _MISSING), self._child(attr, k), k, doc)
        for k, v in ad.items():
            if k not in gd:
                self._walk(_MISSING, v, self._child(attr, k), k, doc)

    def _match_texts(self, item: dict, fields, gt: bool) -> list:
        """Per match field: None (empty), the text to compare by Levenshtein (a GT string that
        is not a date) or (text, value) to compare exactly or by value: a date's day, a
        number's float (an AIO numeric string's too)."""
        out = []
        for f in fields:
            x = item.get(f, _MISSING)
            if x is _MISSING or self._null(x):
                out.append(None)
                continue
            t = type(x)
            day = date_key(x) if t is str else None
            if gt and t is str and day is None:
                out.append(_text(x))
                continue
            number = None
            if (t is int or t is float) or (not gt and t is str and day is None):
                number = to_number(x)
                if number is not None and not abs(number) < 2**53:
                    number = None
            out.append((_text(x), day if day is not None else number))
        return out

    @staticmethod
    def _pair_similarity(g: list, a: list, cutoff: float) -> float:
        """Mean over the match fields not empty on both sides (:meth:`_match_texts`)."""
        total, n = 0.0, 0
        for x, y in zip(g, a, strict=True):
            if x is None:
                n += y is not None
                continue
            n += 1
            if y is None:
                continue
            if type(x) is str:
                total += _levenshtein(x, y[0], score_cutoff=cutoff)
            else:
                total += x[0] == y[0] or (x[1] is not None and x[1] == y[1]
                                          and type(x[1]) is type(y[1]))
        return total / n if n else 0.0

    def _align(self, gl: list[dict], al: list[dict], attr: str) -> list[tuple[int, int]]:
        """Greedy (SPEC §5): the best remaining pair at or above the threshold first."""
        spec = self.cfg.lists.get(attr, {})
        threshold = spec.get("threshold", 0.8)
        fields = spec.get("match_fields")
        if fields is None:
            fields = {k for item in gl for k, v in item.items()
                      if v is None or isinstance(v, str | int | float | bool)}
        # one match field: its similarity is the mean, so values below the threshold may be cut
        cutoff = threshold - _SLACK if len(fields) == 1 else 0.0
        if spec.get("method", "greedy") != "greedy":
            raise SystemExit(f"lean loop: only greedy alignment; {attr} is {spec['method']}")
        g_texts = [self._match_texts(g, fields, True) for g in gl]
        a_texts = [self._match_texts(a, fields, False) for a in al]
        cands = []
        for i, g in enumerate(g_texts):
            for j, a in enumerate(a_texts):
                s = self._pair_similarity(g, a, cutoff)
                if s >= threshold:
                    cands.append((-s, i, j))
        cands.sort()
        taken_g, taken_a, pairs = set(), set(), []
        for _, i, j in cands:
            if i not in taken_g and j not in taken_a:
                taken_g.add(i)
                taken_a.add(j)
                pairs.append((i, j))
        return pairs

    def score(self, gt: dict, aio: dict) -> None:
        doc = [0, 0, 0, 0, 0, 0, 0]
        self._members(gt, aio, "", doc)
        gt_non_null, both, extra, gt_null_aio, distinct, scored, correct = doc
        completeness = both / gt_non_null if gt_non_null else 1.0
        hallucination = (extra + gt_null_aio) / distinct if distinct else 0.0
        accuracy = correct / scored if scored else 1.0
        w = self.cfg.weights
        rqs = (w["accuracy"] * accuracy + w["completeness"] * completeness + w["safety"]
               - w["hallucination"] * hallucination)
        self.rqs_sum += min(1.0, max(0.0, rqs))
        self.n += 1

    def summary(self) -> dict:
        tp, _, fp, fn = (sum(c[i] for c in self.cells.values()) for i in range(4))
        f1s = [2 * c[0] / (2 * c[0] + c[2] + c[3]) for c in self.cells.values()
               if c[0] + c[2] + c[3]]
        return {
            "n_documents": self.n,
            "micro_f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None,
            "macro_f1": sum(f1s) / len(f1s) if f1s else None,
            "mean_rqs": self.rqs_sum / self.n if self.n else None,
        }


def run_lean(gt_path: str | Path, aio_path: str | Path, config) -> dict:
    """Score two NDJSON files paired by id (GT-only against {}, AIO-only against a GT {});
    bad lines and repeated ids are skipped and counted. ``cells``: [tp, tn, fp, fn] per
    attribute."""
    cfg = config if isinstance(config, Config) else Config(config)
    scorer, id_field, loads = LeanScorer(cfg), cfg.id_field, orjson.loads
    aio_lines: dict[str, bytes] = {}
    n_bad = 0
    with open(aio_path, "rb") as f:
        for line in f:
            try:
                rec = loads(line)
                doc_id = str(rec[id_field])
            except (orjson.JSONDecodeError, TypeError, KeyError):
                n_bad += line.strip() != b""
                continue
            if doc_id in aio_lines:
                n_bad += 1
            else:
                aio_lines[doc_id] = line
    seen = set()
    with open(gt_path, "rb") as f:
        for line in f:
            try:
                gt = loads(line)
                doc_id = str(gt.pop(id_field))
            except (orjson.JSONDecodeError, TypeError, KeyError, AttributeError):
                n_bad += line.strip() != b""
                continue
            if doc_id in seen:
                n_bad += 1
                continue
            seen.add(doc_id)
            raw = aio_lines.pop(doc_id, None)
            aio = {} if raw is None else loads(raw)
            aio.pop(id_field, None)
            scorer.score(gt, aio)
    for raw in aio_lines.values():  # AIO-only documents
        aio = loads(raw)
        aio.pop(id_field, None)
        scorer.score({}, aio)
    return {**scorer.summary(), "n_bad_lines": n_bad, "cells": scorer.cells}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gt", required=True)
    p.add_argument("--aio", required=True)
    p.add_argument("--config", required=True)
    args = p.parse_args(argv)
    t = time.perf_counter()
    summary = run_lean(args.gt, args.aio, args.config)
    del summary["cells"]
    seconds = time.perf_counter() - t
    print(json.dumps({**summary, "seconds": round(seconds, 3),
                      "docs_per_s": round(summary["n_documents"] / seconds, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
