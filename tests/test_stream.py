"""The files driver (stream.score_files): batches, scan chunks and batch threads give the
tables of a whole-dataset evaluate() (compared by driver_runs.assert_same_run), messy input
included; the results directory is replaced whole or not at all; ``--stream`` is a no-op.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

import polars as pl
import pytest
from driver_runs import Run, assert_same_run

from jsoneval_polars import (
    InputError, evaluate, file_ranges, ingest, load_config, pair_plan, stream,
)
from jsoneval_polars.results import read_results
from jsoneval_polars.stream import score_files

SAMPLE = Path(str(resources.files("jsoneval_polars.sample")))
CONFIG = load_config(SAMPLE / "config.json")


def assert_same_files_run(whole, streamed) -> None:
    """The one comparison of two runs (driver_runs.py), and the same error rows."""
    assert_same_run(Run.of(streamed), Run.of(whole))
    assert sorted(whole.errors.rows(), key=repr) == sorted(streamed.errors.rows(), key=repr)


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
    assert_same_files_run(whole, streamed)
    parts = sorted((tmp_path / "out" / "documents").glob("*.parquet"))
    sizes = [pl.read_parquet(p).height for p in parts]
    assert sum(sizes) == whole.documents.height
    assert max(sizes) <= batch_size and len(parts) >= 2  # both workers get a batch


def test_stream_messy_input_and_metadata(messy, tmp_path):
    gt, aio = messy
    streamed = score_files(gt, aio, tmp_path / "out", workers=2, batch_size=2)
    assert_same_files_run(evaluate(gt, aio), streamed)


def test_stream_threads_share_the_recursion_limit(messy, tmp_path):
    """IPython raises the limit to 3000: the 1,100-deep document is then scorable here, and the
    batch threads must agree (their stacks hold it)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)
    try:
        whole = evaluate(*messy)
        streamed = score_files(*messy, tmp_path / "out", workers=2, batch_size=2)
    finally:
        sys.setrecursionlimit(previous)
    assert "deep" in whole.documents["doc_id"].to_list()
    assert_same_files_run(whole, streamed)


def _pairing_errors(result) -> list[tuple]:
    rows = result.errors.filter(pl.col("error").str.contains("duplicate|has no"))
    return rows.select("source", "line", "doc_id", "error").rows()


@pytest.mark.parametrize("bucket_records", [3, 40])
def test_stream_pairs_in_spilled_buckets(shuffled, tmp_path, monkeypatch, bucket_records):
    """Hash buckets on disk give the whole run (both files in their own order, duplicates,
    records without an id, one-sided documents), the pairing error rows in the same order as
    pairing at once, and leave no spill files."""
    monkeypatch.setattr(stream, "CHUNK_BYTES", 20_000)
    gt, aio = shuffled
    at_once = score_files(gt, aio, tmp_path / "at_once", config=CONFIG, batch_size=50)
    spills = []
    pair = pair_plan.PairPlan.pair

    def spy(self, *args):
        n = pair(self, *args)
        spills.append((self.buckets, sorted(p.name for p in self.dir.iterdir())))
        return n

    monkeypatch.setattr(pair_plan.PairPlan, "pair", spy)
    monkeypatch.setattr(pair_plan, "BUCKET_RECORDS", bucket_records)
    out = tmp_path / "runs" / "spilled"
    spilled = score_files(gt, aio, out, config=CONFIG, workers=2, batch_size=50)
    buckets, names = spills[0]
    assert buckets == -(-len(gt.read_text().splitlines()) // bucket_records) > 1
    assert {f"plan-{k}.arrow" for k in range(buckets)} <= set(names)
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), spilled)
    assert _pairing_errors(spilled) == _pairing_errors(at_once) != []
    assert sorted(p.name for p in out.parent.iterdir()) == ["spilled"]  # spill dir removed


def test_stream_spill_is_removed_on_error(shuffled, tmp_path, monkeypatch):
    monkeypatch.setattr(pair_plan, "BUCKET_RECORDS", 10)
    gt, aio = shuffled
    gt.write_text(gt.read_text().replace("{broken\n", ""))  # the first error: a duplicate id
    with pytest.raises(InputError, match=r"gt\.ndjson, line 11 \(doc_id '.+'\): duplicate"):
        score_files(gt, aio, tmp_path / "runs" / "o", config=CONFIG, strict=True)
    assert not any((tmp_path / "runs").glob(".jsoneval-spill-*"))


