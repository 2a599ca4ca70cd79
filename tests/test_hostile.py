"""Issue 12: wrong input fails loudly. Each test here passed silently (or crashed with a
traceback) before: a bad config value, a misspelt name, a run that pairs nothing."""

from __future__ import annotations

import gzip
import lzma
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import jsoneval_polars
from jsoneval_polars import ConfigError, InputError, RunFailed, check_run, evaluate, parse_config
from jsoneval_polars.gate import parse_gate
from jsoneval_polars.config import Config, ListConfig, MatchField, Weights, load_config

# ----------------------------------------------------------------------------------------------
# Config validated at construction, the same rules as parse_config


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Config(fuzzy_threshold=5.0), "fuzzy_threshold must be between 0.0 and 1.0"),
        (lambda: Config(pass_threshold=-0.1), "pass_threshold must be between"),
        (lambda: Config(rel_tol=math.inf), "numeric.rel_tol must be a finite number"),
        (lambda: Config(abs_tol=math.nan), "numeric.abs_tol must be a finite number"),
        (lambda: Weights(accuracy=math.inf), "weights.accuracy must be a finite number"),
        (lambda: Weights(safety=-1), "weights.safety must be >= 0"),
        (lambda: Config(default_text_strategy="FUZZZY"), "default_text_strategy must be one of"),
        (lambda: Config(field_strategies={"a": "LEVENSHTEIN"}), "field_strategies.a must be"),
        (lambda: ListConfig(method="hungarian"), "method must be one of 'greedy'"),
        (lambda: ListConfig(threshold=2), "threshold must be between"),
        (lambda: MatchField("id", prefix=0), "prefix must be a positive integer"),
        (lambda: Config(id_field=""), "id_field must be a non-empty string"),
        (lambda: Config(empty_containers_are_null="yes"), "must be true or false"),
        (lambda: Config(fuzzy_treshold=0.9),
         "no field 'fuzzy_treshold'.*did you mean 'fuzzy_threshold'"),
        (lambda: Weights(acuracy=1), "did you mean 'accuracy'"),
    ],
)
def test_config_objects_are_validated_at_construction(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_config_construction_normalizes_like_parse_config():
    built = Config(default_text_strategy="fuzzy", field_strategies={"total": "numeric"},
                   lists={"items": ListConfig(match_fields=["sku"], method="OPTIMAL")})
    parsed = parse_config({"default_text_strategy": "FUZZY",
                           "field_strategies": {"total": "NUMERIC"},
                           "lists": {"items": {"match_fields": ["sku"], "method": "optimal"}}})
    assert built == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"weights": {"accuracy": Infinity}}', "weights.accuracy must be a finite number"),
        ('{"numeric": {"rel_tol": Infinity}}', "numeric.rel_tol must be a finite number"),
        ('{"numeric": {"abs_tol": NaN}}', "numeric.abs_tol must be a finite number"),
        ('{"fuzzy_threshold": -Infinity}', "fuzzy_threshold must be a finite number"),
        ("null", "the config is null"),
    ],
)
def test_config_files_with_non_finite_numbers_or_null_are_errors(tmp_path, text, message):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_empty_yaml_config_is_an_error(tmp_path):
    pytest.importorskip("yaml")
    path = tmp_path / "config.yaml"
    path.write_text("# nothing here\n")
    with pytest.raises(ConfigError, match="the config is null"):
        load_config(path)


@pytest.mark.parametrize(
    ("suffix", "text"),
    [(".json", '{"fuzzy_threshold": 0.7, "lists": {"line_items": {"method": "index"}}}'),
     (".toml", 'fuzzy_threshold = 0.7\n[lists.line_items]\nmethod = "index"\n'),
     (".yaml", "fuzzy_threshold: 0.7\nlists:\n  line_items:\n    method: index\n")],
)
def test_a_config_file_with_a_bom_reads_as_without(tmp_path, suffix, text):
    """Windows editors save UTF-8 with a byte order mark; json.loads and tomllib refused it
    ("Unexpected UTF-8 BOM", "Invalid statement")."""
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    plain, bom = tmp_path / f"plain{suffix}", tmp_path / f"bom{suffix}"
    plain.write_text(text, encoding="utf-8")
    bom.write_text(text, encoding="utf-8-sig")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf")
    config = load_config(bom)
    assert config == load_config(plain) and config.fuzzy_threshold == 0.7


