"""Input handling (SPEC §9): formats, pairing, bad input and the nothing-is-lost accounting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal
from hypothesis import given, settings
from hypothesis import strategies as st

from jsoneval_polars import ConfigError, InputError, evaluate, ingest, parse_config
from jsoneval_polars.ingest import _duplicate_keys, _parse_json
import reference


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _accounted(result, n_gt: int, n_aio: int) -> None:
    """Every input record is in documents or in an error row (warnings do not remove one)."""
    errors = result.errors.filter(pl.col("severity") == "error")
    gt_err = errors.filter(pl.col("source") == "gt").height
    aio_err = errors.filter(pl.col("source") == "aio").height
    assert result.documents["gt_present"].sum() + gt_err == n_gt
    assert result.documents["aio_present"].sum() + aio_err == n_aio
    assert result.summary["n_read_gt"] == n_gt
    assert result.summary["n_read_aio"] == n_aio


def _error(result, line: int, source: str = "gt") -> dict:
    rows = result.errors.filter((pl.col("line") == line) & (pl.col("source") == source))
    assert rows.height >= 1, f"no error row for {source} line {line}:\n{result.errors}"
    return rows.row(0, named=True)


def test_bad_lines_become_error_rows(messy):
    gt, aio = messy
    r = evaluate(gt, aio)
    assert "not valid JSON" in _error(r, 3)["error"]
    assert _error(r, 3)["file"] == str(gt)
    assert "has no 'doc_id'" in _error(r, 4)["error"]  # an array root has no id either
    assert "duplicate doc_id '1'" in _error(r, 5)["error"] and "line 1" in _error(r, 5)["error"]
    assert _error(r, 6)["severity"] == "warning" and "'a'" in _error(r, 6)["error"]
    assert "lone surrogate" in _error(r, 8)["error"]
    assert "nested too deeply" in _error(r, 9)["error"]
    assert "overflows" in _error(r, 2)["error"] and _error(r, 2)["severity"] == "warning"
    assert "NaN is not valid JSON; read as null" in r.errors.filter(pl.col("line") == 2)["error"]
    assert "not valid JSON" in _error(r, 7, "aio")["error"]
    # the AIO of the GT document with a lone surrogate is left out with it, and says so
    assert "GT document is not usable" in _error(r, 5, "aio")["error"]
    _accounted(r, n_gt=10, n_aio=7)


def test_documents_scored_despite_bad_neighbours(messy):
    r = evaluate(*messy)
    docs = {row["doc_id"]: row for row in r.documents.iter_rows(named=True)}
    assert set(docs) == {"1", "2", "3", "4", "7"}
    assert docs["1"]["accuracy"] == 1.0
    assert docs["2"]["n_gt_non_null"] == 1  # NaN is null; 1e400 is kept as infinity
    assert docs["3"]["accuracy"] == 1.0  # duplicate key: the last value (2) was used
    assert docs["4"]["accuracy"] == 0.0  # 30-digit integers compared exactly, not as floats
    assert docs["7"]["gt_present"] is False and docs["7"]["aio_parse_status"] == "json"


NON_JSON_LITERALS = {  # text -> (the GT document's warnings, its x, y and z as scored)
    '{"doc_id": "n", "x": NaN, "y": [NaN, 1], "z": Infinity}': (
        {"NaN (2 times) is not valid JSON; read as null",
         "Infinity is not valid JSON; kept as inf"},
        (None, "[nan,1]", "inf")),  # an array's text is its compact JSON, lower-cased
    '{"doc_id": "m", "x": -Infinity, "y": "NaN", "z": 1}': (
        {"-Infinity is not valid JSON; kept as -inf"},  # the string "NaN" is JSON
        ("-inf", "nan", "1")),
}


def _literal_warnings(result) -> dict[str, set[str]]:
    rows = result.errors.filter(pl.col("source") == "gt")
    assert set(rows["severity"]) <= {"warning"}, rows
    return {doc: set(rows.filter(pl.col("doc_id") == doc)["error"]) for doc in ("n", "m")}


def test_nan_and_infinity_literals_are_read_with_a_warning(tmp_path):
    """NaN and ±Infinity are not JSON: read as null and ±inf (DECISIONS.md 22), each with one
    warning row per literal and document, by every reader of JSON text, the files driver too;
    a float NaN in Python input is a null with no row."""
    from jsoneval_polars.stream import score_files

    texts = list(NON_JSON_LITERALS)
    gt = _write(tmp_path / "gt.ndjson", texts)
    aio = _write(tmp_path / "aio.ndjson", ['{"doc_id": "n", "x": 1}', '{"doc_id": "m"}'])
    expected = {json.loads(t)["doc_id"]: w for t, (w, _) in NON_JSON_LITERALS.items()}
    table = pl.DataFrame({"doc_id": ["n", "m"], "json": [t.replace('"doc_id": "n", ', "")
                                                         .replace('"doc_id": "m", ', "")
                                                         for t in texts]})
    runs = {
        "ndjson": evaluate(gt, aio),
        "files driver": score_files(gt, aio, tmp_path / "out"),
        "json column": evaluate(table, aio, json_column="json"),
    }
    for name, run in runs.items():
        assert _literal_warnings(run) == expected, name
        fields = run.fields.filter(pl.col("doc_id").is_in(["n", "m"]) & pl.col("path").is_in(
            ["x", "y", "z"])).sort("doc_id", "path", descending=[True, False])
        assert fields["gt_value"].to_list() == [v for _, (_, values) in
                                                NON_JSON_LITERALS.items() for v in values], name
    # a JSON array's elements are read as lines are (DECISIONS 109): the same warning rows,
    # each at its element's position
    array = tmp_path / "gt.json"
    array.write_text("[" + ", ".join(texts) + "]", encoding="utf-8")
    by_array = evaluate(array, aio)
    assert _literal_warnings(by_array) == expected
    assert by_array.errors.drop("file").equals(runs["ndjson"].errors.drop("file"))
    assert set(by_array.errors["line"]) == {1, 2}
    assert evaluate([{"doc_id": "n", "x": float("nan")}], aio).errors.height == 0
    # an AIO answer given as model text (SPEC §8): its extracted object's literals alike
    answer = [{"doc_id": "n", "a": 'Sure: {"x": NaN, "y": 2} as asked'}]
    aio_notes = evaluate([{"doc_id": "n", "x": 1, "y": 2}], answer, content_field=(None, "a"))
    assert aio_notes.errors.select("source", "doc_id", "severity", "error").rows() == [
        ("aio", "n", "warning", "NaN is not valid JSON; read as null")]


def test_floats_a_double_does_not_show_get_a_warning_row(tmp_path):
    """SPEC §9: a value that cannot be kept exactly is reported, not rounded silently. A float
    literal is read as the nearest double, whose text is the value compared and shown; when
    that text is not the literal's value, the document gets a warning row. The native kernel
    declines such a batch, so the rows are the Python path's, in either driver."""
    from jsoneval_polars.stream import score_files

    gt = _write(tmp_path / "gt.ndjson", [
        '{"doc_id": "a", "x": 0.30000000000000001, "y": 2.5}',   # read as 0.3
        '{"doc_id": "b", "x": 0.30000000000000004, "y": 2.50000000000000000000}',  # kept
    ])
    aio = _write(tmp_path / "aio.ndjson", ['{"doc_id": "a", "x": 0.3, "y": 2.5}',
                                           '{"doc_id": "b", "x": 0.3, "y": 2.5}'])
    for run in (evaluate(gt, aio), score_files(gt, aio, tmp_path / "out", workers=2)):
        assert run.errors.select("source", "doc_id", "line", "severity", "error").rows() == [
            ("gt", "a", 1, "warning", "number 0.30000000000000001 has more digits than a "
             "double keeps; read as 0.3")]
        x = dict(run.fields.filter(pl.col("path") == "x").select("doc_id", "gt_value").rows())
        assert x == {"a": "0.3", "b": "0.30000000000000004"}


