"""The streaming, multi-process path (stream.score_files) equals a whole-dataset evaluate().

Every value must be identical except float sums over many documents (an attribute's
sum_similarity, hence mean_similarity), compared to 1e-12: they are added batch by batch here and
in one pass there, and float addition is not associative.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from importlib import resources
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from jsoneval_polars import InputError, evaluate, load_config
from jsoneval_polars import stream
from jsoneval_polars.stream import score_files

SAMPLE = Path(str(resources.files("jsoneval_polars.sample")))
CONFIG = load_config(SAMPLE / "config.json")


def assert_same_run(whole, streamed) -> None:
    for name in ("documents", "fields", "alignments", "attributes"):
        a, b = getattr(whole, name), getattr(streamed, name)
        assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
        summed = {"sum_similarity", "mean_similarity"} if name == "attributes" else set()
        exact = [c for c in a.columns if c not in summed]
        assert_frame_equal(a.select(exact), b.select(exact), check_exact=True)
    assert sorted(whole.errors.rows(), key=repr) == sorted(streamed.errors.rows(), key=repr)
    assert_same_summary(whole.summary, streamed.summary)


def assert_same_summary(whole: dict, streamed: dict) -> None:
    for key, value in whole.items():
        if isinstance(value, float):
            assert streamed[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert streamed[key] == value, key


@pytest.fixture
def shuffled(tmp_path: Path) -> tuple[Path, Path]:
    """The sample with the AIO lines reordered, so pairs meet across batches and scan chunks,
    plus duplicates, records without an id, bad JSON and an AIO string root."""
    gt_lines = (SAMPLE / "gt.ndjson").read_text().splitlines()
    aio_lines = (SAMPLE / "aio.ndjson").read_text().splitlines()
    random.Random(7).shuffle(aio_lines)
    gt_lines[10:10] = [gt_lines[3], '{"no_id": 1}', "{broken"]
    aio_lines[50:50] = [aio_lines[5], '{"doc_id": "doc-0000009", "x": 1}', '"a string root"', ""]
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text("\n".join(gt_lines) + "\n")
    aio.write_text("\n".join(aio_lines))  # no newline at the end
    return gt, aio


@pytest.mark.parametrize("batch_size", [1, 37, 100_000])
def test_stream_equals_whole_run(shuffled, tmp_path, monkeypatch, batch_size):
    monkeypatch.setattr(stream, "CHUNK_BYTES", 20_000)  # several scan chunks per file
    gt, aio = shuffled
    whole = evaluate(gt, aio, config=CONFIG)
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2,
                           batch_size=batch_size)
    assert_same_run(whole, streamed)
    parts = sorted((tmp_path / "out" / "documents").glob("*.parquet"))
    sizes = [pl.read_parquet(p).height for p in parts]
    assert sum(sizes) == whole.documents.height
    assert max(sizes) <= batch_size and len(parts) >= 2  # both workers get a batch


def test_stream_messy_input_and_metadata(messy, tmp_path):
    gt, aio = messy
    streamed = score_files(gt, aio, tmp_path / "out", workers=2, batch_size=2)
    assert_same_run(evaluate(gt, aio), streamed)


def test_stream_workers_share_the_recursion_limit(messy, tmp_path):
    """IPython raises the limit to 3000: the 1,100-deep document is then scorable here, and the
    spawned workers must agree."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)
    try:
        whole = evaluate(*messy)
        streamed = score_files(*messy, tmp_path / "out", workers=2, batch_size=2)
    finally:
        sys.setrecursionlimit(previous)
    assert "deep" in whole.documents["doc_id"].to_list()
    assert_same_run(whole, streamed)


def test_stream_positional_pairing_without_ids(tmp_path):
    gt = tmp_path / "gt.ndjson"
    aio = tmp_path / "aio.ndjson"
    gt.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    aio.write_text('{"a": 1}\nnot json\n{"a": 5}\n')
    assert_same_run(evaluate(gt, aio), score_files(gt, aio, tmp_path / "o", batch_size=2))


def test_stream_metadata_columns(tmp_path):
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text("".join(json.dumps({"doc_id": str(i), "a": i}) + "\n" for i in range(9)))
    aio.write_text("".join(
        json.dumps({"doc_id": str(i), "a": i % 3, "model": "m" + str(i % 2)}) + "\n"
        for i in range(9)
    ))
    whole = evaluate(gt, aio, metadata=["model"])
    streamed = score_files(gt, aio, tmp_path / "o", metadata=["model"], batch_size=4)
    assert_same_run(whole, streamed)
    assert streamed.documents["model"].to_list() == whole.documents["model"].to_list()


def test_stream_empty_inputs(tmp_path):
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text("")
    aio.write_text("\n")
    streamed = score_files(gt, aio, tmp_path / "o")
    whole = evaluate(gt, aio)
    assert streamed.summary["n_documents"] == 0
    assert streamed.documents.columns == whole.documents.columns
    assert streamed.fields.columns == whole.fields.columns


def test_stream_replaces_an_earlier_single_file_run(tmp_path):
    gt, aio = SAMPLE / "gt.ndjson", SAMPLE / "aio.ndjson"
    evaluate(gt, aio, config=CONFIG).write(tmp_path)
    assert (tmp_path / "fields.parquet").is_file()
    streamed = score_files(gt, aio, tmp_path, config=CONFIG, batch_size=100)
    assert not (tmp_path / "fields.parquet").exists()
    assert streamed.fields.height == evaluate(gt, aio, config=CONFIG).fields.height


def test_stream_rejects_what_it_cannot_stream(tmp_path):
    array = tmp_path / "a.json"
    array.write_text('[{"doc_id": "1"}]')
    with pytest.raises(InputError, match=r"a\.json holds a JSON array"):
        score_files(array, SAMPLE / "aio.ndjson", tmp_path / "o")
    with pytest.raises(InputError, match="does not exist"):
        score_files(tmp_path / "missing.ndjson", SAMPLE / "aio.ndjson", tmp_path / "o")
    with pytest.raises(InputError, match="streaming scores NDJSON files"):
        score_files([{"doc_id": "1"}], SAMPLE / "aio.ndjson", tmp_path / "o")


def test_stream_strict_names_file_and_line(messy, tmp_path):
    gt, aio = messy
    with pytest.raises(InputError, match=r"gt\.ndjson, line 3: not valid JSON"):
        score_files(gt, aio, tmp_path / "o", strict=True)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jsoneval_polars", *args],
                          capture_output=True, text=True, check=False)


def test_cli_stream_matches_whole_run(shuffled, tmp_path):
    gt, aio = shuffled
    config = str(SAMPLE / "config.json")
    streamed = _cli("score", "--gt", str(gt), "--aio", str(aio), "--config", config, "--out",
                    str(tmp_path / "s"), "--stream", "--workers", "2", "--batch-size", "50",
                    "--json")
    whole = _cli("score", "--gt", str(gt), "--aio", str(aio), "--config", config, "--out",
                 str(tmp_path / "w"), "--json")
    assert streamed.returncode == 0, streamed.stderr
    assert_same_summary(json.loads(whole.stdout), json.loads(streamed.stdout))
    assert pl.read_parquet(tmp_path / "s" / "fields" / "*.parquet").height == pl.read_parquet(
        tmp_path / "w" / "fields.parquet"
    ).height


def test_cli_stream_refuses_options_it_does_not_take(tmp_path):
    proc = _cli("score", "--sample", "--out", str(tmp_path), "--stream", "--by", "model")
    assert proc.returncode == 2
    assert "--stream does not take --by" in proc.stderr
