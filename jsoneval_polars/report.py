"""A self-contained HTML report of one run: one file, inline CSS, SVG and a small script.

:func:`write_report` takes a :class:`Result` or a results directory. The page holds the summary
figures, a per-attribute precision / recall / F1 chart and table, the RQS distribution, the
confusion counts by attribute, the worst documents with their field diffs, and the error
counts. Nothing is fetched from the network when it is opened.

The chart builders are public so a notebook can show the same charts
(``IPython.display.SVG(attribute_chart_svg(result.attributes))``). Each bar is an SVG
``<rect class="bar">`` carrying ``data-*`` attributes with what it shows, and a ``<title>``
tooltip.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from .calibration import OVERALL
from .rates import attribute_rates, invented_expr, slice_rates
from .results import ResultSource, as_tables, table_location
from .schemas import COUNTS as COUNT_TABLE_COLUMNS

__all__ = [
    "CELL_COLORS",
    "METRIC_COLORS",
    "attribute_chart_svg",
    "bar_chart_svg",
    "calibration_chart_svg",
    "cell_counts",
    "confusion_chart_svg",
    "histogram_svg",
    "render_comparison",
    "render_report",
    "write_report",
]

METRIC_COLORS = {"precision": "#4c78a8", "recall": "#f58518", "F1": "#54a24b"}
CELL_COLORS = {
    "TP": "#54a24b", "TN": "#9ecae9", "FP": "#f58518", "FN": "#e45756", "FP+FN": "#b279a2",
}
_CELL_ORDER = ("TP", "TN", "FP", "FN", "FP+FN")
_WRONG_CELLS = ("FN", "FP", "FP+FN")  # the drill-down's tally order
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# --- SVG charts -----------------------------------------------------------------------------


def _nice_scale(peak: int) -> tuple[float, float]:
    """An axis top >= peak and a round tick step (1, 2 or 5 times a power of ten)."""
    if peak <= 0:
        return 1.0, 1.0
    raw = peak / 5
    mag = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return float(step * math.ceil(peak / step)), float(step)


def _legend(items: Sequence[tuple[str, str]], x: float, y: float) -> list[str]:
    out, cx = [], x
    for name, color in items:
        out.append(f'<rect x="{cx:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{cx + 14:.1f}" y="{y:.1f}" font-size="12">{_e(name)}</text>')
        cx += 24 + 7.5 * len(name)
    return out


def bar_chart_svg(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "",
    value_series: str | None = None,
    width: int = 980,
    label_width: int = 210,
) -> str:
    """Horizontal grouped bars of values in [0, 1]: one group per label, one bar per series.

    A null value draws no bar and writes "n/a" in its place (undefined, not zero).
    ``value_series`` (default: the last series) is written as a number right of each group.
    """
    colors = colors or {}
    names = list(series)
    bar_h, gap, top = 7, 9, 34
    group_h = bar_h * len(names) + gap
    height = top + group_h * len(labels) + 24
    plot_w = width - label_width - 90
    value_series = value_series if value_series is not None else (names[-1] if names else None)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart bar-chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" style="{_FONT}">',
        f"<title>{_e(title)}</title>" if title else "",
    ]
    parts += _legend([(n, colors.get(n, "#888")) for n in names], label_width, 16)
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = label_width + tick * plot_w
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 20}" stroke="#e3e3e3"/>'
            f'<text x="{x:.1f}" y="{height - 6}" font-size="11" text-anchor="middle" '
            f'fill="#666">{tick:g}</text>'
        )
    for i, label in enumerate(labels):
        y0 = top + i * group_h
        parts.append(
            f'<text x="{label_width - 8}" y="{y0 + bar_h * len(names) / 2 + 4:.1f}" font-size="12" '
            f'text-anchor="end"><title>{_e(label)}</title>{_e(_clip(label, 30))}</text>'
        )
        if value_series is not None:
            v = series[value_series][i]
            parts.append(
                f'<text x="{label_width + plot_w + 8}" y="{y0 + bar_h * len(names) / 2 + 4:.1f}" '
                f'font-size="11" fill="#333">{_e(value_series)} {_fmt(v)}</text>'
            )
        for j, name in enumerate(names):
            value = series[name][i]
            y = y0 + j * bar_h
            if value is None:
                parts.append(
                    f'<text x="{label_width + 3}" y="{y + bar_h}" font-size="8" '
                    f'fill="#888">n/a</text>'
                )
                continue
            w = max(0.0, min(1.0, value)) * plot_w
            parts.append(
                f'<rect class="bar" data-label="{_e(label)}" data-series="{_e(name)}" '
                f'data-value="{value:.6g}" x="{label_width}" y="{y}" width="{w:.2f}" '
                f'height="{bar_h - 1}" fill="{colors.get(name, "#888")}">'
                f"<title>{_e(label)} {_e(name)}: {value:.3f}</title></rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


def attribute_chart_svg(attributes: pl.DataFrame, *, width: int = 980) -> str:
    """Precision, recall and F1 per attribute (worst F1 first)."""
    a = attributes.sort(["f1", "attribute"], nulls_last=True)
    return bar_chart_svg(
        a["attribute"].to_list(),
        {"precision": a["precision"].to_list(), "recall": a["recall"].to_list(),
         "F1": a["f1"].to_list()},
        colors=METRIC_COLORS,
        title="Precision, recall and F1 per attribute",
        width=width,
    )


def histogram_svg(
    values: Sequence[float | None],
    *,
    bins: int = 20,
    lo: float = 0.0,
    hi: float = 1.0,
    title: str = "",
    xlabel: str = "",
    color: str = "#4c78a8",
    width: int = 980,
    height: int = 260,
    threshold: float | None = None,
    threshold_label: str = "pass",
) -> str:
    """Histogram of the non-null values on [lo, hi] in ``bins`` equal bins (the last closed).

    One ``rect.bar`` per bin, empty bins included, with its bounds and count in ``data-*``.
    Count labels carry thousands separators and the left margin fits the widest one;
    ``threshold`` draws a dashed ``line.threshold`` there, labelled ``threshold_label``.
    """
    counts = [0] * bins
    step = (hi - lo) / bins
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v < lo or v > hi:
            continue
        counts[min(int((v - lo) / step), bins - 1)] += 1
    peak, tick = _nice_scale(max(counts))
    left, right, top, bottom = 16 + 7 * len(f"{peak:,.0f}"), 12, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    bw = plot_w / bins
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart histogram" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" style="{_FONT}">',
        f"<title>{_e(title)}</title>" if title else "",
    ]
    for k in range(int(round(peak / tick)) + 1):
        c = k * tick
        y = top + plot_h - plot_h * c / peak
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#e3e3e3"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="#666">{c:,.0f}</text>'
        )
    for i, n in enumerate(counts):
        b0, b1 = lo + i * step, lo + (i + 1) * step
        h = plot_h * n / peak
        parts.append(
            f'<rect class="bar" data-bin-start="{b0:.6g}" data-bin-end="{b1:.6g}" data-count="{n}" '
            f'x="{left + i * bw + 1:.2f}" y="{top + plot_h - h:.2f}" width="{bw - 2:.2f}" '
            f'height="{h:.2f}" fill="{color}"><title>{b0:.2f}–{b1:.2f}: {n:,}</title></rect>'
        )
    if threshold is not None and lo <= threshold <= hi:
        x = left + plot_w * (threshold - lo) / (hi - lo)
        parts.append(
            f'<line class="threshold" data-value="{threshold:g}" x1="{x:.1f}" y1="{top - 4}" '
            f'x2="{x:.1f}" y2="{top + plot_h}" stroke="#d62728" stroke-width="2" '
            f'stroke-dasharray="6 4"/><text x="{x + 5:.1f}" y="{top + 8}" font-size="11" '
            f'fill="#d62728">{_e(threshold_label)} ≥ {threshold:g}</text>'
        )
    for k in range(0, bins + 1, max(1, bins // 5)):
        x = left + k * bw
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle" '
            f'fill="#666">{lo + k * step:g}</text>'
        )
    parts.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" '
        f'stroke="#999"/>'
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="12" '
        f'text-anchor="middle">{_e(xlabel)}</text></svg>'
    )
    return "".join(parts)


def calibration_chart_svg(
    bin_confidence: Sequence[float],
    bin_accuracy: Sequence[float],
    bin_n: Sequence[int],
    coverage_accuracy: Mapping[int, float | None],
    *,
    width: int = 980,
    height: int = 300,
) -> str:
    """Two panels: the reliability diagram (each non-empty confidence bin at its mean
    confidence and accuracy, the dot's area by its count, against the dashed diagonal of
    perfect calibration) and the accuracy of the most confident q % of the values
    (``coverage_accuracy``: q -> accuracy). Points are ``circle.bin`` and ``circle.coverage``
    with their numbers in ``data-*``."""
    gap, left, right, top, bottom = 60, 46, 24, 26, 42  # right: room for the "100 %" label
    panel_w = (width - gap - 2 * left - 2 * right) / 2
    plot_h = height - top - bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart calibration" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" style="{_FONT}">',
        "<title>Reliability diagram and accuracy at coverage</title>",
    ]

    def frame(x0: float, title: str, xlabel: str, xticks: Sequence[tuple[float, str]]) -> None:
        parts.append(f'<text x="{x0:.1f}" y="{top - 10}" font-size="13" '
                     f'font-weight="600">{_e(title)}</text>')
        for k in range(6):
            v = k / 5
            y = top + plot_h * (1 - v)
            parts.append(
                f'<line x1="{x0:.1f}" y1="{y:.1f}" x2="{x0 + panel_w:.1f}" y2="{y:.1f}" '
                f'stroke="#e3e3e3"/><text x="{x0 - 6:.1f}" y="{y + 4:.1f}" font-size="11" '
                f'text-anchor="end" fill="#666">{v:.1f}</text>')
        for v, label in xticks:
            parts.append(f'<text x="{x0 + panel_w * v:.1f}" y="{top + plot_h + 16}" '
                         f'font-size="11" text-anchor="middle" fill="#666">{_e(label)}</text>')
        parts.append(
            f'<line x1="{x0:.1f}" y1="{top + plot_h}" x2="{x0 + panel_w:.1f}" '
            f'y2="{top + plot_h}" stroke="#999"/><line x1="{x0:.1f}" y1="{top}" x2="{x0:.1f}" '
            f'y2="{top + plot_h}" stroke="#999"/>'
            f'<text x="{x0 + panel_w / 2:.1f}" y="{height - 6}" font-size="12" '
            f'text-anchor="middle">{_e(xlabel)}</text>'
            f'<text transform="translate({x0 - 34:.1f},{top + plot_h / 2:.1f}) rotate(-90)" '
            f'font-size="12" text-anchor="middle">accuracy</text>')

    def at(x0: float, fx: float, fy: float) -> tuple[float, float]:
        return x0 + panel_w * fx, top + plot_h * (1 - fy)

    x0 = left
    frame(x0, "Reliability (10 bins)", "mean confidence of the bin",
          [(v / 5, f"{v / 5:.1f}") for v in range(6)])
    (ax, ay), (bx, by) = at(x0, 0, 0), at(x0, 1, 1)
    parts.append(f'<line class="diagonal" x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" '
                 f'y2="{by:.1f}" stroke="#999" stroke-dasharray="5 4"/>')
    points = [at(x0, c, a) for c, a in zip(bin_confidence, bin_accuracy)]
    if len(points) > 1:
        parts.append('<polyline fill="none" stroke="#4c78a8" stroke-width="1.5" points="'
                     + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')
    biggest = max(bin_n, default=1) or 1
    for (x, y), c, a, n in zip(points, bin_confidence, bin_accuracy, bin_n):
        r = 3 + 7 * math.sqrt(n / biggest)
        parts.append(
            f'<circle class="bin" data-confidence="{c:.6g}" data-accuracy="{a:.6g}" '
            f'data-count="{n}" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#4c78a8" '
            f'fill-opacity="0.75"><title>confidence {c:.3f}, accuracy {a:.3f}: {n:,} values'
            f"</title></circle>")

    x0 = left + panel_w + right + gap + left
    qs = sorted(q for q, v in coverage_accuracy.items() if v is not None)
    frame(x0, "Accuracy of the most confident q %", "coverage q (most confident first)",
          [(q / 100, f"{q} %") for q in (0, 20, 40, 60, 80, 100)])
    points = [at(x0, q / 100, coverage_accuracy[q]) for q in qs]
    if len(points) > 1:
        parts.append('<polyline fill="none" stroke="#54a24b" stroke-width="2" points="'
                     + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')
    for (x, y), q in zip(points, qs):
        a = coverage_accuracy[q]
        parts.append(
            f'<circle class="coverage" data-coverage="{q}" data-accuracy="{a:.6g}" '
            f'cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#54a24b"><title>{q} %: accuracy '
            f"{a:.3f}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def cell_counts(fields: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """One row per attribute with the number of fields in each cell: columns ``attribute``,
    ``TP``, ``TN``, ``FP``, ``FN``, ``FP+FN`` (fields whose cell is null are not counted)."""
    lf = fields.lazy()
    return (
        lf.filter(pl.col("cell").is_not_null())
        .group_by("attribute")
        .agg(pl.col("cell").eq(c).sum().cast(pl.Int64).alias(c) for c in _CELL_ORDER)
        .sort("attribute")
        .collect()
    )


def confusion_chart_svg(
    counts: pl.DataFrame,
    *,
    order: Sequence[str] | None = None,
    width: int = 980,
    label_width: int = 210,
) -> str:
    """Per attribute, the share of each cell (TP, TN, FP, FN, FP+FN) as a 100 % stacked bar,
    with the attribute's number of fields at its end. ``counts`` is :func:`cell_counts`;
    ``order`` lists the attributes top to bottom (default: alphabetical)."""
    rows = {r["attribute"]: r for r in counts.iter_rows(named=True)}
    labels = [a for a in (order if order is not None else sorted(rows)) if a in rows]
    row_h, top = 16, 34
    height = top + row_h * len(labels) + 10
    plot_w = width - label_width - 64
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart confusion-chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" style="{_FONT}">',
        "<title>Confusion counts by attribute</title>",
    ]
    parts += _legend([(c, CELL_COLORS[c]) for c in _CELL_ORDER], label_width, 16)
    for i, label in enumerate(labels):
        y = top + i * row_h
        row = rows[label]
        total = sum(int(row[c] or 0) for c in _CELL_ORDER)
        parts.append(
            f'<text x="{label_width - 8}" y="{y + 11}" font-size="12" text-anchor="end">'
            f"<title>{_e(label)}</title>{_e(_clip(label, 30))}</text>"
        )
        x = float(label_width)
        for c in _CELL_ORDER:
            n = int(row[c] or 0)
            if not n:
                continue
            w = plot_w * n / total
            parts.append(
                f'<rect class="bar" data-label="{_e(label)}" data-series="{c}" data-value="{n}" '
                f'x="{x:.2f}" y="{y + 2}" width="{w:.2f}" height="{row_h - 4}" '
                f'fill="{CELL_COLORS[c]}"><title>{_e(label)} {c}: {n}</title></rect>'
            )
            x += w
        parts.append(
            f'<text x="{label_width + plot_w + 6}" y="{y + 11}" font-size="11" '
            f'fill="#666">{total}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


# --- the page -------------------------------------------------------------------------------

#: Sorting and filtering of the tables marked ``sortable``: a click on a header sorts by that
#: column (again: the other way; numbers as numbers, "–" last), the box above a table keeps
#: the rows that contain its text. ``#sort=<table id>:<column>`` in the URL sorts on load.
_SCRIPT = r"""
(function () {
  function key(td) {
    var t = td.textContent.trim().replace(/,/g, "");
    if (t === "" || t === "\u2013") return null;
    var n = Number(t.replace(/%$/, ""));
    return isNaN(n) ? t.toLowerCase() : n;
  }
  function sortBy(table, col) {
    var th = table.tHead.rows[0].cells[col];
    var asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) {
      c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      if (x === null || y === null) return (x === null) - (y === null);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () { sortBy(table, i); });
    });
  });
  document.querySelectorAll("input.filter").forEach(function (box) {
    var table = document.getElementById(box.dataset.table);
    box.addEventListener("input", function () {
      var q = box.value.toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0; });
    });
  });
  var m = /^#sort=([^:]+):(\d+)$/.exec(location.hash);
  if (m && document.getElementById(m[1])) sortBy(document.getElementById(m[1]), +m[2]);
})();
"""

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       background: #f6f7f9; color: #1d232b; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 36px 0 10px; border-bottom: 1px solid #dde1e6; padding-bottom: 6px; }
h3 { font-size: 15px; margin: 18px 0 8px; } .panel > h3:first-child { margin-top: 0; }
.sub { color: #5b6570; margin: 0 0 20px; font-size: 13px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; }
.card { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; padding: 10px 14px; }
.card .k { font-size: 12px; color: #5b6570; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 24px; font-weight: 600; margin-top: 2px; }
.status-healthy { color: #1e7b34; } .status-warning { color: #b26a00; }
.status-critical, .status-failed { color: #c0392b; }
.panel { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; padding: 14px;
         overflow-x: auto; }
.chart { display: block; max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eceff2;
         vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " ▲"; font-size: 10px; }
th[aria-sort="descending"]::after { content: " ▼"; font-size: 10px; }
input.filter { margin: 0 0 8px; padding: 4px 8px; border: 1px solid #ccd; border-radius: 4px;
               font: inherit; width: 260px; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.val { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px;
         max-width: 340px; overflow-wrap: anywhere; }
.cell { display: inline-block; padding: 0 6px; border-radius: 4px; color: #fff; font-size: 12px;
        font-weight: 600; }
details { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; margin: 8px 0;
          padding: 6px 12px; }
summary { cursor: pointer; padding: 4px 0; }
.muted { color: #5b6570; }
.note { font-size: 13px; color: #5b6570; margin: 6px 0 0; }
"""


