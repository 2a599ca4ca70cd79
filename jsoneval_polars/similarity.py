"""Field similarity and match (SPEC §4): EXACT, DATE, FUZZY, NUMERIC, SEMANTIC, IGNORE.

The strategy column holds codes into ``STRATEGIES``. The native scorer (src/scoring.rs) scores
every row but the SEMANTIC ones in one pass whenever the extension is built;
:func:`score_fields_by_expressions` is the Polars reference it is tested against, in which each
strategy's work is done on its own rows only and scattered back. The semantic scorer only ever
sees the distinct (gt, aio) text pairs of a batch.
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl

from .config import Config, Strategy
from .schemas import (
    BOTH_NON_NULL, CODE, DATE, EXACT, FUZZY, IGNORE, NUMERIC, SEMANTIC, STRATEGIES,
)
from .scorers import TEXT_CAP, Scorer, lexical_token_set, resolve_scorer
from .flatten import _native
from .readers import dates_of, numbers_of
from .values import (
    _EMAIL, _ISO_DATE, INT_EXACT, NUMBER_TEXT, date_formats, is_date_or_email, normalized,
    other_date_formats,
)

_TINY = 1e-12


def code(strategy: Strategy | str) -> pl.Expr:
    return pl.lit(STRATEGIES.index(Strategy(strategy).value), CODE)


def scattered(n: int, at: pl.Series, values: pl.Series) -> pl.Series:
    """A length-n Series, null except ``values`` at positions ``at``."""
    full = pl.repeat(None, n, dtype=values.dtype, eager=True).alias(values.name)
    return full.scatter(at, values) if len(at) else full


def levenshtein_similarity(pairs: pl.DataFrame, a: str, b: str) -> pl.Series:
    """1 − distance / max(len) for each row of two non-null string columns (1 when both empty),
    texts longer than ``TEXT_CAP`` characters being compared on their first ``TEXT_CAP``.

    Equal texts are 1 without a call; rapidfuzz gives the integer distances of the others, and
    the ratio is taken here in float64, which is the formula of rapidfuzz's
    ``Levenshtein.normalized_similarity``. The pairs are not deduplicated: measured on the
    benchmark batches, hashing the text pairs costs more than the repeats it saves.
    """
    if pairs.height == 0:
        return pl.Series("similarity", [], dtype=pl.Float64)
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    capped = pairs.select(capped_text(a), capped_text(b))
    differ = capped.select((pl.col(a) != pl.col(b)).alias("_d"))["_d"].arg_true()
    other = capped[differ]
    dist = process.cpdist(
        other[a].to_list(),
        other[b].to_list(),
        scorer=Levenshtein.distance,
        dtype=np.int32,
        workers=-1,
    )
    longest = pl.max_horizontal(pl.col(a).str.len_chars(), pl.col(b).str.len_chars())
    sim = other.with_columns(pl.Series("_d", dist, dtype=pl.Int64)).select(
        (1.0 - pl.col("_d") / longest).alias("similarity")
    )
    return scattered(pairs.height, differ, sim.to_series()).fill_null(1.0)


def capped_text(column: str) -> pl.Expr:
    """The first ``TEXT_CAP`` characters of a text column: what Levenshtein compares."""
    return pl.col(column).str.slice(0, TEXT_CAP)


def long_text_warnings(
    fields: pl.DataFrame, paths: pl.Series, semantic_scorer: Scorer | str | None
) -> list[tuple[int, str, str]]:
    """(doc, side, message) for each scored FUZZY row (and SEMANTIC row, when the scorer is the
    lexical default, which caps texts too) compared on a prefix because a text is longer than
    ``TEXT_CAP`` characters; ``paths`` decodes ``pid``. The pipeline makes them warning rows."""
    # byte lengths first: O(1) per row, and a text has no more characters than bytes; a batch
    # without a text that long (nearly every one) needs no filter of its rows
    longest = fields.select(pl.max_horizontal(pl.col("gt_text").str.len_bytes().max(),
                                              pl.col("aio_text").str.len_bytes().max())).item()
    if longest is None or longest <= TEXT_CAP:
        return []
    capped = [FUZZY]
    if getattr(resolve_scorer(semantic_scorer), "name", None) == lexical_token_set.name:
        capped.append(SEMANTIC)
    text = pl.col("strategy").is_in(capped) & pl.col("similarity").is_not_null()
    long = (pl.col("gt_text").str.len_bytes() > TEXT_CAP) | (
        pl.col("aio_text").str.len_bytes() > TEXT_CAP
    )
    rows = fields.lazy().filter((text & long).fill_null(False)).select(
        "doc", "pid", "strategy",
        pl.col("gt_text").str.len_chars().alias("g"),
        pl.col("aio_text").str.len_chars().alias("a"),
    ).filter(pl.max_horizontal("g", "a") > TEXT_CAP).collect()
    return [
        (doc, "gt" if g > TEXT_CAP else "aio",
         f"{paths[pid]}: {STRATEGIES[code]} similarity of a text of {max(g, a)} characters "
         f"computed on the first {TEXT_CAP} characters of each side")
        for doc, pid, code, g, a in rows.iter_rows()
    ]


def _semantic_similarity(pairs: pl.DataFrame, scorer: Scorer) -> pl.Series:
    if pairs.height == 0:
        return pl.Series("similarity", [], dtype=pl.Float64)
    uniq = pairs.select("gt_text", "aio_text").unique(maintain_order=True)
    scores = np.asarray(scorer(uniq["gt_text"].to_list(), uniq["aio_text"].to_list()), dtype=float)
    if scores.shape != (uniq.height,):
        raise ValueError(
            f"semantic scorer returned {scores.shape[0] if scores.ndim else 'a scalar'} scores "
            f"for {uniq.height} pairs"
        )
    uniq = uniq.with_columns(pl.Series("_sim", scores).clip(0.0, 1.0))
    return pairs.join(uniq, on=["gt_text", "aio_text"], how="left", maintain_order="left")["_sim"]


def path_setting(
    attributes: pl.Series, keys: pl.Series, by_name: dict, dtype: pl.DataType, name: str
) -> pl.Series:
    """A per-field setting of each path: the entry of ``by_name`` (attribute path or bare
    field name -> value) for its attribute, else for its bare field name, else null."""
    frame = pl.DataFrame({"attribute": attributes, "key": keys})
    if not by_name:
        return pl.repeat(None, frame.height, dtype=dtype, eager=True).alias(name)
    return frame.select(
        pl.coalesce(
            pl.col("attribute").replace_strict(by_name, default=None, return_dtype=dtype),
            pl.col("key").replace_strict(by_name, default=None, return_dtype=dtype),
        ).alias(name)
    ).to_series()


def path_strategies(attributes: pl.Series, keys: pl.Series, config: Config) -> pl.Series:
    """Configured strategy code of each path (explicit attribute, then bare field name), null
    where the strategy is detected from the value."""
    by_name = {k: STRATEGIES.index(v.value) for k, v in config.field_strategies.items()}
    return path_setting(attributes, keys, by_name, CODE, "strategy")


def strategy_expr(config: Config) -> pl.Expr:
    """Detected strategy code of a field row from its value (for rows no entry configures)."""
    gt_has = pl.col("gt_present") & ~pl.col("gt_null")
    kind = (
        pl.when(gt_has)
        .then(pl.col("gt_kind"))
        .when(pl.col("aio_present") & ~pl.col("aio_null"))
        .then(pl.col("aio_kind"))
    )
    text = pl.when(gt_has).then(pl.col("gt_text")).otherwise(pl.col("aio_text"))
    return (
        pl.when(kind.is_in(["bool", "int", "float", "array", "object"]))
        .then(code(Strategy.EXACT))
        .when((kind == "string") & is_date_or_email(text, config.date_order))
        .then(code(Strategy.EXACT))
        .otherwise(code(config.default_text_strategy))
        .alias("strategy")
    )


def with_strategy(fields: pl.DataFrame, configured: pl.Series, config: Config) -> pl.DataFrame:
    """Add ``strategy``: the path's configured code (``configured``, one per row), else detected,
    the detection being run on the rows that need it only (natively when the extension is
    built: :func:`detected`)."""
    detect = configured.is_null()
    if detect.all():
        return fields.with_columns(detected(fields, config))
    at = detect.arg_true()
    if len(at):
        needed = fields.select(
            "gt_present", "gt_null", "gt_kind", "gt_text", "aio_present", "aio_null", "aio_kind",
            "aio_text",
        )[at]
        configured = configured.scatter(at, detected(needed, config))
    return fields.with_columns(configured.alias("strategy"))


def detected(fields: pl.DataFrame, config: Config) -> pl.Series:
    """:func:`strategy_expr` of every row: by the native detector when the extension is built
    (its test holds it equal to the expression), else by the expression."""
    detector = _native_detector(config.date_order, config.default_text_strategy)
    if detector is None:
        return fields.select(strategy_expr(config)).to_series()
    has = [(pl.col(f"{side}_present") & ~pl.col(f"{side}_null")).fill_null(False)
           .alias(f"{side}_has") for side in ("gt", "aio")]
    frame = fields.select(*has, "gt_text", "aio_text", "gt_kind", "aio_kind")
    return pl.DataFrame(detector.detect(frame)).to_series()


@functools.cache
def _native_detector(date_order: str, default: Strategy):
    if _native is None:
        return None
    return _native.StrategyDetector(
        [_ISO_DATE, other_date_formats(date_order), _EMAIL],
        STRATEGIES.index(Strategy.EXACT.value), STRATEGIES.index(Strategy(default).value),
    )


def _numbers(values: pl.DataFrame) -> pl.DataFrame:
    """``parse_number`` of both sides (g, a)."""
    return pl.DataFrame([_number_of(values, side).alias(side[0]) for side in ("gt", "aio")])


def _number_of(values: pl.DataFrame, side: str) -> pl.Series:
    """``parse_number`` of one side's text and kind columns (:func:`readers.numbers_of`)."""
    return numbers_of(values.select(pl.col(f"{side}_text").alias("text"),
                                    pl.col(f"{side}_kind").alias("kind")))


