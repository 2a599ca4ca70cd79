"""Command line: ``jsoneval score``, ``jsoneval sample`` and the registered subcommands (also
``python -m jsoneval_polars``), on Click (suggestions, ``--version``, shell completion:
``eval "$(_JSONEVAL_COMPLETE=bash_source jsoneval)"``) with Rich output (:mod:`terminal`).

Exit codes: 0 success; 1 bad input (a bad record under ``--strict``, or a run that cannot be
trusted: no document pairs, most records of a side errors); 2 bad usage (options, config,
input files that cannot be read as a whole, an output that cannot be written); 3 a
``--fail-under`` bound missed; 130 interrupted. Every error is one line on stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib
import json
import os
import sys
import time
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import click

from .config import Config, ConfigError, load_config, parse_config
from .exits import (
    EXIT_GATE, EXIT_INPUT, EXIT_OK, EXIT_PIPE, EXIT_USAGE, InputError, InputFileError,
    first_line, interrupted,
)
from .file_ranges import STREAM_BATCH_SIZE, EarlyPass, EarlyScan, looks_like_ndjson
from .gate import gate_failures, parse_gate

# Polars, NumPy and pyarrow load when a command runs, not with its options: `jsoneval score`
# parses its options and starts reading its inputs first (start_early_scan)
if TYPE_CHECKING:
    import polars as pl


class UsageError(Exception):
    """A command that cannot run as given (exit 2); the message is one line."""


def _sample_path(name: str) -> Path:
    return Path(str(resources.files("jsoneval_polars.sample") / name))


# Modules that add subcommands: each defines ``register(group)``, which adds its Click
# commands to the ``jsoneval`` group. Engines they need (duckdb, pyspark, a browser) are
# imported when a command runs, so ``jsoneval score`` stays light.
COMMAND_MODULES: tuple[str, ...] = (
    "jsoneval_polars.commands",
    "jsoneval_polars.runs_cli",
    "jsoneval_polars.spark_cli",
)


class CommandGroup(click.Group):
    """A group of commands (``jsoneval``, ``jsoneval runs``): a mistyped command gets a "did
    you mean"."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = args[0] if args else None
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            ctx.fail(f"No such command '{name}'.{hint}")
        return super().resolve_command(ctx, args)


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"],
                                           "max_content_width": 100})
@click.version_option(None, "--version", package_name="jsoneval_polars",
                      message="jsoneval %(version)s")
def app() -> None:
    """Score structured AI output (JSON) against ground truth."""


_opt = click.option


@app.command(no_args_is_help=True)
@_opt("--gt", help="ground truth: NDJSON, JSON array or pretty-printed objects (any may be "
      "gzip, zstd or bzip2 compressed), Parquet, Arrow or CSV file")
@_opt("--aio", help="AI output: NDJSON, JSON array or pretty-printed objects (any may be "
      "compressed), Parquet, Arrow or CSV file")
@_opt("--sample", is_flag=True, help="score the bundled sample (see: jsoneval sample)")
@_opt("--config", help="config file (JSON, YAML or TOML)")
@_opt("--id-field", help="id member of each record (default: doc_id)")
@_opt("--gt-field", help="GT member holding the document (default: the rest)")
@_opt("--aio-field", help="AIO member holding the document or raw model text")
@_opt("--json-column", help="JSON-text or struct column of a Parquet/Arrow/CSV input; '*': "
      "every column besides the id and --meta is a field of the document")
@_opt("--safety", help="file with doc_id and safety columns (NDJSON/CSV/Parquet)")
@_opt("--semantic-scorer", type=click.Choice(["lexical", "embedding"]), default="lexical",
      show_default=True, help="SEMANTIC scorer: lexical token-set, or a sentence-embedding model")
@_opt("--semantic-cache", help="SQLite file caching semantic scores across runs")
@_opt("--meta", help="comma-separated metadata members/columns to keep (model,run_id,...)")
@_opt("--by", help="also write attributes_by/: the attribute table per slice of these "
      "metadata columns (comma-separated; implies --meta for them)")
