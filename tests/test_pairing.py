"""classify.paired_rows, the full outer join of the two sides' leaves on (doc, pid): the native
merge (src/pairing.rs) and the numpy sort both against a plain-Python join; and
classify.pair_leaves' native gather of the leaves' columns against Polars'."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import _native
from jsoneval_polars.classify import pair_leaves, pair_leaves_by_polars, paired_rows_by_numpy
from jsoneval_polars.schemas import KINDS

needs_kernel = pytest.mark.skipif(_native is None, reason="native kernel not built")


def _native_rows(gt: pl.DataFrame, aio: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame(_native.pair_leaves(gt, aio))


JOINS = [paired_rows_by_numpy, pytest.param(_native_rows, marks=needs_kernel)]


def side(keys: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.DataFrame(keys, schema={"doc": pl.UInt32, "pid": pl.UInt32}, orient="row")


def joined_in_python(gt: list[tuple[int, int]], aio: list[tuple[int, int]]) -> list[tuple]:
    rows = [{key: row for row, key in enumerate(keys)} for keys in (gt, aio)]
    return [(doc, pid, rows[0].get((doc, pid)), rows[1].get((doc, pid)))
            for doc, pid in sorted(rows[0].keys() | rows[1].keys())]


# a side's (doc, pid) keys, unique; in document order (as the flatten emits them) or not
keys = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 40)), unique=True, max_size=120)


@pytest.mark.parametrize("join", JOINS)
@settings(max_examples=150, deadline=None)
@given(gt=keys, aio=keys, in_doc_order=st.booleans())
def test_paired_rows_are_the_outer_join_in_doc_pid_order(join, gt, aio, in_doc_order):
    if in_doc_order:
        gt, aio = (sorted(k, key=lambda key: key[0]) for k in (gt, aio))
    got = join(side(gt), side(aio))
    assert got.schema == pl.Schema({c: pl.UInt32 for c in ("doc", "pid", "g", "a")})
    assert got.rows() == joined_in_python(gt, aio)


@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize("repeated_on", ["gt", "aio"])
def test_a_path_twice_in_a_document_on_one_side_is_refused(join, repeated_on):
    sides = {"gt": side([(0, 1), (3, 2), (3, 2)]), "aio": side([(3, 2)])}
    if repeated_on == "aio":
        sides = {"gt": sides["aio"], "aio": sides["gt"]}
    with pytest.raises(ValueError, match="two leaves"):
        join(sides["gt"], sides["aio"])


@pytest.mark.parametrize("join", JOINS)
@settings(max_examples=100, deadline=None)
@given(gt=keys, aio=keys, data=st.data())
def test_rows_not_kept_take_no_part(join, gt, aio, data):
    """A side's rows whose ``keep`` is false (align.py: an empty array facing a list of
    records) are left out of the join; the other rows keep their row numbers."""
    kept = [data.draw(st.lists(st.booleans(), min_size=len(k), max_size=len(k)))
            for k in (gt, aio)]
    frames = [side(k).with_columns(pl.Series("keep", flags, dtype=pl.Boolean))
              for k, flags in zip((gt, aio), kept, strict=True)]
    rows = [{key: row for row, key in enumerate(k) if flags[row]}
            for k, flags in zip((gt, aio), kept, strict=True)]
    want = [(doc, pid, rows[0].get((doc, pid)), rows[1].get((doc, pid)))
            for doc, pid in sorted(rows[0].keys() | rows[1].keys())]
    assert join(*frames).rows() == want


@needs_kernel
@settings(max_examples=100, deadline=None)
@given(gt=keys, aio=keys, data=st.data())
def test_native_gather_of_the_leaves_equals_polars(gt, aio, data):
    """classify.pair_leaves: the kernel's gather of each side's text, kind and null flag
    (views sharing the texts' buffers) against Polars' gathers; texts long and short, null
    and not, some leaves not kept."""
    texts = st.one_of(st.none(), st.text(max_size=3), st.text(min_size=13, max_size=30))

    def leaves(k: list[tuple[int, int]]) -> pl.DataFrame:
        n = len(k)
        return side(k).with_columns(
            pl.Series("kind", data.draw(st.lists(st.sampled_from(["string", "int", "null"]),
                                                 min_size=n, max_size=n)), dtype=pl.String),
            pl.Series("text", data.draw(st.lists(texts, min_size=n, max_size=n)),
                      dtype=pl.String),
            pl.Series("is_null", data.draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                      dtype=pl.Boolean),
            pl.Series("keep", data.draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                      dtype=pl.Boolean),
        )

    g, a = leaves(gt), leaves(aio)
    native = pair_leaves(g, a)
    assert_frame_equal(native.drop("gt_kind_code", "aio_kind_code"), pair_leaves_by_polars(g, a))
    # the kinds as codes of schemas.KINDS too (the files driver writes them as Enums)
    for name in ("gt", "aio"):
        codes = native[f"{name}_kind_code"]
        assert codes.dtype == pl.UInt8
        decoded = pl.Series(KINDS).gather(codes)
        assert decoded.equals(native[f"{name}_kind"], check_names=False)


@needs_kernel
def test_texts_not_in_string_views_are_left_to_polars():
    """The kernel gathers texts that come as Arrow string views (as Polars hands its strings
    over); given other strings (here pyarrow's large_string) its call returns None before
    pairing, and classify.pair_leaves pairs and gathers by Polars."""
    def leaves(keys, texts):
        return side(keys).with_columns(
            pl.Series("kind", ["string"] * len(keys)), pl.Series("text", texts),
            pl.Series("is_null", [False] * len(keys)))

    g = leaves([(0, 1), (1, 2)], ["a text longer than twelve", "b"])
    a = leaves([(0, 1), (1, 3)], ["a text longer than twelve", "c"])
    offsets = [frame.to_arrow() for frame in (g, a)]  # large_string, not string_view
    assert offsets[0].schema.field("text").type == "large_string"
    assert _native.pair_leaves(*offsets, gather=True) is None
    got = pl.DataFrame(_native.pair_leaves(g, a, gather=True))
    assert_frame_equal(got.drop("gt_kind_code", "aio_kind_code"), pair_leaves_by_polars(g, a))
    assert got["gt_text"].to_list() == ["a text longer than twelve", "b", None]
