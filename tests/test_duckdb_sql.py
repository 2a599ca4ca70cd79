"""DuckDB: result tables as views (from a Result and from a results directory), scoring from a
DuckDB table or query, and ``jsoneval sql``. Every test uses a real DuckDB database file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sample_runs import AIO, GT, config_a, run_a, run_b

from jsoneval_polars import evaluate
from jsoneval_polars.duckdb_sql import VIEWS, evaluate_duckdb, query_results, register
from jsoneval_polars.pipeline import TABLES
from jsoneval_polars.results import read_results

KEYS = {
    "documents": ["doc_id"],
    "fields": ["doc_id", "path"],
    "attributes": ["attribute"],
    "alignments": ["doc_id", "list_path", "gt_index", "aio_index"],
    "errors": ["source", "doc_id", "line", "error"],
    "counts": ["doc_id", "attribute"],
}


def _fetch(con, sql: str) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql).to_arrow_table())


def _same_table(got: pl.DataFrame, want: pl.DataFrame, table: str) -> None:
    keys = KEYS[table]
    assert got.columns == want.columns
    assert_frame_equal(got.sort(keys, nulls_last=True), want.sort(keys, nulls_last=True))


@pytest.fixture
def db(tmp_path):
    con = duckdb.connect(str(tmp_path / "work.duckdb"))
    yield con
    con.close()


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return run_a().write(tmp_path_factory.mktemp("run_a"))


@pytest.mark.parametrize("kind", ["result", "directory"])
def test_register_makes_every_table_a_view_equal_to_the_result(db, results_dir, kind):
    source = run_a() if kind == "result" else results_dir
    assert register(db, source) == list(VIEWS)
    for table in TABLES:
        _same_table(_fetch(db, f"SELECT * FROM {table}"), getattr(run_a(), table), table)
    (summary,) = _fetch(db, "SELECT * FROM summary").to_dicts()
    assert summary == run_a().summary
    # temporary: nothing was written into the database file
    assert db.sql("SELECT count(*) FROM duckdb_tables() WHERE NOT temporary").fetchall() == [(0,)]


def test_register_materialize_keeps_the_tables_in_the_database_file(tmp_path, results_dir):
    path = str(tmp_path / "kept.duckdb")
    with duckdb.connect(path) as con:
        register(con, results_dir, materialize=True, prefix="run_")
    with duckdb.connect(path, read_only=True) as con:
        names = {r[0] for r in con.sql("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert names == {f"run_{v}" for v in VIEWS}
        _same_table(_fetch(con, "SELECT * FROM run_fields"), run_a().fields, "fields")


def test_two_runs_side_by_side_with_prefixes(db, tmp_path):
    register(db, run_a(), prefix="a_")
    register(db, run_b().write(tmp_path / "b"), prefix="b_")
    changed = db.sql(
        """SELECT count(*) FROM a_fields a FULL JOIN b_fields b USING (doc_id, path)
           WHERE a.cell IS DISTINCT FROM b.cell"""
    ).fetchall()[0][0]
    joined = run_a().fields.join(run_b().fields, on=["doc_id", "path"], how="full", coalesce=True)
    assert changed == joined.filter(pl.col("cell").ne_missing(pl.col("cell_right"))).height > 0


def test_register_reads_hive_partitioned_tables(db, tmp_path):
    out = run_a().write(tmp_path / "run")
    shutil.rmtree(out / "fields")
    run_a().fields.write_parquet(out / "fields", partition_by="strategy")
    register(db, out)
    got = _fetch(db, "SELECT * FROM fields").select(run_a().fields.columns)
    _same_table(got, run_a().fields, "fields")
    assert read_results(out).fields.height == run_a().fields.height


def test_register_rejects_a_directory_that_is_not_a_run(db, tmp_path):
    (tmp_path / "documents.parquet").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="missing fields/.*summary.json"):
        register(db, tmp_path)


# --- scoring from DuckDB ---------------------------------------------------------------------


def _documents(path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            doc_id = rec.pop("doc_id")
            out[doc_id] = json.dumps(rec)
    return out


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    """The sample as two DuckDB tables (doc_id, doc JSON) in a database file."""
    path = str(tmp_path_factory.mktemp("db") / "sample.duckdb")
    with duckdb.connect(path) as con:
        for name, source in (("gt_docs", GT), ("aio_docs", AIO)):
            frame = pl.DataFrame(
                list(_documents(source).items()), schema=["doc_id", "doc"], orient="row"
            )
            con.register("frame", frame.to_arrow())
            con.execute(f"CREATE TABLE {name} AS SELECT doc_id, doc::JSON AS doc FROM frame")
            con.unregister("frame")
        con.execute(
            """CREATE TABLE pairs AS SELECT doc_id, g.doc AS gt, a.doc AS aio
               FROM gt_docs g FULL JOIN aio_docs a USING (doc_id)"""
        )
    return path


@pytest.mark.parametrize(
    "source",
    [
        "pairs",
        "SELECT doc_id, gt::VARCHAR AS gt, aio::VARCHAR AS aio FROM pairs",
        "SELECT doc_id, g.doc AS gt, a.doc AS aio "
        "FROM gt_docs g FULL JOIN aio_docs a USING (doc_id)",
    ],
    ids=["table", "query-varchar", "full-join"],
)
def test_evaluate_duckdb_equals_evaluate_on_the_files(sample_db, source):
    with duckdb.connect(sample_db, read_only=True) as con:
        got = evaluate_duckdb(con, source, config=config_a())
    want = run_a()
    for table in ("documents", "fields", "attributes", "alignments"):
        _same_table(getattr(got, table), getattr(want, table), table)
    # the sample's GT-only and AIO-only documents arrive as NULL cells, not as errors
    assert got.errors.height == 0
    for key in ("n_documents", "mean_rqs", "micro_f1", "macro_f1", "n_gt_only", "n_aio_only"):
        assert got.summary[key] == pytest.approx(want.summary[key])


def test_evaluate_duckdb_takes_a_relation_struct_columns_and_safety(tmp_path):
    with duckdb.connect(str(tmp_path / "s.duckdb")) as con:
        con.execute(
            """CREATE TABLE runs AS SELECT * FROM (VALUES
                 (1, {'total': 10, 'name': 'Acme'}, {'total': 10, 'name': 'Acme'}, 0.5),
                 (2, {'total': 20, 'name': 'Beta'}, {'total': 21, 'name': 'Beta'}, 1.0)
               ) t(id, truth, output, safe)"""
        )
        rel = con.table("runs")
        got = evaluate_duckdb(
            con, rel, id_column="id", gt_column="truth", aio_column="output",
            safety_column="safe",
        )
    want = evaluate(
        [{"doc_id": "1", "total": 10, "name": "Acme"},
         {"doc_id": "2", "total": 20, "name": "Beta"}],
        [{"doc_id": "1", "total": 10, "name": "Acme"},
         {"doc_id": "2", "total": 21, "name": "Beta"}],
        safety={"1": 0.5, "2": 1.0},
    )
    assert_frame_equal(got.documents, want.documents)
    assert_frame_equal(got.fields, want.fields)
    assert got.documents["safety"].to_list() == [0.5, 1.0]


def test_evaluate_duckdb_names_a_missing_column(sample_db):
    with duckdb.connect(sample_db, read_only=True) as con:
        with pytest.raises(ValueError, match=r"gt_column='gtt'.*did you mean 'gt'"):
            evaluate_duckdb(con, "pairs", gt_column="gtt")


def test_query_results_can_join_a_database_of_your_own(results_dir, tmp_path):
    path = str(tmp_path / "mine.duckdb")
    with duckdb.connect(path) as con:
        con.execute("CREATE TABLE owners AS SELECT 'currency' AS attribute, 'finance' AS team")
    got = query_results(
        results_dir,
        "SELECT o.team, a.f1 FROM attributes a JOIN owners o USING (attribute)",
        database=path,
    )
    want = run_a().attributes.filter(attribute="currency")["f1"].item()
    assert got.rows() == [("finance", want)]


# --- jsoneval sql ------------------------------------------------------------------------------


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", *map(str, args)],
        capture_output=True, text=True, timeout=120,
    )


def test_cli_sql_prints_a_table_json_and_csv(results_dir):
    query = "SELECT cell, count(*) AS n FROM fields GROUP BY cell ORDER BY cell"
    want = run_a().fields.group_by("cell").len().sort("cell").rows()

    as_json = _cli("sql", results_dir, query, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert [(r["cell"], r["n"]) for r in json.loads(as_json.stdout)] == want

    as_csv = _cli("sql", results_dir, query, "--csv")
    assert as_csv.stdout.splitlines() == ["cell,n"] + [f"{c},{n}" for c, n in want]

    table = _cli("sql", results_dir, query)
    assert table.returncode == 0
    assert "FP+FN" in table.stdout and table.stdout.rstrip().endswith(f"{len(want)} rows")


def test_cli_sql_reports_bad_sql_and_bad_directories_in_one_line(results_dir, tmp_path):
    bad = _cli("sql", results_dir, "SELECT * FROM nowhere")
    assert bad.returncode == 2
    assert bad.stderr.startswith("jsoneval: error: SQL:") and len(bad.stderr.splitlines()) == 1
    assert bad.stderr.rstrip().endswith(
        "The run's tables: documents, fields, attributes, alignments, errors, counts, summary")
    empty = _cli("sql", results_dir, "  ")
    assert empty.returncode == 2 and empty.stderr == "jsoneval: error: SQL: the query is empty\n"
    missing = _cli("sql", tmp_path / "nope", "SELECT 1")
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_the_cli_with_every_subcommand_does_not_import_duckdb():
    code = (
        "import sys; from jsoneval_polars.cli import app, add_registered_commands;"
        " add_registered_commands(app);"
        "print([m for m in ('duckdb', 'nbclient') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
