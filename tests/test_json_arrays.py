"""JSON-array files are read as NDJSON is (DECISIONS 109): the kernel finds each element by
its brackets, strings and commas, reads its id as it reads a line's, and the batches read the
elements back by offset. Held to the same records written one per line, whose line numbers
are the elements' positions, and to Python's json module for where each element is."""

from __future__ import annotations

import gzip
import json
import random
from importlib import resources
from pathlib import Path

import polars as pl
import pytest

from jsoneval_polars import InputError, _native, evaluate, load_config
from jsoneval_polars.cli import main
from jsoneval_polars.results import read_results
from jsoneval_polars.stream import score_files

SAMPLE = Path(str(resources.files("jsoneval_polars.sample")))
CONFIG = load_config(SAMPLE / "config.json")
TABLES = ("documents", "fields", "alignments", "attributes")


def _same_run(got, want) -> None:
    for name in TABLES:
        assert getattr(got, name).equals(getattr(want, name)), name
    assert got.errors.drop("file").equals(want.errors.drop("file"))  # the file names differ


def _random_value(rng: random.Random, depth: int = 0):
    """A JSON value with the characters a splitter could trip on: brackets, commas and
    escaped quotes inside strings, nesting, numbers in every form, non-ASCII text."""
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -7, 12345678901234567890123, 1.5e-7, -0.25])
    if kind in (2, 3, 4):
        return "".join(rng.choice(['a', ' ', ',', ']', '[', '{', '}', '"', '\\', 'é', '\n', '😀'])
                       for _ in range(rng.randrange(6)))
    if kind in (5, 6):
        return {"k" + str(i) + rng.choice(["", "]", '"']): _random_value(rng, depth + 1)
                for i in range(rng.randrange(4))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _blank(rng: random.Random) -> str:
    return "".join(rng.choice([" ", "\t", "\n", "\r\n"]) for _ in range(rng.randrange(3)))


def test_the_elements_found_are_those_json_reads():
    """300 seeded arrays of random values with random blanks between the delimiters: each
    element's bytes parse to the value Python's json module reads at that position."""
    rng = random.Random(11)
    for _ in range(300):
        values = [_random_value(rng) for _ in range(rng.randrange(5))]
        text = ("\ufeff" if rng.random() < 0.2 else "") + _blank(rng) + "[" + _blank(rng) + (
            ("," + _blank(rng)).join(
                json.dumps(v, ensure_ascii=rng.random() < 0.5) + _blank(rng) for v in values)
        ) + "]" + _blank(rng)
        data = text.encode()
        assert json.loads(data.removeprefix(b"\xef\xbb\xbf")) == values
        scanned = _native.scan_records(data, 0, True, "doc_id")  # the whole file at once
        assert scanned is not None, text
        table, declined, spans = scanned[0]
        line, offset, length = pl.DataFrame(table).select("line", "offset", "length")
        found = sorted([*zip(line, zip(offset, length, strict=True), strict=True),
                        *zip(declined, spans, strict=True)])
        assert [json.loads(data[a:a + n]) for _, (a, n) in found] == values
        assert [i for i, _ in found] == list(range(len(values)))


def _records(n: int) -> list[dict]:
    gt = [json.loads(line) for line in (SAMPLE / "gt.ndjson").read_text().splitlines()]
    return gt[:n]


def _write(tmp_path: Path, name: str, records: list, *, layout: str) -> Path:
    path = tmp_path / name
    if layout == "lines":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    elif layout == "one line":
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps(records).encode())
    else:  # pretty, as json.dump(..., indent=2) writes it
        path.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    return path