@_opt("--partition-by", help="write Hive-partitioned tables by this metadata column")
@_opt("--out", required=True, help="directory for the result tables (Parquet + summary.json)")
@_opt("--stream", is_flag=True,
      help="deprecated, no effect: NDJSON inputs are always scored in batches")
@_opt("--workers", type=click.IntRange(min=1),
      help="threads scoring the batches (default: one per core; one with --semantic-scorer "
      "embedding or --semantic-cache)")
@_opt("--batch-size", type=click.IntRange(min=1), default=STREAM_BATCH_SIZE, show_default=True,
      help="document pairs per batch: bounds the memory")
@_opt("--strict", is_flag=True, help="stop at the first bad record (exit 1)")
@_opt("--bootstrap", type=click.IntRange(min=1), metavar="N",
      help="resample the documents N times for 95% intervals of F1 per attribute, "
      "micro/macro-F1 and mean RQS")
@_opt("--seed", type=int, help="seed of the --bootstrap resamples (default: random)")
@_opt("--confidence", metavar="FILE",
      help="per-field confidences: NDJSON/JSON records with the id field and the AIO's paths; "
      "adds the calibration table (AUROC, Brier, ECE, accuracy at coverage)")
@_opt("--anls", is_flag=True,
      help="also compute ANLS* per document (documents.anls) and mean_anls (as config anls: true)")
@_opt("--fail-under", metavar="FIGURE=BOUND,...",
      help="exit 3 when a summary figure is below its bound, e.g. micro_f1=0.9,pass_rate=0.8 "
      "(mean_hallucination: above it)")
@_opt("--json", "json_", is_flag=True, help="print the summary as JSON")
@_opt("--quiet", is_flag=True, help="print nothing on success")
def score(**options) -> int:
    """score AIO against GT and write the result tables"""
    args = SimpleNamespace(**options)
    args.json = options["json_"]
    args.early_scan = click.get_current_context().obj  # start_early_scan's, if any
    return run_command(_score, args)


@app.command("sample")
@click.argument("directory", metavar="DIR")
def sample_command(directory: str) -> int:
    """copy the bundled sample (306 invoice pairs: gt.ndjson, aio.ndjson, config.json) into DIR"""
    return run_command(_sample, SimpleNamespace(dir=directory))


def add_registered_commands(group: click.Group) -> click.Group:
    """The group with the commands of every module of COMMAND_MODULES added."""
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(group)
    return group


SAMPLE_FILES = ("gt.ndjson", "aio.ndjson", "config.json")
#: bytes of each input whose ids decide that the files look sorted (start_early_scan)
SORTED_START_BYTES = 1 << 16
#: batches the early pass walks at most: about what one core walks while the libraries load
#: (60 ms a 7,000-pair batch), and a few batches' columns in memory
EARLY_BATCHES = 3


