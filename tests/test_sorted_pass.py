"""The files driver's pass over sorted files (sorted_pass.py, DECISIONS 132): files with the
same increasing ids are scored without the scan, and wherever that order breaks (a duplicate,
a missing id, a line out of order, a blank or broken line, one file longer than the other)
the run still equals a whole-dataset evaluate(), the error rows included; the pass only
changes how far the scan has to read.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from test_stream import assert_same_files_run

from jsoneval_polars import (
    cli, evaluate, file_ranges, ingest, load_config, pair_plan, stream,
)
from jsoneval_polars.batch_threads import balanced_batch_size
from jsoneval_polars.native import _native
from jsoneval_polars.stream import score_files

SAMPLE = Path(str(resources.files("jsoneval_polars.sample")))
CONFIG = load_config(SAMPLE / "config.json")


def sorted_lines() -> tuple[list[str], list[str]]:
    """The sample's records of the ids both sides hold, both in the order of their ids."""
    def by_id(name: str) -> dict[str, str]:
        lines = (SAMPLE / name).read_text().splitlines()
        return {json.loads(line).get("doc_id"): line for line in lines if line.strip()}

    gt, aio = by_id("gt.ndjson"), by_id("aio.ndjson")
    ids = sorted(set(gt) & set(aio) - {None})
    assert len(ids) > 290
    return [gt[i] for i in ids], [aio[i] for i in ids]


def _swap(lines: list[str], i: int, j: int) -> list[str]:
    lines[i], lines[j] = lines[j], lines[i]
    return lines


#: how each case changes the sorted sides (gt, aio), at line 120 of about 300 unless it says
BREAKS = {
    "sorted": lambda g, a: (g, a),
    "a later duplicate": lambda g, a: (g + [g[3]], a),
    "a duplicate on both sides": lambda g, a: (g[:200] + [g[150]] + g[200:],
                                               a[:200] + [a[150]] + a[200:]),
    "an id the aio lacks": lambda g, a: (g, a[:120] + a[121:]),
    "an id the gt lacks": lambda g, a: (g[:120] + g[121:], a),
    "two lines swapped on one side": lambda g, a: (g, _swap(a, 120, 200)),
    "two lines swapped on both sides": lambda g, a: (_swap(g, 120, 121), _swap(a, 120, 121)),
    "a blank line": lambda g, a: (g[:120] + ["  "] + g[120:], a),
    "a broken line": lambda g, a: (g[:120] + ["{broken"] + g[120:], a),
    "a record without an id": lambda g, a: (g, a[:120] + ['{"total": 1}'] + a[120:]),
    "an id that is a number": lambda g, a: (
        g[:120] + ['{"doc_id": 7, "total": 1}'] + g[120:],
        a[:120] + ['{"doc_id": 7.0, "total": 1}'] + a[120:]),
    "a NaN the kernel leaves to Python": lambda g, a: (
        g, a[:120] + [a[120].replace("{", '{"nan": NaN, ', 1)] + a[121:]),
    "gt longer": lambda g, a: (g, a[:290]),
    "aio longer": lambda g, a: (g[:290], a),
    "an aio string root": lambda g, a: (g, a[:120] + ['"text"'] + a[121:]),
    "an early id greater than a later one": lambda g, a: (
        [g[300]] + g[:300] + g[301:], [a[300]] + a[:300] + a[301:]),
}


def write(tmp_path: Path, gt: list[str], aio: list[str], end: str = "\n") -> tuple[Path, Path]:
    paths = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    for path, lines in zip(paths, (gt, aio), strict=True):
        path.write_bytes((end.join(lines) + end).encode())
    return paths


