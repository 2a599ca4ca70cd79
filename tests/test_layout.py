"""One results layout (layout.py), written by every driver and opened by every reader.

Plain and partitioned runs, from the in-memory and the files driver, are opened by
``read_results``, DuckDB's ``read_parquet`` glob, ``jsoneval sql``, ``report`` and ``diff``;
the stored counts of two halves, summed, give the attributes of scoring both at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal
from sample_runs import AIO, GT, config_a

from jsoneval_polars import __version__, evaluate
from jsoneval_polars.layout import write_part
from jsoneval_polars.pipeline import Result
from jsoneval_polars.rates import attribute_rates
from jsoneval_polars.results import read_results
from jsoneval_polars.stream import score_files

TABLES = ("documents", "fields", "attributes", "alignments", "errors", "counts")


def _labelled(tmp_path: Path) -> tuple[Path, Path]:
    """The sample with a run_id on every AIO record ("1" or "2": digits stay strings)."""
    lines = AIO.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        rec = json.loads(line)
        rec["run_id"] = str(1 + i % 2)
        out.append(json.dumps(rec))
    aio = tmp_path / "aio.ndjson"
    aio.write_text("\n".join(out) + "\n")
    return GT, aio


def _write(driver: str, partition: str | None, out: Path, gt, aio) -> Path:
    meta = ["run_id"]
    if driver == "memory":
        evaluate(gt, aio, config=config_a(), metadata=meta).write(out, partition_by=partition)
    else:
        score_files(gt, aio, out, config=config_a(), metadata=meta, partition_by=partition,
                    batch_size=100, workers=1)
    return out


RUNS = [(d, p) for d in ("memory", "files") for p in (None, "run_id")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("layout")
    gt, aio = _labelled(base)
    whole = evaluate(gt, aio, config=config_a(), metadata=["run_id"])
    written = {
        (d, p): _write(d, p, base / f"{d}-{p}", gt, aio) for d, p in RUNS
    }
    return whole, written


@pytest.mark.parametrize("driver,partition", RUNS)
def test_every_run_has_the_layout_and_reads_back(runs, driver, partition):
    whole, written = runs
    out = written[driver, partition]
    names = {p.name for p in out.iterdir()}
    assert names == {*TABLES, "summary.json", "manifest.json"}
    for table in TABLES:
        parts = list((out / table).rglob("*.parquet"))
        assert parts and all(
            (p.parent.name.startswith("run_id=") if partition else p.parent.name == table)
            for p in parts
        )
    stored = read_results(out)
    assert stored.summary == pytest.approx(whole.summary)
    for table, keys in (("documents", ["doc_id"]), ("fields", ["doc_id", "path"]),
                        ("counts", ["doc_id", "attribute"])):
        got = getattr(stored, table).sort(keys)
        want = getattr(whole, table).sort(keys)
        assert got["run_id"].dtype == pl.String  # "1" is not read as a number
        assert_frame_equal(got.select(want.columns), want, check_exact=False, abs_tol=1e-12)
    assert_frame_equal(stored.attributes.select(whole.attributes.columns), whole.attributes,
                       check_exact=False, abs_tol=1e-12)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["version"] == __version__
    assert manifest["partition_by"] == partition
    assert manifest["config"]["fuzzy_threshold"] == config_a().get("fuzzy_threshold", 0.85)
    if driver == "files":
        assert manifest["inputs"]["gt"] == {
            "path": str(GT), "records": whole.summary["n_read_gt"], "bytes": GT.stat().st_size
        }
    assert manifest["started"] <= manifest["finished"]


@pytest.mark.parametrize("driver,partition", RUNS)
def test_duckdb_and_the_commands_open_every_run(runs, driver, partition, tmp_path):
    whole, written = runs
    out = written[driver, partition]
    con = duckdb.connect()
    glob = str(out / "fields" / "**" / "*.parquet")
    n = con.sql(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = true)")
    assert n.fetchall() == [(whole.fields.height,)]
    sql = _cli("sql", str(out), "SELECT count(*) AS n FROM documents", "--json")
    assert json.loads(sql.stdout) == [{"n": whole.documents.height}]
    report = _cli("report", str(out), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    other = written["memory", None]
    diff = _cli("diff", str(other), str(out), "--json")
    assert diff.returncode == 0, diff.stderr
    assert json.loads(diff.stdout)["n_changed_fields"] == 0


def test_summed_halves_equal_the_whole(tmp_path):
    """The stored counts of two runs, summed, give the attributes of scoring both at once."""
    gt = [json.loads(x) for x in GT.read_text().splitlines()]
    aio = [json.loads(x) for x in AIO.read_text().splitlines()]
    ids = sorted({r["doc_id"] for r in gt} | {r["doc_id"] for r in aio})
    first = set(ids[: len(ids) // 3])
    for half, keep in (("a", lambda d: d in first), ("b", lambda d: d not in first)):
        for side, recs in (("gt", gt), ("aio", aio)):
            path = tmp_path / f"{half}-{side}.ndjson"
            path.write_text("".join(json.dumps(r) + "\n" for r in recs if keep(r["doc_id"])))
    score_files(tmp_path / "a-gt.ndjson", tmp_path / "a-aio.ndjson", tmp_path / "a",
                config=config_a(), workers=1)
    evaluate(tmp_path / "b-gt.ndjson", tmp_path / "b-aio.ndjson",
             config=config_a()).write(tmp_path / "b")
    counts = pl.concat([read_results(tmp_path / h).counts for h in ("a", "b")])
    whole = evaluate(GT, AIO, config=config_a())
    assert_frame_equal(attribute_rates(counts), whole.attributes, check_exact=False,
                       abs_tol=1e-12)


def test_enum_parts_read_back_as_plain_strings(tmp_path):
    """The files driver's parts carry their label columns as Enums over each part's own values
    (core.score_batch's ``dictionary``); read together, by Polars and by DuckDB, they are the
    String columns every other writer writes."""
    parts = [(["b", "a", "b"], ["a", "b"]), (["c", "a"], ["c", "a"])]
    for number, (paths, names) in enumerate(parts):
        frame = pl.DataFrame({"doc_id": paths, "path": paths, "n": range(len(paths)),
                              "gt_value": ["free"] * len(paths)}).with_columns(
            pl.col("doc_id", "path").cast(pl.Enum(names)))
        write_part(tmp_path, "fields", frame, number)
    back = pl.read_parquet(tmp_path / "fields" / "*.parquet")
    assert back.schema == pl.Schema({"doc_id": pl.String, "path": pl.String, "n": pl.Int64,
                                     "gt_value": pl.String})
    assert back.select("path", "n").rows() == [("b", 0), ("a", 1), ("b", 2), ("c", 0), ("a", 1)]
    assert back["doc_id"].equals(back["path"], check_names=False)
    assert duckdb.sql(f"SELECT typeof(path), count(*) FROM '{tmp_path}/fields/*.parquet' "
                      "GROUP BY 1").fetchall() == [("VARCHAR", 5)]
    # min/max of doc_id, which readers filter parts by; none of the other columns; the labels
    # are dictionaries, the free text is not
    group = pq.ParquetFile(tmp_path / "fields" / "part-000001.parquet").metadata.row_group(0)
    chunks = {group.column(i).path_in_schema: group.column(i) for i in range(4)}
    assert (chunks["doc_id"].statistics.min, chunks["doc_id"].statistics.max) == ("a", "c")
    for name in ("path", "n", "gt_value"):
        stats = chunks[name].statistics
        assert stats is None or not stats.has_min_max
    assert "RLE_DICTIONARY" in chunks["path"].encodings
    assert "RLE_DICTIONARY" not in chunks["gt_value"].encodings


def test_never_null_columns_are_required_and_similarities_plain(tmp_path):
    """A dictionary part writes the columns schemas.NEVER_NULL names as Parquet REQUIRED (no
    definition levels) while they hold no null, the others OPTIONAL; the similarities are no
    dictionary. DuckDB and Polars read parts of both kinds together as one table."""
    labels = pl.Enum(["a", "b"])
    for number, strategy in enumerate((["a", "b"], ["a", None])):  # a null where none belongs
        frame = pl.DataFrame({"doc_id": ["a", "b"], "strategy": strategy, "bucket": ["a", "b"],
                              "similarity": [0.5, None]},
                             schema={"doc_id": labels, "strategy": labels, "bucket": labels,
                                     "similarity": pl.Float64})
        write_part(tmp_path, "fields", frame, number)
    levels = {}
    for number in (0, 1):
        schema = pq.ParquetFile(tmp_path / "fields" / f"part-00000{number}.parquet").schema
        levels[number] = {schema.column(i).name: schema.column(i).max_definition_level
                          for i in range(len(schema))}
    assert levels[0] == {"doc_id": 0, "strategy": 0, "bucket": 1, "similarity": 1}
    assert levels[1] == {"doc_id": 0, "strategy": 1, "bucket": 1, "similarity": 1}
    group = pq.ParquetFile(tmp_path / "fields" / "part-000000.parquet").metadata.row_group(0)
    assert "RLE_DICTIONARY" not in group.column(3).encodings
    back = pl.read_parquet(tmp_path / "fields" / "*.parquet")
    assert back["strategy"].to_list() == ["a", "b", "a", None]
    assert duckdb.sql(f"SELECT count(strategy), count(similarity) FROM "
                      f"'{tmp_path}/fields/*.parquet'").fetchall() == [(3, 2)]


def test_the_files_driver_writes_the_kinds_as_dictionaries_of_the_kernels_codes(tmp_path):
    """The kernel's pairing hands the kinds over as codes of ``schemas.KINDS`` too, and the
    files driver writes them as Enums (Parquet dictionaries, tests/test_benchmarks.py checks
    which columns); they read back as the strings of the in-memory run."""
    from jsoneval_polars.flatten import _native
    from jsoneval_polars.schemas import KINDS

    if _native is None:
        pytest.skip("the native kernel is not built")
    assert tuple(_native.KIND_NAMES) == KINDS
    out = score_files(GT, AIO, tmp_path / "run", config=config_a(), batch_size=100, workers=1)
    keys = ["doc_id", "path"]
    written = pl.read_parquet(tmp_path / "run" / "fields" / "*.parquet").sort(keys)
    in_memory = evaluate(GT, AIO, config=config_a()).fields.sort(keys)
    assert written.height == in_memory.height == out.fields.height > 0
    assert_frame_equal(written.select(*keys, "gt_kind", "aio_kind"),
                       in_memory.select(*keys, "gt_kind", "aio_kind"))
    assert set(written["gt_kind"].drop_nulls()) >= {"string", "float", "int"}


def test_an_enum_beside_a_type_only_the_arrow_schema_states_is_written_as_strings(tmp_path):
    """A time zone lives in the Arrow schema, which a part with Enum columns leaves out: such a
    part is written by Polars, its Enums as strings, its time zone kept."""
    when = pl.Series("at", [0, 1], dtype=pl.Int64).cast(pl.Datetime("us", "Europe/Paris"))
    frame = pl.DataFrame({"path": pl.Series(["x", "y"], dtype=pl.Enum(["x", "y"])), "at": when})
    write_part(tmp_path, "fields", frame, 0)
    back = pl.read_parquet(tmp_path / "fields" / "part-000000.parquet")
    assert back.schema == pl.Schema({"path": pl.String, "at": pl.Datetime("us", "Europe/Paris")})
    assert back["path"].to_list() == ["x", "y"]


@pytest.fixture(scope="module")
def driver_layouts(tmp_path_factory) -> tuple[Path, Path, Result]:
    """The sample pairs written by the files driver (two batch threads) and by the in-memory
    driver: the two folders and the in-memory result."""
    out = tmp_path_factory.mktemp("drivers")
    score_files(GT, AIO, out / "files", config=config_a(), batch_size=100, workers=2)
    result = evaluate(GT, AIO, config=config_a())
    result.write(out / "memory")
    return out / "files", out / "memory", result


def test_a_batch_threads_plain_part_is_pyarrows_and_a_whole_tables_polars(tmp_path,
                                                                         driver_layouts):
    """A batch thread's part (``on_this_thread``, the files driver's) is written by pyarrow on
    that thread when Parquet states its types in full, with min/max for doc_id only; the same
    frame as a whole table of the in-memory driver by Polars. Both read back as the frame. A
    time zone, which only the Arrow schema states, keeps a batch thread's part Polars'."""
    frame = pl.DataFrame({"doc_id": ["b", "a", "c"], "n": [3, 1, 2],
                          "rate": [0.5, None, 1.0], "ok": [True, False, None]})
    write_part(tmp_path / "thread", "documents", frame, 0, on_this_thread=True)
    write_part(tmp_path / "whole", "documents", frame, 0)
    files = {where: tmp_path / where / "documents" / "part-000000.parquet"
             for where in ("thread", "whole")}
    assert pq.ParquetFile(files["thread"]).metadata.created_by.startswith("parquet-cpp-arrow")
    assert pq.ParquetFile(files["whole"]).metadata.created_by.startswith("Polars")
    for path in files.values():
        assert_frame_equal(pl.read_parquet(path), frame)
    group = pq.ParquetFile(files["thread"]).metadata.row_group(0)
    chunks = {group.column(i).path_in_schema: group.column(i) for i in range(4)}
    assert (chunks["doc_id"].statistics.min, chunks["doc_id"].statistics.max) == ("a", "c")
    assert all(chunks[name].statistics is None or not chunks[name].statistics.has_min_max
               for name in ("n", "rate", "ok"))
    when = pl.Series("at", [0, 1, 2], dtype=pl.Int64).cast(pl.Datetime("us", "Europe/Paris"))
    write_part(tmp_path / "zone", "documents", frame.with_columns(when), 0, on_this_thread=True)
    back = pl.read_parquet(tmp_path / "zone" / "documents" / "part-000000.parquet")
    assert_frame_equal(back, frame.with_columns(when))
    # the drivers: the files driver's batch parts are pyarrow's, the in-memory tables Polars'
    files, memory, _ = driver_layouts
    for folder, writer in ((files, "parquet-cpp-arrow"), (memory, "Polars")):
        for table in ("documents", "alignments"):
            for part in (folder / table).glob("*.parquet"):
                assert pq.ParquetFile(part).metadata.created_by.startswith(writer), part


def test_every_part_of_every_driver_is_snappy(driver_layouts):
    """DECISIONS 134: the files driver's parts (pyarrow's, its dictionary parts among them)
    and the in-memory driver's tables (Polars') are Snappy in every column, the codec the
    Spark driver writes; DuckDB reads the files driver's fields back, as many rows and the
    same paths as the in-memory table."""
    files, memory, result = driver_layouts
    for folder in (files, memory):
        parts = list(folder.rglob("*.parquet"))
        assert {p.parent.name for p in parts} >= {"fields", "counts", "documents", "alignments"}
        for part in parts:
            meta = pq.ParquetFile(part).metadata
            codecs = {meta.row_group(g).column(c).compression
                      for g in range(meta.num_row_groups) for c in range(meta.num_columns)}
            assert codecs == ({"SNAPPY"} if meta.num_rows else set()), (part, codecs)
    back = duckdb.sql(f"FROM '{files / 'fields'}/*.parquet'").pl()
    assert back.height == result.fields.height
    assert set(back["path"]) == set(result.fields["path"])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jsoneval_polars", *args],
                          capture_output=True, text=True, check=False, timeout=300)


def _limit_file_size() -> None:
    """A file size limit makes every write past 20 kB fail as a full disk would (EFBIG; Python
    ignores the SIGXFSZ that would otherwise kill the process)."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))


