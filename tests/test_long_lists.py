"""Long lists and long texts (issue 11).

A large greedy or optimal list instance is aligned from the pairs that can reach its threshold
only (align._bounded_pairs); the result must equal the plain-Python reference
(tests/reference.py), which scores every pair. ``bounded()`` sends every instance, however
small, through that path with tiny chunks, so the generic property cases exercise it too.
Texts longer than TEXT_CAP characters are compared on their first TEXT_CAP characters, with a
warning row naming the document and the path.
"""

from __future__ import annotations

import math
import random
import sys
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference  # noqa: E402
from test_properties import assert_engine_matches_reference, cases, run_engine  # noqa: E402

from jsoneval_polars import align  # noqa: E402
from jsoneval_polars.scorers import TEXT_CAP, lexical_token_set  # noqa: E402

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@contextmanager
def bounded(chunk_cells: int = 7):
    """Every greedy/optimal instance through _bounded_pairs and every list's order through
    _concordant, in chunks of a few cells."""
    saved = align.DENSE_PAIRS, align.CHUNK_CELLS, align.ORDER_JOIN
    align.DENSE_PAIRS, align.CHUNK_CELLS, align.ORDER_JOIN = 0, chunk_cells, 0
    try:
        yield
    finally:
        align.DENSE_PAIRS, align.CHUNK_CELLS, align.ORDER_JOIN = saved


def matched(docs, config) -> set[tuple[int, int]]:
    a = run_engine(docs, config).alignments.filter(
        pl.col("gt_index").is_not_null() & pl.col("aio_index").is_not_null()
    )
    return set(a.select("gt_index", "aio_index").iter_rows())


def doc(gt_items, aio_items, doc_id="d"):
    return {"doc_id": doc_id, "gt": {"items": gt_items}, "aio": {"items": aio_items}}


def list_config(threshold, method="greedy", match_fields=None, **more):
    lc = {"threshold": threshold, "method": method}
    if match_fields is not None:
        lc["match_fields"] = match_fields
    return {"lists": {"items": lc}, **more}


# --------------------------------------------------------------------------------------------
# The generic property cases, every list through the bounded path


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW)
@given(case=cases(with_list=True, methods=("greedy", "optimal")))
def test_bounded_alignment_equals_reference(case):
    docs, config = case
    with bounded():
        assert_engine_matches_reference(docs, config)


# --------------------------------------------------------------------------------------------
# The native matcher (src/matching.rs) against the Python path it stands in for


@contextmanager
def python_matching():
    saved = align.MATCH_NATIVELY
    align.MATCH_NATIVELY = False
    try:
        yield
    finally:
        align.MATCH_NATIVELY = saved


def assert_native_matching_equals_python(docs, config) -> None:
    """Both matchers give the same tables: the same matches, and similarities equal to the last
    bits (a mean of three or more fields may differ there: Polars' group mean does not sum in a
    fixed order, the native matcher sums in match_fields order, as the reference does)."""
    native = run_engine(docs, config)
    with python_matching():
        python = run_engine(docs, config)
    for table in ("alignments", "fields", "documents"):
        assert_frame_equal(getattr(native, table), getattr(python, table), check_exact=False,
                           rel_tol=0, abs_tol=1e-12)


needs_kernel = pytest.mark.skipif(not align.MATCH_NATIVELY, reason="native kernel not built")


@needs_kernel
@pytest.mark.parametrize("method", ["greedy", "index"])
def test_a_pair_mean_is_summed_in_match_fields_order(method):
    """Three match fields scoring 1/12, 12/13 and 1/14: their float64 mean depends on the order
    of the sum. The native matcher sums in match_fields order, as the reference does, and shows
    the reference's value to the bit."""
    gt = {"a": "a" * 12, "b": "b" * 13, "c": "c" * 14}
    aio = {"a": "a" + "x" * 11, "b": "b" * 12 + "x", "c": "c" + "x" * 13}
    expected = reference.pair_similarity(gt, aio, ["a", "b", "c"], False)
    assert expected != math.fsum([1 - 11 / 12, 1 - 1 / 13, 1 - 13 / 14]) / 3  # order matters
    docs = [doc([gt], [aio])]
    config = list_config(0.0, method, ["a", "b", "c"])
    assert run_engine(docs, config).alignments["similarity"].to_list() == [expected]
    assert_native_matching_equals_python(docs, config)