def test_stream_positional_pairing_in_buckets(tmp_path, monkeypatch):
    """A side without ids pairs by position: the buckets are read back in line order."""
    monkeypatch.setattr(pair_plan, "BUCKET_RECORDS", 2)
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text("".join(json.dumps({"doc_id": f"d{i}", "a": i}) + "\n" for i in range(9)))
    aio.write_text("".join(json.dumps({"a": i % 4}) + "\n" for i in range(7)) + "{bad\n")
    streamed = score_files(gt, aio, tmp_path / "o", batch_size=2)
    assert_same_files_run(evaluate(gt, aio), streamed)
    assert streamed.documents.height == 9


def test_stream_positional_pairing_without_ids(tmp_path):
    gt = tmp_path / "gt.ndjson"
    aio = tmp_path / "aio.ndjson"
    gt.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    aio.write_text('{"a": 1}\nnot json\n{"a": 5}\n')
    assert_same_files_run(evaluate(gt, aio), score_files(gt, aio, tmp_path / "o", batch_size=2))


def test_stream_metadata_columns(tmp_path):
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text("".join(json.dumps({"doc_id": str(i), "a": i}) + "\n" for i in range(9)))
    aio.write_text("".join(
        json.dumps({"doc_id": str(i), "a": i % 3, "model": "m" + str(i % 2)}) + "\n"
        for i in range(9)
    ))
    whole = evaluate(gt, aio, metadata=["model"])
    streamed = score_files(gt, aio, tmp_path / "o", metadata=["model"], batch_size=4)
    assert_same_files_run(whole, streamed)
    assert streamed.documents["model"].to_list() == whole.documents["model"].to_list()


@pytest.mark.parametrize("gt_text, aio_text", [("", "\n"), ("", ""), ("\n", "")])
def test_stream_empty_inputs(tmp_path, gt_text, aio_text):
    """No record on either side, down to two files of no bytes (no chunk is scanned)."""
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text(gt_text)
    aio.write_text(aio_text)
    streamed = score_files(gt, aio, tmp_path / "o")
    whole = evaluate(gt, aio)
    assert streamed.summary["n_documents"] == 0
    assert streamed.documents.columns == whole.documents.columns
    assert streamed.fields.columns == whole.fields.columns


def test_a_run_replaces_every_table_of_an_earlier_layout(tmp_path):
    """No leftover of a previous run survives, whatever layout it had; files that are not
    part of a run are left alone."""
    gt, aio = SAMPLE / "gt.ndjson", SAMPLE / "aio.ndjson"
    evaluate(gt, aio, config=CONFIG).fields.write_parquet(tmp_path / "fields.parquet")
    (tmp_path / "summary" / "run_id=a").mkdir(parents=True)  # an older per-partition summary
    (tmp_path / "summary" / "run_id=a" / "summary.json").write_text("{}")
    (tmp_path / "attributes_by.parquet").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("mine")
    labelled = tmp_path / "labelled.ndjson"
    labelled.write_text("".join(
        json.dumps({**json.loads(line), "model": f"m{i % 2}"}) + "\n"
        for i, line in enumerate(aio.read_text().splitlines())
    ))
    score_files(gt, labelled, tmp_path, config=CONFIG, metadata=["model"],
                partition_by="model", batch_size=100)
    assert (tmp_path / "documents" / "model=m1").is_dir()
    streamed = score_files(gt, aio, tmp_path, config=CONFIG, batch_size=100)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "alignments", "attributes", "counts", "documents", "errors", "fields", "labelled.ndjson",
        "manifest.json", "notes.txt", "summary.json",
    ]
    assert not any(p.name.startswith("model=") for p in tmp_path.rglob("*"))
    assert streamed.fields.height == evaluate(gt, aio, config=CONFIG).fields.height


