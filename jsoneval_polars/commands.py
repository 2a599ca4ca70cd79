"""Subcommands over stored runs: ``jsoneval sql``, ``jsoneval diff``, ``jsoneval report``.

Click commands, registered through ``cli.COMMAND_MODULES``. Each command reads results
directories written by ``jsoneval score --out``; DuckDB and the report code are imported
when the command runs.
Exit codes as in :mod:`jsoneval_polars.cli`: 0 success, 2 bad usage (a directory that is not a
results directory, a SQL error).
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import click


def register(group: click.Group) -> None:
    """Add ``sql``, ``diff`` and ``report`` to the ``jsoneval`` group."""
    for command in (sql, diff, report):
        group.add_command(command)


def _run(func, **options) -> int:
    from .cli import run_command

    return run_command(func, SimpleNamespace(**options))


@click.command(no_args_is_help=True)
@click.argument("results")
@click.argument("query")
@click.option("--json", "json_", is_flag=True, help="print the rows as a JSON array")
@click.option("--csv", is_flag=True, help="print the rows as CSV")
@click.option("--database", help="a DuckDB file to open (read-only) to join your tables")
@click.option("--max-rows", type=int, default=100, show_default=True,
              help="rows shown in the table output (-1 for all)")
def sql(**options) -> int:
    """run a DuckDB SQL query over a results directory

    RESULTS is a results directory (jsoneval score --out); QUERY is SQL over its tables
    documents, fields, attributes, alignments, errors and a one-row summary, e.g.
    "SELECT attribute, f1 FROM attributes ORDER BY f1".
    """
    if options["json_"] and options["csv"]:
        raise click.UsageError("give --json or --csv, not both")
    return _run(_sql, **options)


@click.command(no_args_is_help=True)
@click.argument("run_a")
@click.argument("run_b")
@click.option("--out", help="write fields/attributes/documents.parquet and summary.json")
@click.option("--top", type=int, default=10, show_default=True,
              help="attributes and documents listed")
@click.option("--json", "json_", is_flag=True, help="print the diff summary as JSON")
@click.option("--bootstrap", type=click.IntRange(min=1), metavar="N",
              help="paired bootstrap over the shared documents, N resamples: intervals, "
              "p-values and which changes are significant")
@click.option("--seed", type=int, help="seed of the --bootstrap resamples (default: random)")
def diff(**options) -> int:
    """compare two runs: changed fields, attribute and document deltas

    RUN_A is the baseline results directory, RUN_B the candidate.
    """
    return _run(_diff, **options)


@click.command(no_args_is_help=True)
@click.argument("results")
@click.argument("results_b", required=False)
@click.option("--out", required=True, help="HTML file to write, e.g. report.html")
@click.option("--title", help="page title (default: jsoneval report)")
@click.option("--worst", type=int, default=10, show_default=True, help="worst documents listed")
@click.option("--by", help="comma-separated metadata columns to slice by (default: the run's "
              "own --by)")
@click.option("--bootstrap", type=click.IntRange(min=1), default=1000, show_default=True,
              metavar="N", help="with two runs: resamples of the paired bootstrap")
@click.option("--seed", type=int, default=0, show_default=True,
              help="with two runs: seed of the resamples")
def report(**options) -> int:
    """write a self-contained HTML report of a run, or a comparison of two

    RESULTS is a results directory (jsoneval score --out); with a second one (RESULTS_B) the
    page compares them: what got better, what got worse, which changes are significant.
    """
    return _run(_report, **options)


def _fail(message: str) -> int:
    print(f"jsoneval: error: {message}", file=sys.stderr)
    return 2


def _open(path: str):
    from .results import read_results

    return read_results(path)


def _sql(args: SimpleNamespace) -> int:
    import duckdb
    import polars as pl

    from .duckdb_sql import query_results

    try:
        run = _open(args.results)
        frame = query_results(run, args.query, database=args.database)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    except (duckdb.Error, ValueError) as exc:
        return _fail(f"SQL: {str(exc).splitlines()[0]}")
    if args.json_:
        sys.stdout.write(frame.write_json() + "\n")
    elif args.csv:
        sys.stdout.write(frame.write_csv())
    else:
        with pl.Config(
            tbl_rows=args.max_rows, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200,
            tbl_hide_dataframe_shape=True,
        ):
            print(frame)
        print(f"{frame.height} row{'s' if frame.height != 1 else ''}")
    return 0


def _diff(args: SimpleNamespace) -> int:
    from .diff import diff_runs, render_diff

    try:
        a, b = _open(args.run_a), _open(args.run_b)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    try:
        result = diff_runs(a, b, bootstrap=args.bootstrap, seed=args.seed)
    except ValueError as exc:
        return _fail(str(exc))
    if args.out:
        result.write(args.out)
    if args.json_:
        print(json.dumps(result.summary))
    else:
        print(render_diff(result, top=args.top, name_a="A", name_b="B"))
        print(f"\nA = {args.run_a}\nB = {args.run_b}")
        if args.out:
            print(f"diff tables written to {args.out}/")
    return 0


def _report(args: SimpleNamespace) -> int:
    from .report import write_report

    try:
        run = _open(args.results)
        other = _open(args.results_b) if args.results_b else None
    except FileNotFoundError as exc:
        return _fail(str(exc))
    if other is not None:
        from pathlib import Path

        from .report import render_comparison

        try:
            page = render_comparison(run, other, bootstrap=args.bootstrap, seed=args.seed,
                                     title=args.title)
        except ValueError as exc:
            return _fail(str(exc))
        path = Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
        print(f"comparison written to {path}")
        return 0
    by = [c.strip() for c in args.by.split(",") if c.strip()] if args.by else None
    try:
        path = write_report(run, args.out, title=args.title, worst=args.worst, by=by)
    except ValueError as exc:
        return _fail(str(exc))
    print(f"report written to {path}")
    return 0
