"""The files driver's native reading. The scan (ingest.scan_ndjson: the native id scan, with the
Python path for the lines it declines) against the scan as the Python path alone does it (the
oracle below, which is what the scan was before the native kernel): the same records,
offsets, lengths, ids and error rows, for hostile lines too. Then the batches: plain ones never
become Python documents, and a declined line still gets its warning row."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from jsoneval_polars.ingest import ErrorRows, iter_records
from jsoneval_polars.ingest import scan_ndjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import strategies as S  # noqa: E402

LINES = [
    b'\xef\xbb\xbf{"doc_id": "bom", "a": 1}',
    b'{"doc_id": "a", "x": "text"}',
    b"",
    b"   \t",
    b'{"doc_id": 12, "x": 1}\r',
    b'{"doc_id": -0, "x": 1}',
    b'{"doc_id": 1.5, "x": 1}',
    b'{"doc_id": null, "x": 1}',
    b'{"doc_id": true}',
    b'{"doc_id": ["l"]}',
    b'{"x": "no id"}',
    b'{"doc_id": "dup-key", "doc_id": "second"}',
    b'{"doc_id": "nan", "v": NaN}',
    b'{"doc_id": "big", "v": 123456789012345678901234567890}',
    b'{"doc_id": "inf", "v": 1e999}',
    b'{"doc_id": "sur", "v": "\\ud800"}',
    b'{"doc_id": "bad utf8 \xff"}',
    b"[1, 2]",
    b'"just a string"',
    b"{not json",
    b'{"doc_id": "deep", "v": ' + b"[" * 300 + b"]" * 300 + b"}",
    b'{"doc_id": "deeper", "v": ' + b"[" * 1100 + b"]" * 1100 + b"}",  # past Python's limit
    b'{"doc_id": "\\u00e9sc\\"aped"}',
    b'{"doc_id": "last"}',
]


def oracle(path: str, side: str, start: int, stop: int, first_line: int, id_field: str):
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(stop - start)
    lines = data.split(b"\n")
    offsets = list(itertools.accumulate((len(raw) + 1 for raw in lines), initial=start))
    errors = ErrorRows(False)
    rows = [
        (r.line, offsets[r.line - first_line], len(r.raw), r.doc_id, r.has_id)
        for r in iter_records(enumerate(lines, start=first_line), side, path, id_field, None,
                              errors)
    ]
    table = pl.DataFrame(rows, orient="row", schema={
        "line": pl.Int64, "offset": pl.Int64, "length": pl.Int64, "doc_id": pl.String,
        "has_id": pl.Boolean})
    return table, errors.rows


@pytest.mark.parametrize("cut", [0, 1, 7, 13])
def test_scan_matches_the_python_scan(tmp_path, cut: int):
    path = tmp_path / "gt.ndjson"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    start = sum(len(line) + 1 for line in LINES[:cut])  # a range starting at a later line
    stop = path.stat().st_size
    got, got_errors = scan_ndjson(str(path), "gt", start, stop, cut + 1, "doc_id", None, False)
    want, want_errors = oracle(str(path), "gt", start, stop, cut + 1, "doc_id")
    assert_frame_equal(got.select(want.columns), want)
    assert got_errors == want_errors
    if cut == 0:
        assert "dup-key" not in got["doc_id"].to_list()  # the last value wins, as in Python
        assert {"second", "12", "0", "big", "bom", 'ésc"aped'} <= set(got["doc_id"].to_list())
        assert len(got_errors) >= 5


def test_scan_of_many_plain_lines_is_native(tmp_path):
    # no line declined: every record comes from the kernel, in line order
    path = tmp_path / "gt.ndjson"
    lines = [json.dumps({"doc_id": f"d{i}", "v": i}).encode() for i in range(5000)]
    path.write_bytes(b"\n".join(lines))
    got, errors = scan_ndjson(str(path), "gt", 0, path.stat().st_size, 1, "doc_id", None, False)
    assert got["doc_id"].to_list() == [f"d{i}" for i in range(5000)]
    assert got["line"].to_list() == list(range(1, 5001))
    assert got["length"].to_list() == [len(line) for line in lines]
    assert errors == []


def _lines(path, rows) -> None:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_plain_batches_never_become_python_documents(tmp_path, monkeypatch):
    """A run of plain records is read natively end to end: the Python record path is never
    taken, and the tables equal the in-memory run (which flattens Python documents)."""
    from jsoneval_polars import evaluate, ingest, stream
    from jsoneval_polars.results import read_results

    gt = [{"doc_id": f"d{i}", "name": f"Item {i}", "n": i / 4, "items": [{"a": i}, {"a": -i}]}
          for i in range(300)]
    aio = [{**r, "name": r["name"].upper()} for r in gt[::-1]]
    _lines(tmp_path / "gt.ndjson", gt)
    _lines(tmp_path / "aio.ndjson", aio)
    whole = evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson")

    def refused(*args, **kwargs):
        raise AssertionError("a plain batch took the Python record path")

    monkeypatch.setattr(ingest, "read_records_at", refused)
    stream.score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", tmp_path / "out",
                       batch_size=100)
    streamed = read_results(tmp_path / "out")
    key = ["doc_id", "path"]
    assert_frame_equal(streamed.fields.sort(key), whole.fields.sort(key))
    assert streamed.summary["micro_f1"] == whole.summary["micro_f1"]


def test_a_declined_line_costs_its_batch_the_python_path_not_its_warning(tmp_path):
    """One line the kernel declines (a repeated key) sends its batch through the Python path,
    which writes the warning row; the other batches stay native; the tables equal the
    in-memory run's."""
    from jsoneval_polars import evaluate, stream
    from jsoneval_polars.results import read_results

    rows = [json.dumps({"doc_id": f"d{i}", "v": i}) for i in range(50)]
    rows[37] = '{"doc_id": "d37", "v": 1, "v": 37}'
    (tmp_path / "gt.ndjson").write_text("\n".join(rows) + "\n")
    (tmp_path / "aio.ndjson").write_text("\n".join(rows[::-1]) + "\n")
    whole = evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson")
    stream.score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", tmp_path / "out",
                       batch_size=10)
    streamed = read_results(tmp_path / "out")
    warnings = streamed.errors.filter(pl.col("severity") == "warning")
    assert warnings.select("source", "line", "doc_id").rows() == [("gt", 38, "d37"),
                                                                  ("aio", 13, "d37")]
    assert "duplicate key(s) 'v'" in warnings["error"][0]
    assert_frame_equal(streamed.errors.sort("source", "line"), whole.errors.sort("source", "line"))
    key = ["doc_id", "path"]
    assert_frame_equal(streamed.fields.sort(key), whole.fields.sort(key))