def test_strict_names_file_line_and_reason(messy, tmp_path):
    gt, aio = messy
    with pytest.raises(InputError, match=r"gt\.ndjson, line 3: not valid JSON"):
        evaluate(gt, aio, strict=True)
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt), "--aio", str(aio),
         "--out", str(tmp_path / "o"), "--strict"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    assert "line 3" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_accounting_line(messy, tmp_path):
    gt, aio = messy
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt), "--aio", str(aio),
         "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120,
    )
    # 6 of the 10 GT records are errors: the run is scored and written, and fails loudly
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ("jsoneval: run failed: 6 of 10 GT records are errors "
                           "(see the errors table)\n")
    assert "read 10 GT and 7 AIO records; scored 5 documents (0 GT-only, 1 AIO-only)" in proc.stdout
    errors = pl.read_parquet(tmp_path / "o" / "errors" / "*.parquet")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    # warnings: line 2's NaN and 1e400, line 6's repeated key
    assert errors.height == summary["n_errors"] + summary["n_warnings"] == 8 + 3


def test_gt_root_not_object_is_an_error():
    r = evaluate([{"doc_id": "a", "x": 1}, [1, 2]], [{"doc_id": "a", "x": 1}])
    assert r.errors.filter(pl.col("source") == "gt").height == 1
    r = evaluate(["text", {"x": 1}], [{"x": 1}, {"x": 1}])  # positional
    gt_rows = r.errors.filter(pl.col("source") == "gt")
    assert gt_rows.height == 1
    assert "GT root must be a JSON object; got a string" in gt_rows["error"][0]
    assert r.documents["doc_id"].to_list() == ["1"]


def test_positional_pairing_and_one_sided_ids():
    """Pairing by position is said in one warning row (DECISIONS 106)."""
    r = evaluate([{"x": 1}, {"x": 2}], [{"x": 1}, {"x": 3}, {"x": 4}])
    assert r.documents["doc_id"].to_list() == ["0", "1", "2"]
    assert r.documents["gt_present"].to_list() == [True, True, False]
    assert r.errors.select("source", "error", "severity").rows() == [(
        "config", "no GT or AIO record has 'doc_id': the documents are paired by position "
        "(line order)", "warning")]
    assert r.summary["n_warnings"] == 1 and r.summary["n_errors"] == 0
    r = evaluate([{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 2}], [{"x": 1}, {"x": 2}])
    assert r.documents["doc_id"].to_list() == ["a", "b"]
    assert r.summary["mean_accuracy"] == 1.0
    assert r.errors["error"].to_list() == [
        "no AIO record has 'doc_id': the documents are paired by position (line order) under "
        "the GT's ids"]
    # a misspelt --id-field: the command says so on stderr
    keyed = evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}], id_field="docid")
    assert keyed.errors["error"].to_list() == [
        "no GT or AIO record has 'docid': the documents are paired by position (line order)"]
    assert evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}]).errors.height == 0


def _paired_in_python(gt: list, aio: list) -> tuple[list, list, list]:
    """SPEC §9's pairing by id written out: each side's first record of an id is paired, a
    repeat and a record without an id are left out; the GT's records in order, then the AIO's
    records whose id the GT lacks. Pairs as (doc_id, gt_line, aio_line), records left out as
    (line, doc_id, first_line)."""
    def firsts(ids: list) -> tuple[dict, list]:
        first, left_out = {}, []
        for line, doc_id in enumerate(ids, 1):
            if doc_id is not None and doc_id not in first:
                first[doc_id] = line
            else:
                left_out.append((line, doc_id, first.get(doc_id)))
        return first, left_out
    (gt_first, gt_out), (aio_first, aio_out) = firsts(gt), firsts(aio)
    pairs = [(doc_id, line, aio_first.get(doc_id)) for doc_id, line in gt_first.items()]
    pairs += [(doc_id, None, line) for doc_id, line in aio_first.items()
              if doc_id not in gt_first]
    return pairs, gt_out, aio_out


def _records(ids: list) -> pl.DataFrame:
    return pl.DataFrame({"line": range(1, len(ids) + 1), "doc_id": ids,
                         "has_id": [i is not None for i in ids], "offset": [7] * len(ids)},
                        schema={"line": pl.Int64, "doc_id": pl.String, "has_id": pl.Boolean,
                                "offset": pl.Int64})


