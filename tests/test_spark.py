"""The Spark scale-out equals the single-machine engine (jsoneval_polars.spark).

Every test runs on one real local Spark session (``local[2]``, the ``spark`` fixture of
conftest.py): generated invoice data scored in 1 and 4 partitions (and in small chunks), bad
input, the pairs-frame form, argument checks and the command line. The conformance cases run
through Spark with every other driver in test_drivers.py.
Counts and strings must be equal; floats within 1e-9 (SPEC §12).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from conformance import CASE_FILES, load_case
from polars.testing import assert_frame_equal

pytest.importorskip(
    "pyspark", reason="pyspark is not installed: pip install -e '.[spark]' to run the Spark tests"
)

from jsoneval_polars import ConfigError, InputError, evaluate
from jsoneval_polars.results import read_results
from jsoneval_polars.spark import TABLE_SCHEMAS, evaluate_spark, spark_ddl

ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-9
SPARK_TABLES = ("documents", "fields", "counts", "alignments", "errors")
SORT_KEYS = {
    "documents": ["doc_id"],
    "fields": ["doc_id", "path"],
    "counts": ["doc_id", "attribute"],
    "alignments": ["doc_id", "list_path", "gt_index", "aio_index"],
    "errors": ["source", "doc_id", "error"],
}


# --- helpers ----------------------------------------------------------------------------------


def _frame(records: list[tuple[str | None, str | None]], safety=None) -> pl.DataFrame:
    data = {
        "doc_id": pl.Series([r[0] for r in records], dtype=pl.String),
        "json": pl.Series([r[1] for r in records], dtype=pl.String),
    }
    if safety is not None:
        data["safety"] = pl.Series(safety, dtype=pl.Float64)
    return pl.DataFrame(data)


def _to_spark(spark, frame: pl.DataFrame):
    return spark.createDataFrame(frame.to_arrow())


def _collect(df) -> pl.DataFrame:
    return pl.from_arrow(df.toArrow())


def _spark_tables(res) -> dict[str, pl.DataFrame]:
    """The result's tables on the driver, from one Spark job (``SparkResult.to_polars``)."""
    local = res.to_polars()
    return {name: getattr(local, name) for name in (*SPARK_TABLES, "attributes")}


def _assert_same(actual: pl.DataFrame, expected: pl.DataFrame, key: list[str], what: str):
    """Same columns and dtypes, same rows in key order; floats within 1e-9, the rest equal."""
    assert actual.columns == expected.columns, what
    try:
        assert_frame_equal(
            actual.sort(key, nulls_last=True),
            expected.sort(key, nulls_last=True),
            check_exact=False,
            rel_tol=0,
            abs_tol=TOL,
        )
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}") from None


def _assert_summary(actual: dict, expected: dict):
    assert actual.keys() == expected.keys()
    for key, want in expected.items():
        got = actual[key]
        if isinstance(want, float) and not isinstance(want, bool):
            assert isinstance(got, float) and abs(got - want) <= TOL, (key, got, want)
        else:
            assert got == want, (key, got, want)


def _assert_equals_local(res, local):
    """Every table of a Spark result equals the local engine's (errors without ``line``)."""
    tables = _spark_tables(res)
    for name in SPARK_TABLES:
        expected = getattr(local, name)
        if name == "errors":
            expected = expected.with_columns(pl.lit(None, pl.Int64).alias("line"))
        _assert_same(tables[name], expected, SORT_KEYS[name], name)
    _assert_same(tables["attributes"], local.attributes, ["attribute"], "attributes")
    _assert_summary(res.summary, local.summary)


def _spark_score(tmp_path: Path, gt: pl.DataFrame, aio: pl.DataFrame, *options: str) -> Path:
    """``jsoneval spark-score`` on the two frames written as Parquet, in 2 partitions; the
    output directory."""
    from jsoneval_polars import cli

    gt.write_parquet(tmp_path / "gt.parquet")
    aio.write_parquet(tmp_path / "aio.parquet")
    out = tmp_path / "out"
    assert cli.main(["spark-score", "--gt", str(tmp_path / "gt.parquet"), "--aio",
                     str(tmp_path / "aio.parquet"), "--out", str(out), "--partitions", "2",
                     *options]) == 0
    return out