# table cells: JSON text in a column, hostile rows among plain ones (None: a null cell)
CELLS = {
    "gt": [('{"a": 1, "name": "Acme", "items": [{"q": 1}, {"q": 2}]}', "t1"),
           (None, "t2"),
           ('{"a": 2, "a": 3}', "t3"),
           ("not json", "t4"),
           ('{"a": 1e999, "big": 123456789012345678901234567890}', "t5"),
           ("[1, 2]", "t6"),
           ('"a string"', "t7"),
           ('\ufeff{"a": 1}', "t8"),
           ('{"a": NaN}', "t9"),
           ('{"a": 4, "name": "Beta"}', "t1"),  # a repeated id
           ('{"a": 5, "name": "Gamma ÉTÉ"}', None),  # no id
           *((f'{{"a": {i}, "name": "N{i}", "items": [{{"q": {i}}}]}}', f"p{i}")
             for i in range(40))],
    "aio": [('{"a": 1, "name": "ACME", "items": [{"q": 2}, {"q": 1}]}', "t1"),
            ('{"a": 1}', "t2"),
            ('Sure! ```json\n{"a": 3}\n```', "t3"),
            ('{"a": 1}', "t4"),
            ('{"a": 1e999}', "t5"),
            ("[1]", "t6"),
            ("42", "t7"),
            (None, "t8"),
            ('{"a": Infinity}', "t9"),
            ('{"x": 1}', "only-aio"),
            *((f'{{"a": {i}, "name": "n{i}", "items": [{{"q": {i + 1}}}]}}', f"p{i}")
              for i in range(39, -1, -1))],
}


