"""What the command line shows: the attribute table, the summary, slices and progress (Rich).

Tables fit the terminal (attribute names fold onto a second line rather than pushing the
numbers off an 80-column screen); text that comes from the data (attribute names, ids, slice
values) is escaped, so an escape sequence in a document id reaches the terminal as ``\\x1b``,
not as a command to it. Piped output gets the same table, 80 columns wide, without colour.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import polars as pl
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from .pipeline import plural


def escape(value: Any) -> str:
    """``value`` as text with control characters shown as escapes (``\\x1b``, ``\\n``)."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _count(n: int, compact: bool) -> str:
    """``n`` in digits or, in a table too wide for the terminal, in three significant digits
    with a unit (``192k``, ``6.74M``): a cell that does not fit would be cut, showing a wrong
    number. The exact counts are in ``attributes`` and ``--json``."""
    if not compact or n < 10_000:
        return str(n)
    for scale, unit in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        if n / scale < 999.5:
            break
    return f"{n / scale:.3g}{unit}"


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        # Rich exits with 1 here, the code of bad input; cli.main() exits 141 like a shell
        self.quiet = True
        raise BrokenPipeError


def stdout_console() -> Console:
    # highlight=False: Rich would colour numbers and words it guesses at
    return _StdoutConsole(highlight=False, emoji=False)


def attribute_table(result: Any, width: int | None = None) -> Table:
    """Per-attribute counts and rates; the attributes only the AIO has (invented keys) apart;
    then the micro, macro and support-weighted rows. In ``width`` columns, attribute names
    fold, and counts are abbreviated (:func:`_count`) when the exact ones leave the names
    fewer than 12 columns."""
    table = _attribute_table(result, compact=False)
    if width is not None:
        if width - _numbers_width(table) < _NAME_WIDTH:
            table = _attribute_table(result, compact=True)
        # Rich shrinks a column only to its longest word, then crops the others: cap the names
        table.columns[0].max_width = max(_NAME_WIDTH, width - _numbers_width(table))
    return table


_NAME_WIDTH = 12
#: Rows per part of the attribute table (scored, invented) and of the slices table. One
#: document with 100,000 keys made as many attributes, and the table took a minute to print;
#: the rows left out are the ones with the fewest fields, and every row is in the results.
SHOWN_ROWS = 100


def _shown(rows: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """At most :data:`SHOWN_ROWS` of ``rows`` (with tp, fp, fn): those with the most fields
    counted (ties: the first), in their own order; and how many are left out."""
    if rows.height <= SHOWN_ROWS:
        return rows, 0
    kept = (rows.with_row_index("_row")
            .sort(pl.col("tp") + pl.col("fp") + pl.col("fn"), descending=True,
                  maintain_order=True)
            .head(SHOWN_ROWS).sort("_row").drop("_row"))
    return kept, rows.height - SHOWN_ROWS


def _left_out(table: Table, n: int) -> None:
    if n:  # short, so it does not fold in an 80-column name column
        table.add_row(Text(f"... {n:,} more", style="italic"))


def _numbers_width(table: Table) -> int:
    """Columns the number columns take (plain ASCII strings), with the three columns of
    padding, divider and padding on the left of each."""
    widths = [max([len(column.header), *map(len, column.cells)])
              for column in table.columns[1:]]
    return sum(widths) + 3 * len(widths)


def _attribute_table(result: Any, compact: bool) -> Table:
    from .rates import invented_expr

    a = result.attributes
    s = result.summary
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), show_edge=False)
    table.add_column("attribute", overflow="fold", min_width=_NAME_WIDTH, ratio=1)
    for name in ("TP", "FP", "FN", "TN", "prec", "rec", "F1", "support"):
        table.add_column(name, justify="right", no_wrap=True)
    invented = a.filter(invented_expr())
    for part, title in ((a.filter(~invented_expr()), None),
                        (invented, f"invented keys: {invented.height}")):
        if not part.height:
            continue
        if title:
            table.add_row(Text(title, style="italic"))
        shown, hidden = _shown(part)
        for r in shown.iter_rows(named=True):
            table.add_row(
                Text(escape(r["attribute"])),
                *(_count(r[c], compact) for c in ("tp", "fp", "fn", "tn")),
                _fmt(r["precision"]), _fmt(r["recall"]), _fmt(r["f1"]),
                _count(r["support"], compact),
            )
        _left_out(table, hidden)
        table.rows[-1].end_section = True
    tp, fp, fn, tn = (int(a[c].sum()) for c in ("tp", "fp", "fn", "tn"))
    # every ratio comes from the summary (rates.finish), none is computed here
    table.add_row("micro", *(_count(n, compact) for n in (tp, fp, fn, tn)),
                  _fmt(s.get("micro_precision")), _fmt(s.get("micro_recall")),
                  _fmt(s.get("micro_f1")), _count(tp + fn, compact))
    table.add_row("macro", "", "", "", "", _fmt(s.get("macro_precision")),
                  _fmt(s.get("macro_recall")), _fmt(s.get("macro_f1")), "")
    if invented.height:
        table.add_row("macro w/o invented", "", "", "", "", "", "",
                      _fmt(s.get("macro_f1_without_invented")), "")
    table.add_row("weighted by support", "", "", "", "", "", "", _fmt(s.get("weighted_f1")), "")
    return table