@pytest.mark.parametrize("case", list(BREAKS))
def test_any_break_of_the_order_gives_the_whole_run(case, tmp_path, monkeypatch):
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    monkeypatch.setattr(stream, "CHUNK_BYTES", 20_000)  # the rest in several scan ranges
    gt, aio = write(tmp_path, *BREAKS[case](*sorted_lines()))
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2, batch_size=16)
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)
    parts = sorted(p.name for p in (tmp_path / "out" / "documents").glob("*.parquet"))
    assert parts == [f"part-{n:06d}.parquet" for n in range(len(parts))]
    assert ("scan" in streamed.timings) == (case != "sorted")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_repeat_across_a_batch_boundary_is_a_duplicate(workers, tmp_path, monkeypatch):
    """Each batch holds on its own; the next one's first id against its last decides."""
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    gt, aio = sorted_lines()
    size = balanced_batch_size(len(gt) + 1, 16, workers)
    at = 7 * size  # the first line of the eighth batch
    gt, aio = write(tmp_path, gt[:at] + [gt[at - 1]] + gt[at:], aio[:at] + [aio[at - 1]] + aio[at:])
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=workers,
                           batch_size=16)
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)
    assert streamed.errors["line"].to_list() == [at + 1, at + 1]  # a duplicate on each side
    assert len(list((tmp_path / "out" / "documents").glob("*.parquet"))) > 8


def test_sorted_files_are_read_once(tmp_path, monkeypatch):
    """No scan, no second read: each line is read by its batch, once."""
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    gt, aio = write(tmp_path, *sorted_lines())
    reads = []
    read_sorted = stream.read_sorted_pairs
    monkeypatch.setattr(stream, "read_sorted_pairs", lambda plan, *a, **kw: reads.append(
        plan.height) or read_sorted(plan, *a, **kw))
    monkeypatch.setattr(stream, "scan_range", None)  # called: a TypeError
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2, batch_size=40)
    assert reads[0] == 5 and sum(reads) == 5 + len(sorted_lines()[0])  # the probe, the batches
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


def test_files_in_another_order_cost_one_small_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    gt, aio = sorted_lines()
    gt, aio = write(tmp_path, gt, aio[::-1])
    reads = []
    read_sorted = stream.read_sorted_pairs
    monkeypatch.setattr(stream, "read_sorted_pairs", lambda plan, *a, **kw: reads.append(
        plan.height) or read_sorted(plan, *a, **kw))
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2, batch_size=40)
    assert reads == [5]
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


@pytest.mark.parametrize("end", ["\r\n", "\n"])
def test_a_bom_and_crlf_line_ends_are_read_as_the_scan_reads_them(end, tmp_path, monkeypatch):
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    gt, aio = sorted_lines()
    gt, aio = write(tmp_path, ["\ufeff" + gt[0], *gt[1:]], aio, end)
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, batch_size=40)
    assert "scan" not in streamed.timings
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


def test_a_break_after_spilled_records_gives_the_whole_run(tmp_path, monkeypatch):
    """The pass's records go to the pairing's buckets on disk like the scan's."""
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    monkeypatch.setattr(pair_plan, "BUCKET_RECORDS", 40)
    gt, aio = write(tmp_path, *BREAKS["a later duplicate"](*sorted_lines()))
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2, batch_size=16)
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)
    assert "duplicate" in " ".join(streamed.errors["error"].to_list())


def test_next_lines_cuts_lines_as_the_scan_does(tmp_path):
    path = tmp_path / "f.ndjson"
    long = "x" * (3 << 20)  # longer than the reader's first buffer
    text = f'{{"a": 1}}\r\n{{"b": "{long}"}}\n{{"c": 3}}\n \n{{"d": 4}}'
    path.write_text(text)
    offsets, lengths, end = _native.next_lines(path, 0, 10)
    assert [text[o:o + n] for o, n in zip(offsets, lengths, strict=True)] == text.split("\n")[:3]
    assert end == text.index(" \n")  # stops before the blank line
    offsets, lengths, end = _native.next_lines(path, end + 2, 10)
    assert (offsets, lengths, end) == ([len(text) - 8], [8], len(text))  # no line end at the end
    assert _native.next_lines(path, 0, 2)[2] == text.index('{"c"')


