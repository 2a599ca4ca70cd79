"""The native flattening kernel (Rust, src/) against the Python walker, the reference.

Both of its entry points are checked: Python documents (flatten_native) and JSON text
(flatten_texts). Each must return the same tables as the reference (values, dtypes and row
order) and the same next item id for any input, good or bad; where the kernel declines a batch
the reference runs, so errors come from one place. The text path may decline only text it
cannot vouch for (NaN, Infinity, a letter whose lower case is Python's to decide).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import itertools
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conformance import CASE_FILES, load_case
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from strategies import KEYS, WORDS, aio_for, gt_documents

from jsoneval_polars import _native
from jsoneval_polars import flatten as flat
from jsoneval_polars.python_values import json_value

SAMPLE = Path(flat.__file__).parent / "sample"

def _check(got: flat.Flattened, want: flat.Flattened) -> None:
    for table in ("leaves", "items", "members"):
        frame = getattr(got, table)
        frame.to_arrow().validate(full=True)  # every string view checked against its buffers
        assert_frame_equal(frame, getattr(want, table), check_exact=True)
    assert got.errors == want.errors
    assert got.next_item == want.next_item


def _declined_rightly(texts: list[bytes | None]) -> bool:
    return any(
        t is not None and (b"NaN" in t or b"Infinity" in t
                           or any(_native.canonical_string(ch) is None for ch in t.decode()))
        for t in texts
    )


def assert_same(docs, **options) -> flat.Flattened:
    """Both entry points against the reference; returns the object path's tables."""
    want = flat.flatten_python(docs, **options)
    got = flat.flatten_native(docs, **options)
    _check(got, want)
    if want.errors:  # documents with no JSON text of the same meaning
        return got
    texts = [None if d is None else json.dumps(json_value(d), ensure_ascii=False).encode()
             for d in docs]
    from_text = flat.flatten_texts(texts, **options)
    if from_text is None:
        assert _declined_rightly(texts), texts
    else:
        _check(from_text, want)
    return got


def test_kernel_follows_the_environment():
    code = "import jsoneval_polars.flatten as f; print(f.KERNEL)"
    env = {**os.environ, "JSONEVAL_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "python"
    env.pop("JSONEVAL_PURE_PYTHON")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "native"


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
    flat_n = assert_same(docs)
    assert flat_n.leaves.height > 10 * len(docs)
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
    flat_n = assert_same(docs, empty_containers_are_null=empty_null)
    assert flat_n.leaves.height == 2 * len(values)


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
    {1, 2}, frozenset(), b"bytes", bytearray(b"x"), 1j, object(), range(3),
    "\ud800", "a\udfffb", "\u00e9\ud800", "  \ud83d  ",
]
#: Values of other types than JSON's that have a JSON meaning (DECISIONS 113): flattened as
#: that JSON, by both walkers.
JSON_MEANING = [
    datetime.date(2024, 1, 5), datetime.datetime(2024, 1, 5, 10, 0), decimal.Decimal("1.5"),
    Kind.ONE, Text("x"), Records([1]), collections.OrderedDict(a=1),
    collections.defaultdict(list),
]


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
    flat_n = assert_same(docs, item_base=10)
    try:  # inside an array only what canonical JSON cannot hold is an error
        json.dumps(bad, ensure_ascii=False).encode()
        in_array_ok = True
    except (TypeError, ValueError):
        in_array_ok = False
    assert [pos for pos, _ in flat_n.errors] == ([1, 2] if in_array_ok else [1, 2, 3, 4])
    assert set(flat_n.leaves["doc"].to_list()) == ({0, 3, 4, 6} if in_array_ok else {0, 6})


@pytest.mark.parametrize(
    "value", JSON_MEANING, ids=[f"{type(v).__name__}{i}" for i, v in enumerate(JSON_MEANING)]
)
def test_values_with_a_json_meaning_are_flattened_as_it(value):
    good = {"items": [{"m": {"x": 1}, "n": "ok"}], "s": "Fine"}
    docs = [good, {"items": [{"m": {"x": 1}}], "v": value}, {"x": {"y": [{"z": value}]}},
            {"l": [1, value]}, {"items": [{"m": {"k": [value]}}]}, None, good]
    flat_n = assert_same(docs, item_base=10)
    assert flat_n.errors == []
    as_json = flat.flatten_python([json_value(d) for d in docs], item_base=10)
    _check(flat_n, as_json)


@pytest.mark.parametrize("key", [1, None, 1.5, True, (1, 2), b"k", "\ud800", "a\udc00"])
def test_bad_keys(key):
    flat_n = assert_same([{"ok": 1}, {"a": {key: 1}}, {"items": [{key: 1}]}, {key: [1]}])
    assert [pos for pos, _ in flat_n.errors] == [1, 2, 3]