def _table(side: str, rows=None) -> pl.DataFrame:
    rows = CELLS[side] if rows is None else rows
    return pl.DataFrame({"doc_id": [r[1] for r in rows], "json": [r[0] for r in rows]},
                        schema={"doc_id": pl.String, "json": pl.String})


def _object_path(monkeypatch):
    """evaluate() as it reads tables without the text path: every cell parsed in Python."""
    from jsoneval_polars import pipeline

    monkeypatch.setattr(pipeline, "plan_tables", lambda *a, **k: None)


def _same_run(a, b) -> None:
    for name in ("documents", "fields", "alignments", "counts", "attributes"):
        assert_frame_equal(getattr(a, name), getattr(b, name), check_row_order=False)
    assert_frame_equal(a.errors, b.errors, check_row_order=False)
    # means over the documents in the order each path pairs them: equal to rounding
    assert a.summary.keys() == b.summary.keys()
    for key, value in a.summary.items():
        other = b.summary[key]
        assert value == (pytest.approx(other, rel=1e-12) if isinstance(other, float)
                         else other), key


@pytest.mark.parametrize("batch_size", [1, 7, 1000])
def test_table_text_cells_score_as_the_python_path_reads_them(monkeypatch, batch_size):
    """JSON-text columns go from text to the leaves table (ingest.plan_tables); every hostile
    cell (null, invalid, repeated key, inexact number, array root, BOM, NaN, raw model text,
    repeated and missing ids) gives the rows, pairs and tables the Python path gives, whatever
    the batch size."""
    from jsoneval_polars import evaluate, ingest

    calls = []
    original = ingest.pairs_from_texts
    monkeypatch.setattr(ingest, "pairs_from_texts",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    native = evaluate(_table("gt"), _table("aio"), batch_size=batch_size)
    # every batch takes the text path; its hostile cells' pairs alone are read in Python
    assert calls, "the text path was not taken"
    _object_path(monkeypatch)
    python = evaluate(_table("gt"), _table("aio"), batch_size=batch_size)
    _same_run(native, python)
    assert native.errors.height >= 8


def test_table_text_path_reads_parquet_arrow_and_positions(tmp_path, monkeypatch):
    """Parquet and Arrow IPC files and a pyarrow table take the text path; a table without
    an id column pairs by position; each equals the Python path's run (file names in the
    error rows included)."""
    from jsoneval_polars import evaluate

    gt, aio = _table("gt"), _table("aio")
    gt.write_parquet(tmp_path / "gt.parquet")
    aio.write_ipc(tmp_path / "aio.arrow")
    inputs = [
        (tmp_path / "gt.parquet", tmp_path / "aio.arrow"),
        (gt.to_arrow(), aio),
        (gt.drop("doc_id")[-40:], aio.drop("doc_id")[-40:]),
    ]
    native = [evaluate(g, a, batch_size=16) for g, a in inputs]
    _object_path(monkeypatch)
    for run, (g, a) in zip(native, inputs, strict=True):
        _same_run(run, evaluate(g, a, batch_size=16))
    assert native[0].errors["file"].drop_nulls().unique().to_list() != []


def test_plain_table_batches_never_become_python_documents(monkeypatch):
    """A table of plain JSON text is read with no Python document."""
    from jsoneval_polars import evaluate, ingest

    def refused(*args, **kwargs):
        raise AssertionError("a plain table row took the Python record path")

    rows = {side: CELLS[side][-40:] for side in CELLS}
    expected = evaluate(_table("gt", rows["gt"]), _table("aio", rows["aio"]))
    monkeypatch.setattr(ingest, "_parse_json", refused)
    run = evaluate(_table("gt", rows["gt"]), _table("aio", rows["aio"]), batch_size=9)
    _same_run(run, expected)


# metadata values of every JSON scalar kind, as json.dumps writes them (escapes included)
META_VALUES = ["GPT-4o  Mini", "ÉTÉ ü", 'quo"te\\n', "", 0, -0, 7, 12345678901234567890123,
               0.1, 0.7, 2.0, -0.0, 1e16, 1.5e-7, 1e300, True, False, None]


def test_metadata_is_read_natively_as_python_reads_it(tmp_path, monkeypatch):
    """Metadata members (each scalar kind, null, absent; on either side) are read by the
    kernel from the text, so their batches stay native (in both drivers); their columns equal
    the ones the Python record path gives Python objects (str() of the value, the AIO
    record's before the GT's), and they are not content."""
    from jsoneval_polars import evaluate, ingest, stream
    from jsoneval_polars.results import read_results

    gt, aio = [], []
    for i in range(90):
        g = {"doc_id": f"d{i}", "x": i, "model": META_VALUES[i % len(META_VALUES)]}
        a = {"doc_id": f"d{i}", "x": i % 5}
        if i % 3 == 0:
            a["model"] = META_VALUES[(i * 7) % len(META_VALUES)]
        if i % 4 == 1:
            del g["model"]
        if i % 5 == 2:
            (a if i % 2 else g)["run"] = f"r{i % 2}"
        gt.append(g)
        aio.append(a)
    _lines(tmp_path / "gt.ndjson", gt)
    _lines(tmp_path / "aio.ndjson", aio[::-1])
    names = ["model", "run"]
    objects = evaluate(gt, aio, metadata=names)  # Python objects: ingest.take_metadata

    def refused(*args, **kwargs):
        raise AssertionError("a batch with metadata took the Python record path")

    monkeypatch.setattr(ingest, "read_records_at", refused)
    stream.score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", tmp_path / "out",
                       metadata=names, batch_size=16, workers=1)
    streamed = read_results(tmp_path / "out")
    columns = ["doc_id", *names]
    assert_frame_equal(streamed.documents.select(columns).sort("doc_id"),
                       objects.documents.select(columns).sort("doc_id"))
    assert set(streamed.fields["attribute"].to_list()) == {"x"}
    values = dict(streamed.documents.select("doc_id", "model").rows())
    assert (values["d0"], values["d1"], values["d12"], values["d15"]) == (
        "GPT-4o  Mini", None, "1e+16", "True")
    key = ["doc_id", "path"]
    assert_frame_equal(streamed.fields.sort(key), objects.fields.sort(key))
    # evaluate() reads the same files the same way, never as Python documents
    from jsoneval_polars import pipeline

    monkeypatch.setattr(pipeline, "pair_inputs", refused)
    from_files = evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", metadata=names)
    assert_frame_equal(from_files.documents.select(columns).sort("doc_id"),
                       objects.documents.select(columns).sort("doc_id"))
    assert_frame_equal(from_files.counts.sort("doc_id", "attribute"),
                       objects.counts.sort("doc_id", "attribute"))