def with_normalized_text(
    fields: pl.DataFrame, chains: pl.Series, names: list[tuple[str, ...]]
) -> pl.DataFrame:
    """gt_text and aio_text of string values through their path's normalizers (``chains``:
    an index into ``names`` per row, null for none); other kinds keep their canonical text."""
    for i, chain in enumerate(names):
        at = (chains == i).fill_null(False).arg_true()
        if not len(at):
            continue
        part = fields.select("gt_text", "aio_text", "gt_kind", "aio_kind")[at].select(
            *[pl.when(pl.col(f"{side}_kind") == "string")
              .then(normalized(pl.col(f"{side}_text"), chain))
              .otherwise(pl.col(f"{side}_text")).alias(f"{side}_text")
              for side in ("gt", "aio")]
        )
        fields = fields.with_columns(
            fields["gt_text"].scatter(at, part["gt_text"]),
            fields["aio_text"].scatter(at, part["aio_text"]),
        )
    return fields


def same_value(values: pl.DataFrame, strategy: pl.Series, date_order: str) -> pl.Series:
    """EXACT's and DATE's match of rows whose canonical texts differ (DECISIONS.md 51, 52):
    a GT date and an AIO date (any recognized format) on the same calendar day; under EXACT
    also a GT number and an AIO numeric string of the same value (float64, so only below
    2**53 in magnitude). Needs gt_text, aio_text, gt_kind, aio_kind; ``strategy`` holds codes.
    The parsers run on the rows that can match this way only."""
    out = pl.Series("same", [False] * values.height)
    aio_string = values["aio_kind"] == "string"
    # dates: both texts name the same day
    at = ((values["gt_kind"] == "string") & aio_string).fill_null(False).arg_true()
    if len(at):
        part = values[at]
        same_day = (dates_of(part["gt_text"], date_order)
                    == dates_of(part["aio_text"], date_order))
        out = out.scatter(at, same_day.fill_null(False))
    # numbers: under EXACT, a GT number and an AIO numeric string of the same value
    by_number = (strategy == EXACT) & values["gt_kind"].is_in(["int", "float"]) & aio_string
    at = by_number.fill_null(False).arg_true()
    if len(at):
        part = values[at]
        number = part["gt_text"].cast(pl.Float64, strict=False)
        same = (number.abs() < INT_EXACT) & (_number_of(part, "aio") == number)
        out = out.scatter(at, same.fill_null(False))
    return out