def write_sample(directory: str | Path) -> list[Path]:
    """Copy the bundled sample (306 invoice pairs and their config) into ``directory``."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; give a directory for the sample")
    sample = {name: _sample_path(name).read_bytes() for name in SAMPLE_FILES}
    for name, data in sample.items():  # a file of the user's is never overwritten
        if (out / name).exists() and (not (out / name).is_file()
                                      or (out / name).read_bytes() != data):
            raise UsageError(f"{out / name} exists and is not the sample's; give another "
                             "directory")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in sample.items():
        (out / name).write_bytes(data)
        written.append(out / name)
    return written


def _sample(args: SimpleNamespace) -> int:
    gt, aio, config = write_sample(args.dir)
    print(f"wrote {gt}, {aio} and {config}; score them with\n"
          f"  jsoneval score --gt {gt} --aio {aio} --config {config} --out results/")
    return EXIT_OK


def _read_safety(path: str, id_field: str) -> pl.DataFrame:
    """A --safety file as (doc_id, safety): a table file read as the inputs are (a CSV file as
    text, so the id ``007`` stays ``007``), else NDJSON; the columns checked, and the first
    value that is not a number in [0, 1] named with its document. Every problem is a usage
    error, as a --confidence file's are (README: exit codes)."""
    import polars as pl

    from .ingest import TABLE_SUFFIXES, json_file_for_polars, read_table_file

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"--safety {path} does not exist or is not a file")
    if p.suffix.lower() in TABLE_SUFFIXES:
        table = read_table_file(p, "--safety", UsageError)
    else:
        try:
            table = pl.read_ndjson(json_file_for_polars(p, f"--safety {path}"))
        except (pl.exceptions.PolarsError, OSError) as exc:  # an empty file, not NDJSON
            raise UsageError(f"--safety {path}: not a readable NDJSON table: "
                             f"{first_line(exc)}") from None
    if id_field in table.columns and id_field != "doc_id":
        table = table.rename({id_field: "doc_id"})
    if not {"doc_id", "safety"} <= set(table.columns):
        raise UsageError(f"--safety {path}: needs a {id_field} and a safety column; columns "
                         f"are {table.columns}")
    value = pl.col("safety")
    if table.schema["safety"] == pl.String:
        value = value.str.strip_chars().cast(pl.Float64, strict=False)
    elif not table.schema["safety"].is_numeric():
        value = pl.lit(None, pl.Float64)
    value = value.cast(pl.Float64)
    bad = table.filter(~value.is_between(0.0, 1.0).fill_null(False))
    if bad.height:
        doc_id, shown = bad["doc_id"][0], bad["safety"][0]
        raise UsageError(f"--safety {path}: safety of document '{doc_id}' must be a number in "
                         f"[0, 1]; got {shown!r}")
    return table.with_columns(value.alias("safety"))


def _inputs(args: SimpleNamespace) -> tuple[str, str, Config]:
    """The GT and AIO inputs and the config a score command names (--sample: the bundled
    ones)."""
    if args.sample:
        return (str(_sample_path("gt.ndjson")), str(_sample_path("aio.ndjson")),
                load_config(args.config or _sample_path("config.json")))
    if not args.gt or not args.aio:
        raise UsageError("give --gt and --aio, or --sample")
    return args.gt, args.aio, load_config(args.config) if args.config else parse_config(None)


def start_early_scan(argv: list[str]) -> EarlyScan | EarlyPass | None:
    """For ``jsoneval score`` with NDJSON inputs, the first pass over them started on threads
    (:class:`file_ranges.EarlyScan`; for files that begin sorted, the first batches of the
    pass over sorted files, :class:`file_ranges.EarlyPass`), to run while Polars, NumPy and
    pyarrow load; else None.
    The options are read as the command reads them, and anything it would refuse starts
    nothing: the command then says what is wrong."""
    if argv[:1] != ["score"] or {"-h", "--help"} & set(argv):  # help prints as it parses
        return None
    try:
        with score.make_context("score", list(argv[1:])) as ctx:
            args = SimpleNamespace(**ctx.params)
        gt, aio, config = _inputs(args)
    except (click.ClickException, click.exceptions.Exit, UsageError, ConfigError, OSError,
            ValueError):
        return None
    from .native import KERNEL, _native

    files = [(path, field) for path, field in ((gt, args.gt_field), (aio, args.aio_field))
             if looks_like_ndjson(path)]
    if KERNEL != "native" or not files:
        return None
    id_field = args.id_field or config.id_field
    # files the pass over sorted files will take (stream.py) need no scan unless it breaks:
    # its first batches are walked instead
    plain = not (args.gt_field or args.aio_field or args.meta or args.by or args.partition_by
                 or args.safety or args.anls or config.anls or config.confidence)
    workers = args.workers or len(os.sched_getaffinity(0))
    with contextlib.suppress(OSError):
        if (plain and len(files) == 2 and id_field == config.id_field
                and _native.sorted_start(gt, aio, id_field, SORTED_START_BYTES)):
            return EarlyPass({"gt": gt, "aio": aio}, id_field,
                             config.empty_containers_are_null, args.batch_size, workers,
                             EARLY_BATCHES)
    # a core is left to the thread loading the libraries
    threads = max(1, workers - 1)
    return EarlyScan(files, id_field, threads)


