"""The command line as a terminal user meets it: --version, suggestions, tables that fit 80
columns, escaped data, a closed pipe, Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from jsoneval_polars import evaluate
from jsoneval_polars.terminal import escape, render_slices, render_summary

CLI = [sys.executable, "-m", "jsoneval_polars"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_version_and_suggestions(tmp_path):
    from jsoneval_polars import __version__

    proc = _run("--version", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, f"jsoneval {__version__}\n")
    proc = _run("scre", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "No such command 'scre'. Did you mean 'score'?" in proc.stderr
    proc = _run("score", "--gtt", "x", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "No such option" in proc.stderr and "--gtt" in proc.stderr
    assert "--gt" in proc.stderr.replace("--gtt", "")  # the suggestion


def test_the_table_fits_80_columns_and_escapes_the_data():
    evil = "total\x1b[31m"  # an escape sequence in a key name
    long = "line_items[].a_rather_long_attribute_name_that_goes_on_and_on_and_on_and_on"
    r = evaluate([{"doc_id": "a", evil: 1, long: "x", "name": "Acme"}],
                 [{"doc_id": "a", evil: 1, long: "x", "name": "Acme"}])
    text = render_summary(r, width=80)
    table = text.split("\n\n")[0]
    assert max(len(line) for line in table.splitlines()) <= 80, text
    assert "line_items" in table and "…" not in table  # folded onto more lines, not cut
    assert "\x1b" not in text and '["total\\u001b[31m"]' in text  # a quoted path
    assert "micro" in text and "macro" in text
    console = Console(width=80, record=True, file=io.StringIO())
    sliced = evaluate([{"doc_id": "a", "x": 1}], [{"doc_id": "a", "x": 1, "model": "m\x1b[2J"}],
                      metadata=["model"])
    console.print(render_slices(sliced.attributes_by("model"), ["model"]))
    shown = console.export_text()
    assert "\x1b" not in shown and "m\\x1b[2J" in shown
    assert escape("a\nb\x00c") == "a\\nb\\x00c" and escape("plain é") == "plain é"


def test_a_closed_pipe_exits_quietly(tmp_path):
    for extra in ((), ("--json",)):
        p = subprocess.Popen([*CLI, "score", "--sample", "--out", "o", *extra], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.close()  # the reader is gone before the first line
        stderr = p.stderr.read().decode()
        assert p.wait(timeout=300) == 141 and stderr == ""


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT")
@pytest.mark.parametrize("again_after", [None, 0.05])
def test_ctrl_c_stops_with_one_line_and_keeps_the_previous_results(tmp_path, again_after):
    """Once, or twice as people press it: the second Ctrl-C came while the process exited and
    printed tracebacks from the interpreter's shutdown, or ended it without exit code 130."""
    rows = [json.dumps({"doc_id": str(i), "name": f"item {i}", "n": i, "tags": ["a", "b"]})
            for i in range(400_000)]  # seconds of work even for the native kernel
    (tmp_path / "gt.ndjson").write_text("\n".join(rows) + "\n")
    (tmp_path / "aio.ndjson").write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    first = _run("score", "--sample", "--out", str(out), "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = (out / "summary.json").read_text()
    p = subprocess.Popen(
        [*CLI, "score", "--gt", "gt.ndjson", "--aio", "aio.ndjson", "--out", str(out),
         "--batch-size", "2000", "--workers", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        # with Ctrl-C's default action, as in a terminal: a job started in the background
        # (a CI script's `( ... ) &`) inherits SIGINT ignored, and Python keeps it ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    while not any(out.glob(".jsoneval-*/documents/*.parquet")) and p.poll() is None:
        time.sleep(0.05)  # wait until batches are being written
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C sends: every process of the group
    if again_after is not None:
        time.sleep(again_after)
        os.killpg(p.pid, signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr
    assert [ln for ln in stderr.splitlines() if ln.strip()] == [
        "jsoneval: interrupted; results written before this run are unchanged"
    ]
    assert (out / "summary.json").read_text() == before
    assert not list(out.glob(".jsoneval-*"))


def test_errors_from_the_data_are_escaped(tmp_path):
    for side in ("gt", "aio"):
        (tmp_path / f"{side}.ndjson").write_text('{"doc_id": "a\\u001b[2J", "x": 1}\n' * 2)
    proc = _run("score", "--gt", "gt.ndjson", "--aio", "aio.ndjson", "--out", "o", "--strict",
                cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "\x1b" not in proc.stderr and "a\\x1b[2J" in proc.stderr


def test_ctrl_c_while_the_libraries_load_is_the_same_one_line():
    """A Ctrl-C in the first tenths of a second (Polars loading) was a traceback through the
    import machinery: ``import jsoneval_polars`` loaded everything before the command could
    catch it. The interrupt is raised here, deterministically, as Polars is imported."""
    interrupt_on_polars = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'polars':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "import jsoneval_polars\n"
        "assert 'polars' not in sys.modules  # the package itself loads no library\n"
        "from jsoneval_polars.__main__ import main\n"
        "sys.argv = ['jsoneval', 'score', '--sample', '--out', 'o']\n"
        "raise SystemExit(main())\n"
    )
    proc = subprocess.run([sys.executable, "-c", interrupt_on_polars], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == ("\njsoneval: interrupted; results written before this run are "
                           "unchanged\n")


@pytest.mark.parametrize("own", [None, "9"])
def test_the_command_quiets_openblas_threads_before_numpy_loads_unless_the_user_says(own):
    """NumPy's OpenBLAS threads spun for about 0.1 s of CPU each after the import, taken from
    the run's first batches (3.5 % of a 100k run's CPU). OpenBLAS reads its
    settings as it loads, so the command must set the timeout before NumPy is imported."""
    spy_on_numpy = (
        "import os, sys\n"
        "seen = []\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy' and not seen:\n"
        "            seen.append(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))\n"
        "sys.meta_path.insert(0, Spy())\n"
        "from jsoneval_polars.__main__ import main\n"
        "sys.argv = ['jsoneval', '--version']\n"
        "assert main() == 0\n"
        "print(seen)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if own is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = own
    proc = subprocess.run([sys.executable, "-c", spy_on_numpy], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == repr([own or "4"])


def test_invented_keys_listed_apart_with_weighted_and_macro_without_them():
    gt = [{"doc_id": "1", "a": 1, "b": "x"}, {"doc_id": "2", "a": 2, "b": "y"}]
    aio = [{"doc_id": "1", "a": 1, "b": "x", "c": 5}, {"doc_id": "2", "a": 3, "b": "y", "d": 6}]
    s = evaluate(gt, aio, config={"default_text_strategy": "EXACT"}).summary
    # a: TP + FP+FN -> F1 2/(2+1+1) = 0.5, support 2; b: 2 TP -> F1 1, support 2;
    # c and d: one FP each, never in the GT -> F1 0, invented
    assert s["n_invented_attributes"] == 2
    assert s["macro_f1"] == pytest.approx((0.5 + 1 + 0 + 0) / 4)
    assert s["macro_f1_without_invented"] == pytest.approx((0.5 + 1) / 2)
    assert s["weighted_f1"] == pytest.approx((0.5 * 2 + 1 * 2) / 4)
    text = render_summary(evaluate(gt, aio, config={"default_text_strategy": "EXACT"}))
    lines = text.splitlines()
    apart = lines.index(next(ln for ln in lines if ln.startswith("invented keys: 2")))
    assert [ln.split()[0] for ln in lines[apart + 1:apart + 3]] == ["c", "d"]
    assert any(ln.startswith("macro w/o invented") and ln.split()[-1] == "0.750" for ln in lines)
    assert any(ln.startswith("weighted by support") and ln.split()[-1] == "0.750" for ln in lines)


def test_large_counts_are_abbreviated_not_cut_at_80_columns():
    # a 200k-document run made 6-7 digit counts: at 80 columns the support column was cut to
    # its first three digits ("200" for 200000); now the counts are abbreviated instead
    from types import SimpleNamespace

    import polars as pl

    small = evaluate([{"doc_id": "a", "customer_email": "x@y.z", "total": 1}],
                     [{"doc_id": "a", "customer_email": "x@y.z", "total": 2}])
    scale = 1_234_567
    big = SimpleNamespace(
        attributes=small.attributes.with_columns(
            pl.col("tp", "fp", "fn", "tn", "support") * scale),
        summary=small.summary,
    )
    narrow = render_summary(big, width=80).split("\n\n")[0]
    assert max(len(line) for line in narrow.splitlines()) <= 80, narrow
    assert "1.23M" in narrow and "2.47M" in narrow  # support 1 and micro support 2, scaled
    assert str(scale) not in narrow
    wide = render_summary(big, width=200).split("\n\n")[0]
    assert str(scale) in wide and str(2 * scale) in wide and "1.23M" not in wide


def test_wide_documents_print_the_attributes_with_most_fields_not_all():
    """A document with 100,000 keys printed as many table rows, for a minute. The table now
    keeps the SHOWN_ROWS attributes (and invented keys) with the most fields, in its order,
    and says how many it left out; the micro row still counts them all."""
    from jsoneval_polars.terminal import SHOWN_ROWS

    n = SHOWN_ROWS + 30
    # k000..k129 in one document; k000..k029 also in a second, so they count two fields
    gt = [{"doc_id": "1", **{f"k{i:03d}": i for i in range(n)}},
          {"doc_id": "2", **{f"k{i:03d}": i for i in range(30)}}]
    aio = [{"doc_id": "1", **{f"k{i:03d}": i for i in range(n)},
            **{f"x{i:03d}": i for i in range(n)}},
           {"doc_id": "2", **{f"k{i:03d}": i for i in range(30)}, "x129": 1}]
    text = render_summary(evaluate(gt, aio, config={"default_text_strategy": "EXACT"}),
                          width=100)
    names = [ln.split()[0] for ln in text.splitlines() if ln.split()]
    scored = [x for x in names if x.startswith("k")]
    invented = [x for x in names if x.startswith("x")]
    # ties keep the table's order: k000-k029 (2 fields each), then k030-k099 (1 each)
    assert scored == [f"k{i:03d}" for i in range(SHOWN_ROWS)]
    # x129 has 2 fields: it is kept, and x099 (the last of the 1-field ties) is not
    assert invented == [f"x{i:03d}" for i in range(SHOWN_ROWS - 1)] + ["x129"]
    assert text.count("... 30 more") == 2
    micro = next(ln for ln in text.splitlines() if ln.startswith("micro"))
    assert micro.split()[1:5] == [str(n + 30), str(n + 1), "0", "0"]


def test_many_slices_print_the_ones_with_most_fields():
    from jsoneval_polars.terminal import SHOWN_ROWS

    n = SHOWN_ROWS + 5
    docs = [{"doc_id": str(i), "x": 1, **({"y": 1} if i == n - 1 else {})} for i in range(n)]
    sliced = evaluate(docs, [{**d, "model": f"m{i:03d}"} for i, d in enumerate(docs)],
                      metadata=["model"])
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(render_slices(sliced.attributes_by("model"), ["model"]))
    text = console.export_text()
    names = [word for ln in text.splitlines() for word in ln.split()[:1]
             if re.fullmatch(r"m\d{3}", word)]
    # m104 has 2 fields and stays; of the 1-field slices the first SHOWN_ROWS - 1 do
    assert names == [f"m{i:03d}" for i in range(SHOWN_ROWS - 1)] + [f"m{n - 1:03d}"]
    assert "... 5 more" in text


def test_the_command_starts_reading_its_inputs_before_its_libraries_load(tmp_path):
    """`jsoneval score` parses its options and starts its first pass over NDJSON inputs
    (cli.start_early_scan) while Polars, NumPy and pyarrow are not loaded yet (inputs in
    another order than each other: sorted ones need no scan, tests/test_sorted_pass.py)."""
    sample = Path(__file__).parent.parent / "jsoneval_polars" / "sample"
    aio = tmp_path / "aio.ndjson"
    aio.write_text("".join(reversed((sample / "aio.ndjson").read_text().splitlines(True))))
    code = (
        "import sys\n"
        "from jsoneval_polars.cli import start_early_scan\n"
        f"early = start_early_scan(['score', '--gt', {str(sample / 'gt.ndjson')!r}, "
        f"'--aio', {str(aio)!r}, '--out', 'o'])\n"
        "loaded = [m for m in ('polars', 'numpy', 'pyarrow') if m in sys.modules]\n"
        "print(type(early).__name__, len(early._reads), loaded)\n"
        "early.close()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.split() == ["EarlyScan", "2", "[]"], proc.stderr


def test_the_early_scan_starts_only_for_a_score_command_it_can_read(tmp_path):
    """NDJSON files of a valid score command get an early scan; other commands, help, bad
    options or a bad config, arrays and compressed files start nothing (the command then
    reads or refuses them itself)."""
    import gzip

    from jsoneval_polars import file_ranges
    from jsoneval_polars.cli import start_early_scan

    lines = (Path(__file__).parent.parent / "jsoneval_polars" / "sample"
             / "gt.ndjson").read_bytes()
    lines = b"".join(reversed(lines.splitlines(True)))  # not sorted: a file against itself
    (tmp_path / "a.ndjson").write_bytes(lines)
    (tmp_path / "array.json").write_text(json.dumps([{"doc_id": "1"}], indent=1))
    (tmp_path / "a.ndjson.gz").write_bytes(gzip.compress(lines))
    (tmp_path / "bad.json").write_text("{not a config")

    paths = {name: str(tmp_path / name) for name in ("a.ndjson", "array.json", "a.ndjson.gz")}
    a, array, zipped = paths.values()

    def scanned(*args: str, out: tuple[str, ...] = ("--out", "o")) -> set[str] | None:
        """The files an early scan of these options reads, or None when none starts."""
        early = start_early_scan(["score", *args, *out])
        if early is None:
            return None
        keys = {key[0] for key in early._reads}
        early.close()
        return {name for name, path in paths.items() if file_ranges._file_key(path) in keys}

    assert scanned("--gt", a, "--aio", a) == {"a.ndjson"}
    assert scanned("--gt", a, "--aio", array) == {"a.ndjson"}
    assert scanned("--gt", zipped, "--aio", array) is None
    for args in (["--gt", a, "--aio", a, "--help"], ["--gt", a],
                 ["--gt", a, "--aio", a, "--config", str(tmp_path / "bad.json")],
                 ["--gt", a, "--aio", a, "--workers", "0"],
                 ["--gt", a, "--aio", a, "--workers", "two"]):
        assert scanned(*args) is None, args
    assert scanned("--gt", a, "--aio", a, out=()) is None
    assert start_early_scan(["runs", "report", a]) is None


def test_workers_and_batch_size_below_one_are_usage_errors(tmp_path):
    """Click's own range check, one line naming the option, before anything is read."""
    for option in ("--workers", "--batch-size"):
        proc = _run("score", "--sample", "--out", "o", option, "0", cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1
        assert f"'{option}': 0 is not in the range x>=1" in proc.stderr
        assert not (tmp_path / "o").exists()


def test_the_command_exits_with_its_code_and_all_its_output(tmp_path):
    """The command ends without the interpreter's teardown (__main__.command): its output
    through a pipe is whole, and its exit code the command's own."""
    proc = _run("score", "--sample", "--out", "o", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads((tmp_path / "o" / "summary.json").read_text())
    proc = _run("score", "--sample", "--out", "o", "--quiet", "--fail-under", "micro_f1=1",
                cwd=tmp_path)
    assert proc.returncode == 3 and "micro_f1" in proc.stderr
