"""The HTML report: self-contained, escaped, and rendered by a real headless Chromium.

The browser tests run when a Chromium binary is found (``chromium``, ``chromium-browser``,
``google-chrome``, or the path in ``$CHROMIUM``); CI installs Debian's ``chromium``.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from collections import Counter
from html.parser import HTMLParser

import polars as pl
import pytest
from sample_runs import run_a

from jsoneval_polars import evaluate
from jsoneval_polars.report import (
    CELL_COLORS,
    METRIC_COLORS,
    attribute_chart_svg,
    histogram_svg,
    render_report,
    write_report,
)

CHROMIUM = os.environ.get("CHROMIUM") or next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
needs_browser = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary (apt-get install chromium, or set $CHROMIUM); CI installs it",
)


class _Dom(HTMLParser):
    """Elements as (tag, attrs, path of enclosing ids) — enough to count bars per chart."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict, tuple[str, ...]]] = []
        self._stack: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        ids = tuple(i for _, i in self._stack if i) + ((a["id"],) if a.get("id") else ())
        self.elements.append((tag, a, ids))
        if tag not in ("meta", "br", "img", "input", "link"):
            self._stack.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, tuple(i for _, i in self._stack if i)))

    def handle_endtag(self, tag):
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                del self._stack[i:]
                break

    def handle_data(self, data):
        self.text.append(data)

    def bars(self, container: str) -> list[dict]:
        return [
            a for tag, a, ids in self.elements
            if tag == "rect" and "bar" in a.get("class", "").split() and container in ids
        ]


def _parse(html_text: str) -> _Dom:
    dom = _Dom()
    dom.feed(html_text)
    return dom


def _charted(result) -> pl.DataFrame:
    """The attributes the F1 chart shows: all but the keys only the AIO has (support 0, no TN,
    only FPs), which the attribute table lists instead."""
    a = result.attributes
    return a.filter(~((a["support"] == 0) & (a["tn"] == 0) & (a["fp"] > 0)))


def _expected_bars(result) -> dict[str, int]:
    charted = _charted(result)
    metric_bars = sum(charted[m].drop_nulls().len() for m in ("precision", "recall", "f1"))
    shown = set(result.attributes["attribute"])  # the confusion chart shows every attribute
    cells = Counter(
        (r["attribute"], r["cell"]) for r in result.fields.iter_rows(named=True)
        if r["cell"] is not None and r["attribute"] in shown
    )
    return {"attribute-chart": metric_bars, "rqs-histogram": 20, "confusion-chart": len(cells)}


def _check_dom(dom: _Dom, result, worst: int = 10) -> None:
    for container, n in _expected_bars(result).items():
        assert len(dom.bars(container)) == n, container
    hist = dom.bars("rqs-histogram")
    assert sum(int(b["data-count"]) for b in hist) == result.documents["rqs"].drop_nulls().len()
    # each F1 bar carries the attribute table's value
    f1 = {b["data-label"]: float(b["data-value"]) for b in dom.bars("attribute-chart")
          if b["data-series"] == "F1"}
    want = dict(_charted(result).select("attribute", "f1").drop_nulls().iter_rows())
    assert f1 == pytest.approx(want, abs=1e-5)
    # worst documents: the lowest RQS, in order
    shown = [a["data-doc-id"] for tag, a, _ in dom.elements
             if tag == "details" and a.get("class") == "doc"]
    lowest = result.documents.sort(["rqs", "doc_id"]).head(worst)["doc_id"].to_list()
    assert shown == lowest


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    results = run_a().write(tmp / "run")
    return write_report(results, tmp / "report.html")


def test_report_has_every_section_and_the_right_bars(sample_report):
    text = sample_report.read_text(encoding="utf-8")
    dom = _parse(text)
    ids = {a.get("id") for _, a, _ in dom.elements}
    assert {"summary", "attribute-chart", "rqs-histogram", "confusion-chart", "attribute-table",
            "worst-documents", "parse-status", "error-counts"} <= ids
    _check_dom(dom, run_a())
    page = "".join(dom.text)
    s = run_a().summary
    assert f"{s['mean_rqs']:.3f}" in page and f"{s['pass_rate']:.1%}" in page


def test_report_is_self_contained(sample_report):
    text = sample_report.read_text(encoding="utf-8")
    # one inline script (sorting, filtering), no script or style loaded from anywhere
    assert text.lower().count("<script") == 1 and "<script>" in text
    assert not re.search(r"""\b(src|href)\s*=""", text, re.I)
    assert not re.search(r"fetch\(|XMLHttpRequest|import\(", text)
    assert "@import" not in text and "url(" not in text
    # the only URL is the SVG namespace, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) == {"http://www.w3.org/2000/svg"}