def test_metadata_holding_a_container_is_still_an_error_from_a_file(tmp_path):
    """The kernel declines a metadata member holding an object or a list; the Python path
    then reports it, naming file and line, as it does for Python objects."""
    from jsoneval_polars import InputError, evaluate
    from jsoneval_polars.stream import score_files

    gt, aio = tmp_path / "gt.ndjson", tmp_path / "aio.ndjson"
    _lines(gt, [{"doc_id": "a", "x": 1, "model": "m"}, {"doc_id": "b", "x": 1, "model": ["m"]}])
    _lines(aio, [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 1}])
    for run in (lambda: evaluate(gt, aio, metadata=["model"]),
                lambda: score_files(gt, aio, tmp_path / "out", metadata=["model"], workers=1)):
        with pytest.raises(InputError, match=r"gt.ndjson, line 2: metadata 'model' holds a list"):
            run()


def _content_records(hostile: bool) -> tuple[list[dict], list[dict]]:
    """Records whose document is the member ``doc`` (GT) or ``out`` (AIO): objects, and AIO
    JSON text that is one whole object or a fenced block of one; with ``hostile``, what the
    Python path decides too."""
    gt, aio = [], []
    for i in range(60):
        document = {"name": f"Item {i}", "n": i / 4, "items": [{"a": i}, {"a": -i}]}
        gt.append({"doc_id": f"d{i}", "model": f"m{i % 3}", "doc": document})
        answer = {**document, "name": document["name"].upper()}
        out = json.dumps(answer) if i % 2 else answer
        if i % 6 == 3:  # a fenced block of the model's answer (code_block)
            out = f"Sure!\n```json\n{out}\n```\nAnything else?"
        aio.append({"doc_id": f"d{i}", "out": f"  {out}\n" if i % 4 == 1 else out})
    if hostile:
        aio[3]["out"] = 'Sure!\n```json\n{"name": "ITEM 3", "n": NaN}\n```'  # its note
        aio[5]["out"] = 'The answer is {"name": "Item 5", "n": 1.25}.'  # embedded
        aio[7]["out"] = "[1, 2]"  # no object: invalid
        aio[9]["out"] = '{"name": "x", "n": NaN}'  # json, with its note
        aio[11]["out"] = 42  # not an object: scored as {}
        del aio[13]["out"]  # no content member: an error row
        aio[15]["out"] = '{"name": "a", "name": "b"}'  # a repeated key in the text
        aio[17]["out"] = "\u00a0{\"name\": \"Item 17\"}"  # Python's strip() takes the NBSP
        aio[19]["out"] = [{"name": "Item 19"}]  # a list: the "$" root
        gt[21]["doc"] = "not an object"  # a GT error row, its AIO left out
        del gt[23]["doc"]
        aio[27]["out"] = {"n": 12345678901234567890123}  # beyond 64 bits: exact
        gt[29]["doc"] = '{"name": "Item 29"}'  # JSON text on the GT side: still an error
    return gt, aio


