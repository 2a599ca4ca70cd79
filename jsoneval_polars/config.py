"""Frozen, validated configuration (SPEC §11).

Every check names the key, the allowed values and what arrived; a misspelt key gets a
"did you mean" hint. Nothing falls back silently to a default on a bad value.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from .textfile import decode


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key."""


class Strategy(StrEnum):
    EXACT = "EXACT"
    FUZZY = "FUZZY"
    SEMANTIC = "SEMANTIC"
    NUMERIC = "NUMERIC"
    IGNORE = "IGNORE"
    DATE = "DATE"


class ListMethod(StrEnum):
    GREEDY = "greedy"
    OPTIMAL = "optimal"
    INDEX = "index"


class Compare(StrEnum):
    AUTO = "auto"  # by the GT value's kind: strings by Levenshtein, anything else exact
    EXACT = "exact"
    FUZZY = "fuzzy"


def _hint(name: str, allowed: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(name, allowed, n=1)
    return f" Hint: did you mean '{close[0]}'?" if close else ""


def _check_keys(where: str, got: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in got:
        if key not in allowed:
            prefix = f"{where}." if where else ""
            raise ConfigError(
                f"unknown config key '{prefix}{key}'; allowed: {', '.join(allowed)}."
                + _hint(str(key), allowed)
            )


def _choice(key: str, value: Any, enum: type[StrEnum]) -> Any:
    allowed = [m.value for m in enum]
    if isinstance(value, str) and value in allowed:
        return enum(value)
    if isinstance(value, str) and value.upper() in allowed and enum is Strategy:
        return enum(value.upper())
    if isinstance(value, str) and value.lower() in allowed and enum in (ListMethod, Compare):
        return enum(value.lower())
    quoted = ", ".join(f"'{a}'" for a in allowed)
    raise ConfigError(f"{key} must be one of {quoted}; got {value!r}")


def _number(key: str, value: Any, *, lo: float | None = 0.0, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{key} must be a number; got {value!r}")
    if not math.isfinite(value):  # Infinity as a weight or tolerance would make every score 1
        raise ConfigError(f"{key} must be a finite number; got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{key} must be {bounds}; got {value!r}")
    return float(value)


def _flag(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false; got {value!r}")
    return value


def _string_list(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key} must be a list of strings; got {value!r}")
    return tuple(value)


def _suggesting_init(cls):
    """Wrap a config dataclass's ``__init__`` so a misspelt keyword is a :class:`ConfigError`
    with a "did you mean" instead of a bare TypeError."""
    dataclass_init = cls.__init__
    names = tuple(f.name for f in fields(cls))

    @functools.wraps(dataclass_init)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for key in kwargs:
            if key not in names:
                raise ConfigError(
                    f"{cls.__name__}() has no field '{key}'; fields: {', '.join(names)}."
                    + _hint(key, names)
                )
        dataclass_init(self, *args, **kwargs)

    cls.__init__ = __init__
    return cls


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)  # normalizing a frozen dataclass in __post_init__


@_suggesting_init
@dataclass(frozen=True)
class MatchField:
    """One match field of a list; ``prefix`` compares only the first N characters of the
    canonical text (seed 003: the first 8 characters of an instance id)."""

    field: str
    compare: Compare = Compare.AUTO
    prefix: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.field, str):  # "" is a JSON key like any other
            raise ConfigError(f"match field must be a string; got {self.field!r}")
        _set(self, "compare", _choice(f"{self.field}.compare", self.compare, Compare))
        p = self.prefix
        if p is not None and (isinstance(p, bool) or not isinstance(p, int) or p < 1):
            raise ConfigError(f"{self.field}.prefix must be a positive integer; got {p!r}")


@_suggesting_init
@dataclass(frozen=True)
class ListConfig:
    match_fields: tuple[MatchField, ...] | None = None  # None: every scalar field of GT items
    threshold: float = 0.8
    method: ListMethod = ListMethod.GREEDY

    def __post_init__(self) -> None:
        if self.match_fields is not None:
            _set(self, "match_fields", _match_fields("match_fields", self.match_fields))
        _set(self, "threshold", _number("threshold", self.threshold, lo=0.0, hi=1.0))
        _set(self, "method", _choice("method", self.method, ListMethod))


@_suggesting_init
@dataclass(frozen=True)
class Weights:
    accuracy: float = 0.45
    completeness: float = 0.25
    safety: float = 0.15
    hallucination: float = 0.15

    def __post_init__(self) -> None:
        for f in fields(self):
            _set(self, f.name, _number(f"weights.{f.name}", getattr(self, f.name)))


@_suggesting_init
@dataclass(frozen=True)
class Config:
    """The scoring configuration (SPEC §11). Every field is checked at construction, so
    ``Config(fuzzy_threshold=5.0)`` raises the same :class:`ConfigError` as
    :func:`parse_config` would for the same value in a file."""

    field_strategies: Mapping[str, Strategy] = field(default_factory=dict)
    default_text_strategy: Strategy = Strategy.SEMANTIC
    fuzzy_threshold: float = 0.85
    semantic_threshold: float = 0.80
    rel_tol: float = 0.10
    abs_tol: float = 0.0
    weights: Weights = Weights()
    pass_threshold: float = 0.7
    lists: Mapping[str, ListConfig] = field(default_factory=dict)
    attributes: tuple[str, ...] | None = None
    empty_containers_are_null: bool = False
    null_extra_is_hallucination: bool = False
    id_field: str = "doc_id"
    date_order: str = "DMY"
    field_thresholds: Mapping[str, float] = field(default_factory=dict)
    field_weights: Mapping[str, float] = field(default_factory=dict)
    field_normalizers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    anls: bool = False
    confidence: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.field_strategies, Mapping):
            raise ConfigError(f"field_strategies must be a mapping; got {self.field_strategies!r}")
        _set(self, "field_strategies", {
            str(k): _choice(f"field_strategies.{k}", v, Strategy)
            for k, v in self.field_strategies.items()
        })
        _set(self, "default_text_strategy",
             _choice("default_text_strategy", self.default_text_strategy, Strategy))
        for key in ("fuzzy_threshold", "semantic_threshold", "pass_threshold"):
            _set(self, key, _number(key, getattr(self, key), lo=0.0, hi=1.0))
        for key in ("rel_tol", "abs_tol"):
            _set(self, key, _number(f"numeric.{key}", getattr(self, key)))
        if not isinstance(self.weights, Weights):
            raise ConfigError(f"weights must be a Weights; got {self.weights!r}")
        if not isinstance(self.lists, Mapping) or not all(
            isinstance(v, ListConfig) for v in self.lists.values()
        ):
            raise ConfigError(f"lists must map list names to ListConfig; got {self.lists!r}")
        _set(self, "lists", {str(k): v for k, v in self.lists.items()})
        if self.attributes is not None:
            _set(self, "attributes", _string_list("attributes", self.attributes))
        for key in ("empty_containers_are_null", "null_extra_is_hallucination", "anls"):
            _flag(key, getattr(self, key))
        if self.anls:
            _needs_munkres()
        if not isinstance(self.id_field, str) or not self.id_field:
            raise ConfigError(f"id_field must be a non-empty string; got {self.id_field!r}")
        _set(self, "date_order", _date_order(self.date_order))
        _set(self, "field_thresholds", _per_field(
            "field_thresholds", self.field_thresholds, lo=0.0, hi=1.0))
        _set(self, "field_weights", _per_field("field_weights", self.field_weights, lo=0.0))
        _set(self, "field_normalizers", _normalizers(self.field_normalizers))
        _set(self, "confidence", _suffix(self.confidence))

    def list_config(self, list_attribute: str) -> ListConfig:
        return self.lists.get(list_attribute, _DEFAULT_LIST)

    def per_field(self, key: str, attribute: str, bare: str | None) -> Any:
        """The ``key`` setting (a PER_FIELD_KEYS mapping) of a field: its attribute's entry,
        else its bare field name's, else None."""
        mapping = getattr(self, key)
        value = mapping.get(attribute)
        return mapping.get(bare) if value is None and bare is not None else value


_DEFAULT_LIST = ListConfig()

TOP_KEYS = (
    "field_strategies",
    "default_text_strategy",
    "fuzzy_threshold",
    "semantic_threshold",
    "numeric",
    "weights",
    "pass_threshold",
    "lists",
    "attributes",
    "empty_containers_are_null",
    "null_extra_is_hallucination",
    "id_field",
    "date_order",
    "field_thresholds",
    "field_weights",
    "field_normalizers",
    "anls",
    "confidence",
)
#: Keys only a config has: a record without an id whose keys are all TOP_KEYS, one of these
#: among them, is a config given as an input (ingest._split_record).
CONFIG_ONLY_KEYS = frozenset(k for k in TOP_KEYS if "_" in k and k != "id_field")


def _needs_munkres() -> None:
    """ANLS* matches list items with the anls-star package's own solver (anls.py)."""
    try:
        import munkres  # noqa: F401
    except ImportError:
        raise ConfigError("anls: true needs the munkres package (the solver anls-star uses): "
                          "pip install 'jsoneval_polars[anls]'") from None


def _suffix(value: Any) -> str | None:
    """The ``confidence`` key: a sibling-key suffix such as ``"_confidence"`` (or null)."""
    if value is None or (isinstance(value, str) and value):
        return value
    raise ConfigError("confidence must be a sibling-key suffix such as \"_confidence\" "
                      f"(a non-empty string); got {value!r}")

#: The named text normalizers of ``field_normalizers`` (values.normalized applies them).
NORMALIZERS = ("casefold", "nfkc", "strip_punctuation", "collapse_whitespace", "digits_only")


def _normalizers(value: Any) -> dict[str, tuple[str, ...]]:
    """Attribute or bare field name -> a list of normalizer names, applied in order."""
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"field_normalizers must be an object mapping field names to lists; got {value!r}")
    out = {}
    for name, chain in value.items():
        key = f"field_normalizers.{name}"
        if isinstance(chain, str):
            chain = [chain]
        names = _string_list(key, chain)
        for n in names:
            if n not in NORMALIZERS:
                quoted = ", ".join(f"'{a}'" for a in NORMALIZERS)
                raise ConfigError(f"{key} must list names among {quoted}; got {n!r}."
                                  + _hint(n, NORMALIZERS))
        out[str(name)] = names
    return out