def _case_frames(case: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    docs = case["documents"]
    safety = [d.get("safety") for d in docs] if any("safety" in d for d in docs) else None
    gt = _frame([(d["doc_id"], json.dumps(d["gt"])) for d in docs], safety)
    aio = _frame([(d["doc_id"], json.dumps(d["aio"])) for d in docs])
    return gt, aio


def _generated(n: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from generate import generate_pairs
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def strip(doc: dict) -> str:
        return json.dumps({k: v for k, v in doc.items() if k != "doc_id"})

    pairs = list(generate_pairs(n, seed))
    gt = _frame([(g["doc_id"], strip(g)) for g, _ in pairs])
    aio = _frame([(a["doc_id"], strip(a)) for _, a in pairs])
    return gt, aio


# --- tests ------------------------------------------------------------------------------------


def test_declared_schemas_are_the_engines():
    """The schemas Spark is given are the engine's columns and types (large_string = string)."""
    gt, aio = _generated(20, seed=3)
    local = evaluate(gt, aio, json_column="json")
    for name in SPARK_TABLES:
        arrow = getattr(local, name).to_arrow().schema
        got = [(f.name, str(f.type).replace("large_string", "string")) for f in arrow]
        want = [(f.name, str(f.type)) for f in TABLE_SCHEMAS[name]]
        assert got == want, name


def test_import_does_not_load_pyspark():
    code = "import sys, jsoneval_polars.spark; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture(scope="module")
def generated():
    gt, aio = _generated(2000, seed=11)
    config = {
        "default_text_strategy": "FUZZY",
        "field_strategies": {
            "subtotal": "NUMERIC", "tax": "NUMERIC", "total": "NUMERIC", "amount": "NUMERIC",
            "unit_price": "NUMERIC", "notes": "SEMANTIC",
        },
        "lists": {"line_items": {"match_fields": ["description"], "threshold": 0.7}},
    }
    return gt, aio, config, evaluate(gt, aio, config=config, json_column="json")


@pytest.mark.parametrize(
    ("partitions", "chunk_rows"),
    [(1, 20_000), (4, 150)],
    ids=["1-partition", "4-partitions-chunked"],
)
def test_generated_data_equals_local(spark, generated, partitions, chunk_rows):
    """2,000 generated pairs: one partition and one engine call, or four partitions scored in
    chunks of ~150 rows (several Arrow batches each): the same tables as one local run."""
    gt, aio, config, local = generated
    res = evaluate_spark(
        _to_spark(spark, gt), _to_spark(spark, aio), config=config,
        num_partitions=partitions, chunk_rows=chunk_rows,
    )
    try:
        assert res.documents.rdd.getNumPartitions() == partitions
        _assert_equals_local(res, local)
    finally:
        res.unpersist()


def test_bootstrap_equals_the_local_engines(spark, generated, tmp_path):
    """bootstrap=N on Spark resamples the same per-document counts as the in-memory driver:
    with the same seed, the same intervals; the command line writes them; past the documented
    size it refuses in one line."""
    import jsoneval_polars.spark as spark_module

    gt, aio, config, _ = generated
    local = evaluate(gt, aio, config=config, json_column="json", bootstrap=200, seed=5)
    res = evaluate_spark(_to_spark(spark, gt), _to_spark(spark, aio), config=config,
                         num_partitions=4, chunk_rows=300, bootstrap=200, seed=5)
    try:
        _assert_same(res.attributes.select("attribute", "f1_low", "f1_high"),
                     local.attributes.select("attribute", "f1_low", "f1_high"), ["attribute"],
                     "attribute intervals")
        for key in ("micro_f1", "macro_f1", "mean_rqs"):
            for end in ("_low", "_high"):
                assert res.summary[key + end] == pytest.approx(local.summary[key + end],
                                                               abs=1e-12), key + end
        assert res.summary["bootstrap"] == local.summary["bootstrap"]
        assert res.attributes_spark.columns[-2:] == ["f1_low", "f1_high"]
    finally:
        res.unpersist()
    old = spark_module.BOOTSTRAP_MAX_DOCUMENTS
    spark_module.BOOTSTRAP_MAX_DOCUMENTS = 10
    try:
        with pytest.raises(ValueError, match="up to 10 documents; this run has 2,000"):
            evaluate_spark(_to_spark(spark, gt), _to_spark(spark, aio), config=config,
                           num_partitions=1, bootstrap=50)
    finally:
        spark_module.BOOTSTRAP_MAX_DOCUMENTS = old


def test_command_line_spark_score_bootstrap(spark, tmp_path, capsys):
    gt, aio = _generated(300, seed=3)
    out = _spark_score(tmp_path, gt, aio, "--bootstrap", "100", "--seed", "7", "--json")
    printed = json.loads(capsys.readouterr().out)
    local = evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet", json_column="json",
                     bootstrap=100, seed=7)
    assert printed["micro_f1_low"] == pytest.approx(local.summary["micro_f1_low"], abs=1e-12)
    assert printed["micro_f1_low"] <= printed["micro_f1"] <= printed["micro_f1_high"]
    stored = read_results(out)
    _assert_same(stored.attributes.select("attribute", "f1_low", "f1_high"),
                 local.attributes.select("attribute", "f1_low", "f1_high"), ["attribute"],
                 "stored intervals")


def test_metadata_travels_and_slices_as_locally(spark, tmp_path, capsys):
    """metadata=[...] on Spark: a frame's own column (string or integer; the AIO's wins over
    the GT's) and a member of the JSON (not scored) travel to documents, fields and counts as
    they do locally, in any partitioning; attributes_by slices the summed counts as
    Result.attributes_by does; spark-score --meta/--by writes attributes_by/; a metadata
    column of another type is refused on the driver."""

    gt, aio = _generated(300, seed=5)
    n = gt.height
    gt = gt.with_columns(pl.Series("run", [i % 4 if i % 9 else None for i in range(n)],
                                   dtype=pl.Int64),
                         pl.Series("model", [f"g{i % 2}" for i in range(n)]))
    aio = aio.with_columns(pl.Series("model", [f"m{i % 3}" if i % 5 else None for i in range(n)]))
    options = {"metadata": ["model", "run", "currency"]}
    local = evaluate(gt, aio, json_column="json", **options)
    assert local.documents["currency"].null_count() < n  # the member is read
    res = evaluate_spark(_to_spark(spark, gt), _to_spark(spark, aio), num_partitions=3,
                         chunk_rows=70, by="model", **options)  # one name, as locally
    try:
        assert res.by == ("model",)
        _assert_equals_local(res, local)
        for by in ("model", ["model"], ["currency", "run"]):
            keys = [by] if isinstance(by, str) else by
            _assert_same(res.attributes_by(by), local.attributes_by(by), [*keys, "attribute"],
                         f"attributes_by {by}")
        assert not {"model", "run", "currency"} & set(res.attributes["attribute"].to_list())
    finally:
        res.unpersist()
    with pytest.raises(InputError, match="aio metadata column 'model' is double"):
        evaluate_spark(_to_spark(spark, gt), _to_spark(
            spark, aio.with_columns(pl.col("json").str.len_bytes().cast(pl.Float64)
                                    .alias("model"))), metadata=["model"])

    out = _spark_score(tmp_path, gt, aio, "--meta", "run", "--by", "model", "--quiet")
    capsys.readouterr()
    stored = read_results(out)
    local = evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet", json_column="json",
                     metadata=["run", "model"])
    _assert_same(stored.documents, local.documents, ["doc_id"], "stored documents")
    _assert_same(pl.read_parquet(out / "attributes_by" / "*.parquet"),
                 local.attributes_by(["model"]), ["model", "attribute"], "stored slices")