def test_a_str_subclass_key_is_its_string():
    flat_n = assert_same([{"a": {Text("k"): 1}}, {Text("k"): [1]}])
    assert flat_n.errors == [] and flat_n.leaves["suffix"].to_list() == ["a.k", "k"]


def test_lone_surrogates_in_containers():
    flat_n = assert_same([{"a": ["\ud800"]}, {"items": [{"m": {"c": "x\ud800"}}]}, {"ok": [1]}])
    assert flat_n.errors == [
        (0, "string at 'a' holds a lone surrogate and cannot be stored as UTF-8"),
        (1, "string at '.m.c' holds a lone surrogate and cannot be stored as UTF-8"),
    ]
    assert flat_n.members.height == 0


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
    deep = _nested(5 * sys.getrecursionlimit(), "x", wrap)
    shallow = _nested(50, "x", wrap)
    flat_n = assert_same([{"d": shallow}, {"d": deep}, {"d": shallow}])
    assert flat_n.errors == [(1, "document is nested too deeply to score")]


def test_native_walk_leaves_deep_documents_to_python():
    # with the recursion limit raised far up, the object walk still declines past its own cap
    # and the Python walker (whose frames do not use the C stack) takes the batch
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        deep = _nested(20_000, 1, lambda v: {"a": v})
        flat_n = flat.flatten_native([deep, {"ok": 1}])
        tables, _, why, *_ = _native.flatten_objects([deep, {"ok": 1}])
    finally:
        sys.setrecursionlimit(old)
    assert tables is None and why
    assert flat_n.leaves["key"].to_list()[-1] == "ok"
    text = b'{"a":' * 200 + b"1" + b"}" * 200
    assert flat.flatten_texts([text]) is None  # past serde_json's depth: the Python path


def test_cycles_are_too_deep():
    cyclic: dict = {"a": 1}
    cyclic["self"] = cyclic
    looped: list = [1]
    looped.append(looped)
    flat_n = assert_same([cyclic, {"l": looped}, {"ok": True}])
    assert [pos for pos, _ in flat_n.errors] == [0, 1]


def test_batches():
    assert_same([])
    assert_same([None, None])
    docs = [None, {"a": [{"b": 1}]}, None, {}, {"a": [{"b": 2}, {"b": 3}]}]
    flat_n = assert_same(docs, item_base=1000)
    assert flat_n.next_item == 1003
    assert flat_n.items["doc"].to_list() == [1, 4, 4]


def test_documents_that_are_not_plain_dicts_go_to_the_python_walker():
    ordered = collections.OrderedDict([("b", 1), ("a", {"c": [1, 2]})])
    assert_same([ordered, {"x": 1}])
    for bad in ([1, 2], "text", 3):
        with pytest.raises(AttributeError):
            flat.flatten_native([{"x": 1}, bad])


def test_text_path_leaves_out_the_id_and_declines_what_python_decides():
    docs = [{"b": 1, "a": [{"c": "X"}]}, None, {"z": {"y": None}}]
    want = flat.flatten_python(docs, item_base=4)
    texts = [None if d is None else json.dumps({"id": i, **d}).encode() for i, d in enumerate(docs)]
    _check(flat.flatten_texts(texts, skip="id", item_base=4), want)
    texts[0] = b"\xef\xbb\xbf" + texts[0]  # a BOM, as json.loads(bytes) reads past it
    _check(flat.flatten_texts(texts, skip="id", item_base=4), want)
    # a float whose digits a double does not keep (read as 0.3) is Python's to report; one
    # whose shortest round-trip text has 17 digits is kept as it is
    assert flat.flatten_texts([b'{"a": 0.30000000000000004}']) is not None
    for declined in (b'{"a": NaN}', b'{"a": 1, "a": 2}', b'{"a": 1e999}', b'[1]',
                     b'{"a": [0.30000000000000001]}',
                     b'{"a": "\\ud800"}',
                     b'{"a": 1', b'\xff', b'{"a": "\xea\x9f\x8b"}'):
        assert flat.flatten_texts([texts[2], declined]) is None, declined


#: Pieces of a model's answer: fences, tags, line ends, JSON and not, and the characters where
#: Python's Unicode rules could read a text differently from a byte scan.
_ANSWER_PIECES = ["```", "````", "~~~", "`", "json", "JSON", "python", " ", "\t", "\n", "\r\n",
                  "Here:", '{"a": 1}', '{"b": [{"c": "X"}]}', "[1]", "{", "}", '"', "\u00a0",
                  "\ufeff", "NaN", "é", '{"d": 1e999}', "{}", "\x1c"]


