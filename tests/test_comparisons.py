"""Dates, numbers written as text (issue 13): hand-computed cases, engine and reference alike."""

from __future__ import annotations

import datetime
import math
import itertools
import random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import _native, evaluate
from jsoneval_polars.config import ConfigError, parse_config
from jsoneval_polars import readers
from jsoneval_polars import values as values_module
from jsoneval_polars.values import NUMBER_TEXT, date_of, parse_number
import reference

NUMBER_READER = _native.NumberReader(NUMBER_TEXT)  # src/number.rs: the engine's reader


def _match(gt, aio, config=None) -> dict:
    """{path: (strategy, match)} of a one-document run, checked against the reference."""
    docs = [{"doc_id": "d", "gt": gt, "aio": aio}]
    result = evaluate([{"doc_id": "d", **gt}], [{"doc_id": "d", **aio}], config=config)
    ref = reference.reference_evaluate(docs, config)
    got = {p: (s, m) for p, s, m in result.fields.select("path", "strategy", "match").iter_rows()}
    expected = {f["path"]: (f["strategy"], f["match"]) for f in ref["fields"]["d"]}
    assert got == expected
    return got


@pytest.mark.parametrize(
    ("text", "order", "day"),
    [
        ("2025-01-15", "DMY", (2025, 1, 15)),
        ("2025-01-15t23:59:00+05:00", "DMY", (2025, 1, 15)),  # the day as written
        ("15-jan-2025", "DMY", (2025, 1, 15)),
        ("15 january 2025", "DMY", (2025, 1, 15)),
        ("january 15, 2025", "DMY", (2025, 1, 15)),
        ("sept. 3 2025", "DMY", (2025, 9, 3)),
        ("03/04/2025", "DMY", (2025, 4, 3)),
        ("03/04/2025", "MDY", (2025, 3, 4)),
        ("03/04/2025", "YMD", None),  # year-first only
        ("2025/04/03", "MDY", (2025, 4, 3)),
        ("3.4.2025", "MDY", (2025, 4, 3)),  # dotted dates are day first
        ("31/02/2025", "DMY", None),  # no such day
        ("2025-13-01", "DMY", None),
        ("0000-01-01", "DMY", None),
        ("15-janu-2025", "DMY", None),
        ("15/01/25", "DMY", None),  # two-digit years are not read
        ("hello", "DMY", None),
    ],
)
def test_date_of(text, order, day):
    expected = datetime.date(*day) if day else None
    got = pl.select(date_of(pl.lit(text), order)).item()
    assert got == expected
    assert reference.date_of(text, order) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2,750.1", 2750.1),
        ("$3,141.56", 3141.56),
        ("usd 1,234.50", 1234.5),
        ("1,234.50 eur", 1234.5),
        ("(1,234.50)", -1234.5),
        ("($5)", -5.0),
        ("5 €", 5.0),
        ("-$3", -3.0),
        ("$-3", -3.0),
        ("(-5)", None),  # a sign inside parentheses
        ("(5", None),
        ("$5$", None),  # two currency signs
        ("the 100", None),  # not a currency code
        ("1 000", None),
        ("1e999", None),
    ],
)
def test_numbers_as_text(text, value):
    got = pl.select(parse_number(pl.lit(text), pl.lit("string"))).item()
    assert got == value
    assert _read_strings([text]) == [value]
    assert reference.parse_number(text) == value


# what numeric strings are made of, and what comes near them
_NUMBER_PIECES = [*"0123456789.,-+ e()$€£¥₹x", "usd", "eur", "jpy", "\t", "\u00a0", "1e", "e-"]


def _read_strings(texts: list[str | None]) -> list[float | None]:
    """The native reader's values of canonical strings (NumberReader.values, kind string)."""
    frame = pl.DataFrame({"text": texts, "kind": ["string"] * len(texts)},
                         schema={"text": pl.String, "kind": pl.String})
    return pl.DataFrame(NUMBER_READER.values(frame)).to_series().to_list()


