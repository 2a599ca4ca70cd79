"""Command line: ``jsoneval score`` (also ``python -m jsoneval_polars score``).

Exit codes: 0 success; 1 bad input (a bad record under ``--strict``, or a run that cannot be
trusted: no document pairs, most records of a side errors); 2 bad usage (options, config,
input files that cannot be read as a whole, an output that cannot be written); 3 a
``--fail-under`` bound missed; 130 interrupted. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from importlib import resources
from pathlib import Path

import polars as pl

from .config import ConfigError, load_config, parse_config
from .gate import gate_failures, parse_gate
from .ingest import InputError, InputFileError
from .pipeline import Result, evaluate
from .stream import STREAM_BATCH_SIZE


EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_GATE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """A command that cannot run as given (exit 2); the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _sample_path(name: str) -> Path:
    return Path(str(resources.files("jsoneval_polars.sample") / name))


# Modules that add subcommands: each defines ``register(subparsers)``, which adds its parser
# and sets ``func`` (args -> exit code) with ``set_defaults``. Engines they need (duckdb, a
# browser) are imported inside ``func``, so ``jsoneval score`` stays light.
COMMAND_MODULES: tuple[str, ...] = (
    "jsoneval_polars.commands",
    "jsoneval_polars.runs_cli",
    "jsoneval_polars.spark",
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jsoneval", description="Score structured AI output against ground truth.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_score(sub)
    sample = sub.add_parser(
        "sample", help="copy the bundled sample (gt.ndjson, aio.ndjson, config.json) into DIR"
    )
    sample.add_argument("dir", help="directory to write the three files into (created)")
    sample.set_defaults(func=_sample)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _add_score(sub) -> None:
    score = sub.add_parser("score", help="score AIO against GT and write the result tables")
    score.add_argument("--gt", help="ground truth: NDJSON, JSON array, Parquet or Arrow file")
    score.add_argument("--aio", help="AI output: NDJSON, JSON array, Parquet or Arrow file")
    score.add_argument("--sample", action="store_true", help="score the bundled sample data")
    score.add_argument("--config", help="config file (JSON, YAML or TOML)")
    score.add_argument("--id-field", help="id member of each record (default: doc_id)")
    score.add_argument("--gt-field", help="GT member holding the document (default: the rest)")
    score.add_argument("--aio-field", help="AIO member holding the document or raw model text")
    score.add_argument("--json-column", help="JSON-text or struct column of a Parquet/Arrow input")
    score.add_argument("--safety", help="file with doc_id and safety columns (NDJSON/CSV/Parquet)")
    score.add_argument(
        "--semantic-scorer", choices=["lexical", "embedding"], default="lexical",
        help="SEMANTIC scorer: lexical token-set (default) or a local sentence-embedding model",
    )
    score.add_argument("--semantic-cache", help="SQLite file caching semantic scores across runs")
    score.add_argument(
        "--meta", help="comma-separated metadata members/columns (model,run_id,...) to keep"
    )
    score.add_argument(
        "--by", help="also write attributes_by.parquet: attribute metrics per slice of these "
        "metadata columns (comma-separated; implies --meta for them)"
    )
    score.add_argument(
        "--partition-by", help="write hive-partitioned tables by this metadata column (append-safe)"
    )
    score.add_argument("--out", required=True, help="directory for the Parquet tables")
    score.add_argument(
        "--stream", action="store_true",
        help="NDJSON files of any size: score in batches on --workers processes, memory bounded "
        "by --batch-size (documents, fields, alignments written as folders of parts)",
    )
    score.add_argument("--workers", type=int, help="processes for --stream (default: one per core)")
    score.add_argument(
        "--batch-size", type=int, default=STREAM_BATCH_SIZE,
        help=f"document pairs per batch with --stream (default {STREAM_BATCH_SIZE})",
    )
    score.add_argument("--strict", action="store_true", help="stop at the first bad record")
    score.add_argument(
        "--fail-under", metavar="FIGURE=BOUND,...",
        help="exit 3 when a summary figure is below its bound, e.g. micro_f1=0.9,pass_rate=0.8 "
        "(mean_hallucination: above its bound)",
    )
    score.add_argument("--json", action="store_true", help="print the summary as JSON")
    score.add_argument("--quiet", action="store_true", help="print nothing on success")
    score.set_defaults(func=_score)


SAMPLE_FILES = ("gt.ndjson", "aio.ndjson", "config.json")


def write_sample(directory: str | Path) -> list[Path]:
    """Copy the bundled sample (306 invoice pairs and their config) into ``directory``."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; give a directory for the sample")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SAMPLE_FILES:
        (out / name).write_bytes(_sample_path(name).read_bytes())
        written.append(out / name)
    return written


def _sample(args: argparse.Namespace) -> int:
    gt, aio, config = write_sample(args.dir)
    print(f"wrote {gt}, {aio} and {config}; score them with\n"
          f"  jsoneval score --gt {gt} --aio {aio} --config {config} --out results/")
    return EXIT_OK


def _read_table(path: str) -> pl.DataFrame:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path} does not exist or is not a file")
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        return pl.read_parquet(p)
    if suffix == ".csv":
        return pl.read_csv(p)
    return pl.read_ndjson(p)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def render_summary(result: Result, seconds: float | None = None) -> str:
    """The per-attribute table with micro and macro rows, dataset means and the accounting."""
    s = result.summary
    a = result.attributes
    lines = []
    width = max([len("attribute"), len("micro")] + [len(x) for x in a["attribute"]])
    width = min(width, 48)
    head = f"{'attribute':<{width}}  {'TP':>6} {'FP':>6} {'FN':>6} {'TN':>6}  {'prec':>6} {'rec':>6} {'F1':>6} {'support':>8}"
    lines += [head, "-" * len(head)]
    for r in a.iter_rows(named=True):
        name = r["attribute"] if len(r["attribute"]) <= width else r["attribute"][: width - 1] + "…"
        lines.append(
            f"{name:<{width}}  {r['tp']:>6} {r['fp']:>6} {r['fn']:>6} {r['tn']:>6}  "
            f"{_fmt(r['precision']):>6} {_fmt(r['recall']):>6} {_fmt(r['f1']):>6} {r['support']:>8}"
        )
    tp, fp, fn, tn = (int(a[c].sum()) for c in ("tp", "fp", "fn", "tn"))
    micro_p = tp / (tp + fp) if tp + fp else None
    micro_r = tp / (tp + fn) if tp + fn else None
    lines.append("-" * len(head))
    lines.append(
        f"{'micro':<{width}}  {tp:>6} {fp:>6} {fn:>6} {tn:>6}  "
        f"{_fmt(micro_p):>6} {_fmt(micro_r):>6} {_fmt(s['micro_f1']):>6} {tp + fn:>8}"
    )
    macro_p = a["precision"].drop_nulls().mean() if a.height else None
    macro_r = a["recall"].drop_nulls().mean() if a.height else None
    lines.append(
        f"{'macro':<{width}}  {'':>6} {'':>6} {'':>6} {'':>6}  "
        f"{_fmt(macro_p):>6} {_fmt(macro_r):>6} {_fmt(s['macro_f1']):>6} {'':>8}"
    )
    lines.append("")
    lines.append(
        f"completeness {_fmt(s['mean_completeness'])}  hallucination {_fmt(s['mean_hallucination'])}"
        f"  accuracy {_fmt(s['mean_accuracy'])}  RQS {_fmt(s['mean_rqs'])}"
    )
    pass_rate = "-" if s["pass_rate"] is None else f"{s['pass_rate']:.1%}"
    lines.append(f"pass rate {pass_rate}  status {s['status'] or '-'}")
    took = f" in {seconds:.2f}s" if seconds is not None else ""
    lines.append(
        f"read {s['n_read_gt']} GT and {s['n_read_aio']} AIO records; scored {s['n_documents']} "
        f"documents ({s['n_gt_only']} GT-only, {s['n_aio_only']} AIO-only){took}; "
        f"{s['n_errors']} errors, {s['n_warnings']} warnings"
    )
    return "\n".join(lines)


def _score(args: argparse.Namespace) -> int:
    try:
        fail_under = parse_gate(args.fail_under) if args.fail_under else {}
    except ValueError as exc:
        raise UsageError(f"--fail-under: {exc}") from None
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file; give a directory for the result tables")
    if args.sample:
        gt, aio = _sample_path("gt.ndjson"), _sample_path("aio.ndjson")
        config = load_config(args.config) if args.config else load_config(_sample_path("config.json"))
    else:
        if not args.gt or not args.aio:
            print("jsoneval score: error: give --gt and --aio, or --sample", file=sys.stderr)
            return 2
        gt, aio = args.gt, args.aio
        config = load_config(args.config) if args.config else parse_config(None)
    safety = None
    if args.safety:
        table = _read_table(args.safety)
        id_field = args.id_field or config.id_field
        if id_field in table.columns and id_field != "doc_id":
            table = table.rename({id_field: "doc_id"})
        safety = table
    from .scorers import CachedScorer, scorer_from_name

    scorer = scorer_from_name(args.semantic_scorer)
    if args.semantic_cache:
        scorer = CachedScorer(scorer, args.semantic_cache)
    by = _names(args.by)
    metadata = list(dict.fromkeys(_names(args.meta) + by + _names(args.partition_by)))
    started = time.perf_counter()
    show = not (args.quiet or args.json) and sys.stderr.isatty()
    if args.stream:
        return _score_stream(args, gt, aio, config, metadata, started, show, fail_under)
    result = evaluate(
        gt, aio, config=config, id_field=args.id_field, content_field=(args.gt_field, args.aio_field),
        json_column=args.json_column, safety=safety, semantic_scorer=scorer, strict=args.strict,
        metadata=metadata, progress=_progress if show else None,
    )
    if show:
        _progress("write")
    out = result.write(args.out, partition_by=args.partition_by)
    sliced = result.attributes_by(by) if by else None
    if sliced is not None:
        sliced.write_parquet(out / "attributes_by.parquet")
    if show:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    print_outcome(args, result, started, out, render_slices(sliced, by) if by else None)
    warn_names(args, result.errors)
    return verdict(result.summary, fail_under)


def warn_names(args, errors) -> None:
    """The warnings about names only the data reveals (a field_strategies entry or a metadata
    name that occurs nowhere), one line each on stderr, besides their rows in ``errors``."""
    if args.quiet:
        return
    errors = errors if isinstance(errors, pl.DataFrame) else errors.collect()
    for message in errors.filter(pl.col("source") == "config")["error"]:
        print(f"jsoneval: warning: {message}", file=sys.stderr)


def verdict(summary: dict, fail_under: dict[str, float]) -> int:
    """The exit code of a finished run, with one line on stderr when it is not 0: 1 when the
    run cannot be trusted (no pairs, mostly errors), 3 when a --fail-under bound is missed."""
    if summary.get("failure"):
        print(f"jsoneval: run failed: {summary['failure']}", file=sys.stderr)
        return EXIT_INPUT
    missed = gate_failures(summary, fail_under)
    if missed:
        print(f"jsoneval: quality gate failed: {'; '.join(missed)}", file=sys.stderr)
        return EXIT_GATE
    return EXIT_OK


def print_outcome(args, result, started: float, out, extra: str | None = None) -> None:
    """The summary as JSON (--json), nothing (--quiet), or the attribute table, ``extra`` and
    where the tables went."""
    if args.json:
        print(json.dumps(result.summary))
    elif not args.quiet:
        print(render_summary(result, time.perf_counter() - started))
        if extra:
            print(extra)
        print(f"tables written to {str(out).rstrip('/')}/")


def _score_stream(args, gt, aio, config, metadata, started, show, fail_under) -> int:
    from .stream import score_files

    unsupported = [
        flag for flag, given in (
            ("--safety", args.safety), ("--json-column", args.json_column),
            ("--semantic-scorer embedding", args.semantic_scorer != "lexical"),
            ("--semantic-cache", args.semantic_cache), ("--by", args.by),
            ("--partition-by", args.partition_by),
        ) if given
    ]
    if unsupported:
        print(f"jsoneval score: error: --stream does not take {', '.join(unsupported)}; "
              "score without --stream for these", file=sys.stderr)
        return 2
    if args.batch_size < 1 or (args.workers is not None and args.workers < 1):
        print("jsoneval score: error: --batch-size and --workers must be at least 1",
              file=sys.stderr)
        return 2
    result = score_files(
        gt, aio, args.out, config=config, id_field=args.id_field,
        content_field=(args.gt_field, args.aio_field), metadata=metadata, workers=args.workers,
        batch_size=args.batch_size, strict=args.strict, progress=_progress if show else None,
    )
    if show:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    print_outcome(args, result, started, result.directory)
    warn_names(args, result.errors)
    return verdict(result.summary, fail_under)


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()] if text else []


def _progress(stage: str) -> None:
    """One status line on a terminal (stderr), rewritten at each stage."""
    print(f"\r\033[Kscoring: {stage}…", end="", file=sys.stderr, flush=True)


def render_slices(table: pl.DataFrame, by: list[str]) -> str:
    """Micro precision/recall/F1 per slice, summed from the slice's attribute counts."""
    per = (
        table.group_by(by)
        .agg(pl.col("tp", "fp", "fn").sum())
        .with_columns(
            (2 * pl.col("tp") / (2 * pl.col("tp") + pl.col("fp") + pl.col("fn"))).alias("micro_f1")
        )
        .sort(by, nulls_last=True)
    )
    lines = ["", "per " + ", ".join(by) + ":"]
    for row in per.iter_rows(named=True):
        name = ", ".join(f"(no {c})" if row[c] is None else str(row[c]) for c in by)
        lines.append(
            f"  {name:<30} TP {row['tp']:>7} FP {row['fp']:>7} FN {row['fn']:>7}  "
            f"micro-F1 {_fmt(row['micro_f1'])}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(args.func, args)


def run_command(func, args: argparse.Namespace) -> int:
    """Run a subcommand; every expected failure is one line on stderr and an exit code."""
    try:
        return func(args)
    except ConfigError as exc:
        return _fail(f"config error: {exc}", EXIT_USAGE)
    except (UsageError, InputFileError) as exc:
        return _fail(f"error: {exc}", EXIT_USAGE)
    except InputError as exc:
        return _fail(f"input error: {exc}", EXIT_INPUT)
    except OSError as exc:  # mostly the output: a read-only or full disk
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"error: {where}{exc.strerror or exc}", EXIT_USAGE)


def _fail(message: str, code: int) -> int:
    print(f"jsoneval: {' '.join(str(message).split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