@needs_kernel
@settings(max_examples=150, deadline=None, suppress_health_check=SLOW)
@given(case=cases(with_list=True, methods=("greedy", "index")))
def test_native_matching_equals_the_python_path(case):
    assert_native_matching_equals_python(*case)


@needs_kernel
def test_configured_lists_are_matched_without_instance_tables(monkeypatch):
    """When every list of a batch has configured match fields and is matched greedily or by
    index, the kernel finds each depth's instances from the items (align._configured_matches);
    otherwise, or when a greedy instance has more than DENSE_PAIRS pairs, align.py builds
    its instance and field tables (align._depth_matches). The tables are the Python path's,
    and the alignment the reference's, every way."""
    calls = []
    for name in ("_configured_matches", "_depth_matches"):
        original = getattr(align, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            result = _original(*args, **kwargs)
            calls.append((_name, result is not None))
            return result

        monkeypatch.setattr(align, name, counted)
    rng = random.Random(11)
    words = ["bolt", "bolts", "cable", "cables", "drill", "hammer", "nail", "nails"]
    docs = [doc([{"name": rng.choice(words), "qty": rng.randint(1, 3)} for _ in range(n)],
                [{"name": rng.choice(words), "qty": rng.randint(1, 3)} for _ in range(m)],
                doc_id=f"d{n}-{m}")
            for n, m in [(0, 2), (3, 0), (4, 5), (6, 6), (9, 2)]]
    configured = list_config(0.5, "greedy", ["name", "qty"])
    for config, taken in [
        (configured, ("_configured_matches", True)),
        (list_config(0.5, "index", ["name"]), ("_configured_matches", True)),
        (list_config(0.5, "greedy"), ("_depth_matches", True)),  # every scalar field
        (list_config(0.5, "optimal", ["name"]), ("_depth_matches", True)),
    ]:
        calls.clear()
        assert_native_matching_equals_python(docs, config)
        assert_engine_matches_reference(docs, config)
        assert calls[0] == taken, config
    monkeypatch.setattr(align, "DENSE_PAIRS", 20)  # the 4 x 5 instance is dense, 6 x 6 is not
    calls.clear()
    assert_native_matching_equals_python(docs, configured)
    assert_engine_matches_reference(docs, configured)
    assert calls[:2] == [("_configured_matches", False), ("_depth_matches", True)]


@needs_kernel
@settings(max_examples=100, deadline=None, suppress_health_check=SLOW)
@given(case=cases(with_list=True, methods=("greedy", "index")))
def test_native_leaf_paths_equal_the_polars_path(case):
    """The leaves' paths from their (item prefix, suffix) combinations (src/paths.rs): the
    same paths, ids and leaves as the Polars path gives."""
    docs, config = case
    native = run_engine(docs, config)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(align, "_native_leaf_paths", align._leaf_paths)
        polars = run_engine(docs, config)
    for table in ("alignments", "fields", "documents", "counts"):
        assert_frame_equal(getattr(native, table), getattr(polars, table))


# --------------------------------------------------------------------------------------------
# Long lists with similarities at and near the threshold

_ALPHABET = "abcdefghij"


def _edit(rnd: random.Random, s: str, n: int) -> str:
    """``s`` with ``n`` substitutions at distinct positions (Levenshtein distance n)."""
    chars = list(s)
    for p in rnd.sample(range(len(chars)), n):
        chars[p] = "XYZ"[rnd.randrange(3)] if chars[p] not in "XYZ" else "W"
    return "".join(chars)


@st.composite
def long_lists(draw, max_items: int = 80, methods: tuple[str, ...] = ("greedy", "optimal")):
    """One document whose GT list has 20-80 items with 10-character names (so one edit moves
    a similarity by 0.1: pair means land exactly on thresholds), an exact ``code`` drawn from
    few values, and sometimes a null or absent field; the AIO list is a shuffled, edited copy
    with items dropped and added."""
    seed = draw(st.integers(0, 2**32 - 1))
    rnd = random.Random(seed)
    n = draw(st.integers(20, max_items))
    names = ["".join(rnd.choice(_ALPHABET) for _ in range(10)) for _ in range(n)]
    gt = []
    for name in names:
        item = {"name": name, "code": rnd.randrange(3)}
        if rnd.random() < 0.1:
            item["code"] = None
        if rnd.random() < 0.05:
            del item["name"]
        gt.append(item)
    aio = []
    for item in gt:
        if rnd.random() < 0.1:
            continue
        copy = dict(item)
        if "name" in copy and rnd.random() < 0.7:
            copy["name"] = _edit(rnd, copy["name"], rnd.choice([1, 2, 3, 4, 6]))
        if rnd.random() < 0.2:
            copy["code"] = rnd.randrange(3)
        aio.append(copy)
    aio += [{"name": "".join(rnd.choice(_ALPHABET) for _ in range(10)), "code": 1}
            for _ in range(rnd.randrange(5))]
    rnd.shuffle(aio)
    threshold = draw(st.sampled_from([0.5, 0.6, 0.7, 0.8, 0.9, 0.55, 0.65]))
    method = draw(st.sampled_from(methods))
    fields = draw(st.sampled_from([None, ["name"], ["name", "code"], ["name", "code", "none"]]))
    strategy = draw(st.sampled_from([None, {"name": "EXACT"}]))
    config = list_config(threshold, method, fields)
    if strategy:
        config["field_strategies"] = strategy
    return [doc(gt, aio)], config


@needs_kernel
@settings(max_examples=60, deadline=None, suppress_health_check=SLOW)
@given(case=long_lists(max_items=60, methods=("greedy", "index")))
def test_native_matching_of_ties_equals_the_python_path(case):
    """Pair means that land exactly on thresholds, and on each other (greedy's ties), in lists
    small enough for the native matcher."""
    assert_native_matching_equals_python(*case)


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(case=long_lists(), force=st.booleans())
def test_long_lists_equal_reference(case, force):
    docs, config = case
    if force:
        with bounded(chunk_cells=300):
            assert_engine_matches_reference(docs, config)
    else:  # lists over DENSE_PAIRS pairs take the bounded path by themselves
        assert_engine_matches_reference(docs, config)


# --------------------------------------------------------------------------------------------
# Explicit cases where a bound is tight (derived by hand; the reference agrees)

@pytest.mark.parametrize("force", [True, False])
@pytest.mark.parametrize(
    ("gt_item", "aio_item", "config", "expected"),
    [
        # one FUZZY field at exactly the threshold: 1 - 1/10 = 0.9
        ({"name": "abcdefghij"}, {"name": "abcdefghiX"}, list_config(0.9), True),
        ({"name": "abcdefghij"}, {"name": "abcdefghXX"}, list_config(0.9), False),
        # the length bound is tight: "abcde" is a prefix of "abcdefghij", 1 - 5/10 = 0.5
        ({"name": "abcdefghij"}, {"name": "abcde"}, list_config(0.5), True),
        ({"name": "abcdefghij"}, {"name": "abcd"}, list_config(0.5), False),
        # two fields, the exact one agrees: the name needs exactly the cutoff 1 - 2(1 - 0.8)
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdefXXXX", "code": 1},
         list_config(0.8), True),
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdeXXXXX", "code": 1},
         list_config(0.8), False),
        # the exact field disagrees: no name can bring the mean to 0.8
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdefghij", "code": 2},
         list_config(0.8), False),
        # a configured match field neither list has is left out of the mean
        ({"name": "abcdefghij"}, {"name": "abcdefghXX"},
         list_config(0.8, match_fields=["name", "absent"]), True),
        # null on both sides: out of the mean; on one side: scores 0
        ({"name": "abcdefghij", "code": None}, {"name": "abcdefghiX", "code": None},
         list_config(0.9), True),
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdefghij", "code": None},
         list_config(0.6), False),
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdefghij", "code": None},
         list_config(0.5), True),
        # optimal: the same pairs reach the threshold
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdefXXXX", "code": 1},
         list_config(0.8, "optimal"), True),
        ({"name": "abcdefghij", "code": 1}, {"name": "abcdeXXXXX", "code": 1},
         list_config(0.8, "optimal"), False),
    ],
)
def test_tight_bounds(gt_item, aio_item, config, expected, force):
    # the pair sits at GT index 1 and AIO index 2 among items that match nothing; the lists
    # are long enough (65 x 65 > DENSE_PAIRS) to take the bounded path unforced
    pad = [{"name": f"{i:010d}", "code": 7} for i in range(64)]  # digits
    symbols = "!#$%&*+-/<=>?@^_~"
    letters = [  # no character in common with any other name
        {"name": "".join(symbols[(i + j) % len(symbols)] for j in range(10)), "code": 8}
        for i in range(64)
    ]
    gt = [pad[0], gt_item, *pad[1:64]]
    aio = [*letters[:2], aio_item, *letters[2:]]
    assert len(gt) * len(aio) > align.DENSE_PAIRS
    docs = [doc(gt, aio)]
    config = {**config, "field_strategies": {"name": "FUZZY"}}
    if force:
        with bounded(chunk_cells=100):
            pairs = matched(docs, config)
    else:
        pairs = matched(docs, config)
    assert ((1, 2) in pairs) == expected
    assert pairs <= {(1, 2)}  # the padding matches nothing
    assert_engine_matches_reference(docs, config)


