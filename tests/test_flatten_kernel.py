"""The native flattening kernel (src/flatten.rs, jsoneval_polars._native) against the plain-Python
walker it replaced (tests/flatten_reference.py), the oracle.

Both entry points are checked: :func:`flatten` on Python documents must return the reference's
tables (values, dtypes and row order), errors and next item id for any input, good or bad;
:func:`flatten_json` on each document's JSON text must return what the reference returns on the
text parsed by the standard library. Where the two are meant to differ (DECISIONS.md 44: Python
values JSON cannot hold, nesting deeper than MAX_DEPTH), the tests say so and check the policy.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import json
import math
import sys
import unicodedata
from pathlib import Path

import orjson
import pytest
from conformance import CASE_FILES, load_case
from flatten_reference import flatten_python
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from strategies import KEYS, WORDS, aio_for, gt_documents

from jsoneval_polars import flatten as flat

SAMPLE = Path(flat.__file__).parent / "sample"
TOO_DEEP = "document is nested too deeply to score"


def assert_tables(got: flat.Flattened, want: flat.Flattened) -> None:
    for table in ("leaves", "items", "members"):
        assert_frame_equal(getattr(got, table), getattr(want, table), check_exact=True)
    assert got.errors == want.errors
    assert got.next_item == want.next_item


def _json_text(doc) -> bytes | None:
    """Strict JSON text of a document, None where JSON cannot hold it (NaN, a lone surrogate,
    a Python value with no JSON meaning) or it nests deeper than the kernel takes."""
    try:
        text = json.dumps(doc, allow_nan=False, ensure_ascii=False).encode()
    except (TypeError, ValueError, RecursionError):
        return None
    return text if _depth(json.loads(text)) <= flat.MAX_DEPTH else None


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def assert_same(docs, **options) -> flat.Flattened:
    """Python documents through flatten(), and their JSON text through flatten_json(), both
    equal to the reference."""
    got = flat.flatten(docs, **options)
    assert_tables(got, flatten_python(docs, **options))
    texts = [None if d is None else _json_text(d) for d in docs]
    parsed = [None if t is None else json.loads(t) for t in texts]
    assert_tables(flat.flatten_json(texts, **options), flatten_python(parsed, **options))
    return got


# --- real documents ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_conformance_documents(path: Path):
    case = load_case(path)
    for side in ("gt", "aio"):
        docs = [d.get(side) for d in case["documents"]]
        for empty_null in (False, True):
            assert_same(docs, empty_containers_are_null=empty_null, item_base=7)


@pytest.mark.parametrize("side", ["gt", "aio"])
def test_bundled_sample(side: str):
    lines = (SAMPLE / f"{side}.ndjson").read_bytes().splitlines()
    docs = [orjson.loads(line) for line in lines if line.strip()]
    for doc in docs:
        doc.pop("doc_id", None)
    flat_c = assert_same(docs)
    assert flat_c.leaves.height > 10 * len(docs)
    assert_same(docs[::-1], empty_containers_are_null=True, item_base=123)


# --- values --------------------------------------------------------------------------------

STRINGS = [
    "", " ", "x", "  Hello   World  ", "MiXeD CaSe", "\t\n\x0b\x0c\r", "a\tb\nc\x0bd\x0ce\rf",
    "\x1c\x1d\x1e\x1f", "a\x1cb\x1dc\x1ed\x1ff", "\x00", "a\x00b", "\x7f", "\x01\x02 z",
    "ABC XYZ @[`{", "a\x85b", "\u00a0x\u00a0", "\u00a0abc", "\u2003 \u3000", "a\u2028b",
    "İstanbul", "ǅungla", "Straße", "ΣΑΣ ΟΔΟΣ", "café crème", "東京", "emoji 🎉 ", "Ünïcödé",
    "ﬁ ligature", "K\u212a", "\U0001d400",
]
FLOATS = [
    0.0, -0.0, 1.0, -1.0, 1.5, 0.1, 0.5, 2.5, 99.99, 1e-7, -1e-7, 1e-5, 1e-4, 0.00011,
    9.999999999999999e-05, 1e15 + 0.5, 2.0**53 - 1, 2.0**53, -(2.0**53), 2.0**53 + 2,
    9007199254740993.0, 1e16, 1e22, 1e23, 1e308, 5e-324, -5e-324, 2.2250738585072014e-308,
    math.inf, -math.inf, math.nan, 0.30000000000000004, 1 / 3, 123456789.123, 4563.0, 10.14,
    1e20, 100.0, 3.0,
]
INTS = [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**30, -(10**40)]
ODD_KEYS = [
    "", " ", "a.b", "x[0]", "[]", 'q"t', "sp ace", "tab\tkey", "ctl\x07", "del\x7f", "n]", "\x1c",
    "\x1f", "a\x85", "\u00a0", "a\u2003b", "ключ", "café", "名前", "plain", "under_score", "0",
    "-", "a'b", "a\\b", "a/b",
]


@pytest.mark.parametrize("empty_null", [False, True])
def test_scalars(empty_null: bool):
    values = STRINGS + FLOATS + INTS + [True, False, None]
    docs = [{"v": v} for v in values] + [{f"k{i}": v for i, v in enumerate(values)}]
    flat_c = assert_same(docs, empty_containers_are_null=empty_null)
    assert flat_c.leaves.height == 2 * len(values)


def test_odd_keys():
    assert_same([{k: 1} for k in ODD_KEYS])
    assert_same([{k: {k: [{k: k}, {}]}} for k in ODD_KEYS])
    assert_same([{"items": [{k: {"x": 1}} for k in ODD_KEYS]}])


@pytest.mark.parametrize("empty_null", [False, True])
@pytest.mark.parametrize(
    "doc",
    [
        {},
        {"a": {}, "b": [], "c": [{}], "d": [{}, {}], "e": [{"x": 1}, {}]},
        {"a": [[1]], "b": [[]], "c": [[{"a": 1}]], "d": [[[[]]], [1, [2, [3]]]]},
        {"a": [{"b": [{"c": [{"d": 1}, {}]}, {}]}], "z": [{"b": []}]},
        {"a": [1, "A  b", None, 1.5, True, {"K": "V"}]},
        {"a": [{"x": 1}, 1], "b": [{"x": 1}, []], "c": [{"x": 1}, None]},
        {"t": (1, 2), "r": ({"a": 1}, {"a": 2}), "e": (), "n": ({},)},
        {"items": [{"m": {"x": 1, "y": [1, 2]}, "l": [{"x": 1}], "e": {}, "z": [], "a": [1, 2]}]},
        {"items": [{"m": {"x": "\u00e9"}, "l": [{"x": [{"y": {"z": 2}}]}]}]},
        {"a": {"b": {"c": {"d": {"e": "deep"}}}}, "a.b": {"c": 1}, "x[0]": [{"y": 1}]},
        {"": {"": [{"": ""}]}, " ": [{" ": {" ": " "}}]},
    ],
)
def test_containers(doc, empty_null: bool):
    assert_same([doc, None, doc], empty_containers_are_null=empty_null, item_base=5)


class Kind(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


class Records(list):
    pass


BAD_VALUES = [
    {1, 2}, frozenset(), datetime.date(2024, 1, 5), datetime.datetime(2024, 1, 5, 10, 0),
    decimal.Decimal("1.5"), b"bytes", bytearray(b"x"), 1j, object(), Kind.ONE, Text("x"),
    Records([1]), collections.OrderedDict(a=1), collections.defaultdict(list), range(3),
    "\ud800", "a\udfffb", "\u00e9\ud800", "  \ud83d  ",
]


# Python values that JSON cannot hold but json.dumps writes (subclasses of dict, list, str, int):
# the reference keeps them inside an array leaf or an item member's canonical JSON; the kernel
# reads exact JSON types only, so there they leave their document out too (DECISIONS.md 44)
SUBCLASS_VALUES = (Kind, Text, Records, collections.OrderedDict, collections.defaultdict)


@pytest.mark.parametrize(
    "bad", BAD_VALUES, ids=[f"{type(v).__name__}{i}" for i, v in enumerate(BAD_VALUES)]
)
def test_bad_values_leave_their_document_out(bad):
    good = {"items": [{"m": {"x": 1}, "n": "ok"}], "s": "Fine"}
    docs = [
        good,
        {"items": [{"m": {"x": 1}}], "v": bad},  # members and items drawn before the error
        {"x": {"y": [{"z": bad}]}},
        {"l": [1, bad]},  # inside an array leaf: canonical JSON fails
        {"items": [{"m": {"k": [bad]}}]},
        None,
        good,
    ]
    if isinstance(bad, SUBCLASS_VALUES):
        got = flat.flatten(docs, item_base=10)
        name = type(bad).__name__
        assert got.errors == [
            (1, f"value of type {name} at 'v' has no JSON meaning"),
            (2, f"value of type {name} at '.z' has no JSON meaning"),
            (3, f"array at 'l' holds a value with no JSON meaning: "
                f"Object of type {name} is not JSON serializable"),
            (4, f"array at '.m' holds a value with no JSON meaning: "
                f"Object of type {name} is not JSON serializable"),
        ]
        # the good documents as the reference has them; items drawn before the errors stay used
        want = flatten_python([good, None, None, None, None, None, None], item_base=10)
        assert_frame_equal(got.leaves.filter(doc=0), want.leaves, check_exact=True)
        assert got.next_item == 15
        assert got.leaves["doc"].unique().sort().to_list() == [0, 6]
        return
    flat_c = assert_same(docs, item_base=10)
    try:  # inside an array only what canonical JSON cannot hold is an error
        json.dumps(bad, ensure_ascii=False).encode()
        in_array_ok = True
    except (TypeError, ValueError):
        in_array_ok = False
    assert [pos for pos, _ in flat_c.errors] == ([1, 2] if in_array_ok else [1, 2, 3, 4])
    assert set(flat_c.leaves["doc"].to_list()) == ({0, 3, 4, 6} if in_array_ok else {0, 6})


@pytest.mark.parametrize("key", [1, None, 1.5, True, (1, 2), b"k", Text("k"), "\ud800", "a\udc00"])
def test_bad_keys(key):
    flat_c = assert_same([{"ok": 1}, {"a": {key: 1}}, {"items": [{key: 1}]}, {key: [1]}])
    assert [pos for pos, _ in flat_c.errors] == [1, 2, 3]


def test_lone_surrogates_in_containers():
    flat_c = assert_same([{"a": ["\ud800"]}, {"items": [{"m": {"c": "x\ud800"}}]}, {"ok": [1]}])
    assert flat_c.errors == [
        (0, "string at 'a' holds a lone surrogate and cannot be stored as UTF-8"),
        (1, "string at '.m.c' holds a lone surrogate and cannot be stored as UTF-8"),
    ]
    assert flat_c.members.height == 0


def _nested(depth: int, leaf, wrap) -> object:
    value = leaf
    for _ in range(depth):
        value = wrap(value)
    return value


@pytest.mark.parametrize(
    "wrap",
    [
        lambda v: {"a": v},
        lambda v: [{"a": v}],
        lambda v: {"a": [{"b": v}]},
        lambda v: [v],
        lambda v: {"a": [1, v]},
    ],
    ids=["objects", "records", "object-records", "arrays", "mixed-arrays"],
)
def test_deep_nesting(wrap):
    # a document nested deeper than MAX_DEPTH is refused before its walk and draws no item id:
    # the others come out as the reference has them with that document absent
    deep = _nested(5 * sys.getrecursionlimit(), "x", wrap)
    shallow = _nested(30, "x", wrap)  # within MAX_DEPTH for every wrapping
    got = flat.flatten([{"d": shallow}, {"d": deep}, {"d": shallow}])
    assert got.errors == [(1, TOO_DEEP)]
    want = flatten_python([{"d": shallow}, None, {"d": shallow}])
    assert_tables(dataclasses.replace(got, errors=[]), want)
    text = b'{"d": ' + b'[{"a": ' * 5000 + b"1" + b"}]" * 5000 + b"}"
    assert flat.flatten_json([text]).errors == [(0, TOO_DEEP)]


@pytest.mark.parametrize("wrap", [lambda v: {"a": v}, lambda v: [v], lambda v: [{"a": v}]])
def test_depth_limit_is_the_same_for_objects_and_text(wrap):
    for depth in range(flat.MAX_DEPTH - 4, flat.MAX_DEPTH + 4):
        doc = {"d": _nested(depth, 1, wrap)}
        deep_enough = _depth(doc) > flat.MAX_DEPTH
        for got in (flat.flatten([doc]), flat.flatten_json([json.dumps(doc).encode()])):
            assert got.errors == ([(0, TOO_DEEP)] if deep_enough else []), depth
            if not deep_enough:
                assert_tables(got, flatten_python([doc]))


def test_walk_depth_does_not_follow_the_recursion_limit():
    # the kernel's limit is its own: raising Python's recursion limit changes nothing
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        got = flat.flatten([_nested(20_000, 1, lambda v: {"a": v}), {"ok": 1}])
    finally:
        sys.setrecursionlimit(old)
    assert got.errors == [(0, TOO_DEEP)]
    assert got.leaves["key"].to_list() == ["ok"]


def test_cycles_are_too_deep():
    cyclic: dict = {"a": 1}
    cyclic["self"] = cyclic
    looped: list = [1]
    looped.append(looped)
    got = flat.flatten([cyclic, {"l": looped}, {"ok": True}])
    assert got.errors == [(0, TOO_DEEP), (1, TOO_DEEP)]
    assert_tables(dataclasses.replace(got, errors=[]), flatten_python([None, None, {"ok": True}]))


def test_batches():
    assert_same([])
    assert_same([None, None])
    docs = [None, {"a": [{"b": 1}]}, None, {}, {"a": [{"b": 2}, {"b": 3}]}]
    flat_c = assert_same(docs, item_base=1000)
    assert flat_c.next_item == 1003
    assert flat_c.items["doc"].to_list() == [1, 4, 4]


def test_root_objects():
    ordered = collections.OrderedDict([("b", 1), ("a", {"c": [1, 2]})])
    assert_same([ordered, {"x": 1}])
    for bad in ([1, 2], "text", 3):
        with pytest.raises(TypeError, match="document at position 1 is a"):
            flat.flatten([{"x": 1}, bad])


def test_text_that_is_not_one_json_object():
    texts = [b"[1, 2]", b'{"a": 1', b'{"a": NaN}', b'{"a": 1} {}', b"\xff{}", None, b'{"ok": 1}',
             b'"\\ud800"', b'{"s": "\\ud800"}', b"", b'\xef\xbb\xbf{"a": 1}']
    got = flat.flatten_json(texts, item_base=4)
    assert [pos for pos, _ in got.errors] == [0, 1, 2, 3, 4, 7, 8, 9, 10]
    assert got.errors[0] == (0, "the document is not a JSON object")
    assert got.errors[2][1].startswith("invalid JSON: expected value at line 1 column 7")
    assert got.leaves["doc"].to_list() == [6]
    assert got.next_item == 4


def test_repeated_keys_in_text_keep_the_last_value():
    text = b'{"b": 1, "a": {"x": 1, "x": [2]}, "b": {"c": "Z"}}'
    got = flat.flatten_json([text])
    assert_tables(got, flatten_python([json.loads(text)]))
    assert got.leaves["suffix"].to_list() == ["b.c", "a.x"]


def test_numbers_in_text():
    texts = [b'{"a": -0, "b": -0.0, "c": 1E2, "d": 1.50, "e": 1e400, "f": -1e-400, '
             b'"g": 123456789012345678901234567890, "h": [1.0, 1e16, -0, 2E-7]}']
    got = flat.flatten_json(texts)
    assert_tables(got, flatten_python([json.loads(texts[0])]))
    assert got.leaves["text"].to_list() == [
        "0", "0", "100", "1.5", "inf", "0", "123456789012345678901234567890",
        "[1.0,1e+16,0,2e-07]",
    ]


def test_every_whitespace_and_case_mapping():
    # str.split() and str.lower() over every code point assigned in Python's Unicode database;
    # Rust's tables are newer, and lower-case some characters Python 3.11 does not know yet
    # (DECISIONS.md 44)
    chars = [chr(c) for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"]
    docs = [{"s": "".join(chars[i : i + 997]), "l": ["Ab" + "".join(chars[i : i + 997])]}
            for i in range(0, len(chars), 997)]
    assert_same(docs)


def test_large_batch_with_growth():
    # several times the first buffer sizes, with long strings and many distinct paths
    docs = [
        {f"k{i % 97}": {"s": "Word " * (i % 50), "f": i / 7, "l": [{"i": i}, {"j": [i]}]}}
        for i in range(5000)
    ]
    assert_same(docs, item_base=3)


def test_strings_across_data_buffers():
    # Arrow string views: short strings inline, long ones in data buffers of a few MB each;
    # 29 MB of text spans many buffers
    words = ["x" * n + "Y" * (n % 3) for n in range(62)]
    docs = [
        {w[:20] or "k": {"t": w, "u": w.upper() + " ", "items": [{w[:15] or "m": w * 500}]}}
        for w in words
    ]
    got = assert_same(docs * 30, empty_containers_are_null=True)
    assert got.leaves["text"].str.len_bytes().sum() > 25_000_000


# --- properties --------------------------------------------------------------------------------

_keys = st.one_of(st.sampled_from(KEYS + ODD_KEYS), st.text(max_size=5))
_strings = st.one_of(
    st.sampled_from(STRINGS + WORDS), st.text(max_size=12),
    st.text(st.sampled_from(" \t\n\x0b\x0c\r\x1c\x1fAbZ\u00a0\u2003é"), max_size=10),
    st.just("bad \ud800"),
)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from(FLOATS), st.floats(), _strings,
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_keys, inner, max_size=4),
        st.lists(st.dictionaries(_keys, inner, max_size=3), min_size=1, max_size=3),
    ),
    max_leaves=25,
)
json_documents = st.lists(
    st.one_of(st.none(), st.dictionaries(_keys, json_values, max_size=6)), max_size=5
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=json_documents, empty_null=st.booleans(), base=st.integers(0, 2**40))
@example(docs=[{"a": [{"b": {"c": "x\ud800"}}]}, {"a": [{"b": {}}]}], empty_null=False, base=0)
def test_any_json_like_documents(docs, empty_null: bool, base: int):
    assert_same(docs, empty_containers_are_null=empty_null, item_base=base)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_document_pairs(data):
    gts = data.draw(st.lists(gt_documents(), min_size=1, max_size=4))
    aios = [data.draw(aio_for(gt)) for gt in gts]
    gt_flat = assert_same(gts)
    # round trip through JSON: the AIO side arrives parsed from text
    assert_same([json.loads(json.dumps(a)) for a in aios], item_base=gt_flat.next_item)