_ids = st.lists(st.one_of(st.none(), st.sampled_from("abcdefgh")), max_size=14)
@pytest.mark.parametrize("pair", [ingest._pair_by_id, ingest._pair_by_id_polars])
@settings(max_examples=200, deadline=None)
@given(gt=_ids, aio=_ids, sides=st.sampled_from(["apart", "same", "same increasing"]))
def test_records_pair_by_their_first_id(pair, gt, aio, sides):
    """Pairing by id, and its general path alone (the groups and joins), against the rule
    written out. ``sides``: drawn apart; the AIO's ids the GT's (repeats, missing ids and any
    order included); both the same ids in increasing order, which ``_pair_by_id`` pairs row
    by row."""
    if sides == "same":
        aio = list(gt)
    elif sides == "same increasing":
        gt = aio = sorted({i for i in gt if i is not None})
    plan, left_out = pair(_records(gt), _records(aio), ["line", "offset"])
    pairs, gt_out, aio_out = _paired_in_python(gt, aio)
    assert plan.select("doc_id", "gt_line", "aio_line").rows() == pairs
    assert plan["gt_offset"].null_count() == sum(line is None for _, line, _ in pairs)
    assert [out.rows() for out in left_out] == [gt_out, aio_out]


def test_the_command_prints_the_pairing_by_position(tmp_path):
    gt = _write(tmp_path / "g.ndjson", ['{"doc_id":"a","x":1}'])
    done = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt), "--aio", str(gt),
         "--id-field", "docid", "--out", str(tmp_path / "o")],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert ("jsoneval: warning: no GT or AIO record has 'docid': the documents are paired by "
            "position (line order)") in done.stderr
    assert "scored 1 document (0 GT-only, 0 AIO-only)\n0 errors, 1 warning in " in done.stdout


def test_one_sided_documents_are_scored_and_flagged():
    r = evaluate([{"doc_id": "g", "a": 1}], [{"doc_id": "x", "a": 1}])
    docs = {row["doc_id"]: row for row in r.documents.iter_rows(named=True)}
    assert docs["g"]["aio_parse_status"] == "missing" and docs["g"]["completeness"] == 0.0
    assert docs["x"]["gt_present"] is False and docs["x"]["hallucination"] == 1.0


def test_integer_ids_equal_string_ids():
    r = evaluate([{"doc_id": 1, "a": "x"}], [{"doc_id": "1", "a": "x"}])
    assert r.documents.height == 1 and r.documents["accuracy"][0] == 1.0


def test_custom_id_field_is_removed_from_content(tmp_path):
    gt = _write(tmp_path / "g.ndjson", ['{"key":"k1","a":"x"}'])
    aio = _write(tmp_path / "a.ndjson", ['{"key":"k1","a":"x"}'])
    r = evaluate(gt, aio, id_field="key")
    assert r.fields["path"].to_list() == ["a"]


def test_json_array_files(tmp_path):
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps([{"doc_id": "a", "v": 1}, {"doc_id": "b", "v": 2}]))
    aio = tmp_path / "aio.json"
    aio.write_text(json.dumps([{"doc_id": "b", "v": 2}, {"doc_id": "a", "v": 5}]))
    r = evaluate(gt, aio)
    assert dict(zip(r.documents["doc_id"], r.documents["accuracy"], strict=True)) == {
        "a": 0.0,
        "b": 1.0,
    }


def test_arrow_streams_are_read_once():
    """A RecordBatchReader (DuckDB 2's ``.arrow()``) can be read only once; the input was read
    twice on the way to its pairs, so a GT given so came out empty and every document was
    AIO-only, with no error. Each kind of table input (and a generator of records, refused
    before), on either side, scores as the list of records it holds."""
    import duckdb

    records = [{"doc_id": "a", "x": 1, "y": "p"}, {"doc_id": "b", "x": 2, "y": "q"}]
    others = [{"doc_id": "a", "x": 1, "y": "p"}, {"doc_id": "b", "x": 3, "y": "q"}]
    text = pa.table({"doc_id": ["a", "b"],
                     "json": [json.dumps({"x": r["x"], "y": r["y"]}) for r in records]})
    connections = []

    def duck() -> duckdb.DuckDBPyConnection:  # one per source: its reader holds the result
        connections.append(duckdb.connect())
        connections[-1].register("text", text)
        return connections[-1]

    query = "SELECT doc_id, json FROM text"
    sources = {
        "reader": lambda: text.to_reader(),
        "duckdb reader": lambda: duck().sql(query).arrow(),
        "duckdb relation": lambda: duck().sql(query),
        "lazy frame": lambda: pl.from_arrow(text).lazy(),
        "struct reader": lambda: pa.Table.from_pylist(
            [{"doc_id": r["doc_id"], "doc": {"x": r["x"], "y": r["y"]}} for r in records]
        ).to_reader(),
    }
    sources["generator"] = lambda: (dict(r) for r in records)
    counts = ["attribute", "tp", "fp", "fn", "tn"]
    for name, source in sources.items():
        for run, want in ((evaluate(source(), others), evaluate(records, others)),
                          (evaluate(others, source()), evaluate(others, records))):
            assert run.summary["n_read_gt"] == run.summary["n_read_aio"] == 2, name
            assert run.summary["n_gt_only"] == run.summary["n_aio_only"] == 0, name
            assert run.attributes.select(counts).rows() == want.attributes.select(counts).rows()


def test_tables_with_json_text_and_struct_columns(tmp_path):
    gt = pl.DataFrame({"doc_id": ["a", "b"], "json": ['{"v": 1, "w": null}', '{"v": 2}']})
    aio_text = pl.DataFrame(
        {"doc_id": ["a", "b"], "json": ['{"v": 1}', 'Sure! ```json\n{"v": 3}\n```']}
    )
    r = evaluate(gt, aio_text)
    statuses = dict(zip(r.documents["doc_id"], r.documents["aio_parse_status"], strict=True))
    assert statuses == {"a": "json", "b": "code_block"}
    # absent vs null survives a JSON-text column: w is null in GT and absent in AIO -> TN
    assert r.fields.filter(pl.col("path") == "w")["cell"].to_list() == ["TN"]
    arrow = pa.table({"doc_id": ["a"], "doc": pa.array([{"v": 1}])})
    r = evaluate(arrow, pl.DataFrame({"doc_id": ["a"], "doc": [{"v": 1}]}), json_column="doc")
    assert r.summary["mean_accuracy"] == 1.0
    gt.write_parquet(tmp_path / "gt.parquet")
    aio_text.write_parquet(tmp_path / "aio.parquet")
    assert evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet").documents.height == 2


