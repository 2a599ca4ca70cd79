"""Plain-Python reference implementation of SPEC.md §1-7 (the test oracle).

Written independently of the engine from SPEC.md and docs/DECISIONS.md only: dicts and loops,
slow but easy to check line by line against the text. Entry point: ``reference_evaluate``.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import unicodedata
from typing import Any, Callable

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

STRATEGIES = ("EXACT", "FUZZY", "SEMANTIC", "NUMERIC", "IGNORE", "DATE")

DEFAULT_CONFIG: dict[str, Any] = {
    "field_strategies": {},
    "default_text_strategy": "SEMANTIC",
    "fuzzy_threshold": 0.85,
    "semantic_threshold": 0.80,
    "numeric": {"rel_tol": 0.10, "abs_tol": 0.0},
    "weights": {"accuracy": 0.45, "completeness": 0.25, "safety": 0.15, "hallucination": 0.15},
    "pass_threshold": 0.7,
    "lists": {},
    "attributes": None,
    "empty_containers_are_null": False,
    "null_extra_is_hallucination": False,
    "id_field": "doc_id",
    "date_order": "DMY",
    "field_thresholds": {},
    "field_weights": {},
    "field_normalizers": {},
}

DEFAULT_LIST_CONFIG = {"match_fields": None, "threshold": 0.8, "method": "greedy"}

TINY = 1e-12
# FUZZY and the default SEMANTIC scorer compare texts on their first 20,000 characters
# (docs/DECISIONS.md, long texts)
TEXT_CAP = 20_000


class _Absent:
    """Marks a path that one side does not have (distinct from a present null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


# --------------------------------------------------------------------------------------------
# §1 Values


def is_null(value: Any, empty_containers_are_null: bool = False) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    if isinstance(value, float):
        return math.isnan(value)
    if empty_containers_are_null and isinstance(value, (list, dict)) and len(value) == 0:
        return True
    return False


class Normalized(str):
    """A string value after its field's normalizers: its canonical text is itself."""


def normalize(text: str, names) -> Normalized:
    """DECISIONS 55: the named normalizers, in order, on a canonical text."""
    if isinstance(names, str):
        names = [names]
    for name in names:
        if name == "casefold":
            text = text.casefold()
        elif name == "nfkc":
            text = unicodedata.normalize("NFKC", text)
        elif name == "strip_punctuation":
            text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        elif name == "collapse_whitespace":
            text = " ".join(re.split(r"\s+", text)).strip()
        elif name == "digits_only":
            text = "".join(c for c in text if c in "0123456789")
        else:
            raise ValueError(name)
    return Normalized(text)


def canonical_text(value: Any) -> str:
    if isinstance(value, Normalized):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return " ".join(value.split()).lower()
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).lower()
    raise TypeError(f"not a JSON value: {value!r}")


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# --------------------------------------------------------------------------------------------
# §2 Paths

_QUOTE_CHARS = set('.[]"')


def _needs_quoting(key: str) -> bool:
    if key == "":
        return True
    for c in key:
        if c in _QUOTE_CHARS or c.isspace() or ord(c) < 32 or ord(c) == 127:
            return True
    return False


def member_path(parent: str, key: str) -> str:
    if _needs_quoting(key):
        return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"
    return key if parent == "" else f"{parent}.{key}"


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(isinstance(v, dict) for v in value)


# --------------------------------------------------------------------------------------------
# §4 Strategy resolution and field scoring

