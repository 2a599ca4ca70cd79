"""When a run must not pass: loud failures and quality gates on the dataset summary.

Two kinds of reasons, each one line:

* the run itself cannot be trusted (:func:`run_failures`): no document pairs at all (wrong
  files, a wrong ``id_field``), or most records of one side are errors (a config file given as
  ``--gt``). The summary's ``status`` is then ``"failed"`` and ``failure`` gives the reasons
  (joined by "; "; null when the run is sound), whatever the pass rate says.
* a quality gate (:func:`gate_failures`): ``fail_under={"micro_f1": 0.9}`` fails a run whose
  figure is below the bound (``jsoneval score --fail-under micro_f1=0.9`` in CI).

:func:`check_run` is the API equivalent of the command line's exit code: it returns every
reason, or raises :class:`RunFailed` with them.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

#: a side whose records are more than this fraction errors fails the run
MAX_ERROR_FRACTION = 0.5

#: summary figures a gate may bound (all "higher is better" except hallucination)
GATE_FIGURES = (
    "micro_f1", "macro_f1", "pass_rate", "mean_rqs", "mean_accuracy", "mean_completeness",
    "mean_anls",
)
UPPER_BOUNDED = ("mean_hallucination",)  # fails when *above* the bound


class RunFailed(AssertionError):
    """A run that failed its checks; ``reasons`` holds one line per failure."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def run_failures(summary: Mapping[str, Any]) -> list[str]:
    """Reasons a run cannot be trusted, from the summary's accounting alone (so the in-memory,
    streaming and Spark drivers agree): every record read is a scored document or an error."""
    reasons = []
    n_docs = summary.get("n_documents") or 0
    n_gt_only, n_aio_only = summary.get("n_gt_only") or 0, summary.get("n_aio_only") or 0
    n_paired = n_docs - n_gt_only - n_aio_only
    read = {"GT": summary.get("n_read_gt") or 0, "AIO": summary.get("n_read_aio") or 0}
    if n_paired == 0:
        reasons.append(
            f"no document pairs: {read['GT']} GT and {read['AIO']} AIO records read, "
            f"{n_gt_only} GT-only and {n_aio_only} AIO-only documents "
            "(wrong files, or a wrong --id-field?)"
        )
    in_documents = {"GT": n_docs - n_aio_only, "AIO": n_docs - n_gt_only}
    for side, n in read.items():
        bad = n - in_documents[side]
        if n and bad / n > MAX_ERROR_FRACTION:
            reasons.append(f"{bad} of {n} {side} records are errors (see the errors table)")
    return reasons


def with_run_check(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with ``failure`` (the reasons, or None) and ``status`` = ``"failed"`` when
    there are any. One string, not a list: the summary stays a flat record of scalars."""
    failures = run_failures(summary)
    summary["failure"] = "; ".join(failures) or None
    if failures:
        summary["status"] = "failed"
    return summary


def parse_gate(text: str) -> dict[str, float]:
    """``"micro_f1=0.9,pass_rate=0.8"`` -> ``{"micro_f1": 0.9, "pass_rate": 0.8}``; a misspelt
    figure is a ValueError with a "did you mean"."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"'{part}': write FIGURE=BOUND, e.g. micro_f1=0.9")
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(
                f"'{part}': the bound must be a number; got {value.strip()!r}"
            ) from None
    validate_gate(out)
    return out


def validate_gate(fail_under: Mapping[str, float]) -> None:
    allowed = GATE_FIGURES + UPPER_BOUNDED
    for name, bound in fail_under.items():
        if name not in allowed:
            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f" Hint: did you mean '{close[0]}'?" if close else ""
            raise ValueError(f"no summary figure '{name}' to gate on; figures: "
                             f"{', '.join(allowed)}.{hint}")
        if isinstance(bound, bool) or not isinstance(bound, int | float) or not 0 <= bound <= 1:
            raise ValueError(f"the bound of {name} must be a number in [0, 1]; got {bound!r}")


def gate_failures(summary: Mapping[str, Any], fail_under: Mapping[str, float]) -> list[str]:
    """One line per figure on the wrong side of its bound; a figure that is undefined (null)
    fails too: a gate that cannot be checked does not pass."""
    validate_gate(fail_under)
    reasons = []
    for name, bound in fail_under.items():
        value = summary.get(name)
        if value is None:
            reasons.append(f"{name} is undefined (no data), bound {bound}")
        elif name in UPPER_BOUNDED and value > bound:
            reasons.append(f"{name} {value:.4f} is above {bound}")
        elif name not in UPPER_BOUNDED and value < bound:
            reasons.append(f"{name} {value:.4f} is below {bound}")
    return reasons


def check_run(result: Any, fail_under: Mapping[str, float] | None = None, *,
              raise_on_failure: bool = False) -> list[str]:
    """Every reason ``result`` (a Result, a results directory's summary, or a summary dict)
    fails: :func:`run_failures`, then the ``fail_under`` gate. ``[]`` when it passes.

    >>> check_run({"n_documents": 2, "n_gt_only": 0, "n_aio_only": 0, "n_read_gt": 2,
    ...            "n_read_aio": 2, "micro_f1": 0.8}, {"micro_f1": 0.9})
    ['micro_f1 0.8000 is below 0.9']
    """
    summary = result if isinstance(result, Mapping) else result.summary
    reasons = run_failures(summary) + gate_failures(summary, fail_under or {})
    if reasons and raise_on_failure:
        raise RunFailed(reasons)
    return reasons


def name_warnings(config: Any, attributes: list[str], empty_metadata: list[str] = ()) -> list[str]:
    """Names that only the data can reveal as wrong, one warning line each: configured field
    and list names that occur in no document (:func:`config.unmatched_names`), and metadata
    names no record gives a value (``empty_metadata``: absent, null, or unreadable and
    nulled), with the closest top-level member as a hint (a misspelt metadata member stays in
    the content, so it is an attribute)."""
    from .config import _hint, _path_members, unmatched_names

    messages = unmatched_names(config, attributes)
    top = sorted({m for a in attributes for m in _path_members(a)[:1]})
    for name in empty_metadata:
        messages.append(f"metadata '{name}' has no value in any record; its column is empty."
                        + _hint(name, top))
    return messages


def warning_rows(messages: list[str]) -> list[dict[str, Any]]:
    """``messages`` as rows of the errors table (source ``config``, severity ``warning``)."""
    return [{"source": "config", "doc_id": None, "line": None, "error": m,
             "severity": "warning", "file": None} for m in messages]