def _cards(s: Mapping[str, Any]) -> str:
    status = s.get("status")
    items = [
        ("Documents", str(s.get("n_documents", "–")), ""),
        ("Mean RQS", _fmt(s.get("mean_rqs")), ""),
        ("Pass rate", _pct(s.get("pass_rate")), ""),
        ("Status", status or "–", f"status-{status}" if status else ""),
        ("Micro F1", _fmt(s.get("micro_f1")), ""),
        ("Macro F1", _fmt(s.get("macro_f1")), ""),
        ("Macro F1 w/o invented", _fmt(s.get("macro_f1_without_invented")), ""),
        ("Weighted F1", _fmt(s.get("weighted_f1")), ""),
        ("Accuracy", _fmt(s.get("mean_accuracy")), ""),
        ("Completeness", _fmt(s.get("mean_completeness")), ""),
        ("Hallucination", _fmt(s.get("mean_hallucination")), ""),
        *([("ANLS*", _fmt(s["mean_anls"]), "")] if s.get("mean_anls") is not None else []),
        ("Errors", str(s.get("n_errors", "–")), ""),
        ("Warnings", str(s.get("n_warnings", "–")), ""),
        ("GT-only / AIO-only", f"{s.get('n_gt_only', '–')} / {s.get('n_aio_only', '–')}", ""),
    ]
    return '<div class="cards" id="summary">' + "".join(
        f'<div class="card"><div class="k">{_e(k)}</div><div class="v {cls}">{_e(v)}</div></div>'
        for k, v, cls in items
    ) + "</div>"