_ISO_RE = re.compile(
    r"(?i)[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_CURRENCY = set("$€£¥₹")
_NUMBER_BODY_RE = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?")
# DECISIONS 52: currency codes a numeric string may carry before or after its digits
CURRENCY_CODES = (
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "nzd", "cny", "inr", "sek", "nok", "dkk",
    "pln", "czk", "huf", "sgd", "hkd", "krw", "brl", "mxn", "zar", "try", "ils", "aed", "sar",
)
# DECISIONS 51: English month names and their three-letter abbreviations (and "sept")
MONTHS = {
    name: i + 1
    for i, names in enumerate([
        ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
        ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
        ("oct", "october"), ("nov", "november"), ("dec", "december"),
    ])
    for name in names
}


def _date_parts(s: str, date_order: str) -> tuple[str, str, str] | None:
    """(year, month, day) texts of a canonical string in a recognized date format."""
    if _ISO_RE.fullmatch(s):
        return s[0:4], s[5:7], s[8:10]
    m = re.fullmatch(r"([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})", s)
    if m:
        return m.group(1), m.group(2), m.group(3)
    m = re.fullmatch(r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})", s)
    if m and date_order == "DMY":
        return m.group(3), m.group(2), m.group(1)
    if m and date_order == "MDY":
        return m.group(3), m.group(1), m.group(2)
    m = re.fullmatch(r"([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{4})", s)
    if m:
        return m.group(3), m.group(2), m.group(1)
    m = re.fullmatch(r"([0-9]{1,2})[- ]([a-z]+)\.?[- ]([0-9]{4})", s)
    if m and m.group(2) in MONTHS:
        return m.group(3), str(MONTHS[m.group(2)]), m.group(1)
    m = re.fullmatch(r"([a-z]+)\.? ([0-9]{1,2}),? ([0-9]{4})", s)
    if m and m.group(1) in MONTHS:
        return m.group(3), str(MONTHS[m.group(1)]), m.group(2)
    return None


def looks_like_date(value: Any, date_order: str = "DMY") -> bool:
    return isinstance(value, str) and _date_parts(canonical_text(value), date_order) is not None


def date_of(value: Any, date_order: str = "DMY") -> datetime.date | None:
    """The calendar date a string names in a recognized format (DECISIONS 51), else None."""
    if not isinstance(value, str):
        return None
    parts = _date_parts(canonical_text(value), date_order)
    if parts is None:
        return None
    try:
        return datetime.date(int(parts[0]), int(parts[1]), int(parts[2]))
    except ValueError:  # 31/02, month 13, year 0
        return None


def auto_strategy(value: Any, default_text_strategy: str, date_order: str = "DMY") -> str:
    if isinstance(value, str):
        s = canonical_text(value)  # DECISIONS 6: detection reads the canonical text
        if looks_like_date(s, date_order) or _EMAIL_RE.fullmatch(s):
            return "EXACT"
        return default_text_strategy
    return "EXACT"  # bool, number, array, object


def parse_number(value: Any) -> float | int | None:
    """DECISIONS 7 and 43: numbers and numeric strings; booleans never parse."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)  # NUMERIC compares in float64 (DECISIONS 7)
    if not isinstance(value, str):
        return None
    s = canonical_text(value).replace(",", "")
    paren = s.startswith("(") and s.endswith(")") and len(s) >= 2
    if paren:
        s = s[1:-1].strip()
    code = next((c for c in CURRENCY_CODES if s.startswith(c)), None)
    if code:
        s = s[3:].lstrip()
    sign, prefix_sign = "", False
    if s[:1] in ("+", "-"):
        sign, s = s[0], s[1:]
        if s[:1] in _CURRENCY:
            prefix_sign, s = True, s[1:]
    elif s[:1] in _CURRENCY:
        prefix_sign, s = True, s[1:]
        if s[:1] in ("+", "-"):
            sign, s = s[0], s[1:]
    s = s.lstrip()
    code = next((c for c in CURRENCY_CODES if s.endswith(c)), None)
    if code:
        s = s[:-3].rstrip()
    if s[-1:] in _CURRENCY:
        if prefix_sign:
            return None  # one currency sign only
        s = s[:-1].rstrip()
    if not _NUMBER_BODY_RE.fullmatch(s) or (paren and sign):
        return None
    number = float(s)
    if not math.isfinite(number):
        return None
    return -number if sign == "-" or paren else number


def same_value(gt: Any, aio: Any, strategy: str, date_order: str) -> bool:
    """EXACT and DATE beyond equal canonical text (DECISIONS 51, 52): dates on the same
    calendar day; under EXACT a GT number and an AIO numeric string of the same value."""
    if canonical_text(gt) == canonical_text(aio):
        return True
    if isinstance(gt, str) and isinstance(aio, str):
        g = date_of(gt, date_order)
        return g is not None and g == date_of(aio, date_order)
    if strategy == "EXACT" and isinstance(aio, str) and _small_number(gt):
        return parse_number(aio) == float(gt)
    return False


def _small_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and abs(value) < 2**53)


def default_semantic_scorer(a: str, b: str) -> float:
    if a == "" and b == "":
        return 1.0
    return fuzz.token_set_ratio(a[:TEXT_CAP], b[:TEXT_CAP]) / 100.0


def fuzzy_similarity(a: str, b: str) -> float:
    if a == "" and b == "":
        return 1.0
    return float(Levenshtein.normalized_similarity(a[:TEXT_CAP], b[:TEXT_CAP]))


def per_field(cfg: dict, key: str, attribute: str, bare: str | None):
    """A field's entry in a per-field mapping: by attribute, else by bare field name."""
    mapping = cfg[key]
    if attribute in mapping:
        return mapping[attribute]
    return mapping.get(bare) if bare is not None else None


