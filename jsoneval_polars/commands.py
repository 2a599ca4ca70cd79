"""Subcommands over stored runs: ``jsoneval sql``, ``jsoneval diff``, ``jsoneval report``.

Registered through ``cli.COMMAND_MODULES``. Each command reads results directories written by
``jsoneval score --out``; DuckDB and the report code are imported when the command runs.
Exit codes as in :mod:`jsoneval_polars.cli`: 0 success, 2 bad usage (a directory that is not a
results directory, a SQL error).
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub) -> None:
    sql = sub.add_parser(
        "sql",
        help="run a DuckDB SQL query over a results directory",
        description="Run SQL over a run's tables: documents, fields, attributes, alignments, "
        "errors and a one-row summary.",
    )
    sql.add_argument("results", help="results directory (jsoneval score --out)")
    sql.add_argument("query", help='SQL, e.g. "SELECT attribute, f1 FROM attributes ORDER BY f1"')
    fmt = sql.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    fmt.add_argument("--csv", action="store_true", help="print the rows as CSV")
    sql.add_argument("--database", help="a DuckDB file to open (read-only) to join your tables")
    sql.add_argument("--max-rows", type=int, default=100,
                     help="rows shown in the table output (default 100; -1 for all)")
    sql.set_defaults(func=_sql)

    diff = sub.add_parser(
        "diff", help="compare two runs: changed fields, attribute and document deltas"
    )
    diff.add_argument("run_a", help="baseline results directory")
    diff.add_argument("run_b", help="candidate results directory")
    diff.add_argument("--out", help="write fields/attributes/documents.parquet and summary.json")
    diff.add_argument("--top", type=int, default=10, help="attributes and documents listed (10)")
    diff.add_argument("--json", action="store_true", help="print the diff summary as JSON")
    diff.set_defaults(func=_diff)

    report = sub.add_parser("report", help="write a self-contained HTML report of a run")
    report.add_argument("results", help="results directory (jsoneval score --out)")
    report.add_argument("--out", required=True, help="HTML file to write, e.g. report.html")
    report.add_argument("--title", help="page title (default: jsoneval report)")
    report.add_argument("--worst", type=int, default=10, help="worst documents listed (10)")
    report.set_defaults(func=_report)


def _fail(message: str) -> int:
    print(f"jsoneval: error: {message}", file=sys.stderr)
    return 2


def _open(path: str):
    from .results import read_results

    return read_results(path)


def _sql(args: argparse.Namespace) -> int:
    import duckdb
    import polars as pl

    from .duckdb_sql import query_results

    try:
        run = _open(args.results)
        frame = query_results(run, args.query, database=args.database)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    except duckdb.Error as exc:
        return _fail(f"SQL: {str(exc).splitlines()[0]}")
    if args.json:
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


def _diff(args: argparse.Namespace) -> int:
    from .diff import diff_runs, render_diff

    try:
        a, b = _open(args.run_a), _open(args.run_b)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    result = diff_runs(a, b)
    if args.out:
        result.write(args.out)
    if args.json:
        print(json.dumps(result.summary))
    else:
        print(render_diff(result, top=args.top, name_a="A", name_b="B"))
        print(f"\nA = {args.run_a}\nB = {args.run_b}")
        if args.out:
            print(f"diff tables written to {args.out}/")
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report import write_report

    try:
        run = _open(args.results)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    path = write_report(run, args.out, title=args.title, worst=args.worst)
    print(f"report written to {path}")
    return 0
