"""The native field scorer (src/scoring.rs) is the Polars reference
(similarity.score_fields_by_expressions): every strategy, bucket and kind, drawn texts that are
numbers, numeric strings, dates in several formats, long and non-ASCII text, NaN and infinity."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import similarity
from jsoneval_polars.config import parse_config
from jsoneval_polars.schemas import BUCKETS, CODE, STRATEGIES
from jsoneval_polars.scorers import TEXT_CAP, lexical_token_set

pytestmark = pytest.mark.skipif(similarity._native is None, reason="the extension is not built")

TEXTS = [
    "", "a", "abc", "abd", "kitten", "sitting", "Zürich", "Zurich", "日本語", "日本", "x" * 30,
    "12", "12.0", "12.5", "-0", "0", "1e3", "1000", "1e999", "NaN", "inf", "-inf", "1.5e-7",
    "$12", "$1,200.00", "1200", "(12.5)", "-12.5", "eur 12", "12 eur", "1,2", "$-3", "(3",
    "2025-01-02", "02/01/2025", "01/02/2025", "2 jan 2025", "jan 2, 2025", "2025-02-31",
    " 2025-01-02", "2025-01-02t10:00:00", "31/12/1999", "12/31/1999", "a@b.co", "true", "[]",
    "{}", "null", "steel bolts m8", "m8 steel bolts", "m8  bolts", "fuzzy was a bear",
    "a\x1fb", " b a a ", "\u3000b\ta", "straße 5", "strasse 5", " ",
    "y" * (TEXT_CAP + 3), "y" * TEXT_CAP + "z", "é" * (TEXT_CAP + 1), "é" * TEXT_CAP + "e",
]
KINDS = ["string", "int", "float", "bool", "array", "object", None]

rows = st.lists(
    st.tuples(
        st.sampled_from(range(len(STRATEGIES))),
        st.one_of(st.none(), st.sampled_from(range(len(BUCKETS)))),
        st.one_of(st.none(), st.sampled_from(TEXTS)),
        st.one_of(st.none(), st.sampled_from(TEXTS)),
        st.sampled_from(KINDS),
        st.sampled_from(KINDS),
        st.one_of(st.none(), st.sampled_from([0.0, 0.5, 0.9, 1.0])),
    ),
    max_size=60,
)


def fields_of(drawn: list[tuple]) -> pl.DataFrame:
    """The drawn rows as a fields table; a scored row (both_non_null) has both texts, as the
    flattener writes them."""
    scored = BUCKETS.index("both_non_null")
    drawn = [(s, b, g or "" if b == scored else g, a or "" if b == scored else a, *rest)
             for s, b, g, a, *rest in drawn]
    names = ["strategy", "bucket", "gt_text", "aio_text", "gt_kind", "aio_kind", "threshold"]
    columns = list(zip(*drawn, strict=True)) if drawn else [[] for _ in names]
    return pl.DataFrame(
        dict(zip(names, columns, strict=True)),
        schema={"strategy": CODE, "bucket": CODE, "gt_text": pl.String, "aio_text": pl.String,
                "gt_kind": pl.String, "aio_kind": pl.String, "threshold": pl.Float64},
    )


CONFIGS = [
    {},
    {"numeric": {"abs_tol": 0.5, "rel_tol": 0.05}, "fuzzy_threshold": 0.5,
     "semantic_threshold": 0.2, "date_order": "MDY"},
    {"date_order": "YMD", "field_thresholds": {"x": 0.7}},
]


@pytest.mark.parametrize("raw", CONFIGS)
@given(drawn=rows)
@settings(max_examples=150, deadline=None)
def test_the_native_scorer_is_the_expressions(raw, drawn):
    config = parse_config(raw)
    fields = fields_of(drawn)
    if not config.field_thresholds:
        fields = fields.drop("threshold")
    native = similarity.score_fields(fields, config)
    reference = similarity.score_fields_by_expressions(fields, config)
    assert native.columns == reference.columns
    assert native.equals(reference), pl.concat(
        [fields, native.select(pl.all().name.suffix("_native")),
         reference.select("similarity", "match")], how="horizontal"
    ).filter(
        ~(native["similarity"].eq_missing(reference["similarity"])
          & native["match"].eq_missing(reference["match"]))
    )


def test_every_text_against_every_text():
    """Each strategy in both_non_null over every (text, kind) pair of a smaller set: the drawn
    test's pool, exhaustively."""
    texts = [t for t in TEXTS if len(t) < 100]
    kinds = ["string", "int", "float"]
    drawn = [
        (s, BUCKETS.index("both_non_null"), g, a, gk, ak, None)
        for s in range(len(STRATEGIES)) for g in texts for a in texts[::3]
        for gk in kinds for ak in kinds[:2]
    ]
    config = parse_config({"numeric": {"rel_tol": 0.01}})
    fields = fields_of(drawn).drop("threshold")
    assert similarity.score_fields(fields, config).equals(
        similarity.score_fields_by_expressions(fields, config))