def _score(args: SimpleNamespace) -> int:
    try:
        fail_under = parse_gate(args.fail_under) if args.fail_under else {}
    except ValueError as exc:
        raise UsageError(f"--fail-under: {exc}") from None
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file; give a directory for the result tables")
    gt, aio, config = _inputs(args)
    if not args.sample and not args.quiet and _same_file(gt, aio):
        # a sanity check, or swapped arguments
        from .terminal import escape

        print(f"jsoneval: warning: --gt and --aio are the same file ({escape(gt)}): every "
              "document is scored against itself", file=sys.stderr)
    if args.anls:
        config = dataclasses.replace(config, anls=True)
    from .calibration import check_confidence_sources

    try:
        check_confidence_sources(config, args.confidence)
    except ValueError as exc:
        raise UsageError(f"--confidence {args.confidence}: {exc}") from None
    safety = None
    if args.safety:
        safety = _read_safety(args.safety, args.id_field or config.id_field)
    from .ingest import is_ndjson
    from .scorers import CachedScorer, scorer_from_name
    from .stream import score_files, score_tables

    if args.stream and not args.quiet:
        print("jsoneval: note: --stream is deprecated and has no effect: NDJSON inputs are "
              "always scored in batches of --batch-size", file=sys.stderr)
    scorer = scorer_from_name(args.semantic_scorer)
    if args.semantic_cache:
        scorer = CachedScorer(scorer, args.semantic_cache)
    by = _names(args.by)
    metadata = list(dict.fromkeys(_names(args.meta) + by + _names(args.partition_by)))
    started = time.perf_counter()
    progress = _progress_for(args)
    options = dict(
        config=config, id_field=args.id_field, content_field=(args.gt_field, args.aio_field),
        safety=safety, semantic_scorer=scorer, strict=args.strict, metadata=metadata,
        progress=progress, batch_size=args.batch_size, bootstrap=args.bootstrap,
        seed=args.seed,
        confidence=_confidences(args.confidence, args.id_field or config.id_field),
    )
    try:
        if is_ndjson(gt) and is_ndjson(aio):  # memory bounded by the batch size
            result = score_files(gt, aio, args.out, **options, by=by,
                                 partition_by=args.partition_by, workers=args.workers,
                                 early_scan=args.early_scan)
            out = result.directory
        else:  # Parquet, Arrow and CSV tables a batch at a time
            result = score_tables(gt, aio, args.out, **options, json_column=args.json_column,
                                  workers=args.workers,
                                  by=by, partition_by=args.partition_by)
            out = result.directory
    finally:
        if progress:
            progress.close()
    sliced = None
    if by:  # the slices' attribute table as written (the counts may be large)
        import polars as pl

        parts = sorted((Path(out) / "attributes_by").glob("*.parquet"))
        sliced = pl.concat([pl.read_parquet(p) for p in parts])
    print_outcome(args, result, started, out, (sliced, by) if by else None)
    warn_names(args, result.errors)
    return verdict(result.summary, fail_under)