def test_raw_text_aio_through_content_field():
    r = evaluate(
        [{"doc_id": "a", "v": 1}],
        [{"doc_id": "a", "out": 'Here it is: {"v": 1} hope that helps'}],
        content_field=(None, "out"),
    )
    assert r.documents["aio_parse_status"][0] == "embedded"
    r = evaluate(
        [{"doc_id": "a", "v": 1}], [{"doc_id": "a", "out": "no json"}], content_field=(None, "out")
    )
    assert r.documents["aio_parse_status"][0] == "invalid"
    assert r.documents["completeness"][0] == 0.0


def test_struct_column_records_with_a_content_field_read_as_python_records_are():
    """A struct column's cells are records like any others: with a content field, the member
    is the document and the other members may be metadata (not content); a null member (a
    struct has no absent field) is a null root, an error row; without a content field, a
    metadata member is read, not lost."""
    gt = [{"doc": {"x": 1, "y": "a"}, "model": "g"}, {"doc": {"x": 2, "y": "b"}, "model": "g"},
          {"doc": None, "model": "g"}]
    aio = [{"doc": {"x": 1, "y": "z"}, "model": "m1"}, {"doc": {"x": 5, "y": "b"}, "model": "m2"},
           {"doc": {"x": 3, "y": "c"}, "model": "m3"}]
    ids = ["a", "b", "c"]

    def struct_table(records: list[dict]) -> pl.DataFrame:
        return pl.DataFrame({"doc_id": ids, "rec": records})

    def as_records(records: list[dict]) -> list[dict]:
        return [{"doc_id": i, **r} for i, r in zip(ids, records, strict=True)]

    options = {"content_field": "doc", "metadata": ["model"]}
    tables = evaluate(struct_table(gt), struct_table(aio), json_column="rec", **options)
    objects = evaluate(as_records(gt), as_records(aio), **options)
    for name in ("documents", "fields", "attributes"):
        assert_frame_equal(getattr(tables, name), getattr(objects, name), check_row_order=False)
    assert_frame_equal(tables.errors, objects.errors)
    assert tables.errors.select("source", "line", "doc_id").rows() == [("gt", 3, "c"),
                                                                       ("aio", 3, "c")]
    assert tables.documents.sort("doc_id")["model"].to_list() == ["m1", "m2"]
    flat = [{"x": 1, "model": "g"}], [{"x": 2, "model": "m"}]
    r = evaluate(*(pl.DataFrame({"doc_id": ["a"], "rec": f}) for f in flat), json_column="rec",
                 metadata=["model"])
    assert r.documents["model"].to_list() == ["m"]
    assert r.fields["attribute"].to_list() == ["x"]


def test_unrepresentable_python_values_are_errors():
    r = evaluate([{"doc_id": "a", "s": {1, 2}}, {"doc_id": "b", "v": 1}], [{"doc_id": "b", "v": 1}])
    assert r.documents["doc_id"].to_list() == ["b"]
    assert "has no JSON meaning" in r.errors["error"][0]