def _table(frame: pl.DataFrame, *, numeric: Sequence[str] = (), formats: Mapping[str, Any] = {},
           table_id: str = "", sortable: bool = False) -> str:
    head = "".join(
        f'<th class="{"n" if c in numeric else ""}">{_e(c)}</th>' for c in frame.columns
    )
    rows = []
    for r in frame.iter_rows(named=True):
        tds = []
        for c in frame.columns:
            v = r[c]
            text = formats[c](v) if c in formats else _e(v if v is not None else "–")
            tds.append(f'<td class="{"n" if c in numeric else ""}">{text}</td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    ident = f' id="{table_id}"' if table_id else ""
    ident += ' class="sortable"' if sortable else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _cell_badge(cell: str | None) -> str:
    if cell is None:
        return "–"
    color = CELL_COLORS.get(cell, "#888")
    return f'<span class="cell" style="background:{color}">{_e(cell)}</span>'


def _value(v: Any) -> str:
    if v is None:
        return '<span class="muted">absent / null</span>'
    text = str(v)
    return f'<span title="{_e(_clip(text, 1000))}">{_e(_clip(text, 160))}</span>'


def _worst_documents(r, worst: int, max_fields: int) -> str:
    docs = (
        r.lazy("documents")
        .sort(["rqs", "doc_id"], nulls_last=True)
        .head(worst)
        .collect()
    )
    if not docs.height:
        return '<p class="muted">No documents.</p>'
    wrong = (
        r.lazy("fields")
        .filter(pl.col("doc_id").is_in(docs["doc_id"].to_list()))
        .filter(~pl.col("cell").is_in(["TP", "TN"]))
        .select("doc_id", "path", "gt_value", "aio_value", "cell", "similarity", "strategy")
        .sort("doc_id", "path")
        .collect()
    )
    by_doc = {k[0]: g for k, g in wrong.group_by("doc_id")} if wrong.height else {}
    out = []
    for i, d in enumerate(docs.iter_rows(named=True)):
        fields = by_doc.get(d["doc_id"], wrong.clear())
        shown = fields.head(max_fields)
        more = fields.height - shown.height
        body = (
            _table(
                shown.select("path", "gt_value", "aio_value", "cell", "similarity", "strategy"),
                numeric=("similarity",),
                formats={"gt_value": _value, "aio_value": _value, "cell": _cell_badge,
                         "similarity": lambda v: _fmt(v)},
            )
            if shown.height
            else '<p class="muted">Every field is correct.</p>'
        )
        if more > 0:
            body += f'<p class="note">… and {more} more fields not shown.</p>'
        presence = "" if d.get("gt_present", True) else " · <b>GT missing</b>"
        out.append(
            f'<details class="doc"{" open" if i < 3 else ""} data-doc-id="{_e(d["doc_id"])}">'
            f"<summary><b>{_e(d['doc_id'])}</b> · RQS {_fmt(d['rqs'])} · accuracy "
            f"{_fmt(d['accuracy'])} · completeness {_fmt(d['completeness'])} · hallucination "
            f"{_fmt(d['hallucination'])} · AIO {_e(d.get('aio_parse_status'))}{presence} · "
            f"{fields.height} wrong field{'' if fields.height == 1 else 's'}</summary>"
            f"{body}</details>"
        )
    return "".join(out)


def _errors_section(r) -> str:
    errors = r.lazy("errors")
    counts = (
        errors.group_by("source", "severity").agg(pl.len().alias("count"))
        .sort("severity", "source").collect()
    )
    docs = r.lazy("documents")
    status = (
        docs.group_by("aio_parse_status").agg(pl.len().alias("documents"))
        .sort("documents", descending=True).collect()
    )
    parts = ['<div class="panel">']
    parts.append(
        "<h3>AIO parse status</h3>"
        + _table(status, numeric=("documents",), table_id="parse-status")
    )
    if counts.height:
        parts.append(
            "<h3>Errors and warnings</h3>"
            + _table(counts, numeric=("count",), table_id="error-counts")
        )
        first = errors.head(50).select("source", "severity", "doc_id", "line", "error").collect()
        total = counts["count"].sum()
        parts.append(
            "<h3>Error rows</h3>"
            + _table(first, numeric=("line",), table_id="error-rows")
            + (f'<p class="note">First 50 of {total}.</p>' if total > 50 else "")
        )
    else:
        parts.append(
            '<p id="error-counts">No errors or warnings: every input record was scored.</p>'
        )
    parts.append("</div>")
    return "".join(parts)


def _filter_box(table_id: str) -> str:
    return (f'<input class="filter" type="search" data-table="{table_id}" '
            f'placeholder="filter rows…" aria-label="filter the table below">'
            '<span class="note"> Click a column header to sort.</span>')


#: Documents listed in the sortable documents table (lowest RQS first); the rest are counted.
MAX_DOCUMENT_ROWS = 2000


def _documents_section(r) -> list[str]:
    docs = r.lazy("documents")
    n = docs.select(pl.len()).collect().item()
    shown = (docs.sort(["rqs", "doc_id"], nulls_last=True).head(MAX_DOCUMENT_ROWS)
             .select("doc_id", "rqs", "accuracy", "completeness", "hallucination", "passed",
                     "tp", "fp", "fn").collect())
    rates = ("rqs", "accuracy", "completeness", "hallucination")
    note = (f'<p class="note">The {MAX_DOCUMENT_ROWS:,} lowest-RQS of {n:,} documents.</p>'
            if n > MAX_DOCUMENT_ROWS else "")
    table = _table(shown, numeric=(*rates, "tp", "fp", "fn"),
                   formats={c: _fmt for c in rates}, table_id="document-table", sortable=True)
    return ["<h2>Documents</h2>", note,
            f'<div class="panel">{_filter_box("document-table")}{table}</div>']


#: The drill-down lists at most this many wrong values per attribute, the worst first.
EXAMPLES_PER_ATTRIBUTE = 5
#: ... for at most this many attributes (worst F1 first); the rest are counted.
MAX_DRILLDOWN_ATTRIBUTES = 200


def _field_parts(r) -> list[pl.LazyFrame]:
    """The fields table in pieces of bounded size: each Parquet file of a stored run (one per
    scored batch), or the whole table of an in-memory Result."""
    directory = getattr(r, "directory", None)
    loc = table_location(Path(directory), "fields") if directory is not None else None
    if loc is not None and loc[1]:
        return [pl.scan_parquet(f) for f in sorted(loc[0].rglob("*.parquet"))]
    return [r.lazy("fields")]


def _drilldown_section(r, order: Sequence[str], cells: pl.DataFrame) -> list[str]:
    """Per attribute with wrong fields: how many of each cell (``cells``, the confusion
    chart's :func:`cell_counts`), and a few wrong values, the lowest similarity first (an
    absent value first of all), so the page stays small however many documents the run has."""
    tallies = {}
    for row in cells.iter_rows(named=True):  # one row per attribute
        tally = [(c, row[c]) for c in _WRONG_CELLS if row[c]]
        if tally:
            tallies[row["attribute"]] = tally
    if not tallies:
        return ["<h2>Wrong values by attribute</h2>",
                '<p class="muted" id="drilldown">Every field of every document is right.</p>']
    rank = {a: i for i, a in enumerate(order)}
    attributes = sorted(tallies, key=lambda a: (rank.get(a, len(rank)), a))
    shown = attributes[:MAX_DRILLDOWN_ATTRIBUTES]
    order_by = ["attribute", "similarity", "doc_id", "path"]

    def lowest(frame: pl.LazyFrame) -> pl.LazyFrame:
        return (frame.filter(~pl.col("cell").is_in(["TP", "TN"])
                             & pl.col("attribute").is_in(shown))
                .select("attribute", "doc_id", "path", "gt_value", "aio_value", "cell",
                        "similarity")
                .sort(order_by, nulls_last=False)
                .group_by("attribute", maintain_order=True).head(EXAMPLES_PER_ATTRIBUTE))

    # the lowest of each stored part, then the lowest of those: the same examples as one sort
    # of every wrong field, in the memory of one part (one sort took 1.3 GB at 1M documents)
    examples = lowest(pl.concat([lowest(part).collect() for part in _field_parts(r)]).lazy()
                      ).collect()
    by_attribute = {k[0]: g for k, g in examples.group_by("attribute")}
    out = []
    for k, name in enumerate(shown):
        total = sum(n for _, n in tallies[name])
        tally = ", ".join(f"{c} {n:,}" for c, n in tallies[name])
        table = _table(
            by_attribute[name].drop("attribute"), numeric=("similarity",),
            formats={"gt_value": _value, "aio_value": _value, "cell": _cell_badge,
                     "similarity": lambda v: _fmt(v)})
        out.append(
            f'<details class="attr" data-attribute="{_e(name)}"{" open" if k == 0 else ""}>'
            f"<summary><b>{_e(name)}</b> · "
            f"{total:,} wrong field{'' if total == 1 else 's'} ({_e(tally)})</summary>"
            f"{table}</details>")
    more = len(attributes) - len(shown)
    note = (f'<p class="note">… and {more:,} more attributes with wrong values.</p>'
            if more > 0 else "")
    return [
        "<h2>Wrong values by attribute</h2>",
        f'<p class="note">Worst F1 first; up to {EXAMPLES_PER_ATTRIBUTE} examples each, the '
        "lowest similarity first (an absent value first of all).</p>",
        f'<div id="drilldown">{"".join(out)}{note}</div>',
    ]


def _slice_columns(r, by: Sequence[str] | None) -> list[str]:
    """``by``, or the slices the run was scored with (manifest), checked against the
    metadata columns the run keeps."""
    import difflib

    if by is None:
        by = (getattr(r, "manifest", None) or {}).get("by") or []
    by = list(by)
    columns = r.lazy("counts").collect_schema().names()
    for name in by:
        if name not in columns:
            known = [c for c in columns if c not in COUNT_TABLE_COLUMNS]
            close = difflib.get_close_matches(name, known, n=1)
            raise ValueError(
                f"cannot slice by '{name}': the run keeps no such metadata column"
                + (f"; did you mean '{close[0]}'?" if close else "")
                + f" (metadata columns: {', '.join(known) or 'none; score with --meta or --by'})")
    return by


#: Rows of the per-slice attribute table (slice values x attribute, worst F1 first).
MAX_SLICE_ATTRIBUTE_ROWS = 2000


def _slices_section(r, by: Sequence[str]) -> list[str]:
    """Per slice of the metadata columns ``by``: documents, pass rate, mean RQS and micro
    precision/recall/F1, then each slice's attribute F1 (all from rates.py)."""
    if not by:
        return []
    counts = r.lazy("counts")
    slices = slice_rates(counts, r.lazy("documents"), by).collect()
    rates = ("pass_rate", "mean_rqs", "precision", "recall", "f1")
    label = ", ".join(by)
    per_attribute = (attribute_rates(counts, by=list(by))  # lazy: reads the count columns only
                     .sort(["f1", *by, "attribute"], nulls_last=True)
                     .select(*by, "attribute", "support", "tp", "fp", "fn", "precision",
                             "recall", "f1").collect())
    n = per_attribute.height
    per_attribute = per_attribute.head(MAX_SLICE_ATTRIBUTE_ROWS)
    note = (f'<p class="note">The {MAX_SLICE_ATTRIBUTE_ROWS:,} lowest-F1 of {n:,} rows.</p>'
            if n > MAX_SLICE_ATTRIBUTE_ROWS else "")
    prf = ("precision", "recall", "f1")
    return [
        f"<h2>Slices by {_e(label)}</h2>",
        '<p class="note">Micro precision, recall and F1 of each slice\'s summed cells; a '
        "document without the column is in the empty slice.</p>",
        '<div class="panel">' + _table(
            slices, numeric=("documents", "passed", "tp", "fp", "fn", *rates),
            formats={c: _fmt for c in rates}, table_id="slice-table", sortable=True)
        + "</div>",
        f'<div class="panel">{_filter_box("slice-attribute-table")}'
        + _table(per_attribute, numeric=("support", "tp", "fp", "fn", *prf),
                 formats={c: _fmt for c in prf}, table_id="slice-attribute-table",
                 sortable=True) + note + "</div>",
    ]


def _intervals_note(s: Mapping[str, Any]) -> str:
    """The summary's bootstrap intervals (bootstrap.py), when the run was bootstrapped."""
    if "micro_f1_low" not in s:
        return ""
    b = s.get("bootstrap", {})
    spans = ", ".join(
        f"{label} {_fmt(s.get(key))} [{_fmt(s.get(key + '_low'))}, {_fmt(s.get(key + '_high'))}]"
        for key, label in (("micro_f1", "micro-F1"), ("macro_f1", "macro-F1"),
                           ("mean_rqs", "mean RQS")))
    return (f'<p class="note" id="intervals">{b.get("confidence", 0.95):.0%} bootstrap intervals '
            f'({b.get("resamples", "?"):,} resamples of the documents): {_e(spans)}.</p>')


def _calibration_section(r) -> list[str]:
    """The calibration chart and table (calibration.py), when the run had confidences."""
    table = getattr(r, "calibration", None)
    if table is None:
        return []
    chart = ""
    overall = table.filter(pl.col("attribute") == OVERALL)
    if overall.height and "bin_accuracy" in table.columns:
        row = overall.row(0, named=True)
        coverage = {int(c.removeprefix("accuracy_at_")): row[c]
                    for c in table.columns if c.startswith("accuracy_at_")}
        svg = calibration_chart_svg(row["bin_confidence"], row["bin_accuracy"], row["bin_n"],
                                    coverage)
        chart = f'<div class="panel">{svg}</div>'
    table = table.drop([c for c in table.columns if c.startswith("bin_")])
    table = table.rename({c: "acc@" + c.removeprefix("accuracy_at_") + "%"
                          for c in table.columns if c.startswith("accuracy_at_")})
    rates = [c for c in table.columns if c not in ("attribute", "n")]
    return [
        "<h2>Calibration of confidences</h2>",
        '<p class="note">Per attribute and overall (*): AUROC of the confidence against '
        '"the emitted value is right", Brier score, ECE (10 bins) and the accuracy of the '
        "most confident 10 % … 100 % of the values (acc@10% … acc@100%). The chart is the "
        "overall row: a well-calibrated system's bins lie on the diagonal.</p>",
        chart,
        '<div class="panel">' + _table(table, numeric=("n", *rates),
                                       formats={c: _fmt for c in rates},
                                       table_id="calibration-table") + "</div>",
    ]


def _provenance_section(manifest: Mapping[str, Any]) -> list[str]:
    """Where the run came from: version, driver, inputs, times and the config (manifest.json)."""
    if not manifest:
        return []
    import json

    inputs = manifest.get("inputs") or {}
    rows = [("version", f"{manifest.get('package', '')} {manifest.get('version', '')}"),
            ("driver", manifest.get("driver")),
            ("started", manifest.get("started")), ("finished", manifest.get("finished"))]
    for side in ("gt", "aio"):
        i = inputs.get(side)
        if isinstance(i, Mapping):
            rows.append((f"{side} input", f"{i.get('path')} ({i.get('records', '?'):,} records)"
                         if isinstance(i.get("records"), int) else i.get("path")))
        elif i is not None:
            rows.append((f"{side} input", str(i)))
    items = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows if v)
    config = json.dumps(manifest.get("config"), indent=2, default=str)
    return [
        "<h2>Provenance</h2>",
        f'<div class="panel" id="provenance"><table>{items}</table>'
        f"<details><summary>config</summary><pre>{_e(config)}</pre></details></div>",
    ]