def _confidences(path: str | None, id_field: str) -> pl.DataFrame | None:
    """The (doc_id, path, confidence) table of a --confidence file (NDJSON, a JSON array or
    pretty-printed objects, as the inputs are read)."""
    if path is None:
        return None
    from .textfile import decode

    try:
        text = decode(Path(path).read_bytes())
    except OSError as exc:
        raise UsageError(f"--confidence {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # UTF-16, invalid UTF-8
        raise UsageError(f"--confidence {path}: {exc}") from None
    from .ingest import not_json, not_json_at_line, object_texts, starts_json_objects

    if text.lstrip().startswith("["):
        try:
            return _confidence_rows(path, json.loads(text), id_field)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--confidence {path}: {not_json_at_line(exc)}") from None
    data = text.encode()
    records = []
    for number, line in (object_texts(data) if starts_json_objects(data[:1 << 20])
                         else enumerate(data.split(b"\n"), start=1)):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UsageError(f"--confidence {path}: line {number}: {not_json(exc)}") from None
    return _confidence_rows(path, records, id_field)


def _confidence_rows(path: str, records: object, id_field: str) -> pl.DataFrame:
    from .calibration import confidence_table

    try:
        return confidence_table(records, id_field=id_field)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--confidence {path}: {exc}") from None


def warn_names(args, errors) -> None:
    """The warnings about names only the data reveals (a field_strategies entry or a metadata
    name that occurs nowhere, an id field no record has), one line each on stderr, besides
    their rows in ``errors``."""
    if args.quiet:
        return
    import polars as pl

    from .terminal import escape

    errors = errors if isinstance(errors, pl.DataFrame) else errors.collect()
    for message in errors.filter(pl.col("source") == "config")["error"]:
        print(f"jsoneval: warning: {escape(message)}", file=sys.stderr)


def verdict(summary: dict, fail_under: dict[str, float]) -> int:
    """The exit code of a finished run, with one line on stderr when it is not 0: 1 when the
    run cannot be trusted (no pairs, mostly errors), 3 when a --fail-under bound is missed."""
    if summary.get("failure"):
        _fail(f"run failed: {summary['failure']}", EXIT_INPUT)
        return EXIT_INPUT
    missed = gate_failures(summary, fail_under)
    if missed:
        _fail(f"quality gate failed: {'; '.join(missed)}", EXIT_GATE)
        return EXIT_GATE
    return EXIT_OK


def _progress_for(args):
    """A progress display on stderr when it is a terminal and output is not --quiet/--json."""
    if args.quiet or args.json or not sys.stderr.isatty():
        return None
    from .terminal import StageProgress

    return StageProgress()


def print_outcome(args, result, started: float, out, slices=None) -> None:
    """The summary as JSON (--json), nothing (--quiet), or the attribute table, the summary
    lines, the per-slice table (``slices`` = (attributes_by table, by)) and where the tables
    went."""
    if args.json:
        print(json.dumps(result.summary))
        return
    if args.quiet:
        return
    from .terminal import escape, print_summary, render_slices, stdout_console

    console = stdout_console()
    print_summary(console, result, time.perf_counter() - started)
    if slices is not None:
        console.print()
        console.print(render_slices(*slices))
    console.print(f"tables written to {escape(str(out).rstrip('/'))}/", markup=False,
                  soft_wrap=True)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # a missing file is reported by the driver
        return False


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()] if text else []


def main(argv: list[str] | None = None,
         early_scan: EarlyScan | EarlyPass | None = None) -> int:
    """Run the command line; returns the exit code (``jsoneval`` exits with it).
    ``early_scan``: the inputs' first pass :func:`start_early_scan` began."""
    command = add_registered_commands(app)
    try:
        code = command.main(args=argv, prog_name="jsoneval", standalone_mode=False,
                            obj=early_scan)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    except click.exceptions.Exit as exc:  # --help, --version
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.format_message())
        return EXIT_USAGE
    except click.UsageError as exc:  # one line, with Click's "Did you mean --gt?"
        command_path = exc.ctx.command_path if exc.ctx else "jsoneval"
        return _fail(f"error: {exc.format_message()} (see {command_path} --help)", EXIT_USAGE)
    except (KeyboardInterrupt, click.exceptions.Abort):
        return interrupted()
    except BrokenPipeError:
        return _closed_pipe()
    return code if isinstance(code, int) else EXIT_OK


def _closed_pipe() -> int:
    """The reader went away (``| head``): stop quietly with the shell's code for SIGPIPE.
    stdout is pointed at /dev/null so the interpreter's final flush cannot raise again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_PIPE


def run_command(func, args: SimpleNamespace) -> int:
    """Run a subcommand; every expected failure is one line on stderr and an exit code."""
    try:
        return func(args)
    except ConfigError as exc:
        return _fail(f"config error: {exc}", EXIT_USAGE)
    except (UsageError, InputFileError) as exc:
        return _fail(f"error: {exc}", EXIT_USAGE)
    except InputError as exc:
        return _fail(f"input error: {exc}", EXIT_INPUT)
    except BrokenPipeError:  # here, before Click turns it into exit 1
        return _closed_pipe()
    except OSError as exc:  # mostly the output: a read-only or full disk
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"error: {where}{exc.strerror or exc}", EXIT_USAGE)


def _fail(message: str, code: int) -> int:
    from .terminal import escape  # messages quote the data: ids, values, names

    print(f"jsoneval: {escape(' '.join(str(message).split()))}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