def test_the_command_walks_the_first_batches_of_sorted_files_early(tmp_path):
    """Files that begin sorted get an early pass, not an early scan; others the scan."""
    gt, aio = write(tmp_path, *sorted_lines())
    assert _native.sorted_start(gt, aio, "doc_id", 1 << 16)
    argv = ["score", "--gt", str(gt), "--aio", str(aio), "--out", str(tmp_path / "o")]
    early = cli.start_early_scan(argv)
    assert isinstance(early, file_ranges.EarlyPass)
    early.close()
    gt, aio = write(tmp_path, sorted_lines()[0], sorted_lines()[1][::-1])
    assert not _native.sorted_start(gt, aio, "doc_id", 1 << 16)
    early = cli.start_early_scan(argv)
    assert isinstance(early, file_ranges.EarlyScan)
    early.close()


@pytest.mark.parametrize("case", ["sorted", "a later duplicate", "two lines swapped on one side"])
def test_a_run_takes_the_batches_the_early_pass_walked(case, tmp_path, monkeypatch):
    """The run reads none of the lines the early pass walked, and gives the same tables."""
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    gt, aio = write(tmp_path, *BREAKS[case](*sorted_lines()))
    early = file_ranges.EarlyPass({"gt": gt, "aio": aio}, "doc_id", False, 16, 2, batches=3)
    with early._changed:  # as when the libraries take longer to load than the three walks
        assert early._changed.wait_for(lambda: early._ended, timeout=60)
    first = []  # (file, first offset, lines) of each batch a run reads: the pass's, the scan's
    read_spans, walk_lines = ingest.read_spans, stream.walk_lines
    monkeypatch.setattr(ingest, "read_spans", lambda path, offsets, lengths: first.append(
        (str(path), offsets[0], len(offsets))) or read_spans(path, offsets, lengths))
    monkeypatch.setattr(stream, "walk_lines", lambda files, cut, reading: first.extend(
        (str(files[side]), offsets[0], len(offsets)) for side, (offsets, _) in cut.spans.items())
        or walk_lines(files, cut, reading))
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2, batch_size=16,
                           early_scan=early)
    early.close()
    monkeypatch.undo()
    walked = 3 * balanced_batch_size(len(gt.read_text().splitlines()), 16, 2)
    for path in (gt, aio):  # the probe's five lines read, the first three batches not again
        after = len("\n".join(path.read_text().split("\n")[:walked])) + 1
        reads = [(offset, n) for name, offset, n in first if name == str(path)]
        assert reads[0] == (0, 5) and all(offset >= after for offset, _ in reads[1:])
        assert len(reads) > 1  # the later batches, read by the run
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


def test_an_early_pass_of_another_reading_is_not_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(file_ranges, "PROBE_LINES", 5)
    gt, aio = write(tmp_path, *sorted_lines())
    early = file_ranges.EarlyPass({"gt": gt, "aio": aio}, "doc_id", True, 16, 2, batches=3)
    assert not early.matches({"gt": gt, "aio": aio}, ("doc_id", False, file_ranges_segment()))
    streamed = score_files(gt, aio, tmp_path / "out", config=CONFIG, workers=2, batch_size=16,
                           early_scan=early)
    early.close()
    assert_same_files_run(evaluate(gt, aio, config=CONFIG), streamed)


def file_ranges_segment() -> int:
    from jsoneval_polars import flatten

    return flatten._SEGMENT


def test_a_file_cut_short_after_its_lines_were_cut_names_the_file(tmp_path):
    """The pass reads a batch's lines after it cut them: a file shortened in between is an
    OSError naming it, as the scan's batches report it (flatten.read_spans), not the kernel's
    complaint about a span outside its buffer."""
    files = {}
    for side in ("gt", "aio"):
        files[side] = tmp_path / f"{side}.ndjson"
        files[side].write_text("".join(f'{{"doc_id": "d{i}", "a": {i}}}\n' for i in range(10)))
    cut = file_ranges.LineCuts(files).next(10)
    files["aio"].write_text('{"doc_id": "d0", "a": 0}\n')
    with pytest.raises(OSError, match="shorter than when it was scanned") as error:
        file_ranges.walk_lines(files, cut, ("doc_id", False, file_ranges_segment()))
    assert error.value.filename == str(files["aio"])