@pytest.mark.parametrize("hostile", [False, True])
def test_content_fields_are_read_natively_as_python_reads_them(tmp_path, monkeypatch,
                                                               hostile):
    """The document in a member (``--gt-field``/``--aio-field``), an object or, on the AIO
    side, JSON text that is one whole object or a fenced block of one (SPEC §8's json and
    code_block), is read from the text by the kernel: the tables
    equal those of the same records as Python objects; plain batches never become Python
    documents; any other record (raw text needing extraction, no member, other kinds) sends
    its batch to the Python path, with the same rows."""
    from jsoneval_polars import evaluate, ingest, pipeline, stream
    from jsoneval_polars.results import read_results

    gt, aio = _content_records(hostile)
    _lines(tmp_path / "gt.ndjson", gt)
    _lines(tmp_path / "aio.ndjson", aio[::-1])
    options = {"content_field": ("doc", "out"), "metadata": ["model"]}
    objects = evaluate(gt, aio, **options)

    def refused(*args, **kwargs):
        raise AssertionError("a plain batch took the Python record path")

    if not hostile:
        monkeypatch.setattr(ingest, "read_records_at", refused)
        monkeypatch.setattr(pipeline, "pair_inputs", refused)
    stream.score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", tmp_path / "out",
                       batch_size=8, workers=1, **options)
    runs = [read_results(tmp_path / "out"),
            evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", batch_size=8, **options)]
    errors = ["source", "doc_id", "severity", "error"]
    for run in runs:
        for name, key in (("documents", ["doc_id"]), ("fields", ["doc_id", "path"]),
                          ("alignments", ["doc_id", "list_path", "gt_index"]),
                          ("attributes", ["attribute"])):
            assert_frame_equal(getattr(run, name).sort(key), getattr(objects, name).sort(key),
                               check_row_order=False)
        assert_frame_equal(run.errors.select(errors).sort(errors),
                           objects.errors.select(errors).sort(errors))
    statuses = set(objects.documents["aio_parse_status"].to_list())
    assert statuses == ({"json", "code_block", "embedded", "invalid", "missing"} if hostile
                        else {"json", "code_block"})


def test_a_declined_line_costs_only_its_pair_the_python_path(tmp_path, monkeypatch):
    """A batch with lines the kernel declines (a repeated key, NaN, a lower case Python
    decides) reads only those pairs in Python; the others stay native, and the tables, nested
    lists of records included, equal those of the same records read as Python objects."""
    from jsoneval_polars import evaluate, ingest, stream
    from jsoneval_polars.results import read_results

    gt, aio = [], []
    for i in range(40):
        lines = [{"sku": f"S{i}-{k}", "parts": [{"p": k * j} for j in range(k % 3 + 1)]}
                 for k in range(i % 4 + 1)]
        gt.append({"doc_id": f"d{i}", "name": f"Item {i}", "lines": lines})
        aio.append({"doc_id": f"d{i}", "name": f"ITEM {i}", "lines": lines[::-1][: i % 4 + 1]})
    texts = {side: [json.dumps(r) for r in records] for side, records in (("gt", gt),
                                                                         ("aio", aio))}
    texts["aio"][3] = texts["aio"][3][:-1] + ', "name": "again"}'  # repeated: the last wins
    texts["aio"][8] = texts["aio"][8][:-1] + ', "x": NaN}'
    texts["gt"][13] = texts["gt"][13][:-1] + ', "z": "\\ua7cb"}'  # Python's lower case
    for side in texts:
        (tmp_path / f"{side}.ndjson").write_text("\n".join(texts[side]) + "\n")
    objects = {side: [json.loads(t) for t in texts[side]] for side in texts}
    want = evaluate(objects["gt"], objects["aio"])

    read_in_python = []
    original = ingest.read_records_at

    def counting(path, side, lines, *args):
        read_in_python.extend((side, line) for line in lines if line is not None)
        return original(path, side, lines, *args)

    monkeypatch.setattr(ingest, "read_records_at", counting)
    stream.score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", tmp_path / "out",
                       batch_size=20, workers=1)
    got = read_results(tmp_path / "out")
    assert sorted(read_in_python) == [("aio", 4), ("aio", 9), ("aio", 14), ("gt", 4),
                                      ("gt", 9), ("gt", 14)]
    for name, key in (("documents", ["doc_id"]), ("fields", ["doc_id", "path"]),
                      ("alignments", ["doc_id", "list_path", "gt_index"]),
                      ("counts", ["doc_id", "attribute"])):
        assert_frame_equal(getattr(got, name).sort(key), getattr(want, name).sort(key),
                           check_row_order=False)
    # the text's own warnings, which objects cannot have
    rows = got.errors.sort("doc_id").select("source", "doc_id", "line", "severity").rows()
    assert rows == [("aio", "d3", 4, "warning"), ("aio", "d8", 9, "warning")]
    assert "duplicate key(s) 'name'" in got.errors["error"][0]
    assert "NaN is not valid JSON" in got.errors["error"][1]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(docs=S.datasets(max_docs=6), python_lines=st.lists(st.booleans(), min_size=12,
                                                          max_size=12))