@st.composite
def _fenced_answers(draw) -> str:
    """Prose and one to three fenced blocks, each with a tag, a body and a closing line that
    may or may not close it."""
    text = ""
    for _ in range(draw(st.integers(1, 3))):
        fence = draw(st.sampled_from(["```", "````", "~~~", "~~~~"]))
        close = draw(st.sampled_from([fence, fence + fence[0], " \t" + fence, fence[:-1],
                                      fence + "x", fence + " ", fence + "\r"]))
        text += "".join([
            draw(st.sampled_from(["", "Here:\n", "a ", "{", '"', "\u00a0"])), fence,
            draw(st.sampled_from(["", "json", "JSON", " json x", "python", "json`", "\u00a0json",
                                  "jsön", "json\u3000x"])),
            draw(st.sampled_from(["\n", "\r\n", ""])),
            draw(st.sampled_from(['{"a": 1}', ' {"b": [{"c": "X"}]}\n', "[1]", "{", "{}",
                                  '{"d": NaN}', "\u3000{}", '{"e": "```"}', '{"f": 1e999}',
                                  '\x1c{"g": 1}\u2028'])),
            draw(st.sampled_from(["\n", "\r\n", ""])), close,
            draw(st.sampled_from(["", "\n", "\nDone.", "\r\n"])),
        ])
    return text


def _read_answer(text: str) -> tuple[flat.Flattened, flat.Flattened | None]:
    """The kernel's reading of an AIO answer text in the member ``out``, and the reference:
    extract.py's extraction flattened by the Python walker (None: it found no object)."""
    from jsoneval_polars.extract import extract_json

    got = flat.flatten_texts([json.dumps({"id": "x", "out": text}).encode()], skip="id",
                             content="out", text_content=True, lenient=True)
    want = extract_json(text)
    return got, want


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(_ANSWER_PIECES), max_size=16).map("".join)
       | _fenced_answers())
@example(text="Sure!\n```json\n{\"a\": 1}\n```\nDone.")
@example(text="```python\nx\n```\n~~~\n[1]\n~~~\n````JSON\r\n{\"a\": 1}\r\n````")
def test_answer_texts_are_read_as_extract_reads_them(text):
    """An answer text the kernel takes (SPEC §8's ``json`` or ``code_block``, src/fenced.rs) is
    read as extract.py reads it: the same status, the same leaves, and nothing extract.py
    would warn about. Every other text is declined for the Python path."""
    got, want = _read_answer(text)
    if got.declined:
        return
    assert want.status == ("code_block" if got.code_blocks else "json"), text
    assert want.notes == ()
    _check(dataclasses.replace(got, declined=[], code_blocks=[]),
           flat.flatten_python([want.value]))


def test_fenced_answers_are_read_by_the_kernel():
    """The common fenced answers are the kernel's, not only declined safely."""
    for text in ("Here is the invoice:\n```json\n{\"a\": 1}\n```",
                 "~~~\n{\"a\": 1}\n~~~\nThanks", "```py\n1\n```\n```\n{\"a\": 1}\n```",
                 "Hi\r\n```JSON\r\n{\"a\": 1}\r\n```",
                 # Python's white space beyond ASCII, and a BOM before the answer
                 '```\n\u3000{"a": 1}\n```', '\ufeff```\n{"a": 1}\n```',
                 '```json\u00a0\n{"a": 1}\n```'):
        got, want = _read_answer(text)
        assert (got.declined, got.code_blocks, want.status) == ([], [0], "code_block"), text
    # (a closing fence followed by "\r" closes nothing: extract.py finds the object embedded;
    # a tag that is not ASCII is left to Python's lower())
    for text in ('one line ```json {"a": 1}```', '```\n{"a": NaN}\n```', "no object",
                 '```\r\n{"a": 1}\r\n```\r\n', '```jsön\n{"a": 1}\n```'):
        assert _read_answer(text)[0].declined == [0], text


