"""``jsoneval runs ...`` (SPEC §10) on examples/agent_runs/runs.ndjson, through the command line
and the public API.

The example holds 8 runs: 2 items (apple: public_us, xyz_private: private) × 2 models × 2 runs.
Every expected number below is computed by hand from seeds 002 and 004, in the comments.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from jsoneval_polars import runs
from jsoneval_polars.cli import main
from jsoneval_polars.runs_cli import parse_weights, read_runs

APPROX = pytest.approx
RUNS = Path(__file__).resolve().parents[1] / "examples" / "agent_runs" / "runs.ndjson"

# Seed 002 weights .30/.25/.15/.10/.20 over factual, completeness, citation, source, tool:
#   r1: .30 + .25 + .15·.8 + .10·.8 + .20     = .95    Excellent, pass
#   r3: .18 + .15 + .045 + .06 + .12          = .555   Fair, fail
#   r2: .24 + .20 + .09 + .08 + .16           = .77    Good, pass
#   r4: .24 + .15 + .09 + .06 + .20           = .74    Good, pass
#   r5: .24 + .25 + .12 + .06 + .16           = .83    Good, pass
#   r7: citation missing: (.18 + .20 + .06 + .12) / .85 = .56 / .85   Fair, fail
#   r6: .09 + .15 + 0 + .03 + .06             = .33    Poor, fail
#   r8: 0 + .075 + 0 + 0 + .06                = .135   Critical, fail
OVERALL = {
    "r1": 0.95,
    "r3": 0.555,
    "r2": 0.77,
    "r4": 0.74,
    "r5": 0.83,
    "r7": 0.56 / 0.85,
    "r6": 0.33,
    "r8": 0.135,
}


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys, *argv: str) -> dict:
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_rubric_cli_seed_002(tmp_path, capsys):
    out = tmp_path / "rubric.parquet"
    info = _json(capsys, "runs", "rubric", str(RUNS), "--weights", "seed002", "--out", str(out))
    assert (info["runs"], info["passed"], info["failed"], info["unscored"]) == (8, 4, 4, 0)
    assert info["pass_rate"] == 0.5 and info["status"] == "critical"  # < 0.70 (seed 002)
    assert info["bands"] == {"Excellent": 1, "Good": 3, "Fair": 2, "Poor": 1, "Critical": 1}
    assert info["failing"] == ["r3", "r7", "r6", "r8"]
    assert info["dimension_means"] == {
        "factual_accuracy": APPROX(4.9 / 8),
        "completeness": APPROX(5.7 / 8),
        "citation_accuracy": APPROX(3.1 / 7),  # r7's missing citation is left out
        "source_quality": APPROX(4.3 / 8),
        "tool_efficiency": APPROX(5.4 / 8),
    }
    table = pl.read_parquet(out)
    assert dict(zip(table["run_id"], table["overall"], strict=True)) == APPROX(OVERALL)
    assert table["band"].cast(pl.String).to_list() == [
        "Excellent",
        "Fair",
        "Good",
        "Good",
        "Good",
        "Fair",
        "Poor",
        "Critical",
    ]
    # the same numbers from the public API
    api = runs.rubric_score(pl.read_ndjson(RUNS), runs.SEED_RUBRIC_WEIGHTS)
    assert api["overall"].to_list() == table["overall"].to_list()


def test_rubric_cli_weights_threshold_filters_and_text_summary(tmp_path, capsys):
    out = tmp_path / "r.ndjson"
    code, text, _ = _run(
        capsys,
        "runs",
        "rubric",
        str(RUNS),
        "--weights",
        "factual_accuracy=3,completeness=1",
        "--threshold",
        "0.6",
        "--where",
        "model=gpt-4o",
        "--tag",
        "smoke",
        "--out",
        str(out),
    )
    assert code == 0
    # gpt-4o runs tagged smoke: r1 (3·1 + 1)/4 = 1.0, r6 (3·.3 + .6)/4 = .375
    table = pl.read_ndjson(out)
    assert table["run_id"].to_list() == ["r1", "r6"]
    assert table["overall"].to_list() == APPROX([1.0, 0.375])
    assert "rubric over 2 runs (threshold 0.6): 1 passed, 1 failed" in text
    assert "failing: r6" in text and "wrote 2 rows to" in text


def test_tools_cli_seed_004_examples(tmp_path, capsys):
    out = tmp_path / "tools.parquet"
    info = _json(
        capsys, "runs", "tools", str(RUNS), "--expected-by-category", "seed004", "--out", str(out)
    )
    table = pl.read_parquet(out)
    got = {
        r: (p, rc) for r, p, rc in table.select("run_id", "tool_precision", "tool_recall").rows()
    }
    assert got == {
        "r1": APPROX((3 / 4, 1.0)),  # seed 004 example 1: {SEC, Market, Web, Legal}
        "r3": APPROX((2 / 3, 2 / 3)),  # seed 004's precision example: {SEC, Market, Legal}
        "r2": (1.0, 1.0),
        "r4": APPROX((1.0, 2 / 3)),
        "r5": (1.0, 1.0),
        "r7": (1.0, 0.5),
        "r6": (0.5, 0.5),  # seed 004 example 2: private, {Web, SEC}
        "r8": (0.0, 0.0),  # nothing used: 0, as the seed
    }
    assert info["mean_tool_precision"] == APPROX((0.75 + 1 + 2 / 3 + 1 + 1 + 1 + 0.5 + 0) / 8)
    assert info["mean_tool_recall"] == APPROX((1 + 2 / 3 + 1 + 2 / 3 + 1 + 0.5 + 0.5 + 0) / 8)
    assert info["perfect"] == 2 and info["unknown"] == 0


def test_tools_cli_mapping_file_and_list_column(tmp_path, capsys):
    mapping = tmp_path / "expected.json"
    mapping.write_text(json.dumps({"public_us": ["web_search"], "private": ["web_search"]}))
    out = tmp_path / "t.ndjson"
    info = _json(
        capsys,
        "runs",
        "tools",
        str(RUNS),
        "--expected-by-category",
        str(mapping),
        "--out",
        str(out),
    )
    assert info["perfect"] == 1  # only r7 used exactly [web_search]
    # a list column of expected tools, named by --expected
    runs_file = tmp_path / "runs.ndjson"
    runs_file.write_text(
        json.dumps({"used": ["a", "b"], "want": ["a"]})
        + "\n"
        + json.dumps({"used": None, "want": ["a"]})
        + "\n"
    )
    info = _json(
        capsys,
        "runs",
        "tools",
        str(runs_file),
        "--used",
        "used",
        "--expected",
        "want",
        "--out",
        str(out),
    )
    assert info["mean_tool_precision"] == 0.5 and info["unknown"] == 1


def test_trajectory_cli_seed_004(tmp_path, capsys):
    out = tmp_path / "traj.parquet"
    info = _json(
        capsys, "runs", "trajectory", str(RUNS), "--expected-steps", "seed004", "--out", str(out)
    )
    table = pl.read_parquet(out)
    got = dict(zip(table["run_id"], table["trajectory_match"], strict=True))
    assert got == APPROX(
        {
            "r1": 1.0,
            "r3": 0.6 + 0.4 * 6 / 7,  # fetch_api_data and search_web swapped: 6 of 7 pairs
            "r2": 0.6 * 6 / 8 + 0.4,  # first 6 of 8 steps, the 5 pairs among them in order
            "r4": 1.0,
            "r5": 1.0,
            "r7": 0.6 * 8 / 9 + 0.4,  # an extra retry step: Jaccard 8/9
            "r6": 0.6 * 3 / 8,  # 3 of 8 steps, no consecutive expected pair present: order 0
            "r8": 0.6 * 1 / 8,
        }
    )
    assert info["mean_trajectory_match"] == APPROX(sum(got.values()) / 8)
    assert info["bands"] == {"Excellent": 5, "Good": 1, "Fair": 0, "Poor": 0, "Critical": 2}
    # --no-pairs-order-score 1 gives the two runs without pairs the full order part
    info = _json(
        capsys,
        "runs",
        "trajectory",
        str(RUNS),
        "--expected-steps",
        "seed004",
        "--no-pairs-order-score",
        "1",
        "--out",
        str(out),
    )
    assert dict(pl.read_parquet(out).select("run_id", "trajectory_match").rows())["r8"] == APPROX(
        0.6 / 8 + 0.4
    )


def test_trajectory_cli_expected_steps_list_and_column(tmp_path, capsys):
    out = tmp_path / "t.ndjson"
    _json(
        capsys,
        "runs",
        "trajectory",
        str(RUNS),
        "--expected-steps",
        "parse_input,create_plan",
        "--out",
        str(out),
    )
    # r6 [parse_input, create_plan, search_web]: Jaccard 2/3, the one pair in order
    r6 = pl.read_ndjson(out).filter(pl.col("run_id") == "r6")
    assert r6["trajectory_match"].item() == APPROX(0.6 * 2 / 3 + 0.4)
    runs_file = tmp_path / "runs.ndjson"
    runs_file.write_text(json.dumps({"steps": ["b", "a"], "expected_steps": ["a", "b"]}) + "\n")
    info = _json(capsys, "runs", "trajectory", str(runs_file), "--out", str(out))
    assert info["mean_trajectory_match"] == APPROX(0.6)  # Jaccard 1, the pair reversed


CONSISTENCY_ARGS = (
    "runs", "consistency", str(RUNS), "--value", "risk_level", "--value", "credit_score",
    "--scale", "credit_score=0:100",
)


def test_consistency_cli_within_model(tmp_path, capsys):
    out = tmp_path / "c.parquet"
    info = _json(capsys, *CONSISTENCY_ARGS, "--out", str(out))
    table = pl.read_parquet(out)
    got = {(i, m): c for i, m, c in table.select("item_id", "model", "consistency").rows()}
    # apple/gpt-4o: risk low, low -> 1; scores 82, 78: std 2 -> 1 - 2/100 = .98
    # apple/llama: moderate, low -> tie, 'low' -> .5; 70, 74: .98
    # xyz/gpt-4o: high, high -> 1; 45, 40: std 2.5 -> .975
    # xyz/llama: high, critical -> .5; 50, 30: std 10 -> .9
    assert got == APPROX(
        {
            ("apple", "gpt-4o"): (1 + 0.98) / 2,
            ("apple", "llama-3.3-70b"): (0.5 + 0.98) / 2,
            ("xyz_private", "gpt-4o"): (1 + 0.975) / 2,
            ("xyz_private", "llama-3.3-70b"): (0.5 + 0.9) / 2,
        }
    )
    assert info["mean_consistency_by_model"] == APPROX(
        {"gpt-4o": (0.99 + 0.9875) / 2, "llama-3.3-70b": (0.74 + 0.7) / 2}
    )
    api = runs.consistency_within_model(
        read_runs(RUNS), value=["risk_level", "credit_score"], scale={"credit_score": (0, 100)}
    ).collect()
    assert api.equals(table)


def test_consistency_cli_across_models(tmp_path, capsys):
    out = tmp_path / "a.ndjson"
    info = _json(capsys, *CONSISTENCY_ARGS, "--across-models", "--out", str(out))
    table = pl.read_ndjson(out)
    # apple: modal risk low (gpt) and low (llama: tie -> low) -> 1; means 80 and 72 -> 1 - 8/100
    # xyz: high and critical -> consensus critical (tie -> smallest), .5; 42.5 and 40 -> .975
    assert dict(table.select("item_id", "agreement").rows()) == APPROX(
        {"apple": (1 + 0.92) / 2, "xyz_private": (0.5 + 0.975) / 2}
    )
    assert info["mean_agreement"] == APPROX((0.96 + 0.7375) / 2)


def test_monitor_cli_windows(tmp_path, capsys):
    out = tmp_path / "m.parquet"
    info = _json(capsys, "runs", "monitor", str(RUNS), "--weights", "seed002", "--out", str(out))
    table = pl.read_parquet(out)
    # 09h: r1 .95, r3 .555, r2 .77, r4 .74 -> 3/4 = .75 warning; 10h: r5 .83 -> healthy;
    # 11h: r7, r6, r8 all below .7 -> critical
    assert table.select("n_runs", "n_passed", "status").rows() == [
        (4, 3, "warning"),
        (1, 1, "healthy"),
        (3, 0, "critical"),
    ]
    assert table["pass_rate"].to_list() == [0.75, 1.0, 0.0]
    assert table["mean_score"].to_list() == APPROX(
        [(0.95 + 0.555 + 0.77 + 0.74) / 4, 0.83, (0.56 / 0.85 + 0.33 + 0.135) / 3]
    )
    assert info["pass_rate"] == 0.5 and info["status"] == "critical"
    assert info["latest"]["status"] == "critical"
    assert info["windows_by_status"] == {"critical": 1, "healthy": 1, "warning": 1}


def test_monitor_cli_passed_column_group_by_and_sampling(tmp_path, capsys):
    scored = runs.rubric_score(pl.read_ndjson(RUNS), runs.SEED_RUBRIC_WEIGHTS)
    scored = scored.with_columns(pl.col("ts").str.to_datetime())
    runs_file = tmp_path / "scored.parquet"
    scored.write_parquet(runs_file)
    out = tmp_path / "m.ndjson"
    info = _json(
        capsys,
        "runs",
        "monitor",
        str(runs_file),
        "--passed",
        "passed",
        "--every",
        "1d",
        "--group-by",
        "model",
        "--out",
        str(out),
    )
    table = pl.read_ndjson(out)
    # gpt-4o: r1, r2, r5 pass, r6 fails -> .75 warning; llama: only r4 passes -> .25 critical
    assert table.select("model", "pass_rate", "status").sort("model").rows() == [
        ("gpt-4o", 0.75, "warning"),
        ("llama-3.3-70b", 0.25, "critical"),
    ]
    info = _json(
        capsys,
        "runs",
        "monitor",
        str(runs_file),
        "--sample-rate",
        "0.5",
        "--every",
        "1d",
        "--out",
        str(out),
    )
    assert info["runs_sampled"] == 4  # round(8 · 0.5)


def test_cli_usage_errors_exit_2_and_bad_input_exit_1(tmp_path, capsys):
    out = str(tmp_path / "o.ndjson")
    code, _, err = _run(
        capsys, "runs", "rubric", str(RUNS), "--weights", "factual_acuracy=1", "--out", out
    )
    assert code == 2 and "did you mean 'factual_accuracy'" in err
    code, _, err = _run(capsys, "runs", "rubric", str(RUNS), "--weights", "a", "--out", out)
    assert code == 2 and "NAME=WEIGHT" in err
    code, _, err = _run(capsys, "runs", "rubric", str(RUNS), "--out", out)
    assert code == 2 and "--weights" in err
    code, _, err = _run(capsys, "runs", "monitor", str(RUNS), "--out", out)
    assert code == 2 and "--weights" in err  # no score column: says how to get one
    code, _, err = _run(
        capsys,
        "runs",
        "tools",
        str(RUNS),
        "--expected-by-category",
        "seed004",
        "--out",
        str(tmp_path / "o.csv"),
    )
    assert code == 2 and "list columns" in err
    code, _, err = _run(
        capsys,
        "runs",
        "consistency",
        str(RUNS),
        "--value",
        "credit_score",
        "--scale",
        "credit_score=100",
        "--out",
        out,
    )
    assert code == 2 and "NAME=LOW:HIGH" in err
    code, _, err = _run(
        capsys, "runs", "rubric", str(tmp_path / "missing.ndjson"), "--weights", "a=1", "--out", out
    )
    assert code == 1 and "does not exist" in err
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"a": 1}\n{not json\n')
    code, _, err = _run(capsys, "runs", "rubric", str(bad), "--weights", "a=1", "--out", out)
    # the line and its text, where Polars says "Syntax at character 10"
    assert code == 1 and err == (f"jsoneval: input error: {bad}, line 2: not valid JSON "
                                 "(Expecting property name enclosed in double quotes at "
                                 "column 2): '{not json'\n")
    array = tmp_path / "bad.json"
    array.write_text('[{"a": 1},\n {"a": }]')
    code, _, err = _run(capsys, "runs", "rubric", str(array), "--weights", "a=1", "--out", out)
    assert code == 1 and err == (f"jsoneval: input error: {array}, line 2: not valid JSON "
                                 "(Expecting value at column 8): ' {\"a\": }]'\n")
    for empty, text in (("empty.ndjson", ""), ("blank.ndjson", "\n \n"), ("empty.csv", "")):
        (tmp_path / empty).write_text(text)  # Polars: "could not infer data-type"
        code, _, err = _run(capsys, "runs", "tools", str(tmp_path / empty), "--out", out)
        assert code == 1
        assert err == f"jsoneval: input error: {tmp_path / empty}: the runs file is empty\n"
    (tmp_path / "none.json").write_text("[]")
    code, _, err = _run(capsys, "runs", "tools", str(tmp_path / "none.json"), "--out", out)
    assert code == 1 and err.endswith("none.json: the runs file holds no runs\n")
    mixed = tmp_path / "mixed.ndjson"
    mixed.write_text('{"run_id": "r1", "tools_used": ["a"], "tools_expected": ["a"]}\n'
                     '{"run_id": "r2", "tools_used": "a", "tools_expected": ["a"]}\n')
    code, _, err = _run(capsys, "runs", "tools", str(mixed), "--out", out)
    assert code == 2 and "must be a list column; got String (a runs file that holds lists" in err
    code, _, err = _run(capsys, "runs", "rubrc", str(RUNS), "--out", out)
    assert code == 2 and "Did you mean 'rubric'?" in err and len(err.splitlines()) == 1


def test_a_runs_file_with_a_bom_reads_as_without_and_utf16_is_named(tmp_path, capsys):
    """JSON text may start with a UTF-8 BOM (Windows tools write one); Polars refused it with
    "TapeError at character 0". UTF-16 is one line naming the encoding, where a later line's
    parse was blamed."""
    plain = read_runs(RUNS).collect()
    bom = tmp_path / "bom.ndjson"
    bom.write_bytes(b"\xef\xbb\xbf" + RUNS.read_bytes())
    assert read_runs(bom).collect().equals(plain)
    array = tmp_path / "bom.json"
    array.write_bytes(b"\xef\xbb\xbf" + json.dumps(plain.to_dicts()).encode())
    assert read_runs(array).collect().equals(plain)
    scored = []
    for name, source in (("plain", RUNS), ("bom", bom)):
        out = str(tmp_path / f"{name}.ndjson")
        code, _, err = _run(capsys, "runs", "rubric", str(source), "--weights", "example",
                            "--out", out)
        assert code == 0, err
        scored.append(pl.read_ndjson(out))
    assert scored[0].height == 8 and scored[0].equals(scored[1])
    out = str(tmp_path / "o.ndjson")
    utf16 = tmp_path / "utf16.ndjson"
    utf16.write_bytes(RUNS.read_text(encoding="utf-8").encode("utf-16"))
    code, _, err = _run(capsys, "runs", "rubric", str(utf16), "--weights", "a=1", "--out", out)
    assert code == 2 and err == (f"jsoneval: error: runs file {utf16} is UTF-16 text, not "
                                 "UTF-8 JSON: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)\n")
    packed = tmp_path / "runs.ndjson.xz"  # a compression Polars does not read: named so
    packed.write_bytes(lzma.compress(RUNS.read_bytes()))
    code, _, err = _run(capsys, "runs", "rubric", str(packed), "--weights", "a=1", "--out", out)
    assert code == 2 and "is xz-compressed, not UTF-8 JSON: decompress it first" in err


def test_parse_weights():
    assert parse_weights(["seed002"]) == runs.SEED_RUBRIC_WEIGHTS
    assert parse_weights(["a=1, b=2", "c=0.5"]) == {"a": 1.0, "b": 2.0, "c": 0.5}
    with pytest.raises(ValueError, match="'b=x'"):
        parse_weights(["a=1,b=x"])


def test_runs_command_through_the_installed_entry_point(tmp_path):
    out = tmp_path / "r.parquet"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jsoneval_polars",
            "runs",
            "rubric",
            str(RUNS),
            "--weights",
            "seed002",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 passed, 4 failed" in proc.stdout and out.is_file()
