"""Agent, rubric, consistency and monitoring metrics over tables of runs (SPEC §10, seeds 002, 004).

A *runs table* has one row per run: score columns, list columns for tools and steps, a ``model``
column, an item id, a timestamp. Every function takes a ``pl.DataFrame`` or a ``pl.LazyFrame``
and returns the same kind (the lazy form is primary; a DataFrame is made lazy, computed, and
collected), except :func:`rubric_summary`, which returns a small frozen summary.

Undefined is null: each docstring says which output is null and when. Null inputs propagate as
unknown (a run whose ``tools_used`` is null has a null precision; "nothing used" is the empty
list, which the seed scores 0).

All metrics are Polars expressions, list set operations, explodes, joins and group-bys. The one
per-row Python step is reading answers given as JSON *text* in
:func:`required_fields_quality` (JSON parsing has no Polars expression that keeps absent apart
from null and ``85`` apart from ``"85"``).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl

from jsoneval_polars.extract import parse_object
from jsoneval_polars.rates import status_expr  # the status bands are declared once

__all__ = [
    "BANDS",
    "SEED_ANSWER_CHECKS",
    "SEED_EXPECTED_TOOLS",
    "SEED_REQUIRED_FIELDS",
    "SEED_RUBRIC_WEIGHTS",
    "SEED_TRAJECTORY",
    "InRange",
    "MinLength",
    "OneOf",
    "RubricSummary",
    "agreement_across_models",
    "consistency_within_model",
    "filter_runs",
    "health_status",
    "monitor",
    "required_fields_quality",
    "rubric_score",
    "rubric_summary",
    "score_band",
    "tool_choice",
    "trajectory_match",
]

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

# --- seed presets ---------------------------------------------------------------------------

#: Seed 002's EVALUATION_DIMENSIONS weights.
SEED_RUBRIC_WEIGHTS: dict[str, float] = {
    "factual_accuracy": 0.30,
    "completeness": 0.25,
    "citation_accuracy": 0.15,
    "source_quality": 0.10,
    "tool_efficiency": 0.20,
}

#: Seed 004's expected tools by company type.
SEED_EXPECTED_TOOLS: dict[str, list[str]] = {
    "public_us": ["fetch_sec_data", "fetch_market_data", "web_search"],
    "public_non_us": ["fetch_market_data", "web_search"],
    "private": ["web_search", "fetch_legal_data"],
}

#: Seed 004's expected trajectory.
SEED_TRAJECTORY: list[str] = [
    "parse_input",
    "validate_company",
    "create_plan",
    "fetch_api_data",
    "search_web",
    "synthesize",
    "save_to_database",
    "evaluate",
]

# --- helpers --------------------------------------------------------------------------------


def _lazy(df: pl.DataFrame | pl.LazyFrame, where: str) -> tuple[pl.LazyFrame, bool]:
    if isinstance(df, pl.LazyFrame):
        return df, False
    if isinstance(df, pl.DataFrame):
        return df.lazy(), True
    raise TypeError(f"{where}: expected a polars DataFrame or LazyFrame; got {type(df).__name__}")


def _finish(lf: pl.LazyFrame, eager: bool) -> Any:
    return lf.collect() if eager else lf


def _require(schema: pl.Schema, names: Sequence[str], where: str) -> None:
    for name in names:
        if name not in schema:
            close = difflib.get_close_matches(name, list(schema.names()), n=1)
            hint = f" Hint: did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"{where}: column {name!r} not found; columns are {list(schema.names())}.{hint}"
            )


def _names(value: str | Sequence[str], key: str, where: str) -> list[str]:
    names = [value] if isinstance(value, str) else list(value)
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{where}: {key} must be a column name or a non-empty list of them")
    return names


def _score(name: str) -> pl.Expr:
    """A score column as Float64 with NaN read as null (SPEC §1)."""
    return pl.col(name).cast(pl.Float64).fill_nan(None)


def _check_weight(value: float, key: str, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where}: {key} must be a finite number; got {value!r}")
    if value < 0:
        raise ValueError(f"{where}: {key} must be >= 0; got {value!r}")


# --- weighted rubric (seed 002) -------------------------------------------------------------


def _rubric_exprs(weights: Mapping[str, float], threshold: float) -> tuple[pl.Expr, pl.Expr]:
    numerator = pl.sum_horizontal([_score(c) * w for c, w in weights.items()])
    denominator = pl.sum_horizontal(
        [pl.when(_score(c).is_not_null()).then(pl.lit(float(w))) for c, w in weights.items()]
    )
    overall = pl.when(denominator > 0).then(numerator / denominator)
    return overall, overall >= threshold


def _validate_rubric(weights: Mapping[str, float], threshold: float, where: str) -> None:
    if not isinstance(weights, Mapping) or not weights:
        raise ValueError(f"{where}: weights must be a non-empty mapping of column -> weight")
    for column, weight in weights.items():
        _check_weight(weight, f"weights[{column!r}]", where)
    if not any(w > 0 for w in weights.values()):
        raise ValueError(f"{where}: at least one weight must be > 0; got {dict(weights)}")
    _check_weight(threshold, "threshold", where)


def rubric_score(
    df: Frame,
    weights: Mapping[str, float],
    *,
    threshold: float = 0.7,
    overall: str = "overall",
    passed: str = "passed",
) -> Frame:
    """Add the weighted rubric score and the pass flag (seed 002).

    ``overall = Σ wᵢ·sᵢ / Σ wᵢ`` over the dimensions (weight keys, one score column each) that
    are present in the row, i.e. non-null and not NaN; ``passed = overall >= threshold``.

    Null: ``overall`` and ``passed`` are null for a row where no dimension with a weight > 0 is
    present (seed 002 returns 0 there; a run nobody scored is unscored, not failed).

    >>> runs = pl.DataFrame({"a": [1.0, None, None], "b": [0.5, 0.5, None]})
    >>> rubric_score(runs, {"a": 3, "b": 1}).select("overall", "passed").rows()
    [(0.875, True), (0.5, False), (None, None)]
    """
    where = "rubric_score"
    lf, eager = _lazy(df, where)
    _validate_rubric(weights, threshold, where)
    _require(lf.collect_schema(), list(weights), where)
    score, ok = _rubric_exprs(weights, threshold)
    return _finish(lf.with_columns(score.alias(overall), ok.alias(passed)), eager)


@dataclass(frozen=True)
class RubricSummary:
    """Seed 002's ``summarize()``, over a runs table.

    ``failed`` counts runs with ``passed == False``; runs with no score (``overall`` null) are
    counted in ``unscored`` and in neither. ``pass_rate = passed / (passed + failed)``, None when
    no run is scored. ``dimension_means`` maps each dimension to the mean of its present
    (non-null, non-NaN) scores, None when it has none. ``failures`` holds the failing rows with
    ``overall`` and ``passed``.
    """

    total: int
    passed: int
    failed: int
    unscored: int
    pass_rate: float | None
    dimension_means: dict[str, float | None]
    failures: pl.DataFrame


def rubric_summary(
    df: pl.DataFrame | pl.LazyFrame,
    weights: Mapping[str, float],
    *,
    threshold: float = 0.7,
) -> RubricSummary:
    """Score ``df`` with :func:`rubric_score` and summarize it (seed 002): total, passed, failed,
    unscored, pass rate, per-dimension means and the failing rows."""
    lf, _ = _lazy(df, "rubric_summary")
    scored = rubric_score(lf, weights, threshold=threshold)
    passed = pl.col("passed")
    stats_q = scored.select(
        total=pl.len(),
        passed=passed.sum(),
        failed=(~passed).sum(),
        unscored=passed.null_count(),
        **{f"mean_{c}": _score(c).mean() for c in weights},
    )
    stats, failures = pl.collect_all([stats_q, scored.filter(~passed)])
    row = stats.row(0, named=True)
    n_scored = row["passed"] + row["failed"]
    return RubricSummary(
        total=row["total"],
        passed=row["passed"],
        failed=row["failed"],
        unscored=row["unscored"],
        pass_rate=row["passed"] / n_scored if n_scored else None,
        dimension_means={c: row[f"mean_{c}"] for c in weights},
        failures=failures,
    )


def filter_runs(
    df: Frame,
    *,
    tags: Sequence[Any] | None = None,
    tags_column: str = "tags",
    **equals: Any,
) -> Frame:
    """Keep the runs that carry every tag in ``tags`` (a list column, ``tags_column``) and whose
    columns equal the given values (seed 002's ``TestSet.filter``). ``column=None`` keeps rows
    where that column is null. A row whose tag list is null has no tags."""
    where = "filter_runs"
    lf, eager = _lazy(df, where)
    schema = lf.collect_schema()
    conditions: list[pl.Expr] = []
    if tags is not None:
        if isinstance(tags, str):
            raise ValueError(f"{where}: tags must be a list of tags; got the string {tags!r}")
        _require(schema, [tags_column], where)
        conditions += [pl.col(tags_column).list.contains(t).fill_null(False) for t in tags]
    _require(schema, list(equals), where)
    for column, value in equals.items():
        col = pl.col(column)
        conditions.append(col.is_null() if value is None else (col == value).fill_null(False))
    return _finish(lf.filter(pl.all_horizontal(conditions)) if conditions else lf, eager)


# --- bands and status -----------------------------------------------------------------------

#: Seed 004's score bands, worst first (the order of the Enum, so sorting by band works).
BANDS: tuple[str, ...] = ("Critical", "Poor", "Fair", "Good", "Excellent")
BAND_DTYPE = pl.Enum(BANDS)

def score_band(score: pl.Expr | str) -> pl.Expr:
    """Band of a score in [0, 1] (seed 004): Excellent ≥ 0.9, Good ≥ 0.7, Fair ≥ 0.5, Poor ≥ 0.3,
    else Critical. The result is an Enum ordered worst to best. Null for a null or NaN score."""
    x = pl.col(score) if isinstance(score, str) else score
    return (
        pl.when(x.is_null() | x.cast(pl.Float64).is_nan())
        .then(pl.lit(None, dtype=pl.String))
        .when(x >= 0.9)
        .then(pl.lit("Excellent"))
        .when(x >= 0.7)
        .then(pl.lit("Good"))
        .when(x >= 0.5)
        .then(pl.lit("Fair"))
        .when(x >= 0.3)
        .then(pl.lit("Poor"))
        .otherwise(pl.lit("Critical"))
        .cast(BAND_DTYPE)
    )


def health_status(pass_rate: pl.Expr | str) -> pl.Expr:
    """Status of a pass rate (seed 002, SPEC §7): ``healthy`` ≥ 0.85, ``warning`` ≥ 0.70, else
    ``critical``. Null for a null pass rate."""
    return status_expr(pl.col(pass_rate) if isinstance(pass_rate, str) else pass_rate)


# --- tool choice (seed 004) -----------------------------------------------------------------


def tool_choice(
    df: Frame,
    *,
    used: str = "tools_used",
    expected: str = "tools_expected",
    expected_by_category: Mapping[Any, Sequence[str]] | None = None,
    category: str = "category",
) -> Frame:
    """Tool precision and recall per run (seed 004), as sets (duplicates and null elements in the
    lists are ignored):

    - ``tool_precision = |expected ∩ used| / |used|``, 0.0 when nothing was used (empty list);
    - ``tool_recall = |expected ∩ used| / |expected|``, 0.0 when nothing was expected.

    The expected tools come from the list column ``expected``, or, when
    ``expected_by_category`` is given, from that mapping looked up by the ``category`` column;
    the looked-up lists are then added as the column ``expected``.

    Null: both metrics are null when ``used`` or the expected list is null, which includes a
    category that is null or absent from the mapping (seed 004 would raise a KeyError).
    """
    where = "tool_choice"
    lf, eager = _lazy(df, where)
    schema = lf.collect_schema()
    _require(schema, [used], where)
    used_dtype = schema[used]
    if not isinstance(used_dtype, pl.List):
        mixed = (" (a runs file that holds lists in some rows and text in others is read as "
                 "text)" if used_dtype == pl.String else "")
        raise ValueError(f"{where}: column {used!r} must be a list column; got {used_dtype}"
                         + mixed)
    if expected_by_category is not None:
        _require(schema, [category], where)
        if expected in schema:
            raise ValueError(
                f"{where}: column {expected!r} exists and expected_by_category is given; "
                "pass one of them (or name the output with expected=...)"
            )
        mapping = {k: list(v) for k, v in expected_by_category.items()}
        lf = lf.with_columns(
            pl.col(category)
            .replace_strict(mapping, default=None, return_dtype=used_dtype)
            .alias(expected)
        )
    else:
        _require(schema, [expected], where)
    used_set = pl.col(used).list.drop_nulls().list.unique()
    expected_set = pl.col(expected).list.drop_nulls().list.unique()
    hits = used_set.list.set_intersection(expected_set).list.len()
    n_used = used_set.list.len()
    n_expected = expected_set.list.len()
    unknown = pl.col(used).is_null() | pl.col(expected).is_null()
    precision = pl.when(unknown).then(None).when(n_used == 0).then(0.0).otherwise(hits / n_used)
    recall = (
        pl.when(unknown).then(None).when(n_expected == 0).then(0.0).otherwise(hits / n_expected)
    )
    return _finish(
        lf.with_columns(tool_precision=precision, tool_recall=recall), eager
    )


# --- trajectory match (seed 004) ------------------------------------------------------------

JACCARD_WEIGHT = 0.6
ORDER_WEIGHT = 0.4


def trajectory_match(
    df: Frame,
    *,
    expected: str | Sequence[str] = "expected_steps",
    actual: str = "steps",
    no_pairs_order_score: float = 0.0,
) -> Frame:
    """Trajectory match per run (seed 004): ``0.6·jaccard + 0.4·order_score``.

    - ``trajectory_jaccard = |E ∩ A| / |E ∪ A|`` over the step *sets*.
    - ``trajectory_order_pairs``: the consecutive pairs (a, b) of the expected steps (repeats
      removed, first occurrence kept) with both a and b in the actual steps.
    - ``trajectory_order_score``: the fraction of those pairs where a's first occurrence in the
      actual steps is before b's. With no such pair it is ``no_pairs_order_score``, default
      0.0: seed 004 calls this part an order *bonus*, and a run that shows no ordered pair has
      earned none (the seed's zero-denominator convention elsewhere is 0.0, too). So a
      one-step expected trajectory matched exactly scores 0.6; pass 1.0 to score it 1.0.
    - ``trajectory_match = 0.6·trajectory_jaccard + 0.4·trajectory_order_score``.

    ``expected`` is a list column, or one list of steps for every run (seed 004's
    ``EXPECTED_TRAJECTORY``, :data:`SEED_TRAJECTORY`).

    Null: every output is null when the expected or the actual list is null, and the Jaccard
    and the match are null when both lists are empty (0/0).
    """
    where = "trajectory_match"
    lf, eager = _lazy(df, where)
    _check_weight(no_pairs_order_score, "no_pairs_order_score", where)
    schema = lf.collect_schema()
    _require(schema, [actual], where)
    if isinstance(expected, str):
        _require(schema, [expected], where)
        exp = pl.col(expected)
    else:
        steps = list(expected)
        exp = pl.lit(pl.Series([steps], dtype=schema[actual]))
    row, e_col, a_col, step, idx, pos = (
        "__tm_row", "__tm_expected", "__tm_actual", "__tm_step", "__tm_index", "__tm_pos"
    )
    base = lf.with_row_index(row).with_columns(
        exp.list.unique(maintain_order=True).alias(e_col),
        pl.col(actual).alias(a_col),
    )
    # First position of each step in the actual trajectory: explode with positions, group.
    first_pos = (
        base.select(row, a_col, pl.int_ranges(pl.col(a_col).list.len()).alias(pos))
        .explode(a_col, pos)
        .drop_nulls(a_col)
        .group_by(row, a_col)
        .agg(pl.col(pos).min())
        .rename({a_col: step})
    )
    # Expected steps in order, each with its actual position; a consecutive pair is the step
    # and the next one in the same run.
    pairs = (
        base.select(row, e_col, pl.int_ranges(pl.col(e_col).list.len()).alias(idx))
        .explode(e_col, idx)
        .drop_nulls(e_col)
        .rename({e_col: step})
        .join(first_pos, on=[row, step], how="left")
        .sort(row, idx)
        .with_columns(pl.col(pos).shift(-1).over(row).alias("__tm_next"))
        .group_by(row)
        .agg(
            n_pairs=(pl.col(pos).is_not_null() & pl.col("__tm_next").is_not_null()).sum(),
            n_ordered=(pl.col(pos) < pl.col("__tm_next")).fill_null(False).sum(),
        )
    )
    e_set, a_set = pl.col(e_col), pl.col(a_col).list.drop_nulls().list.unique()
    inter = e_set.list.set_intersection(a_set).list.len()
    union = e_set.list.set_union(a_set).list.len()
    unknown = pl.col(e_col).is_null() | pl.col(a_col).is_null()
    n_pairs = pl.col("n_pairs").fill_null(0)
    jaccard = pl.when(unknown | (union == 0)).then(None).otherwise(inter / union)
    order = (
        pl.when(unknown)
        .then(None)
        .when(n_pairs == 0)
        .then(float(no_pairs_order_score))
        .otherwise(pl.col("n_ordered") / n_pairs)
    )
    out = (
        base.join(pairs, on=row, how="left")
        .sort(row)
        .with_columns(
            trajectory_jaccard=jaccard,
            trajectory_order_pairs=pl.when(unknown).then(None).otherwise(n_pairs),
            trajectory_order_score=order,
        )
        .with_columns(
            trajectory_match=JACCARD_WEIGHT * pl.col("trajectory_jaccard")
            + ORDER_WEIGHT * pl.col("trajectory_order_score")
        )
        .drop(row, e_col, a_col, "n_pairs", "n_ordered")
    )
    return _finish(out, eager)


# --- required fields / final answer quality (seed 004) --------------------------------------


@dataclass(frozen=True)
class OneOf:
    """Passes when the field's value is one of ``values`` (exact, typed: ``"1"`` is not ``1``,
    ``True`` is not ``1``). Seed 004: ``risk_level in [...]``."""

    field: str
    values: tuple[Any, ...]
    weight: float

    def __init__(self, field: str, values: Sequence[Any], weight: float) -> None:
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "weight", weight)


@dataclass(frozen=True)
class InRange:
    """Passes when the field is a JSON number (not a boolean, not a numeric string) with
    ``low <= value <= high``; a None bound is open. Seed 004: ``0 <= credit_score <= 100``."""

    field: str
    low: float | None
    high: float | None
    weight: float


@dataclass(frozen=True)
class MinLength:
    """Passes when the field is a string of at least ``min_chars`` characters. Seed 004's
    ``len(reasoning) > 50`` is ``MinLength("reasoning", 51, 0.10)``."""

    field: str
    min_chars: int
    weight: float


Check = OneOf | InRange | MinLength

#: Seed 004's REQUIRED_FIELDS.
SEED_REQUIRED_FIELDS: tuple[str, ...] = (
    "risk_level",
    "credit_score",
    "confidence",
    "reasoning",
    "recommendations",
)
#: Seed 004's final-answer validity checks (weights 0.15, 0.15, 0.10, 0.10).
SEED_ANSWER_CHECKS: tuple[Check, ...] = (
    OneOf("risk_level", ("low", "moderate", "high", "critical"), 0.15),
    InRange("credit_score", 0, 100, 0.15),
    InRange("confidence", 0, 1, 0.10),
    MinLength("reasoning", 51, 0.10),
)

_ABSENT = object()


def _json_view_dtype(fields: Sequence[str]) -> pl.Struct:
    return pl.Struct(
        {
            f"{i}_{part}": dtype
            for i in range(len(fields))
            for part, dtype in (
                ("present", pl.Boolean),
                ("num", pl.Float64),
                ("str", pl.String),
                ("bool", pl.Boolean),
            )
        }
    )


def _json_view(texts: pl.Series, fields: Sequence[str]) -> pl.Series:
    """Typed view of the needed members of JSON-text answers.

    The per-row Python loop is the JSON parse itself (see the module docstring); everything
    after it is expressions.
    """
    rows: list[dict[str, Any]] = []
    for text in texts:
        obj = parse_object(text) if text is not None else None
        row: dict[str, Any] = {}
        for i, name in enumerate(fields):
            v = obj.get(name, _ABSENT) if obj is not None else _ABSENT
            is_null = (
                v is _ABSENT
                or v is None
                or (isinstance(v, str) and not v.strip())
                or (isinstance(v, float) and math.isnan(v))
            )
            row[f"{i}_present"] = not is_null
            number = isinstance(v, int | float) and not isinstance(v, bool) and not is_null
            row[f"{i}_num"] = float(v) if number else None
            row[f"{i}_str"] = v if isinstance(v, str) else None
            row[f"{i}_bool"] = v if isinstance(v, bool) else None
        rows.append(row)
    return pl.Series(texts.name, rows, dtype=_json_view_dtype(fields))


def _struct_member(
    answer: str, dtype: pl.Struct, name: str
) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """(present, number, string, boolean) expressions for one member of a struct answer."""
    members = {f.name: f.dtype for f in dtype.fields}
    null_f = pl.lit(None, dtype=pl.Float64)
    null_s = pl.lit(None, dtype=pl.String)
    null_b = pl.lit(None, dtype=pl.Boolean)
    if name not in members:
        return pl.lit(False), null_f, null_s, null_b
    x = pl.col(answer).struct.field(name)
    kind = members[name]
    present = x.is_not_null()
    if kind == pl.String:
        present = present & (x.str.strip_chars() != "")
        return present, null_f, x, null_b
    if kind == pl.Boolean:
        return present, null_f, null_s, x
    if kind.is_numeric():
        if kind.is_float():
            present = present & ~x.is_nan()
        return present, pl.when(present).then(x.cast(pl.Float64)), null_s, null_b
    return present, null_f, null_s, null_b


def _check_expr(check: Check, num: pl.Expr, text: pl.Expr, boolean: pl.Expr) -> pl.Expr:
    if isinstance(check, OneOf):
        strs = [v for v in check.values if isinstance(v, str)]
        bools = [v for v in check.values if isinstance(v, bool)]
        nums = [
            float(v)
            for v in check.values
            if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        terms = []
        if strs:
            terms.append(text.is_in(strs))
        if nums:
            terms.append(num.is_in(nums))
        if bools:
            terms.append(boolean.is_in(bools))
        ok = pl.any_horizontal(terms) if terms else pl.lit(False)
    elif isinstance(check, InRange):
        ok = num.is_not_null()
        if check.low is not None:
            ok = ok & (num >= check.low)
        if check.high is not None:
            ok = ok & (num <= check.high)
    else:
        ok = text.str.len_chars() >= check.min_chars
    return ok.fill_null(False)


def required_fields_quality(
    df: Frame,
    answer: str = "answer",
    *,
    required: Sequence[str] = SEED_REQUIRED_FIELDS,
    checks: Sequence[Check] = SEED_ANSWER_CHECKS,
    completeness_weight: float = 0.5,
) -> Frame:
    """Final answer quality (seed 004):
    ``answer_quality = completeness_weight · required_share + Σ check.weight · [check passes]``.

    ``answer`` is a struct column (a decoded answer) or a string column of JSON text (an
    object; see :func:`jsoneval_polars.extract.extract_column` for answers with prose).

    - ``required_share`` = share of ``required`` fields present; a field is present when the
      member exists and is not null in the sense of SPEC §1 (None, blank string, NaN). Seed 004
      tests ``f in assessment``; a member holding null is counted absent here, as in §3. A struct
      cannot tell an absent member from a null one, and both read the same way.
    - A check on an absent or mistyped field fails: a range needs a JSON number (booleans and
      numeric strings fail), a length needs a string, membership is exact and typed.

    The score is not rescaled: with the seed's presets the weights sum to 1
    (0.5 + 0.15 + 0.15 + 0.10 + 0.10). A null answer, or text that is not a JSON object, has
    nothing present and scores 0.0 (never null).
    """
    where = "required_fields_quality"
    lf, eager = _lazy(df, where)
    required = _names(required, "required", where)
    _check_weight(completeness_weight, "completeness_weight", where)
    for i, check in enumerate(checks):
        if not isinstance(check, OneOf | InRange | MinLength):
            raise ValueError(
                f"{where}: checks[{i}] must be OneOf, InRange or MinLength; got {check!r}"
            )
        _check_weight(check.weight, f"checks[{i}].weight", where)
    schema = lf.collect_schema()
    _require(schema, [answer], where)
    dtype = schema[answer]
    fields = list(dict.fromkeys([*required, *(c.field for c in checks)]))
    if isinstance(dtype, pl.Struct):
        members = {name: _struct_member(answer, dtype, name) for name in fields}
    elif dtype == pl.String:
        view_col = "__rfq_view"
        lf = lf.with_columns(
            pl.col(answer)
            .map_batches(lambda s: _json_view(s, fields), return_dtype=_json_view_dtype(fields))
            .alias(view_col)
        )
        v = pl.col(view_col).struct.field
        members = {
            name: (v(f"{i}_present"), v(f"{i}_num"), v(f"{i}_str"), v(f"{i}_bool"))
            for i, name in enumerate(fields)
        }
    else:
        raise ValueError(
            f"{where}: column {answer!r} must be a struct or a string of JSON text; got {dtype}"
        )
    share = pl.sum_horizontal(
        [members[f][0].fill_null(False).cast(pl.Int32) for f in required]
    ) / len(required)
    quality = completeness_weight * share
    for check in checks:
        _, num, text, boolean = members[check.field]
        quality = quality + check.weight * _check_expr(check, num, text, boolean).cast(pl.Float64)
    out = lf.with_columns(required_share=share, answer_quality=quality)
    if dtype == pl.String:
        out = out.drop("__rfq_view")
    return _finish(out, eager)


# --- consistency (seed 004) -----------------------------------------------------------------


def _split_values(
    schema: pl.Schema, values: list[str]
) -> tuple[list[str], list[str]]:
    numeric = [v for v in values if schema[v].is_numeric()]
    return [v for v in values if v not in numeric], numeric


def _scale_range(
    column: str, scale: Mapping[str, tuple[float, float]] | None, where: str
) -> pl.Expr:
    """Range that normalizes a numeric column: ``high - low`` of the given scale, else the
    observed range of the column over the whole input (all items, all models)."""
    if scale is not None and column in scale:
        low, high = scale[column]
        if not (math.isfinite(low) and math.isfinite(high) and high >= low):
            raise ValueError(
                f"{where}: scale[{column!r}] must be (low, high) with low <= high; "
                f"got {scale[column]!r}"
            )
        return pl.lit(float(high - low))
    return _score(column).max() - _score(column).min()



def _with_normalized(out, lf, numeric, scale, where, spread: str, name: str):
    """Add ``{v}_{name} = 1 - {v}_{spread} / range(v)`` for each numeric column ``v``, the
    range taken over the whole input (or from ``scale``)."""
    if not numeric:
        return out
    ranges = lf.select(*[_scale_range(v, scale, where).alias(f"__range_{v}") for v in numeric])
    return (
        out.join(ranges, how="cross")
        .with_columns(
            _normalized(pl.col(f"{v}_{spread}"), pl.col(f"__range_{v}")).alias(f"{v}_{name}")
            for v in numeric
        )
        .drop(f"__range_{v}" for v in numeric)
    )

def _normalized(spread: pl.Expr, range_: pl.Expr) -> pl.Expr:
    """``1 − spread/range`` clipped to [0, 1]; 1.0 when the range is 0 (every value equal, so
    the spread is 0 too); null when the spread is null."""
    return (
        pl.when(spread.is_null())
        .then(None)
        .when(range_ == 0)
        .then(1.0)
        .otherwise((1 - spread / range_).clip(0.0, 1.0))
    )


def _modal(
    lf: pl.LazyFrame, keys: list[str], value: str, n_out: str, total_out: str, mode_out: str
) -> pl.LazyFrame:
    """Most common non-null ``value`` per ``keys``: its count, the count of non-null values and
    the value itself (ties: the smallest value, so the result is deterministic)."""
    return (
        lf.filter(pl.col(value).is_not_null())
        .group_by(*keys, value)
        .agg(__n=pl.len())
        .group_by(*keys)
        .agg(
            pl.col(value)
            .sort_by(pl.col("__n"), pl.col(value), descending=[True, False])
            .first()
            .alias(mode_out),
            pl.col("__n").max().alias(n_out),
            pl.col("__n").sum().alias(total_out),
        )
    )


def consistency_within_model(
    df: Frame,
    *,
    item: str = "item_id",
    model: str = "model",
    value: str | Sequence[str],
    scale: Mapping[str, tuple[float, float]] | None = None,
    ddof: int = 0,
) -> Frame:
    """Same-model consistency across runs, one row per (item, model) (seed 004).

    For each column in ``value`` (numeric columns are numeric, every other dtype categorical):

    - categorical ``{v}_mode`` (most common value; ties: the smallest) and ``{v}_agreement`` =
      share of the runs' non-null values equal to the mode;
    - numeric ``{v}_mean``, ``{v}_std`` (``ddof``, default 0: the population standard
      deviation of the runs) and ``{v}_consistency = 1 − std / range`` clipped to [0, 1], where
      range is ``high − low`` of ``scale[v]`` when given, else the observed range of ``v`` over
      the whole input (every item and model). A range taken per item and model would make the
      score constant for two runs (always 1 − 1/√2) whatever their distance, so it is not used.
      Range 0 means every value is equal: consistency 1.0.

    ``n_runs`` counts the rows; ``consistency`` is the mean of the per-column scores
    (agreements and consistencies) that are not null.

    Null: agreement and mode when the runs have no non-null value; std and consistency when
    they have fewer than ``ddof + 1`` non-null values (a single run has std 0 and consistency
    1.0 with the default ``ddof=0``); ``consistency`` when every per-column score is null.
    """
    where = "consistency_within_model"
    lf, eager = _lazy(df, where)
    values = _names(value, "value", where)
    schema = lf.collect_schema()
    _require(schema, [item, model, *values], where)
    categorical, numeric = _split_values(schema, values)
    keys = [item, model]
    out = lf.group_by(*keys).agg(
        pl.len().alias("n_runs"),
        *[_score(v).mean().alias(f"{v}_mean") for v in numeric],
        *[_score(v).std(ddof=ddof).alias(f"{v}_std") for v in numeric],
    )
    out = _with_normalized(out, lf, numeric, scale, where, "std", "consistency")
    for v in categorical:
        modal = _modal(lf, keys, v, "__top", "__total", f"{v}_mode").with_columns(
            (pl.col("__top") / pl.col("__total")).alias(f"{v}_agreement")
        ).drop("__top", "__total")
        out = out.join(modal, on=keys, how="left", nulls_equal=True)
    scores = [f"{v}_agreement" for v in categorical] + [f"{v}_consistency" for v in numeric]
    out = out.with_columns(consistency=pl.mean_horizontal(scores)).sort(keys, nulls_last=True)
    return _finish(out, eager)


def agreement_across_models(
    df: Frame,
    *,
    item: str = "item_id",
    model: str = "model",
    value: str | Sequence[str],
    scale: Mapping[str, tuple[float, float]] | None = None,
) -> Frame:
    """Cross-model agreement, one row per item (seed 004).

    Each model is represented by its modal value (categorical; ties: the smallest) or its mean
    over runs (numeric). Then, per item and column ``v``:

    - categorical ``{v}_consensus`` (most common modal value; ties: the smallest) and
      ``{v}_agreement`` = share of the models whose modal value is the consensus;
    - numeric ``{v}_range`` = max − min of the model means, and ``{v}_agreement =
      1 − range / scale range`` clipped to [0, 1], the scale range being as in
      :func:`consistency_within_model`; 1.0 when the scale range is 0.

    ``n_models`` counts the models with a row for the item; ``agreement`` is the mean of the
    per-column agreements that are not null. One model agrees with itself (1.0).

    Null: a column's outputs when no model has a non-null value for the item; ``agreement``
    when all of them are null.
    """
    where = "agreement_across_models"
    lf, eager = _lazy(df, where)
    values = _names(value, "value", where)
    schema = lf.collect_schema()
    _require(schema, [item, model, *values], where)
    categorical, numeric = _split_values(schema, values)
    per_model = lf.group_by(item, model).agg(*[_score(v).mean() for v in numeric])
    out = per_model.group_by(item).agg(
        pl.len().alias("n_models"),
        *[(pl.col(v).max() - pl.col(v).min()).alias(f"{v}_range") for v in numeric],
    )
    out = _with_normalized(out, lf, numeric, scale, where, "range", "agreement")
    for v in categorical:
        modes = _modal(lf, [item, model], v, "__top", "__total", "__mode").select(
            item, pl.col("__mode").alias(v)
        )
        consensus = _modal(modes, [item], v, "__top", "__total", f"{v}_consensus")
        consensus = consensus.with_columns(
            (pl.col("__top") / pl.col("__total")).alias(f"{v}_agreement")
        ).drop("__top", "__total")
        out = out.join(consensus, on=item, how="left", nulls_equal=True)
    scores = [f"{v}_agreement" for v in values]
    out = out.with_columns(agreement=pl.mean_horizontal(scores)).sort(item, nulls_last=True)
    return _finish(out, eager)


# --- monitoring (seed 002) ------------------------------------------------------------------


def monitor(
    df: Frame,
    *,
    time: str = "ts",
    every: str = "1h",
    score: str = "overall",
    passed: str | None = None,
    sample_rate: float = 1.0,
    seed: int = 0,
    threshold: float = 0.7,
    group_by: str | Sequence[str] | None = None,
) -> Frame:
    """Pass rate per time window over a sample of scored runs (seed 002's ProductionMonitor).

    A simple random sample of ``round(n · sample_rate)`` runs is drawn (deterministic for a
    given ``seed`` and row order; ``sample_rate = 1`` keeps every run). A run passes when
    ``passed`` (a boolean column) is true, or, without it, when ``score >= threshold``.
    Windows are ``group_by_dynamic(time, every=every)`` (only windows holding a sampled run
    appear), optionally per ``group_by`` columns.

    Columns: ``time`` (window start), ``n_runs``, ``n_scored`` (runs whose pass flag is
    known), ``n_passed``, ``pass_rate = n_passed / n_scored``, ``mean_score`` and ``status``:
    ``healthy`` ≥ 0.85, ``warning`` ≥ 0.70, else ``critical`` (SPEC §7), and
    ``insufficient_data`` (seed 002) when no run in the window is scored.

    Null: ``pass_rate`` when ``n_scored`` is 0; ``mean_score`` when no score is present (or
    when no ``score`` column exists and ``passed`` is given).
    """
    where = "monitor"
    lf, eager = _lazy(df, where)
    if isinstance(sample_rate, bool) or not (
        isinstance(sample_rate, int | float) and 0 < sample_rate <= 1
    ):
        raise ValueError(f"{where}: sample_rate must be in (0, 1]; got {sample_rate!r}")
    keys = [] if group_by is None else _names(group_by, "group_by", where)
    schema = lf.collect_schema()
    _require(schema, [time, *keys], where)
    if passed is None:
        _require(schema, [score], where)
        ok = _score(score) >= threshold
    else:
        _require(schema, [passed], where)
        ok = pl.col(passed).cast(pl.Boolean)
    mean = _score(score).mean() if score in schema else pl.lit(None, dtype=pl.Float64)
    if sample_rate < 1:
        lf = lf.filter(
            pl.int_range(pl.len()).shuffle(seed=seed) < (pl.len() * sample_rate).round()
        )
    windows = (
        lf.with_columns(__ok=ok)
        .sort(*keys, time)
        .group_by_dynamic(time, every=every, group_by=keys or None)
        .agg(
            n_runs=pl.len(),
            n_scored=pl.col("__ok").count(),
            n_passed=pl.col("__ok").sum(),
            mean_score=mean,
        )
        .with_columns(
            pass_rate=pl.when(pl.col("n_scored") > 0).then(
                pl.col("n_passed") / pl.col("n_scored")
            )
        )
        .with_columns(
            status=health_status("pass_rate").fill_null(pl.lit("insufficient_data"))
        )
    )
    return _finish(windows, eager)