def test_content_field_reads_the_document_member_as_locally(spark):
    """content_field: each JSON cell is a record whose member holds the document (the AIO's
    may be raw model text); its other members may be metadata; a record without the member is
    an error row. The tables equal the local engine's."""
    gt, aio = _generated(120, seed=8)

    def records(frame: pl.DataFrame, member: str) -> pl.DataFrame:
        cells = [json.dumps({member: json.loads(t), "model": f"m{i % 2}"})
                 for i, t in enumerate(frame["json"])]
        return frame.with_columns(pl.Series("json", cells))

    gt, aio = records(gt, "doc"), records(aio, "out")
    aio[3, "json"] = json.dumps({"out": "Sure:\n```json\n{\"total\": 1}\n```"})
    aio[5, "json"] = json.dumps({"model": "m9"})  # no member: an error row
    options = {"content_field": ("doc", "out"), "metadata": ["model"]}
    local = evaluate(gt, aio, json_column="json", **options)
    assert "code_block" in local.documents["aio_parse_status"].to_list()
    res = evaluate_spark(_to_spark(spark, gt), _to_spark(spark, aio), num_partitions=2,
                         chunk_rows=50, **options)
    try:
        _assert_equals_local(res, local)
    finally:
        res.unpersist()


BAD_GT = [
    ("ok", '{"a": "x", "n": 1}'),
    ("gt-only", '{"a": "y"}'),
    ("broken", '{"a": '),  # not JSON
    ("array", '"text"'),  # GT root not an object (nor an array); its AIO is left out too
    ("rootlist", '[{"a": "x"}, {"a": "y"}]'),  # an array root: scored as {"$": [...]}
    ("twice", '{"a": "first"}'),
    ("twice", '{"a": "second"}'),  # duplicate doc_id: left out
    (None, '{"a": "no id"}'),  # no id
    ("nulljson", None),  # null JSON cell
    ("dupkey", '{"a": "x", "a": "z"}'),  # duplicate key: warning, last wins
    ("fenced", '{"a": "x", "b": 2}'),
]
BAD_AIO = [
    ("ok", '{"a": "x", "n": 1.0, "extra": true}'),
    ("aio-only", '{"a": "q"}'),
    ("array", '{"a": 1}'),
    ("rootlist", '[{"a": "x"}, {"a": "z"}]'),
    ("twice", '{"a": "first"}'),
    ("dupkey", '{"a": "x"}'),
    ("fenced", 'Here it is:\n```json\n{"a": "x", "b": 2}\n```'),  # SPEC §8 extraction
    ("broken", "not json at all"),
    ("aio-dup", '{"a": 1}'),
    ("aio-dup", '{"a": 2}'),
]