def score_fields(
    fields: pl.DataFrame, config: Config, semantic_scorer: Scorer | str | None = None
) -> pl.DataFrame:
    """Add ``similarity`` and ``match`` to the rows of bucket ``both_non_null``.

    Needs columns bucket and strategy (codes), gt_text, aio_text, gt_kind, aio_kind, and
    ``threshold`` (the path's field_thresholds entry, null for none) when the config has
    field_thresholds. By the native scorer when the extension is built (SEMANTIC rows too when
    their scorer is the default :func:`scorers.lexical_token_set`, else asked of the semantic
    scorer here), else by :func:`score_fields_by_expressions`.
    """
    scorer = resolve_scorer(semantic_scorer)  # resolved (and checked) with or without rows
    lexical = scorer is lexical_token_set
    native = _native_scorer(config.abs_tol, config.rel_tol, config.fuzzy_threshold,
                            config.date_order,
                            config.semantic_threshold if lexical else None)
    if native is None:
        return score_fields_by_expressions(fields, config, scorer)
    columns = ["strategy", "bucket", "gt_text", "aio_text", "gt_kind", "aio_kind"]
    if config.field_thresholds:
        columns.append("threshold")
    scored = pl.DataFrame(native.score(fields.select(columns)))  # similarity, match
    fields = fields.with_columns(scored.get_columns())
    if lexical:
        return fields
    at = fields.select(
        ((pl.col("bucket") == BOTH_NON_NULL) & (pl.col("strategy") == SEMANTIC)).fill_null(False)
    ).to_series().arg_true()
    if not len(at):
        return fields
    rows = fields[at].select("gt_text", "aio_text",
                             *(["threshold"] if config.field_thresholds else []))
    similarity = _semantic_similarity(rows, scorer).alias("_text_sim")
    matched = rows.with_columns(similarity).select(
        pl.col("_text_sim") >= _threshold(config.semantic_threshold, config)
    ).to_series()
    return fields.with_columns(fields["similarity"].scatter(at, similarity),
                               fields["match"].scatter(at, matched))