#: Words of letters (ASCII, Latin-1, above U+00FF, CJK, an astral one: texts Python stores in
#: 1, 2 and 4 bytes per character), digits, every kind of white space Python splits on
#: (U+001C..U+001F, and U+0085 and U+00A0, which rapidfuzz splits on only in texts wider than
#: a byte) and two it does not (U+200B, U+FEFF).
_TOKEN_CHARS = ("abcab12éß\xffĀ日本\U0001f600 \t\n\x0b\x0c\r\x1c\x1f\x85\xa0\u2003\u3000"
                "\u200b\ufeff")


@given(pairs=st.lists(st.tuples(st.text(_TOKEN_CHARS, max_size=24),
                                st.text(_TOKEN_CHARS, max_size=24)), max_size=40),
       threshold=st.sampled_from([0.0, 0.5, 0.8, 1.0]))
@settings(max_examples=300, deadline=None)
def test_native_lexical_semantic_is_rapidfuzz(pairs, threshold):
    """SEMANTIC rows under the default scorer, natively (src/token_set.rs): the same doubles as
    scorers.lexical_token_set, rapidfuzz's token_set_ratio / 100, and its matches."""
    scored = BUCKETS.index("both_non_null")
    drawn = [(STRATEGIES.index("SEMANTIC"), scored, g, a, "string", "string", None)
             for g, a in pairs]
    fields = fields_of(drawn).drop("threshold")
    got = similarity.score_fields(fields, parse_config({"semantic_threshold": threshold}))
    expected = lexical_token_set([g for g, _ in pairs], [a for _, a in pairs]).tolist()
    assert got["similarity"].to_list() == expected
    assert got["match"].to_list() == [s >= threshold for s in expected]


#: Texts near the detection's edges: dates in every recognized format (and near misses), e-mail
#: addresses, white space Polars strips and some it does not, nulls.
_DETECTED = [
    "2025-01-02", " 2025-01-02 ", "2025-01-02t10:00:00z", "2025-01-02 10:00", "2025-1-2",
    "02/01/2025", "2/1/2025", "2025/01/02", "02.01.2025", "2 jan 2025", "2-january-2025",
    "jan. 2, 2025", "sept 3 2025", "31/02/2025", "0000-01-01", "a@b.co", " a@b.co\u3000",
    "a@b", "a b@c.d", "@b.co", "hello", "", "\u00a0", "12", "\u200b2025-01-02", None,
]


@pytest.mark.parametrize("raw", [{}, {"date_order": "MDY", "default_text_strategy": "FUZZY"},
                                 {"date_order": "YMD"}])
@given(drawn=st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans(),
                                st.sampled_from(_DETECTED), st.sampled_from(_DETECTED),
                                st.sampled_from(KINDS), st.sampled_from(KINDS)), max_size=60))
@settings(max_examples=150, deadline=None)
def test_native_strategy_detection_is_the_expression(raw, drawn):
    config = parse_config(raw)
    names = ["gt_present", "gt_null", "aio_present", "aio_null", "gt_text", "aio_text",
             "gt_kind", "aio_kind"]
    columns = list(zip(*drawn, strict=True)) if drawn else [[] for _ in names]
    fields = pl.DataFrame(dict(zip(names, columns, strict=True)),
                          schema={**{n: pl.Boolean for n in names[:4]},
                                  **{n: pl.String for n in names[4:]}})
    expected = fields.select(similarity.strategy_expr(config)).to_series()
    assert similarity.detected(fields, config).to_list() == expected.to_list()