@pytest.mark.parametrize("layout", ["one line", "pretty"])
def test_an_array_scores_as_its_records_one_per_line(tmp_path, layout):
    """The sample's GT and AIO as JSON arrays: the same tables as the NDJSON lines from
    evaluate, the files driver on two workers and the command, with a bad element an error
    row at its position (as the line of the same text) and the others scored."""
    gt = _records(40)
    aio = [json.loads(line) for line in (SAMPLE / "aio.ndjson").read_text().splitlines()][:40]
    aio[5] = "not a record"  # an element that is no object
    gt.insert(7, {"doc_id": 3.5})  # an id that is neither a string nor an integer
    files = {f"{side}_{kind}": _write(tmp_path, f"{side}.{ext}", recs, layout=lay)
             for side, recs in (("gt", gt), ("aio", aio))
             for kind, ext, lay in (("lines", "ndjson", "lines"), ("array", "json", layout))}
    by_lines = evaluate(files["gt_lines"], files["aio_lines"], config=CONFIG)
    assert by_lines.errors.height >= 2
    _same_run(evaluate(files["gt_array"], files["aio_array"], config=CONFIG), by_lines)
    streamed = score_files(files["gt_array"], files["aio_array"], tmp_path / "out",
                           config=CONFIG, workers=2)
    streamed_lines = score_files(files["gt_lines"], files["aio_lines"], tmp_path / "lines",
                                 config=CONFIG, workers=2)
    _same_run(streamed, streamed_lines)
    assert main(["score", "--gt", str(files["gt_array"]), "--aio", str(files["aio_lines"]),
                 "--config", str(SAMPLE / "config.json"), "--out", str(tmp_path / "cli"),
                 "--quiet"]) == 0
    assert read_results(tmp_path / "cli").fields.equals(by_lines.fields)


def test_a_bad_element_is_one_error_row(tmp_path):
    """Elements that are not JSON, repeat a key or lack the id are error and warning rows at
    their positions, as NDJSON lines are; the records around them are scored. Under strict
    the first bad one stops the run, naming the file and its position."""
    text = ('[{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": tru}, 5,\n'
            ' {"doc_id": "c", "x": 1, "x": 2}, {"doc_id": "d", "x": [1, {"y": "]"}]}]')
    array = tmp_path / "gt.json"
    array.write_text(text)
    lines = tmp_path / "gt.ndjson"
    elements = ['{"doc_id": "a", "x": 1}', '{"doc_id": "b", "x": tru}', "5",
                '{"doc_id": "c", "x": 1, "x": 2}', '{"doc_id": "d", "x": [1, {"y": "]"}]}']
    lines.write_text("\n".join(elements) + "\n")
    for driver in ("evaluate", "files"):
        runs = []
        for path in (array, lines):
            if driver == "evaluate":
                runs.append(evaluate(path, path))
            else:
                runs.append(score_files(path, path, tmp_path / f"{driver}-{path.suffix}"))
        got, want = runs
        assert got.documents["doc_id"].to_list() == ["a", "c", "d"]
        _same_run(got, want)
        assert got.errors.filter(pl.col("source") == "gt").select("line", "severity").rows() \
            == [(2, "error"), (3, "error"), (4, "warning")]
    with pytest.raises(InputError, match=r"gt\.json, line 2: not valid JSON"):
        score_files(array, array, tmp_path / "strict", strict=True)