def _same_numbers(texts: list[str | None]) -> None:
    """The native reader gives the expression's value (bit for bit) or null, text by text."""
    want = pl.select(parse_number(pl.lit(pl.Series(texts, dtype=pl.String)), pl.lit("string")))
    got = _read_strings(texts)
    for text, w, g in zip(texts, want.to_series().to_list(), got, strict=True):
        assert (w is None and g is None) or (
            w is not None and g is not None and w.hex() == g.hex()), (text, w, g)


def test_the_native_number_reader_is_the_expression():
    """Seeded: 20,000 strings of number pieces, plain decimals with and without separators."""
    rnd = random.Random(0)
    texts = ["".join(rnd.choice(_NUMBER_PIECES) for _ in range(rnd.randint(0, 10)))
             for _ in range(20_000)]
    texts += [f"{rnd.randint(0, 10**12):,}.{rnd.randint(0, 99):02d}" for _ in range(2_000)]
    texts += ["0", "-0", "007", "1" * 400, "9" * 309 + ".5", "5.", ".5", "1e5", None]
    _same_numbers(texts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_NUMBER_PIECES), max_size=12).map("".join),
                max_size=20))
def test_the_native_number_reader_is_the_expression_on_drawn_strings(texts):
    _same_numbers(texts)


_KINDS = ["int", "float", "string", "bool", "null", "array", None]
_NUMBER_TEXTS = st.one_of(
    st.integers(-(10**400), 10**400).map(str),  # ints beyond 64 bits keep their digits
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.lists(st.sampled_from(_NUMBER_PIECES), max_size=12).map("".join),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_NUMBER_TEXTS, st.sampled_from(_KINDS)), max_size=30))
def test_the_native_values_of_a_side_are_the_expression(rows):
    """A side's texts and kinds read at once (NumberReader.values, as similarity._number_of
    reads them): the values of values.parse_number, to the bit."""
    frame = pl.DataFrame(rows, schema={"text": pl.String, "kind": pl.String}, orient="row")
    want = frame.select(parse_number(pl.col("text"), pl.col("kind"))).to_series().to_list()
    got = pl.DataFrame(NUMBER_READER.values(frame)).to_series().to_list()
    for row, w, g in zip(rows, want, got, strict=True):
        assert (w is None and g is None) or (w is not None and g is not None and (
            w.hex() == g.hex() or (math.isnan(w) and math.isnan(g)))), (row, w, g)


def test_exact_compares_dates_by_day_and_numbers_by_value():
    gt = {"d": "2025-01-15", "e": "2025-01-15", "f": "15.01.2025", "n": 2750.1, "m": 3141.56,
          "k": -5, "t": "1000", "big": 2**53 + 1, "z": 0}
    aio = {"d": "15-JAN-2025", "e": "January 16, 2025", "f": "2025-01-15T09:00:00Z",
           "n": "2,750.10", "m": "$3,141.56", "k": "(5)", "t": "1,000", "big": str(2**53),
           "z": "-0"}
    got = _match(gt, aio, {"field_strategies": {"t": "EXACT"}})
    assert got == {
        "d": ("EXACT", True), "e": ("EXACT", False), "f": ("EXACT", True),
        "n": ("EXACT", True), "m": ("EXACT", True), "k": ("EXACT", True),
        # a GT string is compared as text, and a GT integer beyond 2**53 only by its digits
        "t": ("EXACT", False), "big": ("EXACT", False), "z": ("EXACT", True),
    }


def test_date_order_and_date_strategy():
    gt, aio = {"a": "03/04/2025", "b": "2025-04-03"}, {"a": "2025-04-03", "b": "03/04/2025"}
    assert _match(gt, aio) == {"a": ("EXACT", True), "b": ("EXACT", True)}
    assert _match(gt, aio, {"date_order": "MDY"}) == {"a": ("EXACT", False), "b": ("EXACT", False)}
    # under YMD, 03/04/2025 is no date: plain text (default SEMANTIC), not equal
    assert _match(gt, aio, {"date_order": "ymd"})["b"] == ("EXACT", False)
    # DATE by configuration: the same day; numbers are not read by value under DATE
    got = _match({"a": "5 jan 2025", "n": 5}, {"a": "2025-01-05", "n": "$5"},
                 {"field_strategies": {"a": "DATE", "n": "DATE"}})
    assert got == {"a": ("DATE", True), "n": ("DATE", False)}