def score_field(
    strategy, gt, aio, cfg, semantic_scorer, threshold=None
) -> tuple[float | None, bool | None]:
    """(similarity, match) of a both_non_null field; (None, None) for IGNORE. ``threshold``
    is the field's field_thresholds entry (FUZZY and SEMANTIC), None for none."""
    if strategy == "IGNORE":
        return None, None
    if strategy == "NUMERIC":
        a, b = parse_number(gt), parse_number(aio)
        if a is None or b is None:
            return 0.0, False
        diff = abs(a - b)
        similarity = 1.0 - min(1.0, diff / max(abs(a), TINY))
        tolerance = max(cfg["numeric"]["abs_tol"], cfg["numeric"]["rel_tol"] * abs(a))
        return float(similarity), bool(diff <= tolerance)
    cg, ca = canonical_text(gt), canonical_text(aio)
    if strategy in ("EXACT", "DATE"):
        similarity = 1.0 if same_value(gt, aio, strategy, cfg["date_order"]) else 0.0
        return similarity, similarity == 1.0
    if strategy == "FUZZY":
        similarity = fuzzy_similarity(cg, ca)
        limit = cfg["fuzzy_threshold"] if threshold is None else threshold
        return similarity, similarity >= limit
    if strategy == "SEMANTIC":
        similarity = float(semantic_scorer(cg, ca))
        limit = cfg["semantic_threshold"] if threshold is None else threshold
        return similarity, similarity >= limit
    raise ValueError(f"unknown strategy {strategy!r}")


# --------------------------------------------------------------------------------------------
# §5 Aligning lists of records


def default_match_fields(gt_items: list[dict]) -> list[str]:
    fields: list[str] = []
    for item in gt_items:
        for key, value in item.items():
            if (value is None or isinstance(value, (bool, int, float, str))) and key not in fields:
                fields.append(key)
    return fields


def pair_similarity(
    gt_item: dict, aio_item: dict, match_fields, ecn: bool, date_order: str = "DMY",
    thresholds: dict | None = None,
) -> float:
    """Mean match-field similarity; ``thresholds`` (field -> field_thresholds entry): a field
    compared by Levenshtein scores 0 below its threshold (DECISIONS 54)."""
    scores = []
    for field in match_fields:
        g = gt_item.get(field, ABSENT)
        a = aio_item.get(field, ABSENT)
        g_empty = g is ABSENT or is_null(g, ecn)
        a_empty = a is ABSENT or is_null(a, ecn)
        if g_empty and a_empty:
            continue
        if g_empty or a_empty:
            scores.append(0.0)
        elif isinstance(g, str) and date_of(g, date_order) is None:
            score = fuzzy_similarity(canonical_text(g), canonical_text(a))
            limit = (thresholds or {}).get(field)
            scores.append(0.0 if limit is not None and score < limit else score)
        else:  # dates, numbers and the rest by value (DECISIONS 51, 52)
            scores.append(1.0 if _same_item_value(g, a, date_order) else 0.0)
    return sum(scores) / len(scores) if scores else 0.0


def _same_item_value(g: Any, a: Any, date_order: str) -> bool:
    """A match field compared by value: equal canonical text, the same calendar date, or a GT
    number and an AIO number or numeric string of the same value."""
    if canonical_text(g) == canonical_text(a):
        return True
    if isinstance(g, str):
        return date_of(g, date_order) == date_of(a, date_order)  # g is a valid date here
    if _small_number(g) and not isinstance(a, bool) and isinstance(a, (int, float, str)):
        return parse_number(a) == float(g)
    return False