def test_exact_blocking_keeps_every_reachable_pair():
    """Several fields, many items sharing codes: every pair at or above the threshold is a
    candidate (the reference's greedy matching agrees), also across chunk boundaries."""
    rnd = random.Random(7)
    gt = [{"a": rnd.randrange(2), "b": rnd.randrange(2), "c": rnd.randrange(2),
           "name": "".join(rnd.choice("ab") for _ in range(4))} for _ in range(70)]
    aio = [dict(x) for x in gt]
    rnd.shuffle(aio)
    for x in aio[::3]:
        x["b"] = 1 - x["b"]
    docs = [doc(gt, aio)]
    for threshold in (0.5, 0.75, 0.875):
        config = list_config(threshold)
        assert_engine_matches_reference(docs, config)
        with bounded(chunk_cells=150):
            assert_engine_matches_reference(docs, config)


# --------------------------------------------------------------------------------------------
# Long texts


def _text(rnd: random.Random, n: int) -> str:
    """n characters: words of letters with single spaces (canonical text keeps it as it is)."""
    words = []
    while sum(map(len, words)) + len(words) < n + 1:
        words.append("".join(rnd.choice("abcdefgh") for _ in range(rnd.randint(1, 8))))
    return (" ".join(words)[: n - 1] + "z") if n else ""