@pytest.mark.parametrize(
    ("option", "encoding", "message"),
    [("--config", "utf-16", "config error: c.json: UTF-16 text, not UTF-8: convert it to "
      "UTF-8 (iconv -f UTF-16 -t UTF-8)"),
     ("--config", "latin-1", "config error: c.json: not UTF-8 text: byte 0xe9 at byte 17"),
     ("--confidence", "utf-16", "error: --confidence c.json: UTF-16 text, not UTF-8")],
)
def test_cli_a_side_file_not_in_utf8_is_one_line(tmp_path, option, encoding, message):
    """A config or confidence file in another encoding was a UnicodeDecodeError traceback."""
    (tmp_path / "c.json").write_text('{"id_field": "café"}', encoding=encoding)
    proc = _cli("score", "--sample", option, "c.json", "--out", "out", "--quiet", cwd=tmp_path)
    _one_line(proc, 2, f"jsoneval: {message}")


def test_json_infinity_reaches_the_check():
    """Python's json module reads Infinity as float('inf'): the config check must see it."""
    assert json.loads('{"a": Infinity}')["a"] == math.inf


# ----------------------------------------------------------------------------------------------
# Runs that must not pass: no pairs, mostly errors, a quality gate


def test_a_run_that_pairs_nothing_fails_in_the_summary():
    r = evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "b", "x": 1}])
    assert r.summary["status"] == "failed"
    assert r.summary["failure"].startswith("no document pairs: 1 GT and 1 AIO records")
    with pytest.raises(RunFailed, match="no document pairs"):
        check_run(r, raise_on_failure=True)


def test_a_side_of_mostly_errors_fails_in_the_summary(tmp_path):
    gt = tmp_path / "gt.ndjson"
    gt.write_text('{"doc_id": "a", "x": 1}\nnot json\n{broken\n')
    aio = tmp_path / "aio.ndjson"
    aio.write_text('{"doc_id": "a", "x": 1}\n')
    r = evaluate(gt, aio)
    assert r.summary["failure"] == "2 of 3 GT records are errors (see the errors table)"
    assert r.summary["status"] == "failed"
    healthy = evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}])
    assert healthy.summary["failure"] is None and healthy.summary["status"] == "healthy"
    assert check_run(healthy) == []


def test_fail_under_gate_in_the_api():
    r = evaluate([{"doc_id": "a", "x": 1, "y": 2}], [{"doc_id": "a", "x": 1, "y": 3}])
    assert r.summary["micro_f1"] == pytest.approx(0.5)  # TP x; FP+FN y: 2*1/(2+1+1)
    assert check_run(r, {"micro_f1": 0.5}) == []
    assert check_run(r, {"micro_f1": 0.6, "mean_hallucination": 0.0}) == [
        "micro_f1 0.5000 is below 0.6"
    ]
    with pytest.raises(RunFailed, match="micro_f1 0.5000 is below 0.9"):
        check_run(r, {"micro_f1": 0.9}, raise_on_failure=True)
    with pytest.raises(ValueError, match="did you mean 'micro_f1'"):
        check_run(r, {"micro_f": 0.9})
    assert parse_gate("micro_f1=0.9, pass_rate=0.8") == {"micro_f1": 0.9, "pass_rate": 0.8}


# ----------------------------------------------------------------------------------------------
# Names only the data reveals: warning rows; names the options give: errors


def test_unmatched_config_and_metadata_names_are_warning_rows():
    r = evaluate(
        [{"doc_id": "a", "total": 1, "items": [{"sku": "x"}], "modle": "m1"}],
        [{"doc_id": "a", "total": 1, "items": [{"sku": "x"}]}],
        config={"field_strategies": {"totl": "NUMERIC", "sku": "EXACT"},
                "lists": {"item": {"match_fields": ["sku"]}}},
        metadata=["model"],
    )
    warnings = r.errors.filter(pl.col("severity") == "warning")
    assert warnings["source"].to_list() == ["config"] * 3
    assert warnings["error"].to_list() == [
        "field_strategies names 'totl', which occurs in no document. Hint: did you mean 'total'?",
        "lists names 'item', which is no list of records in any document. "
        "Hint: did you mean 'items'?",
        "metadata 'model' has no value in any record; its column is empty. "
        "Hint: did you mean 'modle'?",
    ]
    assert r.summary["n_warnings"] == 3


def test_metadata_naming_a_scored_member_or_the_id_is_an_error():
    gt = [{"doc_id": "a", "vendor": {"name": "Acme"}, "model": "m"}]
    with pytest.raises(InputError, match="metadata 'vendor' holds an object, a scored member"):
        evaluate(gt, gt, metadata=["vendor"])
    with pytest.raises(InputError, match="metadata names the id field 'doc_id'"):
        evaluate(gt, gt, metadata=["doc_id"])
    assert evaluate(gt, gt, metadata=["model"]).documents["model"].to_list() == ["m"]