def summary_lines(result: Any, seconds: float | None = None) -> list[str]:
    s = result.summary
    pass_rate = "-" if s["pass_rate"] is None else f"{s['pass_rate']:.1%}"
    took = f" in {seconds:.2f}s" if seconds is not None else ""
    lines = [
        f"completeness {_fmt(s['mean_completeness'])}  hallucination "
        f"{_fmt(s['mean_hallucination'])}  accuracy {_fmt(s['mean_accuracy'])}  "
        f"RQS {_fmt(s['mean_rqs'])}"
        + (f"  ANLS* {_fmt(s['mean_anls'])}" if s.get("mean_anls") is not None else ""),
        f"pass rate {pass_rate}  status {s['status'] or '-'}",
        f"read {s['n_read_gt']} GT and {s['n_read_aio']} AIO records; scored "
        f"{plural(s['n_documents'], 'document')} ({s['n_gt_only']} GT-only, "
        f"{s['n_aio_only']} AIO-only)",
        f"{plural(s['n_errors'], 'error')}, {plural(s['n_warnings'], 'warning')}{took}",
    ]
    if s.get("failure"):
        lines.insert(2, f"failed: {escape(s['failure'])}")
    if "micro_f1_low" in s:  # bootstrapped (bootstrap.py)
        lines.insert(1, "95% intervals ({} resamples): ".format(s["bootstrap"]["resamples"])
                     + "  ".join(f"{label} {_fmt(s[f'{key}_low'])}-{_fmt(s[f'{key}_high'])}"
                                 for key, label in (("micro_f1", "micro-F1"),
                                                    ("macro_f1", "macro-F1"),
                                                    ("mean_rqs", "RQS"))))
    return lines


def render_summary(result: Any, seconds: float | None = None, width: int = 80) -> str:
    """The attribute table and the summary lines as plain text ``width`` columns wide (for
    logs and tests; the command line prints the same through its console)."""
    console = Console(width=width, record=True, file=_Null(), highlight=False, color_system=None)
    print_summary(console, result, seconds)
    return console.export_text()


def print_summary(console: Console, result: Any, seconds: float | None = None) -> None:
    console.print(attribute_table(result, console.width))
    console.print()
    for line in summary_lines(result, seconds):
        console.print(Text(line), soft_wrap=True)


def render_slices(table: pl.DataFrame, by: list[str]) -> Table:
    """Micro precision/recall/F1 per slice, summed from the slice's attribute counts (null,
    shown as -, where undefined)."""
    from .rates import micro_rates

    per = micro_rates(table, by)
    out = Table(title="per " + ", ".join(by), box=box.SIMPLE_HEAD, show_edge=False,
                title_justify="left")
    out.add_column(", ".join(by), overflow="fold", ratio=1)
    for name in ("TP", "FP", "FN", "micro-F1"):
        out.add_column(name, justify="right", no_wrap=True)
    shown, hidden = _shown(per)
    for row in shown.iter_rows(named=True):
        name = ", ".join(f"(no {c})" if row[c] is None else escape(row[c]) for c in by)
        out.add_row(Text(name), str(row["tp"]), str(row["fp"]), str(row["fn"]),
                    _fmt(row["f1"]))
    _left_out(out, hidden)
    return out


class _Null:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


class StageProgress:
    """Progress on stderr: the stage, and once the documents are being scored a bar with
    documents done, rate and time left. Called as ``progress(stage)`` or
    ``progress(stage, done, total)``; ``close()`` removes it before the results are printed."""

    def __init__(self) -> None:
        self._console = Console(file=sys.stderr, highlight=False)
        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            console=self._console,
            transient=True,
        )
        self._task = self._bar.add_task("reading", total=None, rate="", eta="")
        self._scoring_since: float | None = None
        self._bar.start()

    def __call__(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        fields: dict[str, Any] = {"description": _STAGES.get(stage, stage)}
        now = time.perf_counter()
        if stage == "score" and self._scoring_since is None:
            self._scoring_since = now
        if total is not None:
            fields["total"] = total
        if done is not None:
            fields["completed"] = done
            # the mean rate since scoring began: batches finish in bursts (one per worker),
            # so a rate between two updates would jump about
            elapsed = now - (self._scoring_since or now)
            if done and elapsed > 0:
                rate = done / elapsed
                fields["rate"] = f"{rate:,.0f} docs/s"
                if total:
                    left = max(total - done, 0) / rate
                    fields["eta"] = f"{int(left // 60)}:{int(left % 60):02d} left"
        self._bar.update(self._task, **fields)

    def close(self) -> None:
        self._bar.stop()


_STAGES = {
    "read": "reading", "scan": "reading", "score": "scoring", "flatten": "scoring",
    "align": "scoring", "classify": "scoring", "similarity": "scoring", "counts": "scoring",
    "anls": "scoring",
    "aggregate": "aggregating", "write": "writing",
}