#: The per-field settings: attribute path or bare field name -> value, like field_strategies.
PER_FIELD_KEYS = ("field_strategies", "field_thresholds", "field_weights", "field_normalizers")


def _per_field(key: str, value: Any, *, lo: float, hi: float | None = None) -> dict[str, float]:
    """An attribute or bare field name -> number mapping (a threshold, a weight)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be an object mapping field names to numbers; got {value!r}")
    return {str(k): _number(f"{key}.{k}", v, lo=lo, hi=hi) for k, v in value.items()}

DATE_ORDERS = ("DMY", "MDY", "YMD")


def _date_order(value: Any) -> str:
    """How NN/NN/YYYY dates read: day first (DMY), month first (MDY), or not at all (YMD)."""
    if isinstance(value, str) and value.upper() in DATE_ORDERS:
        return value.upper()
    quoted = ", ".join(f"'{a}'" for a in DATE_ORDERS)
    raise ConfigError(f"date_order must be one of {quoted}; got {value!r}")


def _match_fields(key: str, value: Any) -> tuple[MatchField, ...]:
    """A list of field names, or of objects {field, compare?, prefix?}."""
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{key} must be a list; got {value!r}")
    out = []
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if isinstance(item, MatchField):
            out.append(item)
            continue
        if isinstance(item, str):
            out.append(MatchField(item))
            continue
        if not isinstance(item, Mapping):
            raise ConfigError(f"{where} must be a field name or an object; got {item!r}")
        _check_keys(where, item, ("field", "compare", "prefix"))
        if not isinstance(item.get("field"), str):
            raise ConfigError(f"{where}.field must be a string; got {item.get('field')!r}")
        prefix = item.get("prefix")
        if prefix is not None and (isinstance(prefix, bool) or not isinstance(prefix, int)
                                   or prefix < 1):
            raise ConfigError(f"{where}.prefix must be a positive integer; got {prefix!r}")
        compare = _choice(f"{where}.compare", item.get("compare", "auto"), Compare)
        out.append(MatchField(item["field"], compare, prefix))
    return tuple(out)


def _is_plain_strategy_map(raw: Mapping[str, Any]) -> bool:
    """Seed 000's config file is a bare {field: strategy} mapping."""
    allowed = {s.value for s in Strategy}
    return bool(raw) and all(
        isinstance(v, str) and v.upper() in allowed and k not in TOP_KEYS for k, v in raw.items()
    )