def test_spans_of_a_file_read_as_the_texts_they_hold(tmp_path):
    # the files driver's reading: a batch's lines as spans of one buffer (flatten.read_spans),
    # contiguous or spread over the file, in any order, with missing lines and a BOM
    from jsoneval_polars.ingest import read_spans

    docs = [{"b": 1, "a": [{"c": "X"}]}, {"z": {"y": None}}, {"q": "\u00e9t\u00e9"}, {}]
    lines = [json.dumps({"id": i, **d}, ensure_ascii=i != 2).encode() for i, d in enumerate(docs)]
    lines[1] = b"\xef\xbb\xbf" + lines[1]
    filler = b'{"id": -1, "pad": "' + b"x" * (3 << 20) + b'"}'
    path = tmp_path / "gt.ndjson"
    path.write_bytes(b"\n".join([lines[0], lines[1], filler, lines[2], lines[3]]) + b"\n")
    offsets, at = [], 0
    for line in (lines[0], lines[1], filler, lines[2], lines[3]):
        offsets.append(at)
        at += len(line) + 1
    where = dict(zip((0, 1, None, 2, 3), zip(offsets, map(len, (*lines[:2], filler, *lines[2:])),
                                             strict=True), strict=True))
    for picked in ([0, 1], [1, None, 0], [3, 0, None, 2], [None]):
        spans = read_spans(path, [None if i is None else where[i][0] for i in picked],
                           [None if i is None else where[i][1] for i in picked])
        assert spans.texts() == [None if i is None else lines[i] for i in picked]
        assert [o is not None for o in spans.offsets] == [i is not None for i in picked]
        want = flat.flatten_python([None if i is None else docs[i] for i in picked], item_base=7)
        _check(flat.flatten_texts(spans, skip="id", item_base=7), want)
    spread = read_spans(path, [where[0][0], where[2][0]], [where[0][1], where[2][1]])
    assert spread.base == 0 and len(spread.buffer) == len(lines[0]) + len(lines[2])
    with pytest.raises(ValueError, match="outside the buffer"):
        _native.flatten_spans(b"{}", 10, [10, 11], [2, 2])
    with pytest.raises(ValueError, match="without a length"):
        _native.flatten_spans(b"{}", 0, [0], [None])


@pytest.mark.parametrize("kernel", [True, False])
def test_spread_spans_are_read_line_by_line(tmp_path, monkeypatch, kernel):
    # lines spread over a file are read one by one into one buffer: by the kernel without the
    # GIL (_native.read_pieces), or by os.pread without the extension; a line past the file's
    # end (the file cut since its scan) is an error, never a short text
    from jsoneval_polars.ingest import read_spans

    if not kernel:
        monkeypatch.setattr(flat, "_native", None)
    rng = random.Random(3)
    lines = [json.dumps({"id": i, "pad": "y" * rng.randrange(5000)}).encode() for i in range(900)]
    path = tmp_path / "aio.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")
    starts = list(itertools.accumulate((len(x) + 1 for x in lines), initial=0))
    picked = [*rng.sample(range(900), 40), None, *rng.sample(range(900), 3)]
    offsets = [None if i is None else starts[i] for i in picked]
    lengths = [None if i is None else len(lines[i]) for i in picked]
    spans = read_spans(path, offsets, lengths)
    assert spans.base == 0 and len(spans.buffer) < starts[-1] // 4  # read line by line
    assert spans.texts() == [None if i is None else lines[i] for i in picked]
    path.write_bytes(b"\n".join(lines[:450]))
    assert any(i is not None and i >= 450 for i in picked)
    with pytest.raises(OSError, match="shorter than when it was scanned") as error:
        read_spans(path, offsets, lengths)
    assert error.value.filename == str(path)
    with pytest.raises(OSError, match="shorter than when it was scanned"):  # one range
        read_spans(path, [starts[449], starts[450]], [len(lines[449]), len(lines[450])])


def test_lower_case_and_whitespace_agree_with_python_over_every_code_point():
    # the kernel's own Unicode tables against this Python's, one character at a time; a
    # disagreement not declined is a wrong canonical text
    wrong = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        text = f"A{ch}b {ch}"
        got = _native.canonical_string(text)
        if got is not None and got != " ".join(text.split()).lower():
            wrong.append(hex(cp))
    assert wrong == []


def test_large_batch_with_growth():
    # several times the first buffer sizes, with long strings and many distinct paths
    docs = [
        {f"k{i % 97}": {"s": "Word " * (i % 50), "f": i / 7, "l": [{"i": i}, {"j": [i]}]}}
        for i in range(5000)
    ]
    assert_same(docs, item_base=3)


def test_strings_across_data_buffers(monkeypatch):
    # string views address a data buffer with 32-bit offsets; with small buffers every long
    # string lands in one of many, padded to the next one when it would straddle two
    monkeypatch.setattr(flat, "_SEGMENT", 64)
    words = ["x" * n + "Y" * (n % 3) for n in range(62)]
    docs = [
        {w[:20] or "k": {"t": w, "u": w.upper() + " ", "items": [{w[:15] or "m": w}]}}
        for w in words
    ]
    flat_n = assert_same(docs * 3, empty_containers_are_null=True)
    assert flat_n.leaves["text"].str.len_bytes().max() > 50


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