#: Attributes charted (lowest F1 first) and listed in the attribute table; the rest are
#: counted. One document with 100,000 keys made a 138 MB page of 100,000-bar charts.
MAX_CHARTED_ATTRIBUTES = 200
MAX_ATTRIBUTE_ROWS = 2000


def render_report(source: ResultSource, *, title: str | None = None, worst: int = 10,
                  max_fields: int = 40, by: Sequence[str] | None = None) -> str:
    """The report as an HTML string (see :func:`write_report`)."""
    r = as_tables(source)
    s = r.summary
    by = _slice_columns(r, by)
    cells = cell_counts(r.lazy("fields"))  # the confusion chart and the drill-down's tallies
    attrs = r.lazy("attributes").collect()
    # keys only the AIO has (F1 0 each) would fill the top of a worst-first chart: they are
    # listed in the attribute table and counted in the note instead
    ranked = attrs.sort(["f1", "attribute"], nulls_last=True)  # worst F1 first, everywhere
    known = ranked.filter(~invented_expr())
    n_invented = attrs.height - known.height
    order = ranked["attribute"].to_list()
    rqs = r.lazy("documents").select("rqs").collect()["rqs"].to_list()
    title = title or "jsoneval report"
    origin = f"results in {r.directory}" if hasattr(r, "directory") else "an in-memory result"
    interval = ["f1_low", "f1_high"] if "f1_low" in attrs.columns else []
    rates = ("precision", "recall", "f1", *interval, "mean_similarity")
    attr_table = _table(
        ranked.head(MAX_ATTRIBUTE_ROWS).select(
            "attribute", "support", "tp", "fp", "fn", "tn", "precision", "recall", "f1",
            *interval, "mean_similarity",
        ),
        numeric=("support", "tp", "fp", "fn", "tn", *rates),
        formats={c: (lambda v: _fmt(v)) for c in rates},
        table_id="attribute-table", sortable=True,
    )
    manifest = getattr(r, "manifest", {}) or {}
    threshold = (manifest.get("config") or {}).get("pass_threshold")
    n_pass = sum(1 for v in r.lazy("documents").select("passed").collect()["passed"] if v)
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="sub">{s.get("n_documents", 0)} documents scored from {_e(origin)}.</p>',
        _cards(s),
        _intervals_note(s),
        "<h2>Per-attribute precision, recall and F1</h2>",
        '<p class="note">Worst F1 first. "n/a" marks an undefined value (no positive '
        "predictions or no support), which is not zero."
        + (f" {n_invented} invented keys (only in the AI output, F1 0) are not charted; the "
           "attribute table lists them." if n_invented else "") + "</p>",
        _lowest_note(known.height, MAX_CHARTED_ATTRIBUTES, "attributes are charted"),
        f'<div class="panel" id="attribute-chart">'
        f'{attribute_chart_svg(known.head(MAX_CHARTED_ATTRIBUTES))}</div>',
        "<h2>RQS distribution</h2>",
        '<div class="panel" id="rqs-histogram">'
        + histogram_svg(rqs, title="RQS per document", xlabel="RQS per document",
                        threshold=threshold)
        + f'<p class="note">{n_pass} of {len(rqs)} documents pass.</p></div>',
        "<h2>Confusion counts by attribute</h2>",
        '<p class="note">Share of each cell per attribute; the number at the end is the '
        "attribute's fields. FP+FN is a wrong value (counted as one FP and one FN in the "
        "attribute table).</p>",
        _lowest_note(len(order), MAX_CHARTED_ATTRIBUTES, "attributes are charted"),
        f'<div class="panel" id="confusion-chart">'
        f'{confusion_chart_svg(cells, order=order[:MAX_CHARTED_ATTRIBUTES])}</div>',
        "<h2>Attributes</h2>",
        _lowest_note(attrs.height, MAX_ATTRIBUTE_ROWS, "attributes are listed"),
        f'<div class="panel">{_filter_box("attribute-table")}{attr_table}</div>',
        *_slices_section(r, by),
        *_drilldown_section(r, order, cells),
        *_documents_section(r),
        f"<h2>Worst {min(worst, len(rqs))} documents</h2>",
        '<p class="note">Lowest RQS first, with every field that is not TP or TN.</p>',
        f'<div id="worst-documents">{_worst_documents(r, worst, max_fields)}</div>',
        "<h2>Input errors</h2>",
        _errors_section(r),
        *_calibration_section(r),
        *_provenance_section(manifest),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(body)}</main><script>{_SCRIPT}</script></body></html>\n"
    )