def test_report_escapes_model_output():
    gt = [{"doc_id": "x<1>", "name": "Acme", "note": "fine"}]
    aio = [{"doc_id": "x<1>", "name": "<script>alert('pwned')</script>", "note": "fine"}]
    text = render_report(evaluate(gt, aio), title="<b>run</b>")
    assert "<script>alert" not in text
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in text
    assert "<title>&lt;b&gt;run&lt;/b&gt;</title>" in text
    assert 'data-doc-id="x&lt;1&gt;"' in text


def test_charts_mark_undefined_values_instead_of_drawing_zero():
    attrs = pl.DataFrame(
        {"attribute": ["a", "b"], "precision": [None, 0.5], "recall": [0.0, 1.0], "f1": [None, 0.8]}
    )
    svg = attribute_chart_svg(attrs)
    bars = [(a["data-label"], a["data-series"], float(a["data-value"]))
            for t, a, _ in _parse(svg).elements if t == "rect" and a.get("class") == "bar"]
    assert bars == [("b", "precision", 0.5), ("b", "recall", 1.0), ("b", "F1", 0.8),
                    ("a", "recall", 0.0)]  # worst F1 first, undefined F1 last
    assert svg.count(">n/a<") == 2
    hist = histogram_svg([0.0, 0.05, 0.5, 1.0, None], bins=4)
    counts = [int(a["data-count"]) for t, a, _ in _parse(hist).elements if t == "rect"]
    assert counts == [2, 0, 1, 1]  # the last bin is closed; nulls are not counted


def test_cli_report_writes_the_file(tmp_path):
    results = run_a().write(tmp_path / "run")
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "report", str(results), "--out",
         str(tmp_path / "out" / "r.html"), "--worst", "3"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "report written to" in proc.stdout
    dom = _parse((tmp_path / "out" / "r.html").read_text(encoding="utf-8"))
    assert len([1 for t, a, _ in dom.elements if t == "details" and a.get("class") == "doc"]) == 3


# --- in a real browser -------------------------------------------------------------------------


def _chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}", *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line[i] for i in range(stride) if i % bpp < 3))
        prev = line
    return width, height, rows


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


@needs_browser
def test_chromium_parses_the_report_with_every_chart(sample_report, tmp_path):
    proc = _chromium(tmp_path, "--dump-dom", sample_report.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "<svg" in proc.stdout, proc.stderr[-2000:]
    _check_dom(_parse(proc.stdout), run_a())


@needs_browser
def test_chromium_screenshot_shows_the_charts(sample_report, tmp_path):
    shot = tmp_path / "report.png"
    proc = _chromium(tmp_path, "--window-size=1200,2600", f"--screenshot={shot}",
                     "--hide-scrollbars", sample_report.as_uri())
    assert shot.is_file() and shot.stat().st_size > 0, proc.stderr[-2000:]
    width, height, rows = _png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 2600)
    pixels = Counter(row[i:i + 3] for row in rows for i in range(0, len(row), 3))
    assert len(pixels) > 50, "the screenshot is blank"

    def near(color: str, tol: int = 8) -> int:
        want = _rgb(color)
        close = (px for px in pixels if all(abs(p - w) <= tol for p, w in zip(px, want)))
        return sum(pixels[px] for px in close)

    # bars of every metric and of every cell drew real area (a 1200 x 2600 page holds the
    # summary, the F1 chart, the histogram and the top of the confusion chart)
    for color in (*METRIC_COLORS.values(), CELL_COLORS["TP"], CELL_COLORS["FP"]):
        assert near(color) > 2000, color


def test_histogram_axis_has_thousands_separators_and_the_pass_threshold():
    svg = histogram_svg([0.8] * 150_000 + [0.1], bins=10, threshold=0.7)
    dom = _parse(svg)
    labels = [t for t in dom.text if t.replace(",", "").isdigit()]
    assert "150,000" in labels and "150000" not in labels
    # the widest count label (right-aligned at the plot's left edge) starts inside the image
    count_labels = [a for t, a, _ in dom.elements
                    if t == "text" and a.get("text-anchor") == "end"]
    assert min(float(a["x"]) for a in count_labels) >= 7 * len("150,000")
    line = [a for t, a, _ in dom.elements if t == "line" and a.get("class") == "threshold"]
    assert [float(a["data-value"]) for a in line] == [0.7]
    left = min(float(a["x"]) for t, a, _ in dom.elements if t == "rect")
    right = max(float(a["x"]) + float(a["width"]) for t, a, _ in dom.elements if t == "rect")
    # 0.7 of the way along the bins (each bin's rect is inset by 1 px on both sides)
    assert float(line[0]["x1"]) == pytest.approx((left - 1) + 0.7 * (right + 1 - (left - 1)),
                                                 abs=0.2)