def test_an_array_cut_short_is_refused_and_bracketed_ndjson_stays_ndjson(tmp_path):
    """Delimiters that make no array (a file cut short) leave the file to be read as NDJSON
    lines, as before: with no record on any line it is refused in one line; NDJSON whose
    first line starts with '[' keeps its records, that line an error row."""
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"doc_id": "a"},\n  {"doc_id": "b"\n')
    for run in (lambda: evaluate(broken, broken),
                lambda: score_files(broken, broken, tmp_path / "o")):
        with pytest.raises(InputError, match=r"broken\.json: not a valid JSON array: .*; the "
                           r"file ends before the array closes \(was it cut short\?\)$"):
            run()
    assert not (tmp_path / "o").exists()
    for text in ('[{"doc_id": "a"} {"doc_id": "b"}]', '[{"doc_id": "a", "x": "cut'):
        # a missing comma is no sign of a short file; a string that never ends is
        broken.write_text(text)
        with pytest.raises(InputError) as refused:
            evaluate(broken, broken)
        assert ("cut short" in str(refused.value)) == text.endswith("cut")
    lines = tmp_path / "lines.ndjson"
    lines.write_text('[1, 2\n{"doc_id": "a", "x": 1}\n{"doc_id": "b", "x": 2}\n')
    for r in (evaluate(lines, lines), score_files(lines, lines, tmp_path / "l")):
        assert r.documents["doc_id"].to_list() == ["a", "b"]
        assert r.errors.select("source", "line").rows() == [("gt", 1), ("aio", 1)]


def test_a_compressed_array_is_read_as_the_plain_one(tmp_path):
    records = _records(12)
    plain = _write(tmp_path, "gt.json", records, layout="pretty")
    packed = tmp_path / "gt.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a = score_files(packed, plain, tmp_path / "a")
    b = score_files(plain, plain, tmp_path / "b")
    assert a.fields.equals(b.fields) and a.summary["n_documents"] == 12


def test_mangled_arrays_and_objects_read_the_same_in_both_drivers(tmp_path):
    """40 seeded files of arrays and indented objects with bytes deleted, inserted or changed
    (brackets, commas, quotes, a stray 0xff): each is scored or refused in one line (an
    InputError, never another exception), and evaluate and score_files agree on which, and
    on every document, error row and field."""
    rng = random.Random(5)
    records = [{"doc_id": f"d{i}", "x": i, "s": 'a,]}"{[', "items": [{"q": i, "t": "x"}]}
               for i in range(6)]
    layouts = [json.dumps(records).encode(), json.dumps(records, indent=2).encode(),
               "".join(json.dumps(r, indent=2) + "\n" for r in records).encode()]
    aio = _write(tmp_path, "aio.ndjson", records, layout="lines")
    for trial in range(40):
        text = bytearray(rng.choice(layouts))
        for _ in range(rng.randrange(1, 4)):
            at, op = rng.randrange(len(text)), rng.randrange(3)
            if op == 0:
                del text[at]
            elif op == 1:
                text.insert(at, rng.choice(b'{}[],":\\ \n'))
            else:
                text[at] = rng.choice(b'{}[],":\\ \nx\xff')
        gt = tmp_path / f"gt{trial}.json"
        gt.write_bytes(bytes(text))
        outcomes = []
        for run in (lambda: evaluate(gt, aio),
                    lambda: score_files(gt, aio, tmp_path / f"out{trial}")):
            try:
                r = run()
            except InputError as exc:
                outcomes.append(str(exc))
                continue
            outcomes.append([r.documents.sort("doc_id"), r.fields.sort("doc_id", "path"),
                             r.errors.drop("file").sort("source", "line", "error")])
        by_evaluate, by_files = outcomes
        if isinstance(by_evaluate, str) or isinstance(by_files, str):
            assert by_evaluate == by_files, bytes(text)
        else:
            assert all(a.equals(b) for a, b in zip(by_evaluate, by_files, strict=True)), \
                bytes(text)


@pytest.mark.parametrize("objects", [False, True])
def test_a_file_read_a_few_bytes_at_a_time_gives_the_same_records(tmp_path, objects):
    """The kernel reads an array or objects a chunk at a time (16 MB): a value cut off at a
    chunk's end is read whole with the next. Read 1 to 97 bytes at a time, a file of good and
    bad values (not JSON, not an object, a repeated key, no id, a BOM) gives the records,
    offsets, numbers and error rows it gives read whole."""
    from jsoneval_polars.ingest import _scan_values

    values = ['{"doc_id": "a", "s": "]},\\"{["}', '{"doc_id": "b", "x": tru}', '5',
              '{"doc_id": "c", "x": 1, "x": 2}', '{"x": [1, {"y": "]"}]}',
              '{\n  "doc_id": "d",\n  "v": [\n    1\n  ]\n}', '{"doc_id": 7}']
    if objects:
        values = [v for v in values if v.startswith("{")]
        text = "\ufeff" + "\n".join(values) + "\n"
    else:
        text = "\ufeff[\n" + ",\n ".join(values) + "\n]\n"
    path = tmp_path / "values.json"
    path.write_text(text, encoding="utf-8")
    whole = _scan_values(str(path), "gt", "doc_id", None, False, objects=objects)
    assert whole is not None and whole[0].height >= 4 and whole[1]
    for size in [*range(1, 40), 64, 97]:
        table, rows = _scan_values(str(path), "gt", "doc_id", None, False, objects=objects,
                                   chunk_bytes=size)
        assert table.equals(whole[0]), size
        assert rows == whole[1], size

