"""ANLS* per document (issue 13): Peer et al., "ANLS* - A Universal Document Processing Metric
for Generative Large Language Models", as the ``anls-star`` package (1.0.1) computes it.

The score of a (GT, AIO) pair is the sum of the leaf scores over the "pairwise length" (the
number of leaf slots both documents span). The rules, read from the package's source:

- a leaf (string, number, boolean) against a leaf: ``1 - d / max(len)`` of the Levenshtein
  distance ``d`` of the two texts ``" ".join(str(v).strip().lower().split())`` (so ``True`` is
  ``"true"``, ``100.0`` is ``"100.0"``: Python's ``str``), 0 below 0.5, 1 for two empty texts;
  a leaf against anything else scores 0;
- a GT null (or an absent key) against a "none-like" AIO value (null, absent, ``{}``, ``[]``,
  ``""``) scores 1, against anything else 0; a GT ``""`` is a leaf, not none-like;
- objects: the union of keys, GT keys first; an AIO key absent from the GT whose value is
  none-like adds nothing to the sum but 1 to the length (the package's own arithmetic);
- lists: the GT x AIO item pairs are matched to maximize the sum of the pairs' mean scores
  (Hungarian; an exactly equal pair wins ties by one ulp); unmatched items on either side add
  their length and nothing to the sum; a list against a non-list scores 0;
- the length of a leaf or null is 1, of an object or list the sum of its members' (so ``{}``
  and ``[]`` have 0); a mismatch of kinds spans the longer side;
- a pair of length 0 (``{}`` against ``{}``) scores 1.

Strings are compared by rapidfuzz's Levenshtein distance (the same unit-cost distance as the
package's own loop, in C) and lists are matched by the package's own solver (munkres), whose
choice among tied matchings decides the score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein

from .values import TooDeep

__all__ = ["anls_score", "document_anls"]

THRESHOLD = 0.5
_distance = Levenshtein.distance


def _none_like(value: Any) -> bool:
    return value is None or (isinstance(value, dict | list | str) and not value)


def _length(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_length(v) for v in value.values())
    if isinstance(value, list):
        return sum(_length(v) for v in value)
    return 1


def _text(value: Any) -> str:
    return " ".join(str(value).strip().lower().split())


def _leaf(value: Any) -> bool:
    return isinstance(value, str | int | float)  # bool is an int


def _score(gt: Any, pred: Any) -> tuple[float, int, Any]:
    """(sum of leaf scores, pairwise length, the GT value closest to ``pred``)."""
    if type(pred) is TooDeep:  # as a document the recursion limit stops (document_anls)
        raise RecursionError
    if gt is None:
        length = max(1, _length(pred))
        return (1.0, length, pred) if _none_like(pred) else (0.0, length, None)
    if isinstance(gt, dict):
        if not isinstance(pred, dict):
            return 0.0, max(_length(gt), _length(pred)), gt
        total, length, chosen = 0.0, 0, {}
        for key, g in gt.items():
            p = pred.get(key)
            s, n, c = _score(g, p)
            total += s
            length += n
            if not (_none_like(c) and key not in pred):
                chosen[key] = c
        for key, p in pred.items():
            if key in gt:
                continue
            if _none_like(p):  # an invented none-like key: no score, one slot
                length += 1
                continue
            s, n, c = _score(None, p)
            total += s
            length += n
            if not (_none_like(c) and key not in pred):
                chosen[key] = c
        return total, length, chosen
    if isinstance(gt, list):
        if not isinstance(pred, list):
            return 0.0, max(_length(gt), _length(pred)), gt
        return _list_score(gt, pred)
    if not _leaf(gt):
        raise ValueError(f"ANLS*: unsupported value {gt!r}")
    length = max(1, _length(pred))
    if not _leaf(pred):
        return 0.0, length, gt
    a, b = _text(gt), _text(pred)
    longest = max(len(a), len(b))
    value = 0.0 if longest == 0 else float(_distance(a, b)) / float(longest)
    result = 1 - value
    return (0.0 if result < THRESHOLD else result), 1, gt


def _list_score(gt: list, pred: list) -> tuple[float, int, Any]:
    if not gt or not pred:
        return 0.0, sum(map(_length, gt)) + sum(map(_length, pred)), list(gt)
    scores = [[_score(g, p) for p in pred] for g in gt]
    means = []
    for row in scores:
        means_row = []
        for (s, n, c), p in zip(row, pred):
            mean = s / n if n > 0 else 1.0
            if p == c:  # the package's nudge: an exactly equal pair wins a tie
                mean = math.nextafter(mean, math.inf)
            means_row.append(mean)
        means.append(means_row)
    pairs = _assignment(means)
    total = sum(scores[i][j][0] for i, j in pairs)
    length = sum(scores[i][j][1] for i, j in pairs)
    matched_gt, matched_pred = {i for i, _ in pairs}, {j for _, j in pairs}
    length += sum(_length(g) for i, g in enumerate(gt) if i not in matched_gt)
    length += sum(_length(p) for j, p in enumerate(pred) if j not in matched_pred)
    closest = [scores[i][j][2] for j, i in sorted((j, i) for i, j in pairs)]
    closest += [g for i, g in enumerate(gt) if i not in matched_gt]
    return total, length, closest


def _assignment(means: list[list[float]]) -> list[tuple[int, int]]:
    """The package's matching: Munkres on ``max - mean``. Many pairs tie (every unrelated
    pair scores 0) and the tied matchings differ in length, so the score depends on which
    optimum the solver picks: only the package's own solver reproduces it (scipy's
    ``linear_sum_assignment`` picks other optima)."""
    if len(means) == 1:  # one GT item: Munkres takes the first best AIO item
        row = means[0]
        return [(0, row.index(max(row)))]
    from munkres import Munkres, make_cost_matrix  # checked by the config (anls: true)

    return [tuple(p) for p in Munkres().compute(make_cost_matrix(means))]


def anls_score(gt: Any, pred: Any) -> float:
    """ANLS* of one pair of JSON values (no 1-of-n tuples: JSON has none)."""
    total, length, _ = _score(gt, pred)
    return total / length if length > 0 else 1.0


def document_anls(gt_docs: Sequence[Any], aio_docs: Sequence[Any]) -> list[float | None]:
    """ANLS* of each pair of documents; an absent AIO document (None) is scored as ``{}``, as
    the engine scores it. A pair the package cannot score either (an integer too long for
    ``str``, nesting deeper than Python's recursion limit) gets None, not a failed run."""
    out: list[float | None] = []
    for g, a in zip(gt_docs, aio_docs):
        try:
            out.append(anls_score(g, {} if a is None else a))
        except (ValueError, RecursionError):
            out.append(None)
    return out