def match_items(
    gt_items, aio_items, list_cfg, ecn, date_order="DMY", thresholds=None
) -> list[tuple[int, int]]:
    """Matched (gt_index, aio_index) pairs, sorted by gt_index."""
    method = list_cfg["method"]
    if method == "index":
        return [(i, i) for i in range(min(len(gt_items), len(aio_items)))]

    fields = list_cfg["match_fields"]
    if fields is None:
        fields = default_match_fields(gt_items)
    threshold = list_cfg["threshold"]
    sim = [[pair_similarity(g, a, fields, ecn, date_order, thresholds) for a in aio_items]
           for g in gt_items]

    pairs: list[tuple[int, int]] = []
    if method == "greedy":
        candidates = [
            (sim[i][j], i, j)
            for i in range(len(gt_items))
            for j in range(len(aio_items))
            if sim[i][j] >= threshold
        ]
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        taken_gt, taken_aio = set(), set()
        for _, i, j in candidates:
            if i not in taken_gt and j not in taken_aio:
                taken_gt.add(i)
                taken_aio.add(j)
                pairs.append((i, j))
    elif method == "optimal":
        if gt_items and aio_items:
            masked = [[s if s >= threshold else 0.0 for s in row] for row in sim]
            rows, cols = linear_sum_assignment(masked, maximize=True)
            pairs = [(int(i), int(j)) for i, j in zip(rows, cols) if sim[i][j] >= threshold]
    else:
        raise ValueError(f"unknown list method {method!r}")
    return sorted(pairs)


def order_metrics(pairs: list[tuple[int, int]]) -> tuple[bool, float]:
    aio = [j for _, j in sorted(pairs)]
    correct = all(aio[k] < aio[k + 1] for k in range(len(aio) - 1))
    n_pairs = len(aio) * (len(aio) - 1) // 2
    if n_pairs == 0:
        return correct, 1.0
    concordant = sum(1 for x in range(len(aio)) for y in range(x + 1, len(aio)) if aio[x] < aio[y])
    return correct, concordant / n_pairs


# --------------------------------------------------------------------------------------------
# §2 Flattening both sides together


class _Flattener:
    """Walks a GT and an AIO document together, aligning lists of records on the way.

    ``leaves`` maps path -> {"attribute", "bare", "gt", "aio"} (ABSENT where a side lacks the
    leaf), in walk order; ``alignments`` gets one entry per list-of-records instance.
    """

    def __init__(self, doc_id: str, cfg: dict):
        self.doc_id = doc_id
        self.cfg = cfg
        self.ecn = cfg["empty_containers_are_null"]
        self.leaves: dict[str, dict] = {}
        self.alignments: list[dict] = []

    def _leaf(self, path, attribute, bare, side, value):
        entry = self.leaves.setdefault(
            path, {"attribute": attribute, "bare": bare, "gt": ABSENT, "aio": ABSENT}
        )
        entry[side] = value

    @staticmethod
    def _shape(value, other, is_root) -> str | None:
        if value is ABSENT:
            return None
        if isinstance(value, dict) and (value or is_root):
            return "object"
        if _is_records(value):
            return "records"
        if isinstance(value, list) and not value and _is_records(other):
            return "records"  # an empty array opposite a list of records
        return "leaf"

    def walk(self, gt, aio, path="", attribute="", bare=None, is_root=False):
        g_shape = self._shape(gt, aio, is_root)
        a_shape = self._shape(aio, gt, is_root)

        if g_shape == "object" or a_shape == "object":
            g_obj = gt if g_shape == "object" else {}
            a_obj = aio if a_shape == "object" else {}
            keys = list(g_obj) + [k for k in a_obj if k not in g_obj]
            for key in keys:
                self.walk(
                    g_obj.get(key, ABSENT),
                    a_obj.get(key, ABSENT),
                    member_path(path, key),
                    member_path(attribute, key),
                    key,
                )

        if g_shape == "records" or a_shape == "records":
            self._walk_records(
                gt if g_shape == "records" else [],
                aio if a_shape == "records" else [],
                path,
                attribute,
                bare,
            )

        if g_shape == "leaf":
            self._leaf(path, attribute, bare, "gt", gt)
        if a_shape == "leaf":
            self._leaf(path, attribute, bare, "aio", aio)

    def _walk_records(self, gt_items, aio_items, path, attribute, bare):
        list_cfg = dict(DEFAULT_LIST_CONFIG)
        list_cfg.update(self.cfg["lists"].get(attribute, {}))
        item_attribute = f"{attribute}[]"
        thresholds = {}
        for item in gt_items:
            for key in item:
                limit = per_field(self.cfg, "field_thresholds", member_path(item_attribute, key),
                                  key)
                if limit is not None:
                    thresholds[key] = limit
        pairs = match_items(gt_items, aio_items, list_cfg, self.ecn, self.cfg["date_order"],
                            thresholds)
        matched_gt = {i: j for i, j in pairs}
        matched_aio = {j for _, j in pairs}
        item_attribute = f"{attribute}[]"

        for i, gt_item in enumerate(gt_items):
            aio_item = aio_items[matched_gt[i]] if i in matched_gt else ABSENT
            self.walk(gt_item, aio_item, f"{path}[{i}]", item_attribute, bare)
        next_index = len(gt_items)
        for j, aio_item in enumerate(aio_items):
            if j not in matched_aio:
                self.walk(ABSENT, aio_item, f"{path}[{next_index}]", item_attribute, bare)
                next_index += 1

        correct, score = order_metrics(pairs)
        self.alignments.append(
            {
                "doc_id": self.doc_id,
                "list_path": path,
                "pairs": [[i, j] for i, j in pairs],
                "order_correct": correct,
                "order_score": score,
            }
        )