def test_partition_by_a_column_without_values_is_an_error(tmp_path):
    r = evaluate([{"doc_id": "a", "x": 1, "runid": "r1"}], [{"doc_id": "a", "x": 1}],
                 metadata=["run_id"])
    hint = "none of the 1 documents has one. Hint: did you mean 'runid'"
    with pytest.raises(InputError, match=hint):
        r.write(tmp_path / "out", partition_by="run_id")
    assert not list((tmp_path / "out").rglob("*.parquet"))


# ----------------------------------------------------------------------------------------------
# The command line: exit codes and one-line messages


SAMPLE = Path(jsoneval_polars.__file__).parent / "sample"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jsoneval_polars", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _one_line(proc: subprocess.CompletedProcess, code: int, text: str) -> None:
    assert proc.returncode == code, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert text in lines[0], lines[0]


def test_cli_config_file_given_as_gt_fails_loudly(tmp_path):
    proc = _cli("score", "--gt", str(SAMPLE / "config.json"), "--aio", str(SAMPLE / "aio.ndjson"),
                "--out", "out", "--quiet", cwd=tmp_path)
    _one_line(proc, 1, "jsoneval: run failed: no document pairs")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["status"] == "failed"
    # pretty-printed, it reads as one record (DECISIONS 108): an error row says what it is
    errors = pl.read_parquet(tmp_path / "out" / "errors")
    assert errors.select("source", "line").rows() == [("gt", 1)]
    assert errors["error"][0].startswith("a jsoneval config (keys field_strategies, ")
    assert errors["error"][0].endswith("not a document: give it with --config (config= in "
                                       "Python)")
    # on one line, as NDJSON: the same row, by either driver
    from jsoneval_polars.stream import score_files

    one_line = tmp_path / "config.ndjson"
    one_line.write_text(json.dumps(json.loads((SAMPLE / "config.json").read_text())) + "\n")
    for run in (evaluate(one_line, SAMPLE / "aio.ndjson"),
                score_files(one_line, SAMPLE / "aio.ndjson", tmp_path / "files")):
        assert run.errors.filter(pl.col("source") == "gt").select("line", "error").rows() \
            == [(1, errors["error"][0])]
        assert not run.documents["gt_present"].any()  # no GT record was read


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (("--gt", "missing.ndjson", "--aio", "missing.ndjson"), 2,
         "gt input missing.ndjson does not exist or is not a file"),
        (("--gt", ".", "--aio", "."), 2, "gt input . does not exist or is not a file"),
        (("--sample", "--fail-under", "micro_f1=0.99"), 3,
         "quality gate failed: micro_f1 0.9059 is below 0.99"),
        (("--sample", "--fail-under", "micro_f=0.9"), 2, "did you mean 'micro_f1'"),
        (("--sample", "--fail-under", "micro_f1"), 2, "write FIGURE=BOUND"),
        (("--sample", "--meta", "vendor"), 2, "metadata 'vendor' holds an object"),
        (("--sample", "--meta", "doc_id"), 2, "metadata names the id field 'doc_id'"),
        (("--sample", "--partition-by", "run_id"), 1,
         "cannot partition by 'run_id': none of the 306 documents has one"),
    ],
)
def test_cli_errors_are_one_line_with_the_documented_code(tmp_path, args, code, text):
    (tmp_path / "array.json").write_text('[{"doc_id": "a"}]\n')
    _one_line(_cli("score", *args, "--out", "out", "--quiet", cwd=tmp_path), code, text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("doc_id,safety\ndoc-0000000,0.5\ndoc-0000001,x\n",
         "--safety safety.csv: safety of document 'doc-0000001' must be a number in [0, 1]; "
         "got 'x'"),
        ("id,score\na,1\n",
         "--safety safety.csv: needs a doc_id and a safety column; columns are ['id', 'score']"),
        ("", "--safety safety.csv: not a readable CSV table: empty CSV"),
        ("doc_id,safety\ndoc-0000000,1.5\n",
         "--safety safety.csv: safety of document 'doc-0000000' must be a number in [0, 1]; "
         "got '1.5'"),
        ("doc_id,safety\nnot-in-the-run,-0.5\n",
         "--safety safety.csv: safety of document 'not-in-the-run' must be a number in [0, 1]; "
         "got '-0.5'"),
        ("doc_id,safety\ndoc-0000000,\n",
         "--safety safety.csv: safety of document 'doc-0000000' must be a number in [0, 1]; "
         "got None"),
    ],
)
def test_cli_a_bad_safety_file_is_one_line(tmp_path, text, message):
    """The value that is not a number in [0, 1] is named, in any row (a CSV column holding
    one is read as text, and the first row's '0.5' was named instead); an empty file is no
    traceback. A side file's problem exits 2, as a --confidence file's and a missing --gt's."""
    (tmp_path / "safety.csv").write_text(text)
    proc = _cli("score", "--sample", "--safety", "safety.csv", "--out", "out", "--quiet",
                cwd=tmp_path)
    _one_line(proc, 2, f"jsoneval: error: {message}")
    proc = _cli("score", "--sample", "--safety", "missing.csv", "--out", "out", "--quiet",
                cwd=tmp_path)
    _one_line(proc, 2, "jsoneval: error: --safety missing.csv does not exist or is not a file")