@pytest.mark.parametrize("strategy", ["FUZZY", "SEMANTIC"])
def test_long_texts_compared_on_their_prefix(strategy):
    rnd = random.Random(3)
    head = _text(rnd, TEXT_CAP)
    g = "x" + head + _text(rnd, 5_000)
    a = "x" + head[:-10] + "0123456789" + _text(rnd, 5_000)
    docs = [{"doc_id": "d", "gt": {"t": g, "short": "abc"}, "aio": {"t": a, "short": "abd"}}]
    config = {"field_strategies": {"t": strategy, "short": strategy}}
    result = run_engine(docs, config)
    sim = result.fields.filter(pl.col("path") == "t")["similarity"][0]
    if strategy == "FUZZY":
        expected = Levenshtein.normalized_similarity(g[:TEXT_CAP], a[:TEXT_CAP])
        assert expected == 1 - 9 / TEXT_CAP  # the prefixes differ in their last 9 characters
    else:
        expected = fuzz.token_set_ratio(g[:TEXT_CAP], a[:TEXT_CAP]) / 100
    assert sim == pytest.approx(expected, abs=1e-12)
    warnings = result.errors.filter(pl.col("severity") == "warning")
    assert warnings.select("doc_id", "source").rows() == [("d", "gt")]
    assert warnings["error"][0].startswith(f"t: {strategy} similarity")
    assert str(TEXT_CAP) in warnings["error"][0]
    assert_engine_matches_reference(docs, config)


def test_texts_at_the_cap_are_compared_whole():
    rnd = random.Random(4)
    g = _text(rnd, TEXT_CAP - 1) + "a"
    a = g[:-1] + "b"
    docs = [{"doc_id": "d", "gt": {"t": g}, "aio": {"t": a}}]
    result = run_engine(docs, {"field_strategies": {"t": "FUZZY"}})
    assert result.fields["similarity"][0] == 1 - 1 / TEXT_CAP
    assert result.errors.height == 0