def parse_config(raw: Mapping[str, Any] | Config | str | os.PathLike | None) -> Config:
    """Validate a config mapping (SPEC §11) and return a frozen :class:`Config`; a path is
    a config file, read by :func:`load_config`."""
    if raw is None:
        return Config()
    if isinstance(raw, Config):
        return raw
    if isinstance(raw, (str, os.PathLike)):
        return load_config(raw)
    if not isinstance(raw, Mapping):
        raise ConfigError(f"config must be a JSON object; got {type(raw).__name__}")
    if _is_plain_strategy_map(raw):
        raw = {"field_strategies": dict(raw)}
    _check_keys("", raw, TOP_KEYS)
    kw: dict[str, Any] = {}

    strategies = raw.get("field_strategies", {})
    if not isinstance(strategies, Mapping):
        raise ConfigError(f"field_strategies must be an object; got {strategies!r}")
    kw["field_strategies"] = {
        str(k): _choice(f"field_strategies.{k}", v, Strategy) for k, v in strategies.items()
    }
    if "default_text_strategy" in raw:
        kw["default_text_strategy"] = _choice(
            "default_text_strategy", raw["default_text_strategy"], Strategy
        )
    for key in ("fuzzy_threshold", "semantic_threshold", "pass_threshold"):
        if key in raw:
            kw[key] = _number(key, raw[key], lo=0.0, hi=1.0)

    numeric = raw.get("numeric", {})
    if not isinstance(numeric, Mapping):
        raise ConfigError(f"numeric must be an object; got {numeric!r}")
    _check_keys("numeric", numeric, ("rel_tol", "abs_tol"))
    for key in ("rel_tol", "abs_tol"):
        if key in numeric:
            kw[key] = _number(f"numeric.{key}", numeric[key])

    weights = raw.get("weights", {})
    if not isinstance(weights, Mapping):
        raise ConfigError(f"weights must be an object; got {weights!r}")
    names = ("accuracy", "completeness", "safety", "hallucination")
    _check_keys("weights", weights, names)
    kw["weights"] = Weights(
        **{k: _number(f"weights.{k}", weights[k]) for k in names if k in weights}
    )

    lists = raw.get("lists", {})
    if not isinstance(lists, Mapping):
        raise ConfigError(f"lists must be an object; got {lists!r}")
    parsed_lists = {}
    for name, spec in lists.items():
        where = f"lists.{name}"
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where} must be an object; got {spec!r}")
        _check_keys(where, spec, ("match_fields", "threshold", "method"))
        lkw: dict[str, Any] = {}
        if "match_fields" in spec:
            lkw["match_fields"] = _match_fields(f"{where}.match_fields", spec["match_fields"])
        if "threshold" in spec:
            lkw["threshold"] = _number(f"{where}.threshold", spec["threshold"], lo=0.0, hi=1.0)
        if "method" in spec:
            lkw["method"] = _choice(f"{where}.method", spec["method"], ListMethod)
        parsed_lists[str(name)] = ListConfig(**lkw)
    kw["lists"] = parsed_lists

    if raw.get("attributes") is not None:
        kw["attributes"] = _string_list("attributes", raw["attributes"])
    for key in ("empty_containers_are_null", "null_extra_is_hallucination", "anls"):
        if key in raw:
            kw[key] = _flag(key, raw[key])
    if "id_field" in raw:
        if not isinstance(raw["id_field"], str) or not raw["id_field"]:
            raise ConfigError(f"id_field must be a non-empty string; got {raw['id_field']!r}")
        kw["id_field"] = raw["id_field"]
    if "date_order" in raw:
        kw["date_order"] = _date_order(raw["date_order"])
    if "field_thresholds" in raw:
        kw["field_thresholds"] = _per_field(
            "field_thresholds", raw["field_thresholds"], lo=0.0, hi=1.0)
    if "field_weights" in raw:
        kw["field_weights"] = _per_field("field_weights", raw["field_weights"], lo=0.0)
    if "field_normalizers" in raw:
        kw["field_normalizers"] = _normalizers(raw["field_normalizers"])
    if "confidence" in raw:
        kw["confidence"] = _suffix(raw["confidence"])
    return Config(**kw)