def test_safety_values_are_validated():
    with pytest.raises(InputError, match="safety of document 'a'"):
        evaluate([{"doc_id": "a"}], [{"doc_id": "a"}], safety={"a": 2})
    r = evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}], safety=lambda g, a: 0.0)
    assert r.documents["rqs"][0] == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"lits": {}}, "unknown config key 'lits'.*did you mean 'lists'"),
        ({"lists": {"li": {"method": "hungarian"}}},
         "lists.li.method must be one of 'greedy', 'optimal', 'index'; got 'hungarian'"),
        ({"field_strategies": {"a": "FUZZZY"}}, "field_strategies.a must be one of"),
        ({"fuzzy_threshold": 1.5}, "fuzzy_threshold must be between 0.0 and 1.0"),
        ({"weights": {"acuracy": 1}}, "did you mean 'accuracy'"),
        ({"numeric": {"rel_tol": "x"}}, "numeric.rel_tol must be a number"),
    ],
)
def test_config_errors_name_the_key(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(raw)


def test_a_config_path_is_read_as_the_file(tmp_path):
    """config= takes a config file's path (str or Path) as the command line's --config does:
    the run equals the one given the parsed mapping."""
    raw = {"default_text_strategy": "FUZZY", "fuzzy_threshold": 0.9,
           "field_strategies": {"total": "NUMERIC"}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    gt = [{"doc_id": "a", "name": "Acme Corp", "total": 10}]
    aio = [{"doc_id": "a", "name": "ACME Corp.", "total": "10.0"}]
    expected = evaluate(gt, aio, config=raw).fields
    assert parse_config(str(path)) == parse_config(raw)
    for given_as in (str(path), path):
        assert_frame_equal(evaluate(gt, aio, config=given_as).fields, expected)
    with pytest.raises(ConfigError, match="cannot read config file"):
        evaluate(gt, aio, config=tmp_path / "missing.json")


def test_one_metadata_name_may_be_a_string_and_batches_are_checked(tmp_path):
    """metadata="model" is one column (it made five, one per letter), in every driver; a
    batch size or worker count below 1 is refused as on the command line."""
    from jsoneval_polars.stream import score_files, score_tables

    gt = [{"doc_id": "a", "model": "m1", "x": 1}, {"doc_id": "b", "model": "m2", "x": 2}]
    aio = [{"doc_id": "a", "model": "m1", "x": 1}, {"doc_id": "b", "model": "m2", "x": 3}]
    as_list = evaluate(gt, aio, metadata=["model"])
    assert_frame_equal(evaluate(gt, aio, metadata="model").documents, as_list.documents)
    paths = [_write(tmp_path / f"{side}.ndjson", [json.dumps(r) for r in records])
             for side, records in (("gt", gt), ("aio", aio))]
    files = score_files(*paths, tmp_path / "files", metadata="model", by="model")
    assert_frame_equal(files.attributes_by("model"), as_list.attributes_by(["model"]))
    assert (tmp_path / "files" / "attributes_by").is_dir()
    tables = score_tables(*(pl.DataFrame({"doc_id": [r["doc_id"] for r in records],
                                          "model": [r["model"] for r in records],
                                          "json": [json.dumps({"x": r["x"]}) for r in records]})
                            for records in (gt, aio)),
                          tmp_path / "tables", json_column="json", by="model")
    assert tables.documents["model"].to_list() == ["m1", "m2"]
    for driver in (lambda **kw: evaluate(gt, aio, **kw),
                   lambda **kw: score_files(*paths, tmp_path / "o", **kw)):
        with pytest.raises(ValueError, match="batch_size must be at least 1; got 0"):
            driver(batch_size=0)
        with pytest.raises(ValueError, match="workers must be at least 1"):
            driver(workers=0)


# ----------------------------------------------------------------------------------------------
# A table with a column per field (json_column="*", DECISIONS 105)


def _flat_tables() -> tuple[pl.DataFrame, pl.DataFrame, list[dict], list[dict]]:
    """Two flat tables, and the records they stand for, written out by hand: a date is its
    ISO text, an empty cell and a NaN are null members, a list column is a list; ``model`` is
    metadata, not a member."""
    import datetime as dt

    gt = pl.DataFrame({
        "doc_id": ["a", "b", "c"], "model": ["m1", "m2", "m1"],
        "vendor": ["Acme Corp", "Bolt Ltd", None], "total": [10.5, 3.0, float("nan")],
        "issued": [dt.date(2024, 1, 2), dt.date(2024, 2, 3), None],
        "tags": [["x", "y"], [], None],
    })
    aio = pl.DataFrame({
        "doc_id": ["b", "a", "c"], "model": ["m2", "m1", "m1"],
        "vendor": ["Bolt Ltd", "ACME Corp.", "Cog"], "total": [4.0, 10.5, 1.0],
        "issued": [dt.date(2024, 2, 3), dt.date(2024, 1, 3), None],
        "tags": [[], ["x"], ["z"]],
    })
    gt_records = [
        {"doc_id": "a", "model": "m1", "vendor": "Acme Corp", "total": 10.5,
         "issued": "2024-01-02", "tags": ["x", "y"]},
        {"doc_id": "b", "model": "m2", "vendor": "Bolt Ltd", "total": 3.0,
         "issued": "2024-02-03", "tags": []},
        {"doc_id": "c", "model": "m1", "vendor": None, "total": None, "issued": None,
         "tags": None},
    ]
    aio_records = [
        {"doc_id": "b", "model": "m2", "vendor": "Bolt Ltd", "total": 4.0,
         "issued": "2024-02-03", "tags": []},
        {"doc_id": "a", "model": "m1", "vendor": "ACME Corp.", "total": 10.5,
         "issued": "2024-01-03", "tags": ["x"]},
        {"doc_id": "c", "model": "m1", "vendor": "Cog", "total": 1.0, "issued": None,
         "tags": ["z"]},
    ]
    return gt, aio, gt_records, aio_records


_FLAT_CONFIG = {"default_text_strategy": "FUZZY", "field_strategies": {"total": "NUMERIC"}}


def test_a_table_with_a_column_per_field_scores_its_rows_as_records():
    gt, aio, gt_records, aio_records = _flat_tables()
    flat = evaluate(gt, aio, json_column="*", metadata=["model"], config=_FLAT_CONFIG)
    records = evaluate(gt_records, aio_records, metadata=["model"], config=_FLAT_CONFIG)
    for table in ("documents", "fields", "counts"):
        assert_frame_equal(getattr(flat, table), getattr(records, table))
    assert set(flat.fields["path"]) == {"vendor", "total", "issued", "tags"}
    assert flat.fields["model"].to_list() == records.fields["model"].to_list()


def test_a_flat_parquet_file_through_every_table_driver(tmp_path):
    """The command line (score_tables) and evaluate() read a flat Parquet file alike, and a
    bad row's error names the file and row."""
    gt, aio, gt_records, aio_records = _flat_tables()
    gt = pl.concat([gt, gt.head(1)])  # row 4 repeats doc a
    gt.write_parquet(tmp_path / "gt.parquet")
    aio.write_parquet(tmp_path / "aio.parquet")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(_FLAT_CONFIG))
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(tmp_path / "gt.parquet"),
         "--aio", str(tmp_path / "aio.parquet"), "--json-column", "*", "--meta", "model",
         "--config", str(config), "--out", str(out), "--quiet"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    records = evaluate(gt_records, aio_records, metadata=["model"], config=_FLAT_CONFIG)
    written = pl.read_parquet(out / "fields" / "*.parquet").sort("doc_id", "path")
    assert_frame_equal(written, records.fields.sort("doc_id", "path"), check_dtypes=False)
    errors = pl.read_parquet(out / "errors" / "*.parquet")
    assert errors.select("source", "doc_id", "line", "file").rows() == [
        ("gt", "a", 4, str(tmp_path / "gt.parquet"))]
    in_memory = evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet", json_column="*",
                         metadata=["model"], config=_FLAT_CONFIG)
    assert_frame_equal(in_memory.fields, records.fields)


def test_a_csv_file_is_a_table_of_text(tmp_path):
    """A CSV (or TSV) file is read whole, every column as text: an id keeps its zeros, a
    number is numeric text, an empty cell is null (DECISIONS 107)."""
    (tmp_path / "gt.csv").write_text("doc_id,vendor,total,issued\n"
                                     "007,Acme Corp,10.5,2024-01-02\n008,Bolt,3,\n")
    (tmp_path / "aio.tsv").write_text("doc_id\tvendor\ttotal\tissued\n"
                                      "008\tBolt\t4.0\t\n007\tACME Corp.\t10.50\t2024-01-03\n")
    gt = [{"doc_id": "007", "vendor": "Acme Corp", "total": "10.5", "issued": "2024-01-02"},
          {"doc_id": "008", "vendor": "Bolt", "total": "3", "issued": None}]
    aio = [{"doc_id": "008", "vendor": "Bolt", "total": "4.0", "issued": None},
           {"doc_id": "007", "vendor": "ACME Corp.", "total": "10.50", "issued": "2024-01-03"}]
    expected = evaluate(gt, aio, config=_FLAT_CONFIG)
    from_files = evaluate(tmp_path / "gt.csv", tmp_path / "aio.tsv", json_column="*",
                          config=_FLAT_CONFIG)
    assert_frame_equal(from_files.fields, expected.fields)
    assert from_files.documents["doc_id"].to_list() == ["007", "008"]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(tmp_path / "gt.csv"),
         "--aio", str(tmp_path / "aio.tsv"), "--json-column", "*", "--out", str(out), "--quiet"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    written = pl.read_parquet(out / "fields" / "*.parquet")
    assert written.select("doc_id", "path", "cell").rows() == evaluate(
        gt, aio).fields.select("doc_id", "path", "cell").rows()
    (tmp_path / "latin.csv").write_bytes(b"doc_id,x\n1,caf\xe9\n")
    with pytest.raises(InputError, match=r"gt input .*latin.csv: not a readable CSV table: "
                                         "invalid utf-8"):
        evaluate(tmp_path / "latin.csv", aio, json_column="*")