# --------------------------------------------------------------------------------------------
# §3, §4, §6 per document


def _attribute_bare_name(attribute: str) -> str | None:
    """Bare field name of an attribute string (last object member key), for IGNORE checks."""
    keys: list[str] = []
    pos = 0
    while pos < len(attribute):
        if attribute.startswith("[]", pos):
            pos += 2
        elif attribute.startswith('["', pos):
            decoder = json.JSONDecoder()
            key, end = decoder.raw_decode(attribute, pos + 1)
            keys.append(key)
            pos = end + 1  # skip the closing ]
        else:
            if attribute[pos] == ".":
                pos += 1
            m = re.compile(r"[^.\[]*").match(attribute, pos)
            keys.append(m.group(0))
            pos = m.end()
    return keys[-1] if keys else None


def resolve_strategy(attribute, bare, gt, aio, cfg) -> str:
    strategies = cfg["field_strategies"]
    if attribute in strategies:
        return strategies[attribute]
    if bare is not None and bare in strategies:
        return strategies[bare]
    ecn = cfg["empty_containers_are_null"]
    if gt is not ABSENT and not is_null(gt, ecn):
        return auto_strategy(gt, cfg["default_text_strategy"], cfg["date_order"])
    if aio is not ABSENT and not is_null(aio, ecn):
        return auto_strategy(aio, cfg["default_text_strategy"], cfg["date_order"])
    return cfg["default_text_strategy"]


def _bucket(gt, aio, cfg) -> str | None:
    ecn = cfg["empty_containers_are_null"]
    g_has = gt is not ABSENT and not is_null(gt, ecn)
    a_has = aio is not ABSENT and not is_null(aio, ecn)
    if gt is ABSENT:
        if a_has:
            return "extra_keys"
        return "extra_keys" if cfg["null_extra_is_hallucination"] else None
    if not g_has:
        return "gt_null_aio_has_value" if a_has else None
    return "both_non_null" if a_has else "aio_missing_or_null"


def _cell(gt, aio, match, ecn) -> str:
    g_has = gt is not ABSENT and not is_null(gt, ecn)
    a_has = aio is not ABSENT and not is_null(aio, ecn)
    if g_has and a_has:
        return "TP" if match else "FP+FN"
    if a_has:
        return "FP"
    if g_has:
        return "FN"
    return "TN"


def _add_cell(counts: dict, attribute: str, cell: str) -> None:
    c = counts.setdefault(attribute, {"tp": 0, "tn": 0, "fp": 0, "fn": 0})
    if cell == "TP":
        c["tp"] += 1
    elif cell == "TN":
        c["tn"] += 1
    elif cell == "FP":
        c["fp"] += 1
    elif cell == "FN":
        c["fn"] += 1
    else:  # FP+FN
        c["fp"] += 1
        c["fn"] += 1


def f1_of(c: dict) -> float | None:
    denominator = 2 * c["tp"] + c["fp"] + c["fn"]
    return None if denominator == 0 else 2 * c["tp"] / denominator


def _macro_f1(counts: dict) -> float | None:
    defined = [f for f in (f1_of(c) for c in counts.values()) if f is not None]
    return sum(defined) / len(defined) if defined else None