def test_files_read_pair_by_pair_equal_the_same_records_as_objects(tmp_path, docs,
                                                                   python_lines):
    """Property: generated documents in a content member of NDJSON records, some lines sent to
    the Python path (their id member repeated: a warning, no other change), read natively pair
    by pair, give the tables and error rows of the same records as Python objects."""
    from jsoneval_polars import evaluate

    records = {side: [{"doc_id": d["doc_id"], "content": d[side]} for d in docs]
               for side in ("gt", "aio")}
    for side, bumped in (("gt", python_lines[:6]), ("aio", python_lines[6:])):
        texts = [json.dumps(r) for r in records[side]]
        texts = [t[:-1] + f', "doc_id": {json.dumps(r["doc_id"])}}}' if bump else t
                 for t, r, bump in zip(texts, records[side], bumped)]
        (tmp_path / f"{side}.ndjson").write_text("\n".join(texts) + "\n")
    want = evaluate(records["gt"], records["aio"], content_field="content", batch_size=2)
    got = evaluate(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", content_field="content",
                   batch_size=2)
    for name, key in (("documents", ["doc_id"]), ("fields", ["doc_id", "path"]),
                      ("alignments", ["doc_id", "list_path", "gt_index", "aio_index"]),
                      ("counts", ["doc_id", "attribute"])):
        assert_frame_equal(getattr(got, name).sort(key, nulls_last=True),
                           getattr(want, name).sort(key, nulls_last=True),
                           check_row_order=False)
    # error rows alike; the text's own warnings (the repeated id, NaN) objects cannot have
    errors = pl.col("severity") == "error"
    assert_frame_equal(got.errors.filter(errors).select("source", "doc_id", "error"),
                       want.errors.filter(errors).select("source", "doc_id", "error"),
                       check_row_order=False)