def test_a_failed_run_leaves_the_previous_one_intact(tmp_path):
    gt, aio = SAMPLE / "gt.ndjson", SAMPLE / "aio.ndjson"
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"doc_id": "1"}\n{broken\n')
    first = score_files(gt, aio, tmp_path, config=CONFIG)
    before = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(InputError):
        score_files(bad, aio, tmp_path, config=CONFIG, strict=True)
    after = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # nothing half-written, no staging folder left
    assert first.summary == read_results(tmp_path).summary


def test_stream_rejects_what_it_cannot_stream(tmp_path):
    table = tmp_path / "a.parquet"
    pl.DataFrame({"doc_id": ["1"]}).write_parquet(table)
    with pytest.raises(InputError, match=r"streaming reads NDJSON; score \.parquet files"):
        score_files(table, SAMPLE / "aio.ndjson", tmp_path / "o")
    with pytest.raises(InputError, match="does not exist"):
        score_files(tmp_path / "missing.ndjson", SAMPLE / "aio.ndjson", tmp_path / "o")
    with pytest.raises(InputError, match="streaming scores NDJSON files"):
        score_files([{"doc_id": "1"}], SAMPLE / "aio.ndjson", tmp_path / "o")


def test_stream_strict_names_file_and_line(messy, tmp_path):
    gt, aio = messy
    with pytest.raises(InputError, match=r"gt\.ndjson, line 3: not valid JSON"):
        score_files(gt, aio, tmp_path / "o", strict=True)
    assert not (tmp_path / "o").exists()  # the run made it, and leaves no empty one behind
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    with pytest.raises(InputError):
        score_files(gt, aio, tmp_path / "kept", strict=True)
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["notes.txt"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jsoneval_polars", *args],
                          capture_output=True, text=True, check=False)


def test_cli_batches_match_one_whole_batch(shuffled, tmp_path):
    gt, aio = shuffled
    config = str(SAMPLE / "config.json")
    batched = _cli("score", "--gt", str(gt), "--aio", str(aio), "--config", config, "--out",
                   str(tmp_path / "s"), "--workers", "2", "--batch-size", "50", "--json")
    whole = _cli("score", "--gt", str(gt), "--aio", str(aio), "--config", config, "--out",
                 str(tmp_path / "w"), "--workers", "1", "--batch-size", "100000", "--json")
    assert batched.returncode == 0, batched.stderr
    assert whole.returncode == 0, whole.stderr
    assert json.loads(batched.stdout) == read_results(tmp_path / "s").summary
    assert_same_run(Run.of(read_results(tmp_path / "s")), Run.of(read_results(tmp_path / "w")))


def test_cli_stream_is_a_deprecated_no_op(tmp_path):
    proc = _cli("score", "--sample", "--out", str(tmp_path / "a"), "--stream", "--json")
    plain = _cli("score", "--sample", "--out", str(tmp_path / "b"), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "--stream is deprecated and has no effect" in proc.stderr
    assert json.loads(proc.stdout) == json.loads(plain.stdout)


def test_a_pool_keeps_the_kernels_freed_pages_while_it_lasts(monkeypatch):
    """DECISIONS 117: while a pool of batch threads lasts (nested or not) the kernel's
    allocator keeps the pages it frees (mimalloc's purge delay -1); the setting before comes
    back when the last pool ends, and a user's own MIMALLOC_PURGE_DELAY is left alone."""
    from jsoneval_polars import _native
    from jsoneval_polars.batch_threads import thread_pool

    monkeypatch.delenv("MIMALLOC_PURGE_DELAY", raising=False)
    before = _native.purge_delay(250)  # a setting of the test's own, to see it come back
    try:
        with thread_pool(2) as pool, thread_pool(1):
            during = pool.submit(_native.purge_delay, -1).result()
        after = _native.purge_delay(250)
        monkeypatch.setenv("MIMALLOC_PURGE_DELAY", "25")
        with thread_pool(2):
            users = _native.purge_delay(250)
    finally:
        _native.purge_delay(before)
    assert (during, after, users) == (-1, 250, 250)


@pytest.mark.parametrize("kernel", [True, False])
def test_ranges_are_numbered_by_the_line_ends_before_them(tmp_path, monkeypatch, kernel):
    """Each range is scanned without knowing where its lines start; the run numbers it by the
    line ends the ranges before it reported (the kernel's, or Python's without the
    extension's path). Bad lines, blank lines and records without an id spread over many small
    ranges give the error rows, with their line numbers, of the file scanned whole."""
    from jsoneval_polars import flatten

    if not kernel:
        monkeypatch.setattr(flatten, "KERNEL", "python")
    rng = random.Random(11)
    lines = []
    for i in range(400):
        lines.append(rng.choice(['{"doc_id": "d%d", "a": "%s"}' % (i, "x" * rng.randrange(300)),
                                 "", "{broken", '{"a": 1}', '"a string root"']))
    gt = tmp_path / "gt.ndjson"
    gt.write_text("\n".join(lines))  # no line end at the end
    aio = tmp_path / "aio.ndjson"
    aio.write_text("".join(json.dumps({"doc_id": f"d{i}", "a": "x"}) + "\n" for i in range(400)))
    whole = score_files(gt, aio, tmp_path / "whole")
    monkeypatch.setattr(stream, "CHUNK_BYTES", 300)
    assert len(stream.byte_ranges(gt, stream.CHUNK_BYTES)) > 40
    ranged = score_files(gt, aio, tmp_path / "ranged", workers=2)
    rows = sorted(ranged.errors.select("source", "line", "doc_id", "error").rows(), key=repr)
    assert rows == sorted(whole.errors.select("source", "line", "doc_id", "error").rows(),
                          key=repr)
    bad = [i + 1 for i, line in enumerate(lines) if line in ("{broken", '"a string root"')]
    assert sorted(ranged.errors.filter(pl.col("source") == "gt")["line"].unique()) == sorted(
        set(bad) | {i + 1 for i, line in enumerate(lines) if line == '{"a": 1}'})
    assert_same_files_run(whole, ranged)


def test_expected_lines_are_exact_up_to_the_sample(tmp_path, monkeypatch):
    """The pairing's buckets are sized by the lines of a file's first LINES_SAMPLE bytes:
    exact for a file no larger (a last line without its line end counted too), scaled by the
    file's size beyond."""
    path = tmp_path / "f.ndjson"
    for text, n in [(b"", 0), (b"{}", 1), (b"{}\n", 1), (b"{}\n\n{}", 3), (b"a\nb\n", 2)]:
        path.write_bytes(text)
        assert file_ranges.expected_lines(path) == n
    path.write_bytes((b"y" * 99 + b"\n") * 1000)
    monkeypatch.setattr(file_ranges, "LINES_SAMPLE", 10_000)
    assert 1000 <= file_ranges.expected_lines(path) <= 1010


def test_table_inputs_are_scored_a_batch_at_a_time(tmp_path, monkeypatch):
    """Parquet inputs (the command line's tables): each batch's tables are written as parts
    once scored (stream.score_tables), never the whole run's tables at once; the directory
    equals evaluate() + write() with slices, Hive partitions and bootstrap intervals; inputs
    the text path does not read (a struct column) take evaluate() and are written whole."""
    from jsoneval_polars.stream import score_tables

    rows = []
    for i in range(60):
        doc = {"name": f"Item {i}", "total": i * 1.5, "lines": [{"sku": f"S{j}"} for j in
                                                                 range(i % 4)]}
        rows.append((f"d{i}", doc, {**doc, "name": f"item {i}" if i % 3 else "x"},
                     f"m{i % 3}"))
    gt = pl.DataFrame({"doc_id": [r[0] for r in rows], "json": [json.dumps(r[1]) for r in rows]})
    aio = pl.DataFrame({"doc_id": [r[0] for r in rows], "json": [json.dumps(r[2]) for r in rows],
                        "model": [r[3] for r in rows]})
    gt.write_parquet(tmp_path / "gt.parquet")
    aio.write_parquet(tmp_path / "aio.parquet")
    options = {"metadata": ["model"], "bootstrap": 40, "seed": 3, "json_column": "json"}
    want = read_results(evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet",
                                 **options).write(tmp_path / "want", partition_by="model",
                                                  by=["model"]))

    def whole(*args, **kwargs):
        raise AssertionError("plain tables took evaluate()")

    monkeypatch.setattr(stream, "evaluate", whole)
    got = score_tables(tmp_path / "gt.parquet", tmp_path / "aio.parquet", tmp_path / "got",
                       batch_size=9, partition_by="model", by=["model"], **options)
    assert_same_run(Run.of(got), Run.of(want))
    assert pl.read_parquet(tmp_path / "got" / "attributes_by" / "*.parquet").equals(
        pl.read_parquet(tmp_path / "want" / "attributes_by" / "*.parquet"))
    assert got.errors.equals(want.errors)
    assert len(list((tmp_path / "got" / "fields").rglob("*.parquet"))) > 3
    assert sorted(p.name for p in (tmp_path / "got" / "documents").iterdir()) == [
        "model=m0", "model=m1", "model=m2"]
    monkeypatch.undo()
    structs = pl.DataFrame({"doc_id": [r[0] for r in rows], "json": [r[1] for r in rows]})
    got = score_tables(structs, structs, tmp_path / "structs")
    assert got.summary["pass_rate"] == 1.0 and got.summary["n_documents"] == 60


@pytest.mark.parametrize("driver", ["score_tables", "evaluate", "score_files"])
def test_batches_are_scored_on_threads(tmp_path, monkeypatch, driver):
    """Table inputs, evaluate() and small NDJSON files score their batches on threads at once
    (the first two batches meet at a barrier, which times out if they ran one after the
    other) and give the run of one thread; a semantic scorer of the user's own is called from
    one thread only."""
    import threading

    from jsoneval_polars import pipeline
    from jsoneval_polars.stream import score_tables

    gt = pl.DataFrame({"doc_id": [f"d{i}" for i in range(40)],
                       "json": [json.dumps({"name": f"Item {i}", "note": f"red box {i}",
                                            "items": [{"sku": f"S{j}"} for j in range(i % 3)]})
                                for i in range(40)]})
    aio = gt.with_columns(pl.col("json").str.replace("Item", "item").str.replace("red", "blue"))
    config = {"field_strategies": {"note": "SEMANTIC"}}
    module = pipeline if driver == "evaluate" else stream

    files = {}
    for side, frame in (("gt", gt), ("aio", aio)):
        files[side] = tmp_path / f"{side}.ndjson"
        files[side].write_text("".join(
            json.dumps({"doc_id": i, **json.loads(t)}) + "\n"
            for i, t in frame.select("doc_id", "json").iter_rows()))

    def run(name: str, **options):
        if driver == "score_tables":
            return Run.of(score_tables(gt, aio, tmp_path / name, config=config, batch_size=5,
                                       **options))
        if driver == "score_files":  # small files: threads, unless workers are asked for
            options.pop("workers")
            return Run.of(score_files(files["gt"], files["aio"], tmp_path / name,
                                      config=config, batch_size=5, **options))
        return Run.of(evaluate(gt, aio, config=config, batch_size=5, **options))

    one = run("one", workers=1) if driver != "score_files" else Run.of(score_files(
        files["gt"], files["aio"], tmp_path / "one", config=config, batch_size=5, workers=1))
    barrier, threads, real = threading.Barrier(2, timeout=20), set(), module.score_batch

    def meeting(pairs, *args, **kwargs):
        threads.add(threading.get_ident())
        if len(threads) <= 2 and not barrier.broken:
            barrier.wait()
        return real(pairs, *args, **kwargs)

    monkeypatch.setattr(module, "score_batch", meeting)
    two = run("two", workers=2)
    assert len(threads) == 2 and threading.get_ident() not in threads
    assert_same_run(two, one)
    monkeypatch.undo()

    callers = set()

    def own_scorer(a, b):
        callers.add(threading.get_ident())
        return [float(x == y) for x, y in zip(a, b)]

    own = run("own", workers=2, semantic_scorer=own_scorer)
    assert callers == {threading.get_ident()}
    assert own.summary["n_documents"] == 40


def test_collector_pause_is_counted_across_threads():
    """Two batches' pauses overlap: the collector resumes when the last one ends."""
    import gc

    from jsoneval_polars.core import collector_paused

    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


@pytest.mark.parametrize("suffix", ["parquet", "arrow"])
def test_table_files_are_read_a_record_batch_at_a_time(tmp_path, monkeypatch, suffix):
    """A Parquet or Arrow file's texts are spilled beside the results a record batch at a
    time (table_texts, here 7 rows a batch) and read back by offset: the run equals evaluate()
    of the same files (which reads them whole) with null cells, text that is not JSON, NaN,
    a row without an id, metadata and a one-sided document spread over the batches; the spill
    is gone when the run ends, also when a strict run stops at its first bad row."""
    from jsoneval_polars import table_texts
    from jsoneval_polars.stream import score_tables

    monkeypatch.setattr(table_texts, "CHUNK_ROWS", 7)
    monkeypatch.setattr(table_texts, "SPILL_ABOVE", 0)  # these files are spilled
    spilled = []
    monkeypatch.setattr(table_texts, "spill_file", lambda *a, _f=table_texts.spill_file:
                        spilled.append(a[1]) or _f(*a))
    n = 40
    texts = [json.dumps({"name": f"Item {i}", "total": i, "tags": ["a", f"t{i % 3}"]})
             for i in range(n)]
    ids: list[str | None] = [f"d{i}" for i in range(n)]
    gt_texts, aio_texts = list(texts), [t.replace("Item", "item") for t in texts]
    gt_texts[6], aio_texts[7], aio_texts[13] = None, "{not json", '{"total": NaN}'
    aio_texts[20] = "\u00e9t\u00e9 " + aio_texts[20]  # text before the object
    ids[30] = None
    for side, cells, rows in (("gt", gt_texts, range(n)), ("aio", aio_texts, range(n - 1))):
        frame = pl.DataFrame({"doc_id": [ids[i] for i in rows],
                              "json": [cells[i] for i in rows],
                              "model": [f"m{i % 2}" for i in rows]},
                             schema={"doc_id": pl.String, "json": pl.String,
                                     "model": pl.String})
        path = tmp_path / f"{side}.{suffix}"
        if suffix == "parquet":
            frame.write_parquet(path, row_group_size=11)
        else:
            frame.write_ipc(path)
    gt, aio = tmp_path / f"gt.{suffix}", tmp_path / f"aio.{suffix}"
    options = {"json_column": "json", "metadata": ["model"]}
    got = score_tables(gt, aio, tmp_path / "out" / "got", batch_size=9, **options)
    want = read_results(evaluate(gt, aio, **options).write(tmp_path / "want"))
    assert_same_run(Run.of(got), Run.of(want))
    assert got.errors.equals(want.errors) and got.errors.height >= 4
    assert spilled == ["json", "json"]
    assert not list(tmp_path.rglob(".jsoneval-tables-*"))
    with pytest.raises(InputError, match=r"gt\.\w+, line 7 \(doc_id 'd6'\): column 'json' is null"):
        score_tables(gt, aio, tmp_path / "out" / "strict", strict=True, **options)
    assert not list(tmp_path.rglob(".jsoneval-tables-*"))


def test_an_early_scan_is_what_the_run_reads(shuffled, tmp_path, monkeypatch):
    """The command's first pass (file_ranges.EarlyScan, started before Polars loads) gives the
    run its ranges: the run reads none itself, and its tables are a whole run's."""
    gt, aio = shuffled
    read, done, own = file_ranges.read_range, threading.Semaphore(0), []

    def early_read(*args):
        try:
            return read(*args)
        finally:
            done.release()

    monkeypatch.setattr(file_ranges, "read_range", early_read)
    monkeypatch.setattr(ingest, "read_range", lambda *args: own.append(args) or read(*args))
    early = file_ranges.EarlyScan([(gt, None), (aio, None)], "doc_id", threads=1)
    assert all(done.acquire(timeout=60) for _ in range(2))  # one range a file
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2,
                           early_scan=early)
    early.close()
    assert own == []
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