def _error_keys(errors: pl.DataFrame) -> list[tuple]:
    """(source, doc_id, severity, reason) with the local run's "(first on line N)" left out:
    Spark knows no line numbers."""
    return sorted(
        (r["source"], r["doc_id"] or "", r["severity"], r["error"].split(" (")[0])
        for r in errors.iter_rows(named=True)
    )


def test_bad_input_is_reported_not_lost(spark):
    """Bad rows become error rows (SPEC §9); the scored documents and the counts equal the
    local engine's, and every input row is accounted for."""
    gt, aio = _frame(BAD_GT), _frame(BAD_AIO)
    config = {"field_strategies": {"no_such_field": "NUMERIC"}}  # a warning row of the finish
    local = evaluate(gt, aio, json_column="json", config=config)
    res = evaluate_spark(_to_spark(spark, gt), _to_spark(spark, aio), num_partitions=3,
                         config=config)
    try:
        tables = _spark_tables(res)
        assert tables["errors"]["error"].str.contains("no_such_field").sum() == 1
        for name in ("documents", "fields", "counts", "alignments"):
            _assert_same(tables[name], getattr(local, name), SORT_KEYS[name], name)
        _assert_same(tables["attributes"], local.attributes, ["attribute"], "attributes")
        _assert_summary(res.summary, local.summary)
        assert _error_keys(tables["errors"]) == _error_keys(local.errors)
        assert tables["errors"]["line"].null_count() == tables["errors"].height
        docs = tables["documents"].sort("doc_id")
        assert docs.filter(pl.col("doc_id") == "fenced")["aio_parse_status"].item() == "code_block"
        for name in SPARK_TABLES:  # the public DataFrames: declared schemas, same rows
            got = [(f.name, f.dataType.simpleString()) for f in getattr(res, name).schema]
            assert got == [(f.name, spark_ddl(pa.schema([f])).split(" ", 1)[1])
                           for f in TABLE_SCHEMAS[name]], name
            _assert_same(_collect(getattr(res, name)), tables[name], SORT_KEYS[name], name)
        _assert_same(_collect(res.attributes_spark), local.attributes, ["attribute"], "attrs")
        assert res.summary["n_read_gt"] == len(BAD_GT)
        assert res.summary["n_read_aio"] == len(BAD_AIO)
    finally:
        res.unpersist()


def test_one_sided_partition_still_pairs_by_id(spark):
    """A partition may hold AIO rows only; a duplicated id there is still an error row (the
    engine alone would pair such a chunk by position)."""
    gt = _frame([("a", '{"x": 1}')])
    aio = _frame([("a", '{"x": 1}'), ("z", '{"x": 2}'), ("z", '{"x": 3}')])
    local = evaluate(gt, aio, json_column="json")
    res = evaluate_spark(
        _to_spark(spark, gt), _to_spark(spark, aio), num_partitions=4, chunk_rows=1
    )
    try:
        tables = _spark_tables(res)
        _assert_same(tables["documents"], local.documents, ["doc_id"], "documents")
        assert _error_keys(tables["errors"]) == _error_keys(local.errors)
    finally:
        res.unpersist()