def test_a_column_per_field_refuses_bytes_and_an_empty_row():
    with pytest.raises(InputError, match="gt column 'raw' holds Binary, which a JSON document "
                                         "cannot hold"):
        evaluate(pl.DataFrame({"doc_id": ["a"], "raw": [b"\x00"]}), [{"doc_id": "a"}],
                 json_column="*")
    with pytest.raises(InputError, match=r"aio table has no column to score besides "
                                         r"\['doc_id', 'model'\]"):
        evaluate([{"doc_id": "a"}], pl.DataFrame({"doc_id": ["a"], "model": ["m"]}),
                 json_column="*", metadata=["model"])


def test_a_table_without_a_json_column_is_told_how_to_make_one():
    flat = pl.DataFrame({"doc_id": ["a"], "x": [1], "y": ["q"]})
    with pytest.raises(InputError, match=r"name the JSON column.*A column per field\? "
                                         r"json_column='\*' \(--json-column '\*'\) reads"):
        evaluate(flat, flat)
    with pytest.raises(InputError, match=r"column 'x' must hold JSON text or structs; got "
                                         r"Int64\. A column per field"):
        evaluate(flat.drop("y"), flat.drop("y"))


def test_seed000_plain_strategy_file_is_field_strategies(tmp_path):
    cfg = parse_config({"name": "FUZZY", "bio": "IGNORE"})
    strategies = {k: v.value for k, v in cfg.field_strategies.items()}
    assert strategies == {"name": "FUZZY", "bio": "IGNORE"}


def test_cli_config_error_exits_2_with_one_line(tmp_path):
    gt = _write(tmp_path / "g.ndjson", ['{"doc_id":"a"}'])
    cfg = tmp_path / "c.json"
    cfg.write_text('{"fuzy_threshold": 0.9}')
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(gt), "--aio", str(gt),
         "--config", str(cfg), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "did you mean 'fuzzy_threshold'" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "score", "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_match_field_prefix_and_compare_transforms():
    """Seed 003's event matching: event_type exactly, instance_id on its first 8 characters."""
    gt = [{"doc_id": "e", "events": [
        {"event_type": "deploy", "instance_id": "i-0abc1234-east"},
        {"event_type": "restart", "instance_id": "i-0abc9999"},
    ]}]
    aio = [{"doc_id": "e", "events": [
        {"event_type": "restart", "instance_id": "i-0abc9999-x"},
        {"event_type": "deploy", "instance_id": "i-0abc1234"},
        {"event_type": "deploy", "instance_id": "i-0zzz0000"},
    ]}]
    fields = [{"field": "event_type", "compare": "exact"},
              {"field": "instance_id", "prefix": 8, "compare": "exact"}]
    cfg = {"lists": {"events": {"match_fields": fields, "threshold": 1.0}}}
    pairs = evaluate(gt, aio, config=cfg).alignments.drop_nulls(["gt_index", "aio_index"])
    assert sorted(zip(pairs["gt_index"], pairs["aio_index"], strict=True)) == [(0, 1), (1, 0)]
    with pytest.raises(ConfigError, match=r"lists.events.match_fields\[0\].prefix"):
        parse_config({"lists": {"events": {"match_fields": [{"field": "x", "prefix": 0}]}}})


def test_unmatched_aio_items_follow_the_gt_list_in_every_document():
    """Unmatched AIO items get GT-length + rank among the unmatched, per list instance."""
    r = evaluate(
        [{"doc_id": "a", "z": None}, {"doc_id": "b", "z": [{"x": 1}]}],
        [{"doc_id": "a", "z": [{"x": 1}]}, {"doc_id": "b", "z": [{"x": 1}, {"x": 2}]}],
    )
    paths = set(zip(r.fields["doc_id"], r.fields["path"], strict=True))
    assert paths == {("a", "z"), ("a", "z[0].x"), ("b", "z[0].x"), ("b", "z[1].x")}


_json_keys = st.text(alphabet='ab":\\ \u00e9', max_size=3)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(alphabet='ab":\\ \u00e9\n', max_size=4),
    lambda inner: st.lists(inner, max_size=3)
    | st.lists(st.tuples(_json_keys, inner), max_size=4),  # member lists: keys may repeat
    max_leaves=12,
)


def _dump(value, ensure_ascii: bool, space: str) -> str:
    if isinstance(value, list) and value and all(isinstance(m, tuple) for m in value):
        return "{" + ",".join(
            json.dumps(k, ensure_ascii=ensure_ascii) + space + ":" + _dump(v, ensure_ascii, space)
            for k, v in value
        ) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(v, ensure_ascii, space) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii)


@given(
    members=st.lists(st.tuples(_json_keys, _json_values), max_size=5),
    ensure_ascii=st.booleans(),
    space=st.sampled_from(["", " ", "\t"]),
)
def test_duplicate_key_check_agrees_with_a_full_parse(members, ensure_ascii, space):
    """The fast colon-count proof of "no repeated key" never misses one
    (ingest._may_repeat_keys)."""
    raw = _dump(members, ensure_ascii, space) if members else "{}"
    repeated: list[str] = []

    def hook(pairs):
        keys = [k for k, _ in pairs]
        repeated.extend(k for i, k in enumerate(keys) if k in keys[:i])
        return dict(pairs)

    json.loads(raw, object_pairs_hook=hook)
    data = raw.encode()
    obj, _ = _parse_json(data)
    assert sorted(set(_duplicate_keys(data, obj))) == sorted(set(repeated))


@pytest.mark.parametrize(
    "number", ["-9223372036854775809", "18446744073709551616", "123456789012345678901234567890"]
)
def test_integers_beyond_64_bits_stay_exact(number):
    """orjson would read these as floats (the 19-digit one too); they must compare as integers."""
    gt = [{"doc_id": "1", "n": int(number)}]
    raw = f'{{"doc_id": "1", "n": {number[:-1]}{int(number[-1]) ^ 1}}}'.encode()
    obj, _ = _parse_json(raw)
    assert obj["n"] == int(number[:-1] + str(int(number[-1]) ^ 1))
    r = evaluate(gt, [obj])
    assert r.fields.filter(pl.col("path") == "n")["match"].to_list() == [False]