def test_table_content_fields_read_as_records_are(monkeypatch):
    """A table whose JSON cells are records holding the document (``--gt-field`` /
    ``--aio-field``) is read from the text by the kernel, as the same records given as Python
    objects are: the member is the document, the other members are no content (metadata may
    be read from them), a record without the member is an error row and is not paired; a
    float metadata column gives Python's ``str()``. Table-only cells (a null, raw model text)
    give the Python path's rows."""
    from jsoneval_polars import evaluate, ingest

    gt, aio = _content_records(True)
    temps = [i / 3 if i % 5 else None for i in range(len(aio))]
    temps[2], temps[4] = 1e16, float("nan")
    options = {"content_field": ("doc", "out"), "metadata": ["model", "temp"],
               "batch_size": 16}
    objects = evaluate(gt, [{**r, "temp": t} for r, t in zip(aio, temps, strict=True)],
                       **options)

    def table(records: list[dict], **columns) -> pl.DataFrame:
        return pl.DataFrame({"doc_id": [r["doc_id"] for r in records],
                             "json": [json.dumps(r) for r in records], **columns},
                            schema_overrides={"temp": pl.Float64})

    calls = []
    original = ingest.pairs_from_texts
    monkeypatch.setattr(ingest, "pairs_from_texts",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    tables = table(gt), table(aio, temp=temps)
    native = evaluate(*tables, json_column="json", **options)
    assert calls, "the text path was not taken"
    _same_run(native, objects)
    assert "record has no content field 'out'" in native.errors["error"].to_list()
    assert {"nan", "1e+16", "0.3333333333333333"} <= set(native.documents["temp"].to_list())
    assert not {"model", "temp", "doc_id"} & set(native.fields["attribute"].to_list())

    gt_table, aio_table = tables
    gt_table[31, "json"] = None
    aio_table[33, "json"] = 'Sure! {"name": "Item 33"}'
    native = evaluate(gt_table, aio_table, json_column="json", **options)
    _object_path(monkeypatch)
    _same_run(native, evaluate(gt_table, aio_table, json_column="json", **options))


def test_table_metadata_columns_and_members_read_as_the_python_path_reads_them(monkeypatch):
    """Metadata of table inputs: a side's own column (strings, integers; nulls too) wins over
    a member of that name, which is still not content; other names come from the members;
    the AIO's value wins over the GT's. Read from the text, hostile cells among them, the run
    equals the Python path's; float, boolean and date columns too (their str() is Python's:
    ``1.0``, ``True``, ``2024-01-05``)."""
    from jsoneval_polars import evaluate, ingest

    n = 40
    gt = _table("gt", CELLS["gt"][-n:]).with_columns(
        pl.Series("run", [i if i % 7 else None for i in range(n)], dtype=pl.Int64))
    aio = _table("aio", CELLS["aio"][-n:]).with_columns(
        pl.Series("model", [f"m{i % 3}" if i % 5 else None for i in range(n)]))
    texts = gt["json"].to_list()
    gt = gt.with_columns(pl.Series("json", [
        t[:-1] + f', "model": "g{i % 2}", "run": {i}}}' if i % 3 else t
        for i, t in enumerate(texts)]))
    texts = aio["json"].to_list()
    aio = aio.with_columns(pl.Series("json", [
        t[:-1] + f', "run": "a{i}"}}' if i % 4 == 0 else t for i, t in enumerate(texts)]))
    aio[7, "json"] = "Sure! {\"a\": 1}"  # raw model text: extracted in Python
    calls = []
    original = ingest.pairs_from_texts
    monkeypatch.setattr(ingest, "pairs_from_texts",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    options = {"metadata": ["model", "run"], "batch_size": 16, "json_column": "json"}
    native = evaluate(gt, aio, **options)
    assert calls, "the text path was not taken"
    others = [pl.col("run").cast(pl.Float64), pl.col("run").cast(pl.Boolean),
              (pl.date(2024, 1, 1) + pl.duration(days=pl.col("run"))).alias("run")]
    calls.clear()
    by_text = [evaluate(gt.with_columns(column), aio, **options) for column in others]
    assert len(calls) >= 3 * 3, "a scalar metadata column left the text path"
    _object_path(monkeypatch)
    _same_run(native, evaluate(gt, aio, **options))
    for column, run in zip(others, by_text, strict=True):
        _same_run(run, evaluate(gt.with_columns(column), aio, **options))
    values = {value for run in by_text for value in run.documents["run"].to_list()}
    assert {"True", "5.0"} <= values and any(str(v).startswith("2024-") for v in values)
    values = native.documents.select("model", "run").drop_nulls()
    assert values.height and {"run", "model"}.isdisjoint(native.fields["attribute"].to_list())