def _lowest_note(total: int, shown: int, what: str) -> str:
    """A note saying that only the ``shown`` lowest-F1 of ``total`` are in the next panel."""
    if total <= shown:
        return ""
    return f'<p class="note">The {shown:,} lowest-F1 of {total:,} {what}.</p>'


def render_comparison(a: ResultSource, b: ResultSource, *, bootstrap: int | None = 1000,
                      seed: int | None = 0, title: str | None = None, top: int = 20) -> str:
    """A two-run comparison page: the dataset figures of both runs with their deltas, the
    attributes that got better and worse (with the paired bootstrap's interval, p-value and
    significance unless ``bootstrap`` is None), the documents that newly fail or pass."""
    from .diff import diff_runs

    d = diff_runs(a, b, bootstrap=bootstrap, seed=seed)
    s = d.summary
    sig = s.get("significance", {})
    title = title or "jsoneval comparison"
    rows = []
    for key, v in s["figures"].items():
        e = sig.get(key)
        verdict = ("" if e is None else
                   f"[{_fmt(e['low'])}, {_fmt(e['high'])}] p={_fmt(e['p_value'])} "
                   + ("significant" if e["significant"] else "not significant"))
        rows.append({"figure": key, "A": v["a"], "B": v["b"], "delta": v["delta"],
                     "95% interval of the delta": verdict})
    def number(v: Any, signed: bool = False) -> str:
        if isinstance(v, int) and not isinstance(v, bool):
            return f"{v:+,d}" if signed else f"{v:,d}"
        return "–" if v is None else (f"{v:+.3f}" if signed else f"{v:.3f}")

    fmt = {"A": number, "B": number, "delta": lambda v: number(v, True)}
    figures = _table(pl.DataFrame(rows, schema={"figure": pl.String, "A": pl.Object,
                                                "B": pl.Object, "delta": pl.Object,
                                                "95% interval of the delta": pl.String}),
                     numeric=("A", "B", "delta"), formats=fmt, table_id="figures")
    tested = "f1_significant" in d.attributes.columns
    cols = ["attribute", "f1_a", "f1_b", "f1_delta", "precision_delta", "recall_delta"]
    if tested:
        cols += ["f1_delta_low", "f1_delta_high", "f1_p_value", "f1_significant"]
    rates = [c for c in cols if c not in ("attribute", "f1_significant")]

    def moved(frame: pl.DataFrame, table_id: str) -> str:
        if not frame.height:
            return '<p class="muted">None.</p>'
        return _table(frame.select(cols).head(top), numeric=rates,
                      formats={**{c: _fmt for c in rates},
                               "f1_significant": lambda v: "<b>yes</b>" if v else "no"},
                      table_id=table_id, sortable=True)

    delta = pl.col("f1_delta")
    worse = d.attributes.filter(delta < 0).sort("f1_delta", "attribute")
    better = d.attributes.filter(delta > 0).sort("f1_delta", "attribute", descending=[True, False])
    failing = d.documents.filter(pl.col("passed_a").fill_null(False)
                                 & ~pl.col("passed_b").fill_null(True))
    names = [f"A = {_e(getattr(a, 'directory', 'run A'))}",
             f"B = {_e(getattr(b, 'directory', 'run B'))}"]
    note = (f"paired bootstrap over {sig['n_shared_documents']:,} shared documents, "
            f"{sig['resamples']:,} resamples: a change is significant when its 95 % interval "
            "excludes 0" if sig else "no bootstrap: deltas only")
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="sub">{" · ".join(names)}; delta = B − A; {_e(note)}.</p>',
        "<h2>Dataset figures</h2>", f'<div class="panel">{figures}</div>',
        f"<h2>Got worse ({worse.height} attributes)</h2>",
        f'<div class="panel">{moved(worse, "worse")}</div>',
        f"<h2>Got better ({better.height} attributes)</h2>",
        f'<div class="panel">{moved(better, "better")}</div>',
        f"<h2>Newly failing documents ({failing.height})</h2>",
        '<div class="panel">' + (_table(failing.select("doc_id", "rqs_a", "rqs_b", "rqs_delta",
                                                      "n_changed_fields").head(top),
                                        numeric=("rqs_a", "rqs_b", "rqs_delta"),
                                        formats={c: _fmt for c in ("rqs_a", "rqs_b",
                                                                   "rqs_delta")},
                                        table_id="newly-failing")
                                 if failing.height else '<p class="muted">None.</p>') + "</div>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(body)}</main><script>{_SCRIPT}</script></body></html>\n"
    )


def write_report(source: ResultSource, path: str | Path, *, title: str | None = None,
                 worst: int = 10, max_fields: int = 40, by: Sequence[str] | None = None
                 ) -> Path:
    """Write the HTML report of a run (a :class:`Result` or a results directory) to ``path``.

    ``worst`` documents (lowest RQS) are listed with up to ``max_fields`` wrong fields each.
    ``by`` names metadata columns to slice by (default: the run's own ``by``, from its
    manifest).
    The file is self-contained: inline CSS and SVG and a 40-line script that sorts and
    filters the tables; nothing is fetched.
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(source, title=title, worst=worst, max_fields=max_fields,
                                 by=by), encoding="utf-8")
    return out