def evaluate_document(doc: dict, cfg: dict, semantic_scorer) -> dict:
    doc_id = doc["doc_id"]
    ecn = cfg["empty_containers_are_null"]
    flat = _Flattener(doc_id, cfg)
    # an array root is the object {"$": array} (issue 13; the engine wraps it in ingest)
    gt, aio = ({"$": d} if isinstance(d, list) else d for d in (doc["gt"], doc["aio"]))
    flat.walk(gt, aio, is_root=True)

    configured = cfg["attributes"]
    bucket_counts = {
        b: 0
        for b in ("extra_keys", "gt_null_aio_has_value", "both_non_null", "aio_missing_or_null")
    }
    n_scored = n_correct = 0
    w_scored = w_correct = 0.0
    cells: dict[str, dict] = {}
    fields = []

    for path, leaf in flat.leaves.items():
        gt, aio, attribute = leaf["gt"], leaf["aio"], leaf["attribute"]
        bucket = _bucket(gt, aio, cfg)
        if bucket is not None:
            bucket_counts[bucket] += 1
        strategy = resolve_strategy(attribute, leaf["bare"], gt, aio, cfg)

        similarity = match = None
        if bucket == "both_non_null" and strategy != "IGNORE":
            threshold = per_field(cfg, "field_thresholds", attribute, leaf["bare"])
            chain = per_field(cfg, "field_normalizers", attribute, leaf["bare"])
            g, a = gt, aio
            if chain:  # string values are compared normalized (DECISIONS 55)
                g = normalize(canonical_text(gt), chain) if isinstance(gt, str) else gt
                a = normalize(canonical_text(aio), chain) if isinstance(aio, str) else aio
            similarity, match = score_field(strategy, g, a, cfg, semantic_scorer, threshold)
            n_scored += 1
            n_correct += int(match)
            weight = per_field(cfg, "field_weights", attribute, leaf["bare"])
            weight = 1.0 if weight is None else weight
            w_scored += weight
            w_correct += weight * int(match)

        cell = None
        if strategy != "IGNORE" and (configured is None or attribute in configured):
            cell = _cell(gt, aio, match, ecn)
            _add_cell(cells, attribute, cell)

        fields.append(
            {
                "path": path,
                "attribute": attribute,
                "gt_present": gt is not ABSENT,
                "aio_present": aio is not ABSENT,
                "gt_kind": None if gt is ABSENT else json_kind(gt),
                "aio_kind": None if aio is ABSENT else json_kind(aio),
                "bucket": bucket,
                "strategy": strategy,
                "similarity": similarity,
                "match": match,
                "cell": cell,
            }
        )

    if configured is not None:
        seen = {leaf["attribute"] for leaf in flat.leaves.values()}
        strategies = cfg["field_strategies"]
        for attribute in configured:
            # SPEC §4: an explicit entry for the attribute wins over one for its bare name, so
            # ``{"v.name": "EXACT", "name": "IGNORE"}`` leaves v.name counted (TN when absent).
            explicit = strategies.get(attribute)
            if explicit is None:
                explicit = strategies.get(_attribute_bare_name(attribute))
            ignored = explicit == "IGNORE"
            if attribute not in seen and not ignored:
                _add_cell(cells, attribute, "TN")

    n_gt_non_null = bucket_counts["both_non_null"] + bucket_counts["aio_missing_or_null"]
    n_total = len(flat.leaves)
    completeness = bucket_counts["both_non_null"] / n_gt_non_null if n_gt_non_null else 1.0
    hallucination = (
        (bucket_counts["extra_keys"] + bucket_counts["gt_null_aio_has_value"]) / n_total
        if n_total
        else 0.0
    )
    # DECISIONS 54: accuracy weighted by field_weights (1 for a field with no entry)
    accuracy = w_correct / w_scored if w_scored else 1.0

    w = cfg["weights"]
    safety = doc.get("safety")
    safety = 1.0 if safety is None else safety
    rqs = (
        w["accuracy"] * accuracy
        + w["completeness"] * completeness
        + w["safety"] * safety
        - w["hallucination"] * hallucination
    )
    rqs = min(1.0, max(0.0, rqs))

    row = {
        "completeness": completeness,
        "hallucination": hallucination,
        "accuracy": accuracy,
        "rqs": rqs,
        "macro_f1": _macro_f1(cells),
        # DECISIONS 53: an AIO document with no GT document is never passed
        "passed": rqs >= cfg["pass_threshold"] and doc.get("gt_present", True),
        "n_total_distinct": n_total,
        "n_scored": n_scored,
        "n_correct": n_correct,
        "n_gt_non_null": n_gt_non_null,
        "n_both_non_null": bucket_counts["both_non_null"],
        "n_aio_missing_or_null": bucket_counts["aio_missing_or_null"],
        "n_extra_keys": bucket_counts["extra_keys"],
        "n_gt_null_aio_has_value": bucket_counts["gt_null_aio_has_value"],
    }
    return {"row": row, "cells": cells, "fields": fields, "alignments": flat.alignments}