def test_date_order_is_validated():
    with pytest.raises(ConfigError, match="date_order must be one of 'DMY', 'MDY', 'YMD'"):
        parse_config({"date_order": "DM"})


@pytest.mark.parametrize("n_items", [3, 70])  # 70 x 70 items: the bounded (large list) path
def test_list_alignment_by_value(n_items):
    gt_items = [{"day": f"2025-01-{i % 28 + 1:02d}", "amount": 1000 + i} for i in range(n_items)]
    day = [f"{i % 28 + 1}-jan-2025" for i in range(n_items)]
    aio_items = [{"day": day[i], "amount": f"${1000 + i:,}"} for i in range(n_items)]
    aio_items.reverse()
    config = {"lists": {"items": {"match_fields": ["day", "amount"], "threshold": 1.0}}}
    result = evaluate([{"doc_id": "d", "items": gt_items}], [{"doc_id": "d", "items": aio_items}],
                      config=config)
    pairs = result.alignments.filter(pl.col("aio_index").is_not_null())
    assert sorted(pairs.select("gt_index", "aio_index").iter_rows()) == [
        (i, n_items - 1 - i) for i in range(n_items)
    ]
    assert result.documents["accuracy"].item() == 1.0
    # auto match fields: an ISO date is compared as a day, not by Levenshtein
    small = [{"day": "2025-01-05", "x": "a"}, {"day": "2025-01-15", "x": "a"}]
    swapped = [{"day": "15/01/2025", "x": "a"}, {"day": "5 jan 2025", "x": "a"}]
    ref = reference.reference_evaluate(
        [{"doc_id": "d", "gt": {"items": small}, "aio": {"items": swapped}}]
    )
    result = evaluate([{"doc_id": "d", "items": small}], [{"doc_id": "d", "items": swapped}])
    got = sorted(result.alignments.select("gt_index", "aio_index").iter_rows())
    assert got == [(0, 1), (1, 0)] == [tuple(p) for p in ref["alignments"][0]["pairs"]]


# what written dates are made of, and what comes near them
_DATE_PIECES = [*"0123456789/-. ,:tz+", "2025", "1900", "0000", "9999", "jan", "sept", "june",
                "february", "may", "31", "29", "02", "13", "t10:00", "\u00a0", " "]
_MONTH_NAMES = ["jan", "january", "feb", "february", "mar", "march", "apr", "april", "may",
                "jun", "june", "jul", "july", "aug", "august", "sep", "sept", "september",
                "oct", "october", "nov", "november", "dec", "december", "juno", "sepember"]


def _written_dates(rnd: random.Random, n: int) -> list[str | None]:
    """Dates in every recognized format and near misses: impossible days, year 0000, a month
    13, missing or extra pieces, whitespace around, times after ISO dates."""
    out: list[str | None] = []
    for _ in range(n):
        y = rnd.choice([rnd.randint(1, 9999), 0, 1900, 2000, 2024, 2025])
        m, d = rnd.randint(0, 13), rnd.randint(0, 32)
        name = rnd.choice(_MONTH_NAMES)
        dot = rnd.choice(["", "."])
        text = rnd.choice([
            f"{y:04d}-{m:02d}-{d:02d}", f"{y:04d}-{m:02d}-{d:02d}t{rnd.randint(0, 23):02d}:30z",
            f"{y:04d}-{m:02d}-{d:02d} 10:00:00+05:00", f"{y:04d}-{m:02d}-{d:02d}T10:00",
            f"{y:04d}-{m}-{d}", f"{y:04d}/{m}/{d}", f"{d}/{m}/{y:04d}", f"{d:02d}/{m:02d}/{y:04d}",
            f"{d}.{m}.{y:04d}", f"{d}-{name}{dot}-{y:04d}", f"{d} {name}{dot} {y:04d}",
            f"{name}{dot} {d}, {y:04d}", f"{name} {d} {y:04d}", f"{y:04d}", f"{d}/{m}/{y}",
            f"{y:04d}-{m:02d}-{d:02d}x", f"no. {y:04d}",
        ])
        out.append(rnd.choice(["", " ", "\t", "\u3000"]) + text + rnd.choice(["", " ", "\n"]))
    return out + [None, "", "   "]