def test_array_roots_are_scored_as_the_list_named_dollar(tmp_path):
    """A document whose root is an array is the object {"$": array} (issue 13): bare documents,
    NDJSON lines and a content member holding an array all score as that object would."""
    gt_items = [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}]
    aio_items = [{"sku": "B2", "qty": 1}, {"sku": "A1", "qty": 3}]
    config = {"lists": {"$": {"match_fields": ["sku"]}}}
    by_hand = evaluate([{"$": gt_items}] * 2, [{"$": aio_items}] * 2, config=config)
    # NDJSON lines that are arrays (a file of one line holding an array is a JSON-array file)
    (tmp_path / "gt.ndjson").write_text(f"{json.dumps(gt_items)}\n" * 2)
    (tmp_path / "aio.ndjson").write_text(f"{json.dumps(aio_items)}\n" * 2)
    runs = [
        evaluate([gt_items] * 2, [aio_items] * 2, config=config),
        evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", config=config),
        evaluate([{"doc_id": str(i), "out": gt_items} for i in range(2)],
                 [{"doc_id": str(i), "out": aio_items} for i in range(2)],
                 content_field="out", config=config),
    ]
    by_position = ["no GT or AIO record has 'doc_id': the documents are paired by position "
                   "(line order)"]
    for run, rows in zip(runs, (by_position, by_position, []), strict=True):
        assert run.errors["error"].to_list() == rows  # bare arrays carry no id: by position
        assert run.fields.equals(by_hand.fields)
        assert run.attributes.equals(by_hand.attributes)
    # hand-counted: both SKUs align; A1's quantity differs (2 against 3)
    doc = by_hand.fields.filter(pl.col("doc_id") == "0")
    cells = dict(zip(doc["path"], doc["cell"], strict=True))
    assert cells == {"$[0].sku": "TP", "$[0].qty": "FP+FN", "$[1].sku": "TP", "$[1].qty": "TP"}
    aligned = by_hand.alignments.filter(pl.col("doc_id") == "0")
    assert aligned.select("gt_index", "aio_index").rows() == [(0, 1), (1, 0)]


def test_json_array_files_and_ndjson_starting_with_a_bracket(tmp_path):
    """A JSON-array file (also behind a BOM) is read as records; NDJSON whose first line
    starts with '[' is NDJSON: a bad first line is one error row, not a refused file."""
    records = [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 2}]
    array = tmp_path / "array.json"
    array.write_bytes(b"\xef\xbb\xbf" + json.dumps(records).encode())
    r = evaluate(array, array)
    assert r.documents["doc_id"].to_list() == ["a", "b"] and r.errors.height == 0
    lines = tmp_path / "lines.ndjson"
    lines.write_text('[1, 2\n' + "".join(json.dumps(rec) + "\n" for rec in records))
    r = evaluate(lines, lines)
    assert r.documents["doc_id"].to_list() == ["a", "b"]
    assert r.errors.select("source", "line").rows() == [("gt", 1), ("aio", 1)]
    assert r.errors["error"].str.starts_with("not valid JSON").all()
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"doc_id": "a"},\n  {"doc_id": "b"\n')
    with pytest.raises(InputError, match="not a valid JSON array"):
        evaluate(broken, broken)


def test_pretty_printed_objects_are_records(tmp_path):
    """Objects written over several lines each (``jq .``'s output, behind a BOM too) are read
    as NDJSON's lines are: the same documents and fields as the same records one per line, an
    object that is not JSON one error row at the line where it starts, an object never closed
    one error row, the others kept; by both drivers, whether the kernel finds the objects or
    (brackets that never close) the Python path does. NDJSON whose first line is cut short
    stays NDJSON."""
    from jsoneval_polars.stream import score_files

    records = [{"doc_id": "a", "x": 1, "items": [{"sku": "}{"}]}, {"doc_id": "b", "x": "2"},
               {"doc_id": "c", "x": 3}]
    ndjson = tmp_path / "lines.ndjson"
    ndjson.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    pretty = tmp_path / "pretty.json"
    pretty.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(rec, indent=2)
                                                  for rec in records).encode() + b"\n")
    by_lines, by_objects = evaluate(ndjson, ndjson), evaluate(pretty, pretty)
    assert by_objects.errors.height == 0
    assert by_objects.fields.equals(by_lines.fields)
    assert by_objects.documents["doc_id"].to_list() == ["a", "b", "c"]
    streamed = score_files(pretty, ndjson, tmp_path / "out")
    assert streamed.fields.equals(by_lines.fields) and streamed.errors.height == 0
    from jsoneval_polars import _native
    from jsoneval_polars.cli import main
    from jsoneval_polars.results import read_results

    assert main(["score", "--gt", str(pretty), "--aio", str(ndjson), "--out",
                 str(tmp_path / "cli"), "--quiet"]) == 0
    assert read_results(tmp_path / "cli").fields.equals(by_lines.fields)

    # line 1: a; line 5: b lacks a comma; line 9: c; line 13: d, never closed; line 15: e;
    # line 18: a stray bracket; line 19: f; line 22: g, its string never closed; line 25: h
    bad = tmp_path / "bad.json"
    g = '{\n  "doc_id": "g", "x": "3\n}\n'
    bad.write_text('{\n  "doc_id": "a",\n  "x": 1\n}\n{\n  "doc_id": "b"\n  "x": 2\n}\n'
                   '{\n  "doc_id": "c",\n  "x": 3\n}\n{\n  "doc_id": "d",\n'
                   '{\n  "doc_id": "e"\n}\n}\n{\n  "doc_id": "f"\n}\n'
                   + g + '{\n  "doc_id": "h"\n}\n')
    closed = tmp_path / "closed.json"  # the same less g: every bracket closes
    closed.write_text(bad.read_text().replace(g, "\n\n\n"))
    assert _native.scan_records(bad.read_bytes(), 0, True, "doc_id", objects=True) is None
    assert _native.scan_records(closed.read_bytes(), 0, True, "doc_id", objects=True) is not None
    for path, lines in ((bad, [5, 13, 18, 22]), (closed, [5, 13, 18])):
        for r in (evaluate(path, ndjson), score_files(path, ndjson, tmp_path / path.stem)):
            present = r.documents.filter(pl.col("gt_present"))
            assert present["doc_id"].to_list() == ["a", "c", "e", "f", "h"]
            gt_errors = r.errors.filter(pl.col("source") == "gt")
            assert gt_errors["line"].to_list() == lines
            assert gt_errors["error"].str.starts_with("not valid JSON").all()

    cut = tmp_path / "cut.ndjson"  # a first line cut short, then records: NDJSON
    cut.write_text('{"doc_id": "z", "x": [1,\n' + ndjson.read_text())
    r = evaluate(cut, ndjson)
    assert r.documents["doc_id"].to_list() == ["a", "b", "c"]
    assert r.errors.select("source", "line").rows() == [("gt", 1)]