def test_report_shows_intervals_calibration_and_provenance(tmp_path):
    gt = [{"doc_id": f"d{i}", "total": i, "name": f"n{i}"} for i in range(30)]
    aio = [{**g, "name": "x" if i % 3 == 0 else g["name"]} for i, g in enumerate(gt)]
    conf = [{"doc_id": g["doc_id"], "total": 0.9, "name": 0.3 + 0.02 * i}
            for i, g in enumerate(gt)]
    run = evaluate(gt, aio, config={"pass_threshold": 0.8}, bootstrap=200, seed=1,
                   confidence=conf)
    text = render_report(run.write(tmp_path / "run"))
    dom = _parse(text)
    ids = {a.get("id") for _, a, _ in dom.elements}
    assert {"intervals", "calibration-table", "provenance"} <= ids
    assert "f1_low" in dom.text and "acc@50%" in dom.text
    line = [a for t, a, _ in dom.elements if t == "line" and a.get("class") == "threshold"]
    assert [float(a["data-value"]) for a in line] == [0.8]
    page = "".join(dom.text)
    assert f"[{run.summary['micro_f1_low']:.3f}, {run.summary['micro_f1_high']:.3f}]" in page
    assert f"jsoneval_polars {run.manifest['version']}" in page


def _comparison_runs(tmp_path):
    gt = [{"doc_id": f"d{i:03d}", "name": f"name {i}", "city": "Bern", "total": i}
          for i in range(80)]
    a = [dict(g) for g in gt]
    b = [{**g, "name": "wrong" if i % 2 == 0 else g["name"],  # planted regression
          "city": "Bärn" if i == 5 else g["city"]}  # one changed value: not significant
         for i, g in enumerate(gt)]
    return (evaluate(gt, a).write(tmp_path / "A"), evaluate(gt, b).write(tmp_path / "B"))


def test_comparison_page_lists_the_planted_regression(tmp_path):
    from jsoneval_polars.report import render_comparison

    run_a_dir, run_b_dir = _comparison_runs(tmp_path)
    text = render_comparison(run_a_dir, run_b_dir, bootstrap=500, seed=3)
    assert text.lower().count("<script") == 1
    assert not re.findall(r"https?://", text)
    dom = _parse(text)
    page = "".join(dom.text)
    assert "Got worse (2 attributes)" in page and "Got better (0 attributes)" in page
    # the rows of the "worse" table: name (significant) before city (not significant)
    cells = [t.strip() for t in dom.text if t.strip()]
    i = cells.index("Got worse (2 attributes)")
    table = cells[i:cells.index("Got better (0 attributes)")]
    assert table.index("name") < table.index("city")
    flags = [x for x in table if x in ("yes", "no")]
    assert flags == ["yes", "no"]


@needs_browser
def test_chromium_renders_the_comparison_from_the_cli(tmp_path):
    run_a_dir, run_b_dir = _comparison_runs(tmp_path)
    out = tmp_path / "cmp.html"
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "report", str(run_a_dir), str(run_b_dir),
         "--out", str(out), "--bootstrap", "300", "--seed", "1"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    dom_text = _chromium(tmp_path, "--dump-dom", out.as_uri()).stdout
    assert "Got worse (2 attributes)" in dom_text
    cells = [t.strip() for t in _parse(dom_text).text if t.strip()]
    table = cells[cells.index("Got worse (2 attributes)"):cells.index("Got better (0 attributes)")]
    assert table.index("name") < table.index("city")
    assert [x for x in table if x in ("yes", "no")] == ["yes", "no"]


def _column(dom_text: str, table_id: str, col: int) -> list[str]:
    """The text of column ``col`` of each body row of a table, in page order."""
    rows = []
    body = dom_text.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    body = body.split("<tbody>", 1)[1]
    for tr in body.split("<tr")[1:]:
        tds = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
        rows.append(html.unescape(re.sub(r"<[^>]+>", "", tds[col])).strip())
    return rows