def load_config(path: str | Path) -> Config:
    """Read a JSON (or YAML/TOML, when the file ends so) config file."""
    path = Path(path)
    try:
        text = decode(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except ValueError as exc:  # UTF-16, invalid UTF-8
        raise ConfigError(f"{path}: {exc}") from None
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            import yaml  # optional: only needed for YAML configs

            raw = yaml.safe_load(text)
        elif suffix == ".toml":
            import tomllib

            raw = tomllib.loads(text)
        else:
            raw = json.loads(text)
    except ImportError:
        raise ConfigError(f"{path}: reading YAML needs PyYAML (pip install pyyaml)") from None
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        raise ConfigError(f"{path}: not a valid config file: {exc}") from None
    if raw is None:  # an empty YAML file or a JSON `null`: not "the defaults" by accident
        raise ConfigError(f"{path}: the config is null; write {{}} for the defaults")
    try:
        return parse_config(raw)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _path_members(attribute: str) -> list[str]:
    """The member names of an attribute path (``a."b.c"[].d`` -> ``a``, ``b.c``, ``d``)."""
    members, current, quoted, i = [], "", False, 0
    while i < len(attribute):
        ch = attribute[i]
        if quoted:
            if ch == "\\" and i + 1 < len(attribute):
                current += attribute[i + 1]
                i += 1
            elif ch == '"':
                quoted = False
            else:
                current += ch
        elif ch == '"':
            quoted = True
        elif ch == ".":
            members.append(current)
            current = ""
        elif attribute.startswith("[]", i):
            i += 1
        else:
            current += ch
        i += 1
    members.append(current)
    return [m for m in members if m]


def unmatched_names(config: Config, attributes: list[str]) -> list[str]:
    """Names in ``config`` that match nothing in the scored data, one message each with the
    closest name seen: a ``field_strategies`` entry (an attribute or a bare field name) and a
    ``lists`` entry (a list attribute). Only the data reveals these, so they are warnings."""
    attrs = set(attributes)
    bare = {m for a in attributes for m in _path_members(a)[-1:]}
    lists = {a.split("[]")[0] for a in attributes if "[]" in a}
    lists |= {a[: i] for a in attributes for i in range(len(a)) if a.startswith("[]", i)}
    messages = []
    for key in PER_FIELD_KEYS:
        for name in getattr(config, key):
            if name not in attrs and name not in bare:
                messages.append(
                    f"{key} names '{name}', which occurs in no document."
                    + _hint(name, sorted(attrs | bare))
                )
    for name in config.lists:
        if name not in lists:
            messages.append(
                f"lists names '{name}', which is no list of records in any document."
                + _hint(name, sorted(lists))
            )
    return messages