_tricky_text = st.text(alphabet='{}[]"\\ a\n\u00e9', max_size=6)


@given(
    objects=st.lists(st.dictionaries(_tricky_text, st.recursive(
        st.none() | st.integers() | _tricky_text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_tricky_text, inner,
                                                                     max_size=3),
        max_leaves=8)), max_size=5),
    indent=st.sampled_from([None, 0, 2]),
    gaps=st.lists(st.sampled_from(["\n", "", " ", "\r\n", "\n\n"]), min_size=5, max_size=5),
)
def test_pretty_printed_objects_split_where_each_object_ends(objects, indent, gaps):
    """Each object of text written as ``jq .`` writes it is one value, with the line it starts
    on, whatever brackets, quotes and backslashes its strings hold: as the Python path finds
    them (ingest.object_texts) and as the kernel does (``_native.scan_records``)."""
    from jsoneval_polars import _native
    from jsoneval_polars.ingest import object_texts

    text, expected = "", []
    for obj, gap in zip(objects, gaps, strict=False):
        dumped = json.dumps(obj, indent=indent, ensure_ascii=False)
        expected.append((text.count("\n") + 1, dumped))
        text += dumped + gap
    found = [(line, value.strip().decode()) for line, value in object_texts(text.encode())]
    assert found == expected
    data = text.encode()
    table, declined, spans = _native.scan_records(data, 0, True, "doc_id", objects=True)[0]
    line, offset, length = pl.DataFrame(table).select("line", "offset", "length")
    native = sorted([*zip(line, zip(offset, length, strict=True), strict=True),
                     *zip(declined, spans, strict=True)])
    assert [(n + 1, data[a:a + k].decode()) for n, (a, k) in native] == expected


def test_byte_order_marks_at_line_starts(tmp_path):
    """Files joined from files that each began with a BOM: a BOM before a record is skipped, as
    JSON text skips it, and a line holding a BOM alone is a blank line, not a bad record."""
    from jsoneval_polars.stream import score_files

    joined = tmp_path / "joined.ndjson"
    joined.write_bytes(b'\xef\xbb\xbf{"doc_id": "a", "x": 1}\n\xef\xbb\xbf\n'
                       b'\xef\xbb\xbf  \r\n\xef\xbb\xbf{"doc_id": "b", "x": 2}\n')
    for run in (evaluate(joined, joined), score_files(joined, joined, tmp_path / "out")):
        assert run.documents["doc_id"].to_list() == ["a", "b"] and run.errors.height == 0
        assert (run.summary["n_read_gt"], run.summary["micro_f1"]) == (2, 1.0)


def test_aio_only_documents_are_not_passed():
    # issue 13: an empty AIO-only document had RQS 0.85 (safety 0.15 + completeness 0.25 +
    # accuracy 0.45 of an empty denominator) and passed; with three invented fields
    # 0.85 - 0.15 = 0.70, still a pass. Neither is a pass now, and the pass rate counts them.
    r = evaluate([{"doc_id": "g", "a": 1}],
                 [{"doc_id": "g", "a": 1}, {"doc_id": "e"},
                  {"doc_id": "x", "p": 1, "q": 2, "r": 3}])
    docs = {row["doc_id"]: row for row in r.documents.iter_rows(named=True)}
    assert docs["e"]["rqs"] == pytest.approx(0.85) and docs["x"]["rqs"] == pytest.approx(0.70)
    assert [docs[d]["passed"] for d in ("g", "e", "x")] == [True, False, False]
    assert r.summary["n_aio_only"] == 2 and r.summary["pass_rate"] == pytest.approx(1 / 3)
    ref = reference.reference_evaluate([
        {"doc_id": "g", "gt": {"a": 1}, "aio": {"a": 1}},
        {"doc_id": "e", "gt": {}, "aio": {}, "gt_present": False},
        {"doc_id": "x", "gt": {}, "aio": {"p": 1, "q": 2, "r": 3}, "gt_present": False},
    ])
    assert ref["summary"]["pass_rate"] == r.summary["pass_rate"]


def test_common_slips_are_named_in_their_error_rows(tmp_path):
    """Records encoded twice (``json.dumps`` of JSON text: each line a string), an array's
    elements written one a line with their commas, and lines ended by a lone CR (one line to
    an NDJSON reader): each error row says which slip it is, in both drivers."""
    from jsoneval_polars.stream import score_files

    records = [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 2}]
    twice = tmp_path / "twice.ndjson"
    twice.write_text("".join(json.dumps(json.dumps(r)) + "\n" for r in records))
    commas = tmp_path / "commas.ndjson"
    commas.write_text("".join(json.dumps(r) + ",\n" for r in records))
    plain = tmp_path / "plain.ndjson"
    plain.write_text("".join(json.dumps(r) + "\n" for r in records))
    classic_mac = tmp_path / "cr.ndjson"
    classic_mac.write_text("".join(json.dumps(r) + "\r" for r in records), newline="")
    for gt, hint, n_rows in (
        (twice, "got a string holding a JSON object (was the record encoded twice?)", 2),
        (commas, "; NDJSON lines end without a comma", 2),
        (classic_mac, "; its lines end in a lone CR: convert them to LF, one record a line", 1),
    ):
        for r in (evaluate(gt, plain), score_files(gt, plain, tmp_path / f"o-{gt.stem}")):
            rows = r.errors.filter(pl.col("source") == "gt")
            assert rows.height == n_rows and rows["error"].str.ends_with(hint).all(), rows
    bad = tmp_path / "bad.ndjson"  # other extra data, another string: no hint
    bad.write_text('{"doc_id": "a"} x\n"just text"\n')
    rows = evaluate(bad, plain).errors.filter(pl.col("source") == "gt")["error"].to_list()
    assert not any("comma" in e or "twice" in e or "CR" in e for e in rows), rows