def test_lexical_scorer_caps_texts():
    rnd = random.Random(5)
    g, a = _text(rnd, 3 * TEXT_CAP), _text(rnd, 3 * TEXT_CAP)
    got = lexical_token_set([g], [a])[0]
    assert got == fuzz.token_set_ratio(g[:TEXT_CAP], a[:TEXT_CAP]) / 100
    assert reference.default_semantic_scorer(g, a) == got


def test_list_alignment_compares_long_texts_on_their_prefix():
    """Two long descriptions equal on their first TEXT_CAP characters match as equal."""
    rnd = random.Random(6)
    head = _text(rnd, TEXT_CAP)
    gt = [{"d": "y" + head + "tail one"}, {"d": "short"}]
    aio = [{"d": "short"}, {"d": "y" + head + "a different tail entirely"}]
    docs = [doc(gt, aio)]
    for force in (False, True):
        if force:
            with bounded():
                pairs = matched(docs, list_config(0.99))
        else:
            pairs = matched(docs, list_config(0.99))
        assert pairs == {(0, 1), (1, 0)}
    assert_engine_matches_reference(docs, list_config(0.99))


@example(n=0)
@settings(max_examples=5, deadline=None)
@given(n=st.integers(0, 3))
def test_empty_and_one_sided_long_lists(n):
    """A large instance facing an empty list on the other side, or no match field at all."""
    gt = [{"name": f"n{i:05d}"} for i in range(70)]
    aio = [{"other": i} for i in range(70 + n)]
    docs = [doc(gt, aio)]
    assert matched(docs, list_config(0.5)) == set()
    assert_engine_matches_reference(docs, list_config(0.5))
    assert_engine_matches_reference([doc(gt, [])], list_config(0.5))


def test_a_list_too_large_to_align_leaves_out_its_document_only():
    """Every pair of 80 identical items reaches the threshold: 6,400 pairs x 1 field exceed a
    limit of 1,000 pair-fields, so that document becomes an error row and the other is scored
    as the reference scores it alone."""
    from jsoneval_polars import evaluate

    same = [{"name": "identical"} for _ in range(80)]
    big = doc(same, same, doc_id="big")
    ok = doc([{"name": "abcdefghij"}, {"name": "klmnopqrst"}],
             [{"name": "klmnopqrsX"}, {"name": "abcdefghij"}], doc_id="ok")
    saved = align.CANDIDATE_CELLS
    align.CANDIDATE_CELLS = 1000
    try:
        result = evaluate([{"doc_id": d["doc_id"], **d["gt"]} for d in (big, ok)],
                          [{"doc_id": d["doc_id"], **d["aio"]} for d in (big, ok)])
    finally:
        align.CANDIDATE_CELLS = saved
    errors = result.errors.filter(pl.col("severity") == "error")
    assert errors.select("source", "doc_id").rows() == [("gt", "big")]
    assert "list 'items' of 80 x 80 items" in errors["error"][0]
    assert result.documents["doc_id"].to_list() == ["ok"]
    assert set(result.fields["doc_id"]) == {"ok"}
    assert set(result.alignments["doc_id"]) == {"ok"}
    alone = run_engine([ok], None)
    assert result.documents.drop("doc_id").rows() == alone.documents.drop("doc_id").rows()


def _matched_pairs(draw_lists: list[tuple[int, str, list[int]]]) -> pl.DataFrame:
    """Matched index pairs of lists (doc, list_path, AIO index of GT item 0, 1, ...)."""
    rows = [(doc, path, g, a) for doc, path, aio in draw_lists for g, a in enumerate(aio)]
    return pl.DataFrame(rows, schema={"doc": pl.UInt32, "list_path": pl.String,
                                      "gt_index": pl.Int32, "aio_index": pl.Int32},
                        orient="row")


def _alignment_rows(lists, unmatched) -> pl.DataFrame:
    """Alignment rows as the depths give them: the lists' matched pairs, each with a
    similarity, then unmatched items (doc, list_path, side, k), numbered 100 + k on their side
    so that no two rows of a list share their indices."""
    matched = _matched_pairs(lists).with_columns(
        (pl.col("gt_index") * 0.1 + pl.col("aio_index") * 0.01).alias("similarity"))
    alone = pl.DataFrame(
        [(doc, path, 100 + k if side == "gt" else None, 100 + k if side == "aio" else None, None)
         for doc, path, side, k in unmatched],
        schema=matched.schema, orient="row")
    return pl.concat([matched, alone])