def test_a_failed_write_exits_2_in_one_line_and_keeps_the_previous_run(tmp_path):
    out = tmp_path / "run"
    cli = [sys.executable, "-m", "jsoneval_polars", "score", "--sample", "--out", str(out)]
    subprocess.run([*cli, "--quiet"], check=True)
    before = (out / "summary.json").read_text()
    proc = subprocess.run(cli, capture_output=True, text=True, preexec_fn=_limit_file_size)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "File too large" in proc.stderr
    assert ".parquet" in proc.stderr  # names the file it could not write
    assert (out / "summary.json").read_text() == before
    assert sorted(p.name for p in out.iterdir()) == sorted([*TABLES, "summary.json",
                                                            "manifest.json"])
    assert read_results(out).documents.height == json.loads(before)["n_documents"]


def test_a_folder_that_is_not_a_results_directory_is_never_replaced(tmp_path):
    """``--out .`` in a folder holding a ``documents/`` of its own: the run refuses in one line
    (exit 2) before scoring, and the user's files stay; a results directory is replaced, also
    one of a layout older than manifests (a summary.json alone); other files are kept."""
    own = tmp_path / "project"
    (own / "documents").mkdir(parents=True)
    (own / "documents" / "contract.pdf").write_text("mine")
    (own / "notes.txt").write_text("mine")
    proc = subprocess.run([sys.executable, "-m", "jsoneval_polars", "score", "--sample",
                           "--out", ".", "--quiet"], cwd=own, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("jsoneval: error: results directory '.' holds documents/ that no "
                           "jsoneval run wrote; give a new or empty directory\n")
    assert sorted(str(p.relative_to(own)) for p in own.rglob("*")) == [
        "documents", "documents/contract.pdf", "notes.txt"]
    r = evaluate(GT, AIO, config=config_a())
    for entry in ("summary.json", "fields.parquet"):  # either one is a run's name
        other = tmp_path / entry.partition(".")[0]
        other.mkdir()
        (other / entry).write_text("{}")
        with pytest.raises(FileExistsError, match=f"holds {entry} that no jsoneval run"):
            r.write(other)
        assert [p.name for p in other.iterdir()] == [entry]
    older = tmp_path / "older"  # an older run: its summary, no manifest
    (older / "documents").mkdir(parents=True)
    (older / "summary.json").write_text(json.dumps({"n_documents": 1}))
    (older / "notes.txt").write_text("mine")
    r.write(older)
    assert read_results(older).documents.height == r.documents.height
    assert (older / "notes.txt").read_text() == "mine"
    r.write(own / "results")  # a new folder inside it is fine, and a second run replaces it
    r.write(own / "results")
    assert read_results(own / "results").summary == read_results(older).summary