def _same_days(texts: list[str | None], order: str) -> None:
    """The native reader (readers.dates_of, src/dates.rs) gives the expression's date or null,
    text by text."""
    series = pl.Series("text", texts, dtype=pl.String)
    want = pl.select(date_of(pl.lit(series), order)).to_series().to_list()
    got = pl.DataFrame(_native.DateReader(values_module._ISO_DATE,
                                          list(values_module.date_formats(order))
                                          ).days(series.to_frame())).to_series().to_list()
    assert got == want, [(t, w, g) for t, w, g in zip(texts, want, got, strict=True) if w != g]
    assert readers.dates_of(series, order).to_list() == want


@pytest.mark.parametrize("order", ["DMY", "MDY", "YMD"])
def test_the_native_date_reader_is_the_expression(order):
    """Seeded: 20,000 written dates and near misses per date order."""
    texts = _written_dates(random.Random(order), 20_000)
    assert sum(d is not None for d in pl.select(date_of(pl.lit(pl.Series(texts, dtype=pl.String)),
                                                        order)).to_series()) > 2_000
    _same_days(texts, order)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_DATE_PIECES), max_size=8).map("".join), max_size=20),
       st.sampled_from(["DMY", "MDY", "YMD"]))
def test_the_native_date_reader_is_the_expression_on_drawn_strings(texts, order):
    _same_days(texts, order)


def test_dates_without_the_extension_are_the_expression(monkeypatch):
    """readers.dates_of's own path (no extension built): the expression on the rows
    looks_like_date recognizes, null elsewhere."""
    texts = _written_dates(random.Random(5), 3_000)
    series = pl.Series("text", texts, dtype=pl.String)
    monkeypatch.setattr(readers, "_native", None)
    readers._date_reader.cache_clear()
    try:
        got = readers.dates_of(series, "MDY").to_list()
    finally:
        readers._date_reader.cache_clear()
    assert got == pl.select(date_of(pl.lit(series), "MDY")).to_series().to_list()


#: Member texts for the value keys: dates written several ways (some the same day), numbers
#: and numeric strings of equal and different values (zero both signs, beyond 2**53), text.
_MEMBER_TEXTS = ["2025-01-02", "02/01/2025", "01/02/2025", "2 jan 2025", "2025-01-03",
                 "31/02/2025", "12", "12.0", "$12", "12.5", "1,200", "1200", "-0", "0", "0.0",
                 "1e16", "9007199254740993", "nan", "inf", "x12", "bolts", "", None]


def _member_frame(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"field": pl.UInt32, "kind": pl.String, "text": pl.String},
                        orient="row")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(_KINDS),
                          st.sampled_from(_MEMBER_TEXTS)), max_size=25),
       st.lists(st.tuples(st.integers(0, 3), st.sampled_from(_KINDS),
                          st.sampled_from(_MEMBER_TEXTS)), max_size=25),
       st.sampled_from(["DMY", "MDY", "YMD"]))
def test_native_member_keys_make_the_expressions_equalities(gt, aio, order):
    """readers.member_keys natively (src/member_keys.rs, keys spelt its own way) keys the same
    members as its Polars path (readers.value_keys) and makes the same pairs of GT and AIO
    members equal, within a field and across fields."""
    g, a = _member_frame(gt), _member_frame(aio)
    native = readers.member_keys(g, a, order)
    saved = readers._native
    readers._native = None
    readers._member_keys.cache_clear()
    readers._date_reader.cache_clear()
    readers._number_reader.cache_clear()
    try:
        reference = readers.member_keys(g, a, order)
    finally:
        readers._native = saved
        for cached in (readers._member_keys, readers._date_reader, readers._number_reader):
            cached.cache_clear()
    got = [side["key"].to_list() for side in native]
    want = [side["key"].to_list() for side in reference]
    for side in (0, 1):
        assert [k is None for k in got[side]] == [k is None for k in want[side]]
    for i, j in itertools.product(range(len(gt)), range(len(aio))):
        same = got[0][i] is not None and got[0][i] == got[1][j]
        assert same == (want[0][i] is not None and want[0][i] == want[1][j]), (gt[i], aio[j])