def test_pairs_frame_equals_two_frames(spark):
    """One pairs DataFrame (id, gt, aio, safety, a metadata column); a null side is an absent
    document; the metadata column is the document's, on either side."""
    rows = [
        ("a", '{"v": "x", "n": 2}', '{"v": "x", "n": 2}', 0.5, "m1"),
        ("b", '{"v": "y"}', None, None, "m2"),  # GT only
        ("c", None, '{"v": "z"}', 1.0, None),  # AIO only
        ("d", '{"v": "w"}', '{"v": "W "}', None, "m1"),
        ("e", None, None, None, "m2"),  # neither: an error row
    ]
    pairs = spark.createDataFrame(rows, "id string, gt string, aio string, s double, model string")
    res = evaluate_spark(pairs, id_field="id", safety_column="s", num_partitions=2,
                         metadata=["model"])

    def side(at: int) -> pl.DataFrame:
        kept = [r for r in rows if r[at] is not None]
        return _frame([(r[0], r[at]) for r in kept]).with_columns(
            pl.Series("model", [r[4] for r in kept], dtype=pl.String))

    safety = {r[0]: r[3] for r in rows if r[3] is not None}
    local = evaluate(side(1), side(2), json_column="json", safety=safety, metadata=["model"])
    assert local.documents.sort("doc_id")["model"].to_list() == ["m1", "m2", None, "m1"]
    try:
        tables = _spark_tables(res)
        for name in ("documents", "fields", "counts"):
            _assert_same(tables[name], getattr(local, name), SORT_KEYS[name], name)
        assert tables["errors"].select("source", "doc_id", "error").rows() == [
            ("gt", "e", "both 'gt' and 'aio' are null")
        ]
        assert res.summary["n_documents"] == 4 and res.summary["n_errors"] == 1
        assert res.summary["n_gt_only"] == 1 and res.summary["n_aio_only"] == 1
    finally:
        res.unpersist()


def test_bad_arguments_fail_on_the_driver(spark):
    gt = spark.createDataFrame([("a", "{}")], "doc_id string, json string")
    structs = spark.createDataFrame([("a", (1,))], "doc_id string, json struct<x: int>")
    columns = r"columns: \['doc_id', 'json'\]"
    with pytest.raises(InputError, match=r"no JSON column 'payload'; " + columns):
        evaluate_spark(gt, gt, json_column="payload")
    with pytest.raises(InputError, match=r"no id column 'id'"):
        evaluate_spark(gt, gt, id_field="id")
    with pytest.raises(InputError, match=r"must hold JSON text \(string\); got struct<x:int>"):
        evaluate_spark(gt, structs)
    with pytest.raises(ConfigError, match="fuzzy_threshold"):
        evaluate_spark(gt, gt, config={"fuzzy_treshold": 0.5})
    for columns in ("*", ("json", "*")):  # a column per field: evaluate() reads those
        with pytest.raises(InputError, match=r"json_column='\*'.*to_json\(struct"):
            evaluate_spark(gt, gt, json_column=columns)


def test_command_line_spark_score(spark, tmp_path, capsys):
    """``jsoneval spark-score`` on Parquet inputs writes the results layout and prints the
    local engine's summary; ``read_results`` opens what it wrote."""
    from jsoneval_polars import cli

    gt, aio = _case_frames(load_case(CASE_FILES[0]))
    gt.drop("safety", strict=False).write_parquet(tmp_path / "gt.parquet")
    aio.write_parquet(tmp_path / "aio.parquet")
    out = tmp_path / "out"
    code = cli.main([
        "spark-score", "--gt", str(tmp_path / "gt.parquet"), "--aio", str(tmp_path / "aio.parquet"),
        "--out", str(out), "--partitions", "2", "--json",
    ])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    local = evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet", json_column="json")
    _assert_summary(printed, local.summary)
    written = pl.read_parquet(out / "documents" / "*.parquet")
    _assert_same(written, local.documents, ["doc_id"], "written documents")
    assert json.loads((out / "summary.json").read_text()) == printed
    stored = read_results(out)
    _assert_same(stored.counts, local.counts, ["doc_id", "attribute"], "stored counts")
    assert json.loads((out / "manifest.json").read_text())["driver"] == "spark"


def test_strict_mode_fails_on_the_first_bad_row(spark):
    gt = _to_spark(spark, _frame([("a", '{"x": 1}')]))
    aio = _to_spark(spark, _frame([("a", '{"x": 1}'), ("a", '{"x": 2}')]))
    with pytest.raises(Exception, match=r"duplicate doc_id 'a' \(an earlier row has it\)"):
        evaluate_spark(gt, aio, strict=True, num_partitions=1)