@needs_kernel
@settings(max_examples=100, deadline=None)
@given(lists=st.lists(
    st.tuples(st.integers(0, 3), st.sampled_from(["items", "rows[0].cells", "rows[1].cells"]),
              st.integers(0, 7).flatmap(lambda n: st.permutations(list(range(n))))),
    max_size=6, unique_by=lambda t: (t[0], t[1])),
    unmatched=st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["items", "rows[0].cells"]),
                                 st.sampled_from(["gt", "aio"]), st.integers(0, 20)),
                       max_size=8, unique_by=lambda t: t))
def test_native_alignments_equal_the_polars_path(lists, unmatched):
    """The alignments table from the depths' rows (src/ordering.rs): each list's order metrics
    on its rows, in (doc, list_path, gt_index, aio_index) order with nulls last."""
    rows = _alignment_rows(lists, unmatched).sample(fraction=1.0, shuffle=True, seed=1)
    assert_frame_equal(align._native_alignments(rows), align._alignments_by_polars(rows))


@needs_kernel
def test_native_alignments_of_a_list_longer_than_the_join():
    """Over ORDER_JOIN pairs the Polars path counts in chunks, the kernel by a merge sort."""
    rng = random.Random(3)
    aio = list(range(700))
    rng.shuffle(aio)
    rows = _alignment_rows([(0, "items", aio), (1, "items", sorted(aio)[:300])],
                           [(1, "items", "gt", 0)])
    got = align._native_alignments(rows)
    assert_frame_equal(got, align._alignments_by_polars(rows))
    concordant = sum(aio[i] < aio[j] for i in range(700) for j in range(i + 1, 700))
    scores = got.group_by("doc", maintain_order=True).agg(pl.col("order_score").unique())
    assert scores.rows() == [(0, [concordant / (700 * 699 // 2)]), (1, [1.0])]


@st.composite
def _depth(draw):
    """One depth's items and a one-to-one matching within each list instance: (g, a, matched)
    as align.align hands them to the finish of the depth."""
    g_rows, a_rows, matched, item = [], [], [], 0
    for doc, la, pcanon in draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2),
                                                    st.sampled_from([-1, 5, 9])),
                                          max_size=6, unique=True)):
        prefix = "" if pcanon < 0 else f"rows[{pcanon}]."
        sides = []
        for rows in (g_rows, a_rows):
            n = draw(st.integers(0, 5))
            ids = list(range(item, item + n))
            item += n
            for index in draw(st.permutations(range(n))):
                rows.append((doc, la, pcanon, ids[index], index, prefix, f"l{la}"))
            sides.append(ids)
        pairs = draw(st.lists(st.tuples(st.sampled_from(sides[0]), st.sampled_from(sides[1])),
                              unique_by=(lambda p: p[0], lambda p: p[1]))
                     if sides[0] and sides[1] else st.just([]))
        matched += [(g, a, draw(st.floats(0, 1))) for g, a in pairs]
    columns = ["doc", "la", "pcanon", "item", "index", "parent_prefix", "list_suffix"]
    schema = [pl.UInt32, pl.UInt32, pl.Int64, pl.Int64, pl.Int32, pl.String, pl.String]

    def side(rows, name):
        return pl.DataFrame(rows, schema=dict(zip(columns, schema, strict=True)),
                            orient="row").rename({"item": f"{name}_item",
                                                  "index": f"{name}_index"})

    return side(g_rows, "gt"), side(a_rows, "aio"), pl.DataFrame(
        matched, schema={"gt_item": pl.Int64, "aio_item": pl.Int64, "similarity": pl.Float64},
        orient="row")


@needs_kernel
@settings(max_examples=150, deadline=None)
@given(depth=_depth())
def test_native_finish_of_a_depth_equals_the_polars_path(depth):
    """Final indices (unmatched AIO items after the GT items, in AIO order), prefixes,
    canonical ids and alignment rows: src/depth.rs against align.py's Polars path."""
    got = align._native_finish_depth(*depth)
    want = align._finish_depth_by_polars(*depth)
    for g, w, key in zip(got, want, (["item"], ["item"], ["doc", "list_path", "gt_index",
                                                            "aio_index"]), strict=True):
        assert_frame_equal(g.sort(key, nulls_last=True), w.sort(key, nulls_last=True))