@functools.cache
def _native_scorer(abs_tol: float, rel_tol: float, fuzzy_threshold: float, date_order: str,
                   lexical_threshold: float | None):
    """The native scorer of one set of settings whenever the extension is built (its test holds
    it equal to :func:`score_fields_by_expressions`). With ``lexical_threshold`` (SEMANTIC's
    threshold) it scores SEMANTIC rows by the lexical token-set ratio too."""
    if _native is None:
        return None
    return _native.FieldScorer(
        list(STRATEGIES), BOTH_NON_NULL, NUMBER_TEXT, _ISO_DATE,
        list(date_formats(date_order)), abs_tol, rel_tol, fuzzy_threshold, TEXT_CAP,
        lexical_threshold,
    )


def score_fields_by_expressions(
    fields: pl.DataFrame, config: Config, semantic_scorer: Scorer | str | None = None
) -> pl.DataFrame:
    """:func:`score_fields` by Polars expressions: the reference of the native scorer."""

    scored = (pl.col("bucket") == BOTH_NON_NULL).fill_null(False)
    strategy = pl.col("strategy")
    n = fields.height
    rows = fields.select(
        (scored & (strategy == NUMERIC)).alias("numeric"),
        (scored & (strategy == FUZZY)).alias("fuzzy"),
        (scored & (strategy == SEMANTIC)).alias("semantic"),
        (scored & strategy.is_in([EXACT, DATE]) & (pl.col("gt_text") != pl.col("aio_text")))
        .alias("by_value"),
    )
    values = fields.select("gt_text", "aio_text", "gt_kind", "aio_kind")

    at = rows["numeric"].arg_true()
    numeric = _numbers(values[at]).lazy().select(
        pl.when(pl.col("g").is_not_null() & pl.col("a").is_not_null())
        .then(
            1.0
            - pl.min_horizontal(
                pl.lit(1.0),
                (pl.col("g") - pl.col("a")).abs()
                / pl.max_horizontal(pl.col("g").abs(), pl.lit(_TINY)),
            )
        )
        .otherwise(0.0)
        .alias("_num_sim"),
        (
            (pl.col("g").is_not_null() & pl.col("a").is_not_null())
            & (
                (pl.col("g") - pl.col("a")).abs()
                <= pl.max_horizontal(pl.lit(config.abs_tol), config.rel_tol * pl.col("g").abs())
            )
        ).alias("_num_match"),
    ).collect()

    at_fuzzy = rows["fuzzy"].arg_true()
    at_sem = rows["semantic"].arg_true()
    text_sim = pl.concat(
        [
            levenshtein_similarity(values[at_fuzzy], "gt_text", "aio_text"),
            _semantic_similarity(
                values[at_sem].select("gt_text", "aio_text"), resolve_scorer(semantic_scorer)
            ),
        ]
    ).cast(pl.Float64)
    at_value = rows["by_value"].arg_true()
    fields = fields.with_columns(
        scattered(n, at_value, same_value(
            values[at_value], fields["strategy"].gather(at_value), config.date_order
        ).alias("_same")),
        scattered(n, at, numeric["_num_sim"]),
        scattered(n, at, numeric["_num_match"]),
        scattered(n, pl.concat([at_fuzzy, at_sem]), text_sim.alias("_text_sim")),
    )

    exact = (pl.col("gt_text") == pl.col("aio_text")) | pl.col("_same").fill_null(False)
    unscored = ~scored | (strategy == IGNORE)
    similarity = (
        pl.when(unscored)
        .then(None)
        .when(strategy.is_in([EXACT, DATE]))
        .then(exact.cast(pl.Float64))
        .when(strategy == NUMERIC)
        .then(pl.col("_num_sim"))
        .otherwise(pl.col("_text_sim"))
    )
    match = (
        pl.when(unscored)
        .then(None)
        .when(strategy.is_in([EXACT, DATE]))
        .then(exact)
        .when(strategy == NUMERIC)
        .then(pl.col("_num_match"))
        .when(strategy == FUZZY)
        .then(pl.col("_text_sim") >= _threshold(config.fuzzy_threshold, config))
        .otherwise(pl.col("_text_sim") >= _threshold(config.semantic_threshold, config))
    )
    return fields.with_columns(similarity.alias("similarity"), match.alias("match")).drop(
        "_num_sim", "_num_match", "_text_sim", "_same"
    )


def _threshold(default: float, config: Config) -> pl.Expr:
    """A row's FUZZY/SEMANTIC threshold: its field_thresholds entry, else ``default``."""
    if not config.field_thresholds:
        return pl.lit(default)
    return pl.col("threshold").fill_null(default)