# --------------------------------------------------------------------------------------------
# Public entry point


def resolve_config(config: dict | None) -> dict:
    cfg = dict(DEFAULT_CONFIG)
    cfg.update(config or {})
    cfg["numeric"] = {**DEFAULT_CONFIG["numeric"], **(config or {}).get("numeric", {})}
    cfg["weights"] = {**DEFAULT_CONFIG["weights"], **(config or {}).get("weights", {})}
    cfg["field_strategies"] = dict(cfg["field_strategies"] or {})
    cfg["lists"] = dict(cfg["lists"] or {})
    cfg["field_thresholds"] = dict(cfg["field_thresholds"] or {})
    cfg["field_weights"] = dict(cfg["field_weights"] or {})
    cfg["field_normalizers"] = dict(cfg["field_normalizers"] or {})
    return cfg


def _status(pass_rate: float | None) -> str | None:
    if pass_rate is None:
        return None
    if pass_rate >= 0.85:
        return "healthy"
    if pass_rate >= 0.70:
        return "warning"
    return "critical"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def reference_evaluate(
    documents: list[dict],
    config: dict | None = None,
    semantic_scorer: Callable[[str, str], float] | None = None,
) -> dict:
    """Score document pairs per SPEC §1-7.

    documents: [{"doc_id", "gt": dict, "aio": dict, optional "safety": float, optional
    "gt_present": False for an AIO-only document (its "gt" then being {})}]
    config: SPEC §11 keys; missing keys take their defaults.
    semantic_scorer: (gt_text, aio_text) -> score in [0, 1] on canonical texts; default is
    rapidfuzz token_set_ratio / 100.
    """
    cfg = resolve_config(config)
    scorer = semantic_scorer or default_semantic_scorer

    doc_rows: dict[str, dict] = {}
    fields: dict[str, list] = {}
    alignments: list[dict] = []
    attribute_counts: dict[str, dict] = {}

    for doc in documents:
        result = evaluate_document(doc, cfg, scorer)
        doc_id = doc["doc_id"]
        doc_rows[doc_id] = result["row"]
        fields[doc_id] = result["fields"]
        alignments.extend(result["alignments"])
        for attribute, c in result["cells"].items():
            total = attribute_counts.setdefault(attribute, {"tp": 0, "tn": 0, "fp": 0, "fn": 0})
            for k in total:
                total[k] += c[k]

    attributes = {}
    for attribute, c in attribute_counts.items():
        attributes[attribute] = {
            **c,
            "support": c["tp"] + c["fn"],
            "precision": c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else None,
            "recall": c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else None,
            "f1": f1_of(c),
        }

    summed = {k: sum(c[k] for c in attribute_counts.values()) for k in ("tp", "tn", "fp", "fn")}
    rows = list(doc_rows.values())
    pass_rate = _mean([1.0 if r["passed"] else 0.0 for r in rows])
    summary = {
        "n_documents": len(rows),
        "mean_completeness": _mean([r["completeness"] for r in rows]),
        "mean_hallucination": _mean([r["hallucination"] for r in rows]),
        "mean_accuracy": _mean([r["accuracy"] for r in rows]),
        "mean_rqs": _mean([r["rqs"] for r in rows]),
        "macro_f1": _macro_f1(attribute_counts),
        "micro_f1": f1_of(summed),
        "pass_rate": pass_rate,
        "status": _status(pass_rate),
    }
    return {
        "documents": doc_rows,
        "attributes": attributes,
        "summary": summary,
        "alignments": alignments,
        "fields": fields,
    }