@pytest.mark.parametrize("change", ["file rewritten", "id field", "content field", "ranges"])
def test_an_early_scan_of_anything_else_is_not_taken(shuffled, tmp_path, monkeypatch, change):
    """A range is taken only for the same bytes read the same way: a file changed since, another
    id or content field, other range bounds all read the files again, with the same tables."""
    gt, aio = shuffled
    field = "doc" if change == "content field" else None
    early = file_ranges.EarlyScan([(gt, field), (aio, field)],
                                  "id" if change == "id field" else "doc_id", threads=2)
    if change == "file rewritten":
        lines = gt.read_text().splitlines()
        gt.write_text("\n".join(lines[:-1] + [lines[-1].replace("0", "1")]) + "\n")
    if change == "ranges":
        monkeypatch.setattr(stream, "CHUNK_BYTES", 20_000)
    taken = []
    take = early.take
    monkeypatch.setattr(early, "take", lambda *args: taken.append(take(*args)) or taken[-1])
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2,
                           early_scan=early)
    early.close()
    # the ranges are taken GT first (the one file rewritten)
    assert len(taken) >= 2 and set(taken[:1] if change == "file rewritten" else taken) == {None}
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


def test_a_range_past_the_file_end_names_the_file(tmp_path):
    """A file cut short after its ranges were cut is an OSError naming it, as Python's own file
    errors are; a range read after a longer one in the same thread (its buffer reused) holds
    only its own lines."""
    path = tmp_path / "gt.ndjson"
    path.write_text('{"doc_id": "a"}\n{"doc_id": "b"}\n')
    with pytest.raises(OSError, match="shorter than when its ranges were cut") as error:
        file_ranges.read_range(str(path), 0, 100, "doc_id", None)
    assert error.value.filename == str(path)
    whole = file_ranges.read_range(str(path), 0, 32, "doc_id", None)
    second = file_ranges.read_range(str(path), 16, 32, "doc_id", None)
    assert (whole.line_ends, second.line_ends, second.data) == (2, 1, None)
    assert pl.DataFrame(second.scanned[0])["doc_id"].to_list() == ["b"]