@needs_browser
def test_chromium_sorts_and_the_page_has_filter_boxes(sample_report, tmp_path):
    text = sample_report.read_text(encoding="utf-8")
    before = _column(text, "attribute-table", 0)
    assert before != sorted(before)  # worst F1 first, not by name
    sorted_page = _chromium(tmp_path, "--dump-dom",
                            sample_report.as_uri() + "#sort=attribute-table:0").stdout
    after = _column(sorted_page, "attribute-table", 0)
    assert after == sorted(before, key=str.lower)
    assert 'aria-sort="ascending"' in sorted_page
    by_rqs = _chromium(tmp_path, "--dump-dom",
                       sample_report.as_uri() + "#sort=document-table:1").stdout
    rqs = [float(x) for x in _column(by_rqs, "document-table", 1)]
    assert rqs == sorted(rqs) and len(rqs) == run_a().documents.height
    assert text.count('class="filter"') == 2


def test_report_shows_mean_anls_only_when_computed(tmp_path):
    gt = [{"doc_id": "a", "name": "abc"}, {"doc_id": "b", "name": "q"}]
    aio = [{"doc_id": "a", "name": "abd"}, {"doc_id": "b", "name": "q"}]
    with_anls = "".join(_parse(render_report(
        evaluate(gt, aio, config={"anls": True}).write(tmp_path / "on"))).text)
    assert "ANLS*" in with_anls and "0.833" in with_anls  # (2/3 + 1) / 2
    assert "ANLS*" not in "".join(_parse(render_report(
        evaluate(gt, aio).write(tmp_path / "off"))).text)


# --- drill-down, slices, calibration chart ----------------------------------------------------

HOSTILE = '</script><img src=x onerror="alert(1)">'


