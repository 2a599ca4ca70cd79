"""Semantic scorers (SPEC §4): batch functions from two equal-length lists of strings to scores.

A scorer is any callable ``scorer(gt_texts, aio_texts) -> sequence of floats in [0, 1]``. The
engine calls it once per batch with distinct pairs only, so an expensive scorer (an embedding
model, an LLM judge) is paid once per distinct (gt, aio) text pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Scorer = Callable[[Sequence[str], Sequence[str]], "np.ndarray | Sequence[float]"]


def lexical_token_set(gt: Sequence[str], aio: Sequence[str]) -> np.ndarray:
    """Deterministic, offline default: rapidfuzz token-set similarity scaled to [0, 1].

    It is a lexical measure (word overlap, order-insensitive), not a semantic one; it is the
    default only because it needs no model. Two empty strings score 1.
    """
    from rapidfuzz import fuzz

    out = np.empty(len(gt), dtype=np.float64)
    for i, (a, b) in enumerate(zip(gt, aio, strict=True)):
        out[i] = 1.0 if not a and not b else fuzz.token_set_ratio(a, b) / 100.0
    return out


def resolve_scorer(scorer: Scorer | str | None) -> Scorer:
    """Return the callable for a scorer given by name or as a callable (None = lexical)."""
    if scorer is None or scorer == "lexical":
        return lexical_token_set
    if callable(scorer):
        return scorer
    raise ValueError(f"semantic scorer must be 'lexical' or a callable; got {scorer!r}")
