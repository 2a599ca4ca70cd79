"""Hypothesis strategies for property tests: realistic (GT, AIO) JSON document pairs and configs.

The GT is generated from a small key vocabulary (so paths collide between documents and list
items share keys, which makes list matching meaningful) with every kind of leaf SPEC §1-2 cares
about. The AIO is derived from the GT by perturbations (dropped / nulled / blanked keys, case and
whitespace changes, typos, added keys, changed kinds, shuffled / dropped / added list items), or
drawn independently. Every perturbation choice shrinks towards "keep", so a failing example
shrinks towards AIO == GT.

Entry points:

* :func:`gt_documents` - a GT root object.
* :func:`perturbed` / :func:`aio_for` - an AIO derived from a GT.
* :func:`doc_pairs` / :func:`datasets` - lists of ``{"doc_id", "gt", "aio", optional "safety"}``.
* :func:`configs` - a config dict (SPEC §11) built from the attribute names in a dataset.
* :func:`collect_names` - attributes, list attributes and bare keys of documents.
* :func:`shuffle_records` - every list of records in a document, items shuffled.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

from hypothesis import strategies as st

# --------------------------------------------------------------------------------------------
# Vocabulary

PLAIN_KEYS = [
    "name", "id", "amount", "price", "qty", "total", "date", "email", "desc", "tags",
    "meta", "items", "lines", "vendor", "notes", "flag",
]
# keys SPEC §2 / DECISIONS 3 write quoted: ".", "[", "]", '"', whitespace, empty, control chars
QUOTED_KEYS = ["a.b", "x[0]", "[]", 'q"t', "sp ace", "", "tab\tkey", "ctl\x07", "n]"]
UNICODE_KEYS = ["ключ", "名前", "café"]
KEYS = PLAIN_KEYS + QUOTED_KEYS + UNICODE_KEYS
# keys whose GT values are numbers / numeric strings / null (so NUMERIC on them is meaningful)
NUMERIC_KEYS = ["amount", "price", "qty", "total"]
# keys that tend to hold lists of records
LIST_KEYS = ["items", "lines", "x[0]", "名前"]

WORDS = [
    "acme", "Acme Corp", "widget", "gadget", "blue widget", "café crème", "naïve", "Ünïcödé",
    "東京", "emoji 🎉", "hello world", "foo bar baz", "Straße", "ǅungla", "İstanbul", "x",
    "ab", "ba", "the quick brown fox", "quick brown", "N/A", "-", "0", "true", "null",
]
NUMERIC_STRINGS = [
    "100", "100.0", "1,000", "$5.00", "-$3", "$-3", "€1,234.5", "1e3", "1E3", "12.50", " 42 ",
    "+7", ".5", "5.", "0.1", "-0", "£0.99", "¥1,000", "₹12",
    # not numbers (DECISIONS 7), or overflowing float64
    "1,2,3", "1e", "$", "--5", "1 000", "inf", "1e999", "-1e999",
    # DECISIONS 52: codes, parentheses, a trailing sign; and near misses
    "USD 1,234.50", "1,234.50 EUR", "(1,234.50)", "($5)", "5 €", "$ 5", "(5", "(-5)", "$5$",
    "usd", "the 100",
]
DATES = [
    "2024-01-05", "2024-01-05T10:00:00Z", "2024-01-05 10:00", "2024-01-05  10:00",
    "2024-01-05\t10:00", "2024-01-05t10:00:00.5+02:00", "2024-1-5", " 2024-01-05 ",
    # DECISIONS 51: other formats of the same day (01/05 reads by date_order), and impossible
    # days that look like dates
    "5-JAN-2024", "5 January 2024", "January 5, 2024", "Jan. 5 2024", "05/01/2024",
    "01/05/2024", "5.1.2024", "2024/01/05", "31/02/2024", "2024-13-01", "0000-01-01",
    "5-Janu-2024",
]
EMAILS = ["a@b.co", "John.Doe@Example.COM", "a @b.co", "x@y"]
BLANKS = ["", "  ", "\t\n", "\u00a0", "\u2003 "]

_text_alphabet = st.characters(
    codec="utf-8", categories=("L", "N", "P", "S", "Zs"), exclude_characters="\x00"
)


_INDEX: dict[int, st.SearchStrategy[int]] = {}


def _weighted(draw, options: list[tuple[int, Any]]):
    """Pick one of ``options`` [(weight, value)]; shrinks towards the first option."""
    n = _below(draw, sum(w for w, _ in options))
    for w, value in options:
        if n < w:
            return value
        n -= w
    raise AssertionError("unreachable")


def _below(draw, n: int) -> int:
    """An integer in [0, n); shrinks towards 0."""
    strategy = _INDEX.get(n)
    if strategy is None:
        strategy = _INDEX[n] = st.integers(0, n - 1)
    return draw(strategy)


def _pick(draw, seq):
    return seq[_below(draw, len(seq))]


# The building blocks below are plain functions of ``draw`` (not composite strategies): building
# a new strategy object per node costs more than the draws themselves.

# --------------------------------------------------------------------------------------------
# Leaves

ints = st.one_of(
    st.integers(-1000, 1000),
    st.sampled_from([0, 1, -1, 100, 2**53, 2**53 + 1, 2**63 - 1, -(2**63)]),
)
floats = st.one_of(
    st.sampled_from([100.0, 0.1, 0.5, -0.0, 1e20, 2.5, 99.99, 1e-7, 3.0, 9007199254740993.0]),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)
texts = st.one_of(
    st.sampled_from(WORDS),
    st.text(_text_alphabet, min_size=1, max_size=8),
    st.text("abc XYZ", min_size=1, max_size=10),
)
_numeric_ints = st.integers(-10_000, 10_000)
_booleans = st.booleans()
_safety = st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0)


def _scalar(draw) -> Any:
    """A JSON scalar (or NaN / infinity, rarely)."""
    kind = _weighted(draw, [
        (6, "text"), (3, "int"), (3, "float"), (2, "bool"), (2, "null"), (2, "blank"),
        (2, "numstr"), (1, "date"), (1, "email"), (1, "special"),
    ])
    if kind == "text":
        return draw(texts)
    if kind == "int":
        return draw(ints)
    if kind == "float":
        return draw(floats)
    if kind == "bool":
        return draw(_booleans)
    if kind == "null":
        return None
    if kind == "blank":
        return _pick(draw, BLANKS)
    if kind == "numstr":
        return _pick(draw, NUMERIC_STRINGS)
    if kind == "date":
        return _pick(draw, DATES)
    if kind == "email":
        return _pick(draw, EMAILS)
    return _pick(draw, [math.nan, math.inf, -math.inf])


def _numeric(draw) -> Any:
    """A GT value of a numeric key: a number, a numeric string or null."""
    kind = _weighted(draw, [(4, "int"), (3, "float"), (3, "numstr"), (1, "null")])
    if kind == "int":
        return draw(_numeric_ints)
    if kind == "float":
        return draw(floats)
    if kind == "numstr":
        return _pick(draw, NUMERIC_STRINGS[:20])
    return None


def _scalar_list(draw, lo: int, hi: int) -> list:
    return [_scalar(draw) for _ in range(lo + _below(draw, hi - lo + 1))]


def _scalar_array(draw) -> list:
    """An array that is one leaf: scalars, mixed, nested arrays, or objects mixed with scalars."""
    kind = _weighted(draw, [(4, "scalars"), (1, "empty"), (1, "mixed"), (1, "nested")])
    if kind == "empty":
        return []
    if kind == "scalars":
        return _scalar_list(draw, 1, 3)
    if kind == "nested":
        return [_scalar_list(draw, 0, 2), _scalar(draw)]
    return [{"k": _scalar(draw)}, _scalar(draw)]


def _leaf(draw, key: str | None = None) -> Any:
    """A leaf value: scalar, scalar array, empty object."""
    if key in NUMERIC_KEYS:
        return _numeric(draw)
    kind = _weighted(draw, [(10, "scalar"), (2, "array"), (1, "empty_object")])
    if kind == "scalar":
        return _scalar(draw)
    if kind == "array":
        return _scalar_array(draw)
    return {}


def _unique_keys(draw, pool: list[str], max_size: int, min_size: int = 0) -> list[str]:
    n = min_size + _below(draw, max_size - min_size + 1)
    pool = list(pool)
    out = []
    for _ in range(min(n, len(pool))):
        out.append(pool.pop(_below(draw, len(pool))))
    return out


# --------------------------------------------------------------------------------------------
# Objects and lists of records


def _object(draw, depth: int = 2, max_keys: int = 5) -> dict:
    """A JSON object over the key vocabulary; members are leaves, objects or lists of records."""
    return {key: _value(draw, depth, key) for key in _unique_keys(draw, KEYS, max_keys)}


def _value(draw, depth: int, key: str | None = None) -> Any:
    if depth <= 0 or key in NUMERIC_KEYS:
        return _leaf(draw, key)
    list_weight = 4 if key in LIST_KEYS else 1
    kind = _weighted(draw, [(6, "leaf"), (2, "object"), (list_weight, "records")])
    if kind == "leaf":
        return _leaf(draw, key)
    if kind == "object":
        return _object(draw, depth - 1, max_keys=3)
    return _records(draw, depth - 1)


ITEM_KEYS = ["name", "amount", "qty", "desc", "id", "date", "a.b", "flag"]


def _records(draw, depth: int = 1) -> list[dict]:
    """A non-empty list of objects sharing a key schema (items may lack some keys)."""
    schema = _unique_keys(draw, ITEM_KEYS, 4, min_size=1)
    nested = depth > 0 and draw(_booleans)
    items = []
    for _ in range(1 + _below(draw, 4)):
        item: dict[str, Any] = {}
        for key in schema:
            presence = _weighted(draw, [(6, "value"), (1, "absent"), (1, "null")])
            if presence == "value":
                if key in NUMERIC_KEYS:
                    item[key] = _numeric(draw)
                elif key in ("name", "desc"):
                    item[key] = _pick(draw, WORDS) if draw(_booleans) else draw(texts)
                else:
                    item[key] = _scalar(draw)
            elif presence == "null":
                item[key] = None
        if nested:
            sub = _weighted(draw, [(3, "records"), (1, "empty"), (1, "absent")])
            if sub == "records":
                item["lines"] = _records(draw, depth - 1)
            elif sub == "empty":
                item["lines"] = []
        if _below(draw, 10) == 0:
            item["meta"] = _object(draw, 0, max_keys=2)
        items.append(item)
    if _below(draw, 10) == 0:
        items.append({})  # an empty object item is a leaf of its own
    return items


@st.composite
def scalars(draw) -> Any:
    return _scalar(draw)


@st.composite
def objects(draw, depth: int = 2, max_keys: int = 5) -> dict:
    return _object(draw, depth, max_keys)


@st.composite
def records(draw, depth: int = 1) -> list[dict]:
    return _records(draw, depth)


@st.composite
def gt_documents(draw, depth: int = 2) -> dict:
    """A GT root object (may be empty)."""
    return _object(draw, depth, max_keys=6)


# --------------------------------------------------------------------------------------------
# AIO derived from GT


def _typo(draw, s: str) -> str:
    if not s:
        return "x"
    i = _below(draw, len(s))
    op = _weighted(draw, [(1, "sub"), (1, "del"), (1, "ins"), (1, "swap")])
    if op == "sub":
        return s[:i] + _pick(draw, "aeoxyzé") + s[i + 1:]
    if op == "del":
        return s[:i] + s[i + 1:]
    if op == "ins":
        return s[:i] + _pick(draw, "aeo ") + s[i:]
    if len(s) < 2:
        return s + s
    i = min(i, len(s) - 2)
    return s[:i] + s[i + 1] + s[i] + s[i + 2:]


def _perturb_string(draw, s: str) -> Any:
    op = _weighted(draw, [
        (8, "keep"), (2, "upper"), (1, "title"), (2, "space"), (3, "typo"), (1, "blank"),
        (1, "other"), (1, "number"),
    ])
    if op == "keep":
        return s
    if s in DATES and draw(_booleans):  # the same or another day in another format
        return _pick(draw, DATES)
    if op == "upper":
        return s.upper()
    if op == "title":
        return s.title()
    if op == "space":
        return "  " + s.replace(" ", " \t ") + "\n"
    if op == "typo":
        return _typo(draw, s)
    if op == "blank":
        return _pick(draw, BLANKS)
    if op == "other":
        return draw(texts)
    return draw(ints)


def _perturb_number(draw, x: int | float) -> Any:
    op = _weighted(draw, [
        (8, "keep"), (2, "delta"), (2, "scale"), (2, "float"), (2, "string"), (1, "formatted"),
    ])
    if op == "keep":
        return x
    if not math.isfinite(x):
        return 0
    if op == "delta":
        return x + _pick(draw, [1, -1, 0.5, 100])
    if op == "scale":
        return x * _pick(draw, [1.05, 0.95, 1.2, 10, -1])
    if op == "float":
        return float(x)
    if op == "string":
        return str(x)
    return _pick(draw, [f"${x:,}", f"USD {x:,}", f"{x:,} €", f"({-x:,})", f"({x:,})"])


def _perturb_scalar(draw, value: Any) -> Any:
    if isinstance(value, bool):
        op = _weighted(draw, [(8, "keep"), (2, "flip"), (1, "string")])
        return value if op == "keep" else (not value if op == "flip" else str(value).lower())
    if isinstance(value, (int, float)):
        return _perturb_number(draw, value)
    if isinstance(value, str):
        return _perturb_string(draw, value)
    return value


def _perturb_array(draw, value: list) -> Any:
    op = _weighted(draw, [(6, "keep"), (1, "reverse"), (1, "drop"), (1, "empty"), (1, "add")])
    if op == "keep" or (not value and op != "add"):
        return value
    if op == "reverse":
        return list(reversed(value))
    if op == "drop":
        return value[1:]
    if op == "empty":
        return []
    return value + [_scalar(draw)]


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _shuffled(draw, seq: list) -> list:
    """A permutation of ``seq`` (Fisher-Yates from draws; shrinks towards the identity)."""
    out = list(seq)
    for i in range(len(out) - 1, 0, -1):
        j = i - _below(draw, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def _perturbed(draw, value: Any, depth: int = 3, calm: int = 1) -> Any:
    """A perturbed copy of ``value`` (any JSON value); ``calm`` >= 1 scales the odds of leaving
    a node as it is."""
    if not isinstance(value, (dict, list)) and _weighted(draw, [(calm, "keep"), (1, "touch")]) \
            == "keep":
        return value
    # a change of kind, at any node
    kind_change = _weighted(draw, [(30, "none"), (1, "null"), (1, "scalar"), (1, "object")])
    if kind_change == "null":
        return None
    if kind_change == "scalar" and isinstance(value, (dict, list)):
        return _scalar(draw)
    if kind_change == "object" and not isinstance(value, dict):
        return _object(draw, 0, max_keys=2)
    if isinstance(value, dict):
        return _perturbed_object(draw, value, depth, calm)
    if _is_records(value):
        return _perturbed_records(draw, value, depth, calm)
    if isinstance(value, list):
        return _perturb_array(draw, value)
    return _perturb_scalar(draw, value)


def _perturbed_object(draw, obj: dict, depth: int = 3, calm: int = 1) -> dict:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        op = _weighted(draw, [
            (12 * calm, "recurse"), (2, "drop"), (1, "null"), (1, "blank"), (1, "fresh"),
        ])
        if op == "recurse":
            out[key] = _perturbed(draw, value, depth - 1, calm) if depth > 0 else value
        elif op == "null":
            out[key] = None
        elif op == "blank":
            out[key] = _pick(draw, BLANKS)
        elif op == "fresh":
            out[key] = _value(draw, 1, key)
        # drop: leave it out
    for key in _unique_keys(draw, KEYS, 2) if _below(draw, calm) == 0 else ():
        if key not in out and key not in obj:
            extra = _weighted(draw, [(2, "value"), (1, "null")])
            out[key] = _value(draw, 1, key) if extra == "value" else None
    if _below(draw, 8) == 0:  # key order must not matter
        out = {k: out[k] for k in _shuffled(draw, list(out))}
    return out


def _perturbed_records(draw, items: list[dict], depth: int = 3, calm: int = 1) -> Any:
    op = _weighted(draw, [(12 * calm, "items"), (1, "empty"), (1, "fresh")])
    if op == "empty":
        return []
    if op == "fresh":
        return _records(draw, 1)
    out = []
    for item in items:
        fate = _weighted(draw, [(8, "keep"), (2, "drop"), (1, "duplicate")])
        if fate == "drop":
            continue
        out.append(_perturbed_object(draw, item, depth - 1, calm))
        if fate == "duplicate":
            out.append(_perturbed_object(draw, item, depth - 1, calm))
    for _ in range(_weighted(draw, [(6, 0), (2, 1), (1, 2)])):
        out.append(_records(draw, 0)[0])
    if draw(_booleans):
        out = _shuffled(draw, out)
    return out


@st.composite
def perturbed(draw, value: Any, depth: int = 3) -> Any:
    """A perturbed copy of ``value``: dropped / nulled / blanked keys, case, whitespace, typos,
    added keys, changed kinds, shuffled / dropped / added list items."""
    return _perturbed(draw, value, depth, _pick(draw, [1, 4]))


def _aio_for(draw, gt: dict) -> dict:
    how = _weighted(draw, [(8, "perturb"), (1, "identical"), (1, "independent")])
    if how == "identical":
        return json.loads(json.dumps(gt))
    if how == "independent":
        return _object(draw, 2, max_keys=6)
    # light (most leaves kept, so list items still match) or heavy perturbation
    return _perturbed_object(draw, gt, 3, _pick(draw, [4, 1]))


@st.composite
def aio_for(draw, gt: dict) -> dict:
    """An AIO for ``gt``: mostly derived by perturbation, sometimes independent or identical."""
    return _aio_for(draw, gt)


# --------------------------------------------------------------------------------------------
# Datasets

DOC_IDS = ["d0", "d1", "doc 2", "文書", "", "1", "a/b", "x\ty"]


def _doc_pair(draw, doc_id: str, with_safety: bool = True, with_list: bool = False) -> dict:
    gt = _object(draw, 2, max_keys=6)
    if with_list and not any(_is_records(v) for v in gt.values()):
        gt[_pick(draw, LIST_KEYS)] = _records(draw, 1)
    doc = {"doc_id": doc_id, "gt": gt, "aio": _aio_for(draw, gt)}
    if with_safety and _below(draw, 4) == 0:
        doc["safety"] = draw(_safety)
    return doc


@st.composite
def doc_pairs(draw, doc_id: str, with_safety: bool = True, with_list: bool = False) -> dict:
    return _doc_pair(draw, doc_id, with_safety, with_list)


@st.composite
def datasets(
    draw, min_docs: int = 1, max_docs: int = 4, with_safety: bool = True, with_list: bool = False
) -> list[dict]:
    """1-4 document pairs {"doc_id", "gt", "aio", optional "safety"} with distinct ids;
    ``with_list`` puts a list of records at the top level of every GT."""
    ids = _unique_keys(draw, DOC_IDS, max_docs, min_size=min_docs)
    return [_doc_pair(draw, doc_id, with_safety, with_list) for doc_id in ids]


# --------------------------------------------------------------------------------------------
# Names in documents (for configs)


def _member(parent: str, key: str) -> str:
    needs = key == "" or any(
        c in '.[]"' or c.isspace() or ord(c) < 32 or ord(c) == 127 for c in key
    )
    if needs:
        return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"
    return key if parent == "" else f"{parent}.{key}"


def collect_names(docs: list[dict]) -> tuple[list[str], list[str], list[str], dict[str, set]]:
    """(attributes, list attributes, bare keys, item keys per list attribute) of every side of
    every document, in first-seen order. Attributes do not depend on the alignment."""
    attributes: dict[str, None] = {}
    lists: dict[str, None] = {}
    bare: dict[str, None] = {}
    item_keys: dict[str, set] = {}

    def walk(value: Any, attribute: str) -> None:
        if isinstance(value, dict):
            for key, v in value.items():
                bare[key] = None
                child = _member(attribute, key)
                attributes[child] = None
                walk(v, child)
        elif _is_records(value):
            lists[attribute] = None
            keys = item_keys.setdefault(attribute, set())
            for item in value:
                keys.update(item)
                attributes[attribute + "[]"] = None
                walk(item, attribute + "[]")

    for doc in docs:
        walk(doc["gt"], "")
        walk(doc["aio"], "")
    return list(attributes), list(lists), list(bare), item_keys


# --------------------------------------------------------------------------------------------
# Configs

STRATEGY_NAMES = ["EXACT", "FUZZY", "SEMANTIC", "NUMERIC", "IGNORE", "DATE"]
THRESHOLDS = st.sampled_from([0.0, 0.3, 0.5, 0.8, 0.85, 0.9, 1.0]) | st.floats(0.0, 1.0)
_WEIGHTS = st.sampled_from([0.0, 0.15, 0.25, 0.45, 1.0]) | st.floats(0.0, 2.0)
ALL_METHODS = ("greedy", "optimal", "index")


@st.composite
def configs(
    draw,
    docs: list[dict],
    methods: tuple[str, ...] = ALL_METHODS,
    numeric_only_on_numbers: bool = False,
    strategies: tuple[str, ...] = tuple(STRATEGY_NAMES),
) -> dict:
    """A random subset of the SPEC §11 keys, with names taken from ``docs``.

    field_strategies entries name attributes (``items[].name``) or bare keys (``name``);
    ``numeric_only_on_numbers`` gives NUMERIC only to names whose last key is in NUMERIC_KEYS;
    ``methods`` limits the list matching methods (every list attribute then gets an explicit
    method when ``methods`` is not all three).
    """
    attributes, list_attrs, bare, item_keys = collect_names(docs)
    restricted = tuple(methods) != ALL_METHODS
    cfg: dict[str, Any] = {}
    if draw(_booleans):
        cfg["default_text_strategy"] = _pick(draw, ["EXACT", "FUZZY", "SEMANTIC"])

    if draw(_booleans):
        names = attributes + bare + ["nonexistent", "amount", "items[].name"]
        fs = {}
        for name in _unique_keys(draw, names, 5):
            strategy = _pick(draw, strategies)
            if strategy == "NUMERIC" and numeric_only_on_numbers:
                last = name.rsplit(".", 1)[-1]
                if last not in NUMERIC_KEYS:
                    strategy = "EXACT"
            fs[name] = strategy
        cfg["field_strategies"] = fs

    for key in ("fuzzy_threshold", "semantic_threshold"):
        if draw(_booleans):
            cfg[key] = draw(THRESHOLDS)
    if draw(_booleans):
        numeric = {}
        if draw(_booleans):
            numeric["rel_tol"] = _pick(draw, [0.0, 0.05, 0.1, 0.5, 2.0])
        if draw(_booleans):
            numeric["abs_tol"] = _pick(draw, [0.0, 0.5, 1.0, 100.0])
        cfg["numeric"] = numeric
    if draw(_booleans):
        cfg["weights"] = {
            k: draw(_WEIGHTS)
            for k in ("accuracy", "completeness", "safety", "hallucination")
            if draw(_booleans)
        }
    if draw(_booleans):
        cfg["pass_threshold"] = draw(THRESHOLDS)

    lists_cfg = {}
    for list_attr in list_attrs:
        if not (restricted or draw(_booleans)):
            continue
        spec: dict[str, Any] = {}
        if restricted or draw(_booleans):
            spec["method"] = _pick(draw, methods)
        if draw(_booleans):
            spec["threshold"] = draw(THRESHOLDS)
        if _below(draw, 3) == 0:
            keys = sorted(item_keys.get(list_attr, set())) + ["nonexistent"]
            spec["match_fields"] = _unique_keys(draw, keys, 3, min_size=_below(draw, 4) > 0)
        lists_cfg[list_attr] = spec
    if lists_cfg or draw(_booleans):
        cfg["lists"] = lists_cfg

    if _below(draw, 4) == 0:
        pool = attributes + ["nonexistent.attr", "items[].name"]
        cfg["attributes"] = _unique_keys(draw, pool, 6)
    for key in ("empty_containers_are_null", "null_extra_is_hallucination"):
        if _below(draw, 3) == 0:
            cfg[key] = draw(_booleans)
    if _below(draw, 3) == 0:
        cfg["date_order"] = _pick(draw, ["DMY", "MDY", "YMD"])
    names = attributes + bare + ["nonexistent"]
    if _below(draw, 3) == 0:
        cfg["field_thresholds"] = {n: draw(THRESHOLDS) for n in _unique_keys(draw, names, 3)}
    if _below(draw, 3) == 0:
        cfg["field_weights"] = {n: draw(_WEIGHTS) for n in _unique_keys(draw, names, 3)}
    if _below(draw, 3) == 0:
        chains = ["casefold", "nfkc", "strip_punctuation", "collapse_whitespace", "digits_only"]
        cfg["field_normalizers"] = {
            n: _unique_keys(draw, chains, 3, min_size=1) for n in _unique_keys(draw, names, 3)
        }
    return cfg


# --------------------------------------------------------------------------------------------
# Transformations


def shuffle_records(value: Any, rnd: random.Random, keep: frozenset[str] = frozenset()) -> Any:
    """A copy of ``value`` with the items of every list of records (at every depth) shuffled.

    A member of a list item named in ``keep`` (the configured match fields) is copied as is: a
    match field holding a list is compared by its canonical text, which its order is part of,
    so shuffling it would change the similarities, not just the item order.
    """
    if isinstance(value, dict):
        return {k: shuffle_records(v, rnd, keep) for k, v in value.items()}
    if _is_records(value):
        items = [
            {k: v if k in keep else shuffle_records(v, rnd, keep) for k, v in item.items()}
            for item in value
        ]
        rnd.shuffle(items)
        return items
    return value


def match_field_names(config: dict | None) -> frozenset[str]:
    """Every field named in ``lists.*.match_fields`` of a config."""
    names = set()
    for spec in ((config or {}).get("lists") or {}).values():
        for f in spec.get("match_fields") or ():
            names.add(f if isinstance(f, str) else f["field"])
    return frozenset(names)