def test_cli_a_safety_file_with_a_bom_reads_as_without_and_utf16_is_named(tmp_path):
    """An NDJSON --safety file may start with a UTF-8 BOM, as the inputs may; UTF-16 is a
    usage error naming the encoding (Polars stopped at the BOM with "TapeError")."""
    text = '{"doc_id": "doc-0000000", "safety": 0.25}\n{"doc_id": "doc-0000001", "safety": 1}\n'
    (tmp_path / "plain.ndjson").write_text(text, encoding="utf-8")
    (tmp_path / "bom.ndjson").write_text(text, encoding="utf-8-sig")
    documents = []
    for name in ("plain", "bom"):
        proc = _cli("score", "--sample", "--safety", f"{name}.ndjson", "--out", name,
                    "--quiet", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        documents.append(pl.read_parquet(tmp_path / name / "documents" / "*.parquet")
                         .select("doc_id", "safety").sort("doc_id"))
    assert documents[0].equals(documents[1])
    assert documents[0].filter(pl.col("doc_id") == "doc-0000000")["safety"].to_list() == [0.25]
    (tmp_path / "utf16.ndjson").write_text(text, encoding="utf-16")
    proc = _cli("score", "--sample", "--safety", "utf16.ndjson", "--out", "o16", "--quiet",
                cwd=tmp_path)
    _one_line(proc, 2, "jsoneval: error: --safety utf16.ndjson is UTF-16 text, not UTF-8 JSON")


def test_a_safety_table_without_its_columns_is_named_by_every_driver(tmp_path):
    from jsoneval_polars.stream import score_files

    table = pl.DataFrame({"id": ["a"], "score": [0.5]})
    message = r"safety table needs doc_id and safety columns; got \['id', 'score'\]"
    with pytest.raises(InputError, match=message):
        evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1}], safety=table)
    (tmp_path / "d.ndjson").write_text('{"doc_id": "a", "x": 1}\n')
    with pytest.raises(InputError, match=message):
        score_files(tmp_path / "d.ndjson", tmp_path / "d.ndjson", tmp_path / "o", safety=table)