def _details(page: str) -> list[tuple[str, list[list[str]]]]:
    """Each drill-down <details>: its attribute and the text of its table's body rows."""
    out = []
    section = page.split('id="drilldown"', 1)[1]
    for block in section.split('<details class="attr"')[1:]:
        name = html.unescape(re.search(r'data-attribute="([^"]*)"', block)[1])
        body = block.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
        rows = [[html.unescape(re.sub(r"<[^>]+>", "", td)).strip()
                 for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
                for tr in body.split("<tr")[1:]]
        out.append((name, rows))
    return out


def test_drilldown_is_worst_first_bounded_and_escaped(tmp_path):
    from jsoneval_polars.report import EXAMPLES_PER_ATTRIBUTE

    # "city" wrong in 8 of 20 documents, "name" in 2 (one of them hostile), "total" never
    gt = [{"doc_id": f"d{i:02d}", "name": f"name {i}", "city": "Bern", "total": i}
          for i in range(20)]
    aio = [{**g, "city": "Zürich" if i < 8 else "Bern",
            "name": HOSTILE if i == 3 else ("q" if i == 5 else g["name"])}
           for i, g in enumerate(gt)]
    aio[7].pop("city")  # absent: first among city's examples (no similarity)
    run = evaluate(gt, aio)
    page = render_report(run.write(tmp_path / "run"))
    assert page.lower().count("<script") == 1 and "<img" not in page
    blocks = _details(page)
    f1 = dict(run.attributes.select("attribute", "f1").iter_rows())
    assert [name for name, _ in blocks] == ["city", "name"]  # total has nothing wrong
    assert f1["city"] < f1["name"]
    city = dict(blocks)["city"]
    assert len(city) == EXAMPLES_PER_ATTRIBUTE  # 8 wrong, 5 shown
    # columns: doc_id, path, gt_value, aio_value, cell, similarity
    assert city[0][0] == "d07" and city[0][3] == "absent / null"
    assert [row[0] for row in city[1:]] == ["d00", "d01", "d02", "d03"]  # ties: by doc_id
    assert "8 wrong fields" in page
    name = dict(blocks)["name"]
    assert {row[0] for row in name} == {"d03", "d05"}
    assert HOSTILE in [html.unescape(c) for row in name for c in row]
    # lowest similarity first: "q" shares nothing with "name 5"; the hostile value shares
    # letters with "name 3"
    assert [row[0] for row in name] == ["d05", "d03"]
    assert float(name[0][5]) == 0.0 < float(name[1][5])


def test_slices_equal_separate_runs_and_hand_counts(tmp_path):
    gt = [{"doc_id": f"d{i}", "vendor": "acme" if i < 4 else "zeta", "a": "x", "b": i}
          for i in range(6)]
    # acme: d0 right, d1 a wrong, d2 b missing, d3 right; zeta: d4 b wrong, d5 right
    aio = [dict(g) for g in gt]
    aio[1]["a"] = "y"
    del aio[2]["b"]
    aio[4]["b"] = 99
    run = evaluate(gt, aio, metadata=["vendor"])
    page = render_report(run.write(tmp_path / "run"), by=["vendor"])
    header = re.findall(r"<th[^>]*>(.*?)</th>",
                        page.split('id="slice-table"', 1)[1].split("</thead>", 1)[0])
    cols = [re.sub(r"<[^>]+>", "", h).strip() for h in header]
    rows: dict[int, dict[str, str]] = {}
    for k, name in enumerate(cols):
        for i, v in enumerate(_column(page, "slice-table", k)):
            rows.setdefault(i, {})[name] = v
    by_vendor = {r["vendor"]: r for r in rows.values()}
    # hand counts: a wrong value is one FP and one FN; a missing one is one FN
    assert [(by_vendor[v]["tp"], by_vendor[v]["fp"], by_vendor[v]["fn"]) for v in
            ("acme", "zeta")] == [("6", "1", "2"), ("3", "1", "1")]
    assert float(by_vendor["acme"]["precision"]) == pytest.approx(6 / 7, abs=5e-4)
    assert float(by_vendor["acme"]["recall"]) == pytest.approx(6 / 8, abs=5e-4)
    # each slice equals a separate run over its documents only
    for vendor in ("acme", "zeta"):
        keep = [i for i, g in enumerate(gt) if g["vendor"] == vendor]
        alone = evaluate([gt[i] for i in keep], [aio[i] for i in keep],
                         metadata=["vendor"]).summary
        row = by_vendor[vendor]
        assert int(row["documents"]) == alone["n_documents"]
        assert float(row["pass_rate"]) == pytest.approx(alone["pass_rate"], abs=5e-4)
        assert float(row["mean_rqs"]) == pytest.approx(alone["mean_rqs"], abs=5e-4)
        assert float(row["f1"]) == pytest.approx(alone["micro_f1"], abs=5e-4)


def test_report_by_an_unknown_column_is_one_line(tmp_path):
    run_dir = evaluate([{"doc_id": "a", "x": 1, "vendor": "v"}],
                       [{"doc_id": "a", "x": 1, "vendor": "v"}],
                       metadata=["vendor"]).write(tmp_path / "run")
    with pytest.raises(ValueError, match="did you mean 'vendor'"):
        render_report(run_dir, by=["vendr"])
    proc = subprocess.run(
        [sys.executable, "-m", "jsoneval_polars", "report", str(run_dir), "--out",
         str(tmp_path / "r.html"), "--by", "vendr"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and not (tmp_path / "r.html").exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "vendr" in lines[0] and "did you mean 'vendor'" in lines[0]


def _calibrated_run(tmp_path):
    gt = [{"doc_id": f"d{i:02d}", "total": i, "name": f"n{i}"} for i in range(40)]
    aio = [{**g, "name": "x" if i % 4 == 0 else g["name"]} for i, g in enumerate(gt)]
    conf = [{"doc_id": g["doc_id"], "total": 0.95, "name": 0.2 + 0.02 * i}
            for i, g in enumerate(gt)]
    run = evaluate(gt, aio, confidence=conf)
    return run, write_report(run.write(tmp_path / "run"), tmp_path / "calibrated.html")


def test_calibration_chart_draws_the_overall_bins_and_coverage(tmp_path):
    run, path = _calibrated_run(tmp_path)
    dom = _parse(path.read_text(encoding="utf-8"))
    overall = run.calibration.filter(pl.col("attribute") == "*").row(0, named=True)
    bins = [a for t, a, _ in dom.elements if t == "circle" and a.get("class") == "bin"]
    assert [int(a["data-count"]) for a in bins] == overall["bin_n"]
    assert [float(a["data-accuracy"]) for a in bins] == pytest.approx(overall["bin_accuracy"],
                                                                      abs=1e-5)
    cover = [a for t, a, _ in dom.elements if t == "circle" and a.get("class") == "coverage"]
    assert [int(a["data-coverage"]) for a in cover] == list(range(10, 101, 10))
    assert float(cover[-1]["data-accuracy"]) == pytest.approx(overall["accuracy"])
    # the table shows the figures, not the chart's lists
    assert "bin_n" not in "".join(dom.text)


@needs_browser
def test_chromium_renders_drilldown_slices_and_calibration(tmp_path):
    run, path = _calibrated_run(tmp_path)
    shot = tmp_path / "calibrated.png"
    dom_text = _chromium(tmp_path, "--dump-dom", path.as_uri()).stdout
    dom = _parse(dom_text)
    assert len([a for t, a, _ in dom.elements if t == "circle" and a.get("class") == "bin"]) \
        == len(run.calibration.filter(pl.col("attribute") == "*")["bin_n"][0])
    assert [name for name, _ in _details(dom_text)] == ["name"]
    proc = _chromium(tmp_path, "--window-size=1200,4000", f"--screenshot={shot}",
                     "--hide-scrollbars", path.as_uri())
    assert shot.is_file(), proc.stderr[-2000:]
    _, _, rows = _png_pixels(shot.read_bytes())
    pixels = Counter(row[i:i + 3] for row in rows for i in range(0, len(row), 3))
    # the reliability dots (#4c78a8 at 75 % over white) and the coverage line (#54a24b)
    assert sum(n for px, n in pixels.items()
               if all(abs(p - w) <= 10 for p, w in zip(px, _rgb("#54a24b")))) > 100


def test_drilldown_of_a_run_in_many_parts_equals_one_sort(tmp_path):
    """A stored run is read part by part (one Parquet file per scored batch); the examples
    are those of one sort over every wrong field, as from the run in memory."""
    import json

    from jsoneval_polars.stream import score_files

    gt = [{"doc_id": f"d{i:03d}", "name": f"name {i}", "city": "Bern", "n": i} for i in range(60)]
    # the later the document, the further its name from the GT's: the lowest similarities
    # are in the last parts
    aio = [{**g, "name": g["name"] + "#" * i if i % 2 == 0 else g["name"],
            "city": "Basel" if i % 7 == 0 else "Bern"} for i, g in enumerate(gt)]
    for side, rows in (("gt", gt), ("aio", aio)):
        (tmp_path / f"{side}.ndjson").write_text("".join(json.dumps(x) + "\n" for x in rows))
    fuzzy = {"field_strategies": {"name": "FUZZY"}}
    score_files(tmp_path / "gt.ndjson", tmp_path / "aio.ndjson", out=tmp_path / "run",
                config=fuzzy, batch_size=7, workers=1)
    assert len(list((tmp_path / "run" / "fields").rglob("*.parquet"))) >= 8
    in_memory = _details(render_report(evaluate(gt, aio, config=fuzzy)))
    assert _details(render_report(tmp_path / "run")) == in_memory
    assert sum(len(rows) for _, rows in in_memory) == 10  # two attributes, 5 examples each
    assert [row[0] for row in dict(in_memory)["name"]] == ["d058", "d056", "d054", "d052",
                                                           "d050"]


def test_wide_runs_chart_and_list_the_lowest_f1_attributes_only(tmp_path, monkeypatch):
    """One document with 100,000 keys made a 138 MB page of 100,000-bar charts. Charts keep
    the MAX_CHARTED_ATTRIBUTES lowest-F1 attributes and the table MAX_ATTRIBUTE_ROWS, each
    with a note; the caps are lowered here so that a small run crosses them."""
    from jsoneval_polars import report

    monkeypatch.setattr(report, "MAX_CHARTED_ATTRIBUTES", 5)
    monkeypatch.setattr(report, "MAX_ATTRIBUTE_ROWS", 8)
    # k0-k9 right, w0-w4 wrong (F1 0): the five charted bars are the wrong ones
    gt = [{"doc_id": "a", **{f"k{i}": i for i in range(10)}, **{f"w{i}": i for i in range(5)}}]
    aio = [{"doc_id": "a", **{f"k{i}": i for i in range(10)},
            **{f"w{i}": i + 1 for i in range(5)}}]
    page = render_report(evaluate(gt, aio, config={"default_text_strategy": "EXACT"}))
    dom = _parse(page)
    f1_bars = [b["data-label"] for b in dom.bars("attribute-chart") if b["data-series"] == "F1"]
    assert f1_bars == ["w0", "w1", "w2", "w3", "w4"]
    confusion = {b["data-label"] for b in dom.bars("confusion-chart")}
    assert confusion == {"w0", "w1", "w2", "w3", "w4"}
    text = "".join(dom.text)
    assert text.count("The 5 lowest-F1 of 15 attributes are charted.") == 2
    assert "The 8 lowest-F1 of 15 attributes are listed." in text
    rows = [a for tag, a, ids in dom.elements if tag == "tr" and "attribute-table" in ids]
    assert len(rows) == 8 + 1  # and the header