def test_cli_a_safety_csv_keeps_its_ids_as_written(tmp_path):
    """A --safety CSV is read as the inputs' CSV files are, as text: the id 007 is the
    document 007 (a type guess read it as 7, and the document kept safety 1.0 without a word)."""
    (tmp_path / "docs.ndjson").write_text('{"doc_id": "007", "x": 1}\n')
    (tmp_path / "safety.csv").write_text("doc_id,safety\n007,0.25\n")
    proc = _cli("score", "--gt", "docs.ndjson", "--aio", "docs.ndjson", "--safety",
                "safety.csv", "--out", "out", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    documents = pl.read_parquet(tmp_path / "out" / "documents" / "*.parquet")
    assert documents.select("doc_id", "safety").rows() == [("007", 0.25)]


def test_cli_a_table_file_that_cannot_be_read_is_one_line(tmp_path):
    (tmp_path / "gt.parquet").write_bytes(b"not parquet\n")
    (tmp_path / "aio.csv").write_text("doc_id,x\na,1\n")
    for columns in (["--json-column", "*"], []):  # read whole, or a batch at a time
        _one_line(_cli("score", "--gt", "gt.parquet", "--aio", "aio.csv", *columns, "--out",
                       "out", "--quiet", cwd=tmp_path), 2,
                  "jsoneval: error: gt input gt.parquet: not a readable PARQUET table: parquet:")


def test_cli_sample_never_overwrites_a_file_of_yours(tmp_path):
    """`jsoneval sample DIR` writes the sample again over itself, not over other files."""
    assert _cli("sample", "data", cwd=tmp_path).returncode == 0
    assert _cli("sample", "data", cwd=tmp_path).returncode == 0
    (tmp_path / "data" / "gt.ndjson").write_text('{"doc_id": "mine"}\n')
    _one_line(_cli("sample", "data", cwd=tmp_path), 2,
              "jsoneval: error: data/gt.ndjson exists and is not the sample's; give another "
              "directory")
    assert (tmp_path / "data" / "gt.ndjson").read_text() == '{"doc_id": "mine"}\n'


def test_cli_output_errors_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    _one_line(_cli("score", "--sample", "--out", "file", cwd=tmp_path), 2, "--out file is a file")
    _one_line(_cli("score", "--sample", "--out", "file/sub", cwd=tmp_path), 2, "file/sub")


def test_cli_glob_characters_in_the_output_path(tmp_path):
    for extra in ((), ("--stream",)):
        proc = _cli("score", "--sample", "--out", "runs/[2024]", "--quiet", *extra, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads((tmp_path / "runs" / "[2024]" / "summary.json").read_text())
        assert summary["n_documents"] == 306


def test_cli_warns_about_names_only_the_data_reveals(tmp_path):
    (tmp_path / "c.json").write_text('{"field_strategies": {"totl": "NUMERIC"}}')
    proc = _cli("score", "--sample", "--config", "c.json", "--by", "model", "--out", "out",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-2:] == [
        "jsoneval: warning: field_strategies names 'totl', which occurs in no document. "
        "Hint: did you mean 'total'?",
        "jsoneval: warning: metadata 'model' has no value in any record; its column is empty.",
    ]
    assert "(no model)" in proc.stdout and "None" not in proc.stdout


def test_cli_warns_when_gt_and_aio_are_the_same_file(tmp_path):
    """Scoring a file against itself is a sanity check or a slip: the run goes on (every
    document passes), with one line on stderr saying so."""
    (tmp_path / "gt.ndjson").write_text('{"doc_id": "a", "x": 1}\n')
    (tmp_path / "link.ndjson").symlink_to(tmp_path / "gt.ndjson")
    proc = _cli("score", "--gt", "gt.ndjson", "--aio", "link.ndjson", "--out", "out",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("jsoneval: warning: --gt and --aio are the same file (gt.ndjson): every document "
            "is scored against itself") in proc.stderr
    (tmp_path / "aio.ndjson").write_text('{"doc_id": "a", "x": 1}\n')
    proc = _cli("score", "--gt", "gt.ndjson", "--aio", "aio.ndjson", "--out", "out",
                cwd=tmp_path)
    assert proc.returncode == 0 and "same file" not in proc.stderr, proc.stderr


def test_streaming_warns_like_evaluate(tmp_path):
    from jsoneval_polars.stream import score_files

    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text('{"doc_id": "a", "total": 1, "modle": "m"}\n')
    aio.write_text('{"doc_id": "a", "total": 1}\n')
    config = {"field_strategies": {"totl": "NUMERIC"}}
    streamed = score_files(gt, aio, tmp_path / "out", config=config, metadata=["model"], workers=1)
    in_memory = evaluate(gt, aio, config=config, metadata=["model"])
    warnings = streamed.errors.filter(pl.col("source") == "config")["error"].to_list()
    assert warnings == in_memory.errors.filter(pl.col("source") == "config")["error"].to_list()
    assert len(warnings) == 2 and streamed.summary["n_warnings"] == 2


# ----------------------------------------------------------------------------------------------
# Odd encodings and ids no table can hold

RECORDS = '{"doc_id": "a", "x": 1}\n{"doc_id": "b", "x": 2}\n'


@pytest.mark.parametrize(
    ("name", "data", "what"),
    [
        ("utf16.ndjson", RECORDS.encode("utf-16"), "is UTF-16 text, not UTF-8 JSON: convert"),
        ("utf16be.ndjson", RECORDS.encode("utf-16-be"), "is UTF-16 or UTF-32 text (it holds NUL"),
        ("utf32.json", ("[" + RECORDS.replace("\n", ",")[:-1] + "]").encode("utf-32"),
         "is UTF-32 text"),
        ("utf16.json", b'\xff\xfe' + '[{"doc_id": "a"}]'.encode("utf-16-le"), "is UTF-16 text"),
        ("utf16.ndjson.gz", gzip.compress(RECORDS.encode("utf-16"), mtime=0),
         "is UTF-16 text, not UTF-8 JSON: convert"),
        ("x.ndjson.xz", lzma.compress(RECORDS.encode()),
         "is xz-compressed, not UTF-8 JSON: decompress it first (unxz)"),
    ],
    ids=["utf-16 bom", "utf-16 no bom", "utf-32 array", "utf-16 array", "gzip of utf-16", "xz"],
)
def test_files_that_are_not_utf8_text_are_refused_in_one_line(tmp_path, name, data, what):
    """DECISIONS.md 18c: before, a UTF-16 NDJSON file gave an error row for every line but the
    first, which Python's json decoded, and a UTF-16 JSON array was read."""
    from jsoneval_polars.stream import score_files

    (tmp_path / name).write_bytes(data)
    (tmp_path / "aio.ndjson").write_text(RECORDS)
    _one_line(_cli("score", "--gt", name, "--aio", "aio.ndjson", "--out", "out", cwd=tmp_path),
              2, f"{name} {what}")
    for score in (evaluate, lambda g, a: score_files(g, a, tmp_path / "o2")):
        with pytest.raises(InputError, match=re.escape(f"{name} {what}")):
            score(tmp_path / name, tmp_path / "aio.ndjson")
    assert not (tmp_path / "out").exists() and not (tmp_path / "o2").exists()


def test_a_lone_surrogate_in_an_id_is_an_error_row(tmp_path):
    """json reads "\\ud800" into a str that no Arrow table can hold: the record was a
    UnicodeEncodeError traceback that lost the whole run; now it is an error row, the others
    are scored, by every driver."""
    from jsoneval_polars.stream import score_files

    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text('{"doc_id": "a", "x": 1}\n{"doc_id": "\\ud800", "x": 1}\n'
                  '{"doc_id": "b\\udc00c", "x": 2}\n')
    aio.write_text('{"doc_id": "a", "x": 1}\n{"doc_id": "\\ud800", "x": 1}\n')
    expected = [("gt", None, 2, "doc_id '\\ud800' holds a lone surrogate and cannot be stored "
                 "as UTF-8"),
                ("gt", None, 3, "doc_id 'b\\udc00c' holds a lone surrogate and cannot be stored "
                 "as UTF-8"),
                ("aio", None, 2, "doc_id '\\ud800' holds a lone surrogate and cannot be stored "
                 "as UTF-8")]
    objects = [json.loads(line) for line in gt.read_text().splitlines()]
    for run in (evaluate(gt, aio), score_files(gt, aio, tmp_path / "out", workers=2)):
        rows = run.errors.select("source", "doc_id", "line", "error").sort("source", "line",
                                                                           descending=[True, False])
        assert rows.rows() == expected
        assert run.documents["doc_id"].to_list() == ["a"]
    in_memory = evaluate(objects, [{"doc_id": "a", "x": 1}])
    assert in_memory.errors["line"].to_list() == [2, 3] and in_memory.summary["n_documents"] == 1


def _nested_array(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [1_010, 5_000])
def test_a_document_nested_too_deeply_keeps_its_id(tmp_path, depth):
    """Past Python's recursion limit (1,010 levels: the parser reads them, the walk cannot;
    5,000: the parser cannot either) a document is an error row naming its id, and its other
    side is left out (GT) or scored as {} (AIO), whichever limit stopped it: the too-deep text
    once lost its id, so its partner was scored as a document of its own (DECISIONS 102)."""
    from jsoneval_polars.stream import score_files

    deep = _nested_array(depth)
    documents = {"gt": ['{"note": "} ] \\" [", "x": %s}' % deep, '{"x": 2}'],
                 "aio": ['{"x": 1}', '{"x": {"y": %s}}' % deep]}
    expected = [
        ("gt", 1, "a", "error", "document is nested too deeply to score"),
        ("aio", 1, "a", "error", "left out: its GT document is not usable"),
        ("aio", 2, "b", "warning", "document is nested too deeply to score; scored as {}"),
    ]
    for side, texts in documents.items():
        (tmp_path / f"{side}.ndjson").write_text("".join(
            '{"doc_id": "%s", %s\n' % (doc_id, text[1:]) for doc_id, text in zip("ab", texts)))
        pl.DataFrame({"doc_id": ["a", "b"], "json": texts}).write_parquet(
            tmp_path / f"{side}.parquet")
    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    array = tmp_path / "gt.json"  # the GT as a JSON-array file: one record too deep loses
    array.write_text("[%s]" % ",".join(gt.read_text().splitlines()))  # only itself
    for run in (evaluate(gt, aio), score_files(gt, aio, tmp_path / "out", workers=2),
                evaluate(tmp_path / "gt.parquet", tmp_path / "aio.parquet"),
                evaluate(array, aio)):
        rows = run.errors.select("source", "line", "doc_id", "severity", "error")
        assert sorted(rows.rows(), key=lambda r: (r[0] != "gt", r[1])) == expected
        assert run.documents.select("doc_id", "aio_parse_status").rows() == [("b", "invalid")]
    with pytest.raises(InputError, match=r"gt\.ndjson, line 1 \(doc_id 'a'\): document is "
                                         r"nested too deeply to score"):
        evaluate(gt, aio, strict=True)


def test_a_line_that_is_not_json_is_shown_where_it_breaks(tmp_path):
    """The error row says what the parser expected, at which column, and shows the text
    around that place: the record's own line and column are the row's, not the parser's "line
    1 column 60 (char 59)" of a text that is one line."""
    words = '"' + "w" * 50 + '"'
    gt = tmp_path / "gt.ndjson"
    gt.write_text('{"doc_id": "a", "x": 1}\n'
                  '{"doc_id": "b", "x": ' + words + ' "y": 2, "z": [1, 2, 3, 4]}\n'
                  '{"doc_id": "c", "x": }\n')
    with gt.open("ab") as f:  # Latin-1, not UTF-8: the byte and its place, the text around it
        f.write('{"doc_id": "d", "x": "ÉTÉ"}\n'.encode("latin-1"))
    errors = evaluate(gt, [{"doc_id": "a", "x": 1}]).errors
    assert errors.filter(pl.col("severity") == "error").select("line", "error").rows() == [
        (2, "not valid JSON (Expecting ',' delimiter at column 75): "
            "'..." + "w" * 38 + '" "y": 2, "z": [1, 2, ...\''),  # 40 before, 20 from it
        (3, "not valid JSON (Expecting value at column 22): '{\"doc_id\": \"c\", \"x\": }'"),
        (4, "not valid JSON (not UTF-8: byte 0xc9 at byte 23): "
            "'{\"doc_id\": \"d\", \"x\": \"\ufffdT\ufffd\"}'"),
    ]
    cell = pl.DataFrame({"doc_id": ["a"], "json": ['{\n  "x": 1,\n  "y":\n}']})
    errors = evaluate(cell, [{"doc_id": "a", "x": 1}]).errors
    assert errors["error"].to_list() == [
        "not valid JSON (Expecting value at line 4, column 1 of the text): "
        "'{\\n  \"x\": 1,\\n  \"y\":\\n}'"]


def test_text_too_deep_to_parse_is_read_member_by_member():
    from jsoneval_polars.ingest import _parse_json
    from jsoneval_polars.values import TOO_DEEP

    deep = _nested_array(5_000)
    text = ('\ufeff { "id" : 7, "s": "]}\\"{", "n": 1e400, "o": {"k": [1, {"a": null}]},'
            ' "d": %s, "id": "last" } ' % deep)
    assert _parse_json(text.encode()) == (
        {"id": "last", "s": ']}"{', "n": math.inf, "o": {"k": [1, {"a": None}]},
         "d": TOO_DEEP}, ["number 1e400 overflows a double; kept as inf"])
    assert _parse_json(('{"d": %s}' % deep).encode())[0] == {"d": TOO_DEEP}
    assert _parse_json(deep.encode()) == ([TOO_DEEP], [])
    # a JSON-array file: each record on its own, a record too deep read member by member
    assert _parse_json(('[{"id": 1, "d": %s}, %s, {"id": 2}]' % (deep, deep)).encode()) == (
        [{"id": 1, "d": TOO_DEEP}, TOO_DEEP, {"id": 2}], [])
    for bad in ('{"d": %s,}' % deep, '{"d": %s} x' % deep, '{"d": [%s}' % deep,
                '{d: %s}' % deep, '{"d" %s}' % deep, '{"a": tru, "d": %s}' % deep):
        with pytest.raises(ValueError):
            _parse_json(bad.encode())


def test_a_lone_surrogate_in_metadata_is_a_warning_and_a_null(tmp_path):
    """The document is scored; only the label that no table can hold is left out, and said."""
    from jsoneval_polars.stream import score_files

    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    gt.write_text('{"doc_id": "a", "x": 1, "model": "\\ud800"}\n'
                  '{"doc_id": "b", "x": 1, "model": "m"}\n')
    aio.write_text('{"doc_id": "a", "x": 1}\n{"doc_id": "b", "x": 1}\n')
    for run in (evaluate(gt, aio, metadata=["model"]),
                score_files(gt, aio, tmp_path / "out", metadata=["model"], workers=2)):
        assert run.errors.select("source", "doc_id", "line", "severity", "error").rows() == [
            ("gt", "a", 1, "warning", "metadata 'model' '\\ud800' holds a lone surrogate and "
             "cannot be stored as UTF-8; left null")]
        assert sorted(run.documents.select("doc_id", "model").rows()) == [("a", None),
                                                                           ("b", "m")]
    # the only value nulled: the column is empty, and the run says so without claiming the
    # member is absent
    gt.write_text('{"doc_id": "a", "x": 1, "model": "\\ud800"}\n')
    aio.write_text('{"doc_id": "a", "x": 1}\n')
    errors = evaluate(gt, aio, metadata=["model"]).errors
    assert errors.filter(pl.col("source") == "config")["error"].to_list() == [
        "metadata 'model' has no value in any record; its column is empty."]


def test_compressed_inputs_are_read_through_a_plain_copy(tmp_path):
    """gzip, zstd and bzip2 inputs (NDJSON, a JSON array, pretty-printed objects, CSV) score
    as their plain text does, by
    every driver and the command line; the errors table, a strict run's error and the manifest
    name the user's file; no copy is left behind; a corrupt stream is one line naming it."""
    import bz2

    import pyarrow as pa

    from jsoneval_polars.results import read_results
    from jsoneval_polars.stream import score_files

    gt = RECORDS + '{"doc_id": "c", "x": [1, 2]}\n'
    aio = '{"doc_id": "a", "x": 1}\n{"doc_id": "b", "x": 3}\nnot json\n'
    (tmp_path / "gt.ndjson").write_text(gt)
    (tmp_path / "aio.ndjson").write_text(aio)
    (tmp_path / "gt.ndjson.gz").write_bytes(gzip.compress(gt.encode(), mtime=0))
    with pa.CompressedOutputStream(str(tmp_path / "aio.ndjson.zst"), "zstd") as out:
        out.write(aio.encode())
    array = json.dumps([json.loads(line) for line in gt.splitlines()], indent=1)
    (tmp_path / "gt.json.bz2").write_bytes(bz2.compress(array.encode()))
    pretty = "\n".join(json.dumps(json.loads(line), indent=2) for line in gt.splitlines())
    (tmp_path / "gt.pretty.json.gz").write_bytes(gzip.compress(pretty.encode(), mtime=0))
    rows = [json.loads(line) for line in gt.splitlines()]
    table = pl.DataFrame({"doc_id": [r.pop("doc_id") for r in rows],
                          "json": [json.dumps(r) for r in rows]})
    (tmp_path / "gt.csv.gz").write_bytes(gzip.compress(table.write_csv().encode(), mtime=0))
    plain = evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson")
    runs = {
        "evaluate": evaluate(tmp_path / "gt.ndjson.gz", tmp_path / "aio.ndjson.zst"),
        "array": evaluate(tmp_path / "gt.json.bz2", tmp_path / "aio.ndjson.zst"),
        "pretty": evaluate(tmp_path / "gt.pretty.json.gz", tmp_path / "aio.ndjson.zst"),
        "csv": evaluate(tmp_path / "gt.csv.gz", tmp_path / "aio.ndjson.zst",
                        json_column="json"),
        "files": score_files(tmp_path / "gt.ndjson.gz", tmp_path / "aio.ndjson.zst",
                             tmp_path / "new" / "folder" / "files"),
    }
    proc = _cli("score", "--gt", "gt.ndjson.gz", "--aio", "aio.ndjson.zst", "--out", "cli",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs["cli"] = read_results(tmp_path / "cli")
    # two compressed CSV files: tables by their plain name, never streamed as NDJSON
    proc = _cli("score", "--gt", "gt.csv.gz", "--aio", "gt.csv.gz", "--json-column", "json",
                "--out", "csvs", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    both_csv = read_results(tmp_path / "csvs")
    assert (both_csv.summary["n_documents"], both_csv.summary["micro_f1"]) == (3, 1.0)
    with pytest.raises(InputError, match=r"gt\.csv\.gz: streaming reads NDJSON; score \.csv "
                                         r"files with evaluate\(\)"):
        score_files(tmp_path / "gt.csv.gz", tmp_path / "aio.ndjson", tmp_path / "o")
    for name, run in runs.items():
        assert_frame_equal(run.fields, plain.fields, check_row_order=False)
        assert run.summary["micro_f1"] == plain.summary["micro_f1"], name
        errors = run.errors if isinstance(run.errors, pl.DataFrame) else run.errors.collect()
        assert errors.select("source", "line", "error").rows() == [
            ("aio", 3, "not valid JSON (Expecting value at column 1): 'not json'")], name
        assert errors["file"][0].endswith("aio.ndjson.zst"), name
    assert runs["evaluate"].manifest["inputs"]["gt"]["path"].endswith("gt.ndjson.gz")
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert manifest["inputs"]["aio"]["path"] == "aio.ndjson.zst"
    with pytest.raises(InputError, match=r"aio\.ndjson\.zst, line 3: not valid JSON"):
        score_files(tmp_path / "gt.ndjson.gz", tmp_path / "aio.ndjson.zst",
                    tmp_path / "strict", strict=True)
    (tmp_path / "cut.gz").write_bytes((tmp_path / "gt.ndjson.gz").read_bytes()[:30])
    _one_line(_cli("score", "--gt", "cut.gz", "--aio", "aio.ndjson", "--out", "cut",
                   cwd=tmp_path), 2, "cut.gz: cannot decompress it as gzip")
    left = [p.name for p in tmp_path.rglob(".jsoneval-input-*")]
    assert not left and not (tmp_path / "strict" / "summary.json").exists()
