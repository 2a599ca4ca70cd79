"""Command line for the runs metrics (SPEC §10): ``jsoneval runs METRIC RUNS_FILE --out FILE``.

``METRIC`` is ``rubric``, ``tools``, ``trajectory``, ``consistency`` or ``monitor``. The runs
file is NDJSON (one run per line; list columns as JSON arrays), a JSON array, Parquet or CSV;
the output table is the input with the metric's columns added (``consistency`` and ``monitor``
write one row per item or window), as Parquet, NDJSON or CSV by its suffix. A short summary is
printed (``--json`` for JSON, ``--quiet`` for nothing).

Exit codes as for ``jsoneval score``: 0 success, 1 a runs file that cannot be read, 2 bad usage
(an unknown column, a bad weight), with one line naming what is wrong.

Each command is a thin wrapper over :mod:`jsoneval_polars.runs`; the same numbers come from the
Python functions named in its help.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import polars as pl

from . import runs
from .cli import CommandGroup
from .exits import first_line
from .ingest import InputError, json_file_for_polars, not_json, not_json_at_line
from .textfile import decode

# --- reading and writing --------------------------------------------------------------------


def read_runs(path: str | Path) -> pl.LazyFrame:
    """A runs table from NDJSON (default), ``.json`` (an array of runs), ``.parquet`` or
    ``.csv``, as a LazyFrame."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path} does not exist or is not a file")
    suffix = p.suffix.lower()
    if suffix != ".parquet" and not _holds_text(p):
        raise InputError(f"{path}: the runs file is empty")
    try:
        if suffix == ".parquet":
            return pl.scan_parquet(p)
        if suffix == ".csv":
            return pl.scan_csv(p, try_parse_dates=True)
        source = json_file_for_polars(p, f"runs file {path}")
        if suffix == ".json":
            runs_read = pl.read_json(source)
            if not runs_read.width:
                raise InputError(f"{path}: the runs file holds no runs")
            return runs_read.lazy()
        return pl.scan_ndjson(source)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(_unreadable(p) or f"{path}: cannot read runs: {exc}") from None


def _holds_text(path: Path) -> bool:
    """Whether the file holds anything but whitespace (Polars names an empty NDJSON file's
    problem as its type inference: "could not infer data-type")."""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 16):
            if chunk.strip():
                return True
    return False


def _unreadable(path: Path) -> str | None:
    """The first line of a JSON or NDJSON runs file that is not JSON, as an error naming the
    file, the line and the text; None when every line parses (or the file is not JSON). Polars
    says only "Syntax at character 10", without a line."""
    if path.suffix.lower() in (".parquet", ".csv"):
        return None
    with open(path, "rb") as f:
        if path.suffix.lower() == ".json":
            try:
                json.loads(f.read())
            except json.JSONDecodeError as exc:
                return f"{path}, {not_json_at_line(exc)}"
            except ValueError as exc:
                return f"{path}: {not_json(exc)}"
            return None
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                json.loads(line.rstrip(b"\r\n"))
            except ValueError as exc:
                return f"{path}, line {number}: {not_json(exc)}"
    return None


def write_table(df: pl.DataFrame, path: str | Path) -> Path:
    """Write ``df`` as Parquet (``.parquet``), CSV (``.csv``) or NDJSON (anything else)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        df.write_parquet(p)
    elif suffix == ".csv":
        nested = [c for c, t in df.schema.items() if t.is_nested()]
        if nested:
            raise ValueError(
                f"--out {p.name}: CSV cannot hold the list columns {nested}; "
                "write .parquet or .ndjson"
            )
        df.write_csv(p)
    else:
        df.write_ndjson(p)
    return p


# --- option parsing -------------------------------------------------------------------------


class UsageError(ValueError):
    """A bad option value; printed as one line, exit code 2."""


def parse_weights(values: list[str] | None, option: str = "--weights") -> dict[str, float]:
    """``NAME=W,NAME=W`` (repeatable) or a preset name (``example``) → {column: weight}.

    >>> parse_weights(["factual_accuracy=3", "completeness=1"])
    {'factual_accuracy': 3.0, 'completeness': 1.0}
    """
    weights: dict[str, float] = {}
    for value in values or []:
        if value in ("example", "seed002"):  # seed002: the old name
            weights.update(runs.SEED_RUBRIC_WEIGHTS)
            continue
        for part in filter(None, (s.strip() for s in value.split(","))):
            name, eq, number = part.partition("=")
            try:
                weight = float(number) if eq and name else math.nan
            except ValueError:
                weight = math.nan
            if not math.isfinite(weight):
                raise UsageError(
                    f"{option} takes NAME=WEIGHT pairs separated by commas, or 'example'; "
                    f"got {part!r}"
                )
            weights[name.strip()] = weight
    return weights


def _steps(value: str) -> list[str]:
    if value in ("example", "seed004"):  # seed004: the old name
        return list(runs.SEED_TRAJECTORY)
    steps = [s.strip() for s in value.split(",") if s.strip()]
    if not steps:
        raise UsageError(f"--expected-steps takes step names separated by commas; got {value!r}")
    return steps


def _scale(values: list[str] | None) -> dict[str, tuple[float, float]] | None:
    if not values:
        return None
    out = {}
    for value in values:
        name, eq, bounds = value.partition("=")
        low, colon, high = bounds.partition(":")
        try:
            if not (eq and colon and name):
                raise ValueError
            out[name] = (float(low), float(high))
        except ValueError:
            raise UsageError(f"--scale takes NAME=LOW:HIGH; got {value!r}") from None
    return out


def _where(values: list[str] | None, schema: pl.Schema) -> dict[str, Any]:
    """``--where col=value``: the value is read in the column's type."""
    out: dict[str, Any] = {}
    for value in values or []:
        name, eq, text = value.partition("=")
        if not eq or not name:
            raise UsageError(f"--where takes COLUMN=VALUE; got {value!r}")
        dtype = schema.get(name)
        if dtype is None:
            out[name] = text  # runs.filter_runs names the missing column
        elif dtype == pl.Boolean:
            if text.lower() not in ("true", "false"):
                raise UsageError(f"--where {name}: column is boolean; got {text!r}")
            out[name] = text.lower() == "true"
        elif dtype.is_numeric():
            try:
                out[name] = int(text) if dtype.is_integer() else float(text)
            except ValueError:
                raise UsageError(f"--where {name}: column is {dtype}; got {text!r}") from None
        else:
            out[name] = None if text == "" else text
    return out


def _expected_tools(value: str) -> Mapping[str, list[str]]:
    if value in ("example", "seed004"):  # seed004: the old name
        return runs.SEED_EXPECTED_TOOLS
    path = Path(value)
    try:
        text = decode(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"--expected-by-category: cannot read {value}: {exc.strerror}") from None
    except ValueError as exc:  # UTF-16, invalid UTF-8
        raise UsageError(f"--expected-by-category: {value}: {exc}") from None
    try:
        mapping = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--expected-by-category: {value} is not JSON: {exc}") from None
    if not isinstance(mapping, dict) or not all(
        isinstance(v, list) and all(isinstance(t, str) for t in v) for v in mapping.values()
    ):
        raise UsageError(
            f"--expected-by-category: {value} must hold an object category -> list of tools"
        )
    return mapping


# --- summaries ------------------------------------------------------------------------------


def _mean(df: pl.DataFrame, column: str) -> float | None:
    return df[column].drop_nulls().mean() if df.height else None  # type: ignore[return-value]


def _bands(df: pl.DataFrame, column: str) -> dict[str, int]:
    counts = dict(
        df.select(runs.score_band(column).alias("band"))
        .drop_nulls()["band"]
        .value_counts()
        .iter_rows()
    )
    return {band: int(counts.get(band, 0)) for band in reversed(runs.BANDS)}


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def _ids(df: pl.DataFrame, limit: int | None = None) -> list[Any]:
    for column in ("run_id", "id", "item_id"):
        if column in df.columns:
            ids = df[column].to_list()
            return ids if limit is None else ids[:limit]
    return []


def _rubric(args: SimpleNamespace, lf: pl.LazyFrame) -> tuple[pl.DataFrame, dict, list[str]]:
    weights = parse_weights(args.weights)
    if not weights:
        raise UsageError("rubric needs --weights NAME=W,... (or --weights example)")
    if args.tag or args.where:
        lf = runs.filter_runs(
            lf,
            tags=args.tag,
            tags_column=args.tags_column,
            **_where(args.where, lf.collect_schema()),
        )
    scored = runs.rubric_score(lf, weights, threshold=args.threshold).with_columns(
        band=runs.score_band("overall")
    )
    summary = runs.rubric_summary(lf, weights, threshold=args.threshold)
    table = scored.collect()
    status = None if summary.pass_rate is None else _status(summary.pass_rate)
    info = {
        "runs": summary.total,
        "passed": summary.passed,
        "failed": summary.failed,
        "unscored": summary.unscored,
        "pass_rate": summary.pass_rate,
        "status": status,
        "threshold": args.threshold,
        "weights": weights,
        "dimension_means": summary.dimension_means,
        "bands": _bands(table, "overall"),
        "failing": _ids(summary.failures),
    }
    rate = "-" if summary.pass_rate is None else f"{summary.pass_rate:.1%}"
    lines = [
        (
            f"rubric over {summary.total} runs (threshold {args.threshold:g}): "
            f"{summary.passed} passed, {summary.failed} failed, {summary.unscored} unscored; "
            f"pass rate {rate}, status {status or '-'}"
        ),
        "dimension means: "
        + ", ".join(f"{k} {_fmt(v)}" for k, v in summary.dimension_means.items()),
        "bands: " + ", ".join(f"{k} {v}" for k, v in info["bands"].items()),
    ]
    if info["failing"]:
        shown = info["failing"][:10]
        more = f" (+{len(info['failing']) - 10} more)" if len(info["failing"]) > 10 else ""
        lines.append("failing: " + ", ".join(map(str, shown)) + more)
    return table, info, lines


def _status(pass_rate: float) -> str:
    return pl.select(runs.health_status(pl.lit(pass_rate))).item()


def _tools(args: SimpleNamespace, lf: pl.LazyFrame) -> tuple[pl.DataFrame, dict, list[str]]:
    mapping = _expected_tools(args.expected_by_category) if args.expected_by_category else None
    table = runs.tool_choice(
        lf,
        used=args.used,
        expected=args.expected,
        expected_by_category=mapping,
        category=args.category,
    ).collect()
    known = table.filter(pl.col("tool_precision").is_not_null())
    perfect = known.filter((pl.col("tool_precision") == 1) & (pl.col("tool_recall") == 1)).height
    info = {
        "runs": table.height,
        "unknown": table.height - known.height,
        "perfect": perfect,
        "mean_tool_precision": _mean(table, "tool_precision"),
        "mean_tool_recall": _mean(table, "tool_recall"),
    }
    lines = [
        (
            f"tool choice over {table.height} runs: "
            f"mean precision {_fmt(info['mean_tool_precision'])}, "
            f"mean recall {_fmt(info['mean_tool_recall'])}; {perfect} exact, "
            f"{info['unknown']} unknown (null tools)"
        )
    ]
    return table, info, lines


def _trajectory(args: SimpleNamespace, lf: pl.LazyFrame) -> tuple[pl.DataFrame, dict, list[str]]:
    expected: str | list[str] = (
        _steps(args.expected_steps) if args.expected_steps else args.expected
    )
    table = runs.trajectory_match(
        lf, expected=expected, actual=args.actual, no_pairs_order_score=args.no_pairs_order_score
    ).collect()
    info = {
        "runs": table.height,
        "mean_trajectory_match": _mean(table, "trajectory_match"),
        "mean_jaccard": _mean(table, "trajectory_jaccard"),
        "mean_order_score": _mean(table, "trajectory_order_score"),
        "bands": _bands(table, "trajectory_match"),
    }
    lines = [
        (
            f"trajectory over {table.height} runs: "
            f"mean match {_fmt(info['mean_trajectory_match'])} "
            f"(Jaccard {_fmt(info['mean_jaccard'])}, order {_fmt(info['mean_order_score'])})"
        ),
        "bands: " + ", ".join(f"{k} {v}" for k, v in info["bands"].items()),
    ]
    return table, info, lines


def _consistency(
    args: SimpleNamespace, lf: pl.LazyFrame
) -> tuple[pl.DataFrame, dict, list[str]]:
    if not args.value:
        raise UsageError("consistency needs --value COLUMN (repeatable)")
    scale = _scale(args.scale)
    if args.across_models:
        table = runs.agreement_across_models(
            lf, item=args.item, model=args.model, value=args.value, scale=scale
        ).collect()
        per_value = {v: _mean(table, f"{v}_agreement") for v in args.value}
        info = {
            "level": "across_models",
            "items": table.height,
            "mean_agreement": _mean(table, "agreement"),
            "mean_agreement_by_value": per_value,
        }
        lines = [
            f"cross-model agreement over {table.height} items: "
            f"mean {_fmt(info['mean_agreement'])} ("
            + ", ".join(f"{k} {_fmt(v)}" for k, v in per_value.items())
            + ")"
        ]
        return table, info, lines
    table = runs.consistency_within_model(
        lf, item=args.item, model=args.model, value=args.value, scale=scale, ddof=args.ddof
    ).collect()
    by_model = (
        table.group_by(args.model)
        .agg(pl.col("consistency").mean())
        .sort(args.model, nulls_last=True)
    )
    per_model = {str(m): c for m, c in by_model.iter_rows()}
    info = {
        "level": "within_model",
        "items": table[args.item].n_unique(),
        "rows": table.height,
        "mean_consistency": _mean(table, "consistency"),
        "mean_consistency_by_model": per_model,
    }
    lines = [
        f"same-model consistency over {info['items']} items: mean {_fmt(info['mean_consistency'])}",
        "by model: " + ", ".join(f"{k} {_fmt(v)}" for k, v in per_model.items()),
    ]
    return table, info, lines


def _monitor(args: SimpleNamespace, lf: pl.LazyFrame) -> tuple[pl.DataFrame, dict, list[str]]:
    schema = lf.collect_schema()
    score = args.score
    if args.weights:
        lf = runs.rubric_score(lf, parse_weights(args.weights), threshold=args.threshold)
        score = "overall"
    elif args.passed is None and score not in schema:
        raise UsageError(
            f"monitor needs a score: column {score!r} not found; give --score COLUMN, "
            "--passed COLUMN, or --weights NAME=W,... to score the runs first"
        )
    if args.time in schema and schema[args.time] == pl.String:
        lf = lf.with_columns(pl.col(args.time).str.to_datetime())
    table = runs.monitor(
        lf,
        time=args.time,
        every=args.every,
        score=score,
        passed=args.passed,
        sample_rate=args.sample_rate,
        seed=args.seed,
        threshold=args.threshold,
        group_by=args.group_by,
    ).collect()
    n_scored = int(table["n_scored"].sum()) if table.height else 0
    n_passed = int(table["n_passed"].sum()) if table.height else 0
    rate = n_passed / n_scored if n_scored else None
    by_status = dict(table["status"].value_counts().iter_rows()) if table.height else {}
    latest = table.sort(args.time).row(-1, named=True) if table.height else None
    info = {
        "windows": table.height,
        "runs_sampled": int(table["n_runs"].sum()) if table.height else 0,
        "runs_scored": n_scored,
        "pass_rate": rate,
        "status": None if rate is None else _status(rate),
        "windows_by_status": {k: int(v) for k, v in sorted(by_status.items())},
        "latest": None
        if latest is None
        else {
            "window": str(latest[args.time]),
            "pass_rate": latest["pass_rate"],
            "status": latest["status"],
        },
    }
    overall = "-" if rate is None else f"{rate:.1%}"
    lines = [
        (
            f"monitor: {info['runs_sampled']} sampled runs in {table.height} windows of "
            f"{args.every}; pass rate {overall}, status {info['status'] or '-'}"
        ),
        "windows by status: "
        + (", ".join(f"{k} {v}" for k, v in info["windows_by_status"].items()) or "-"),
    ]
    if latest is not None:
        lines.append(
            f"latest window {latest[args.time]}: pass rate {_fmt(latest['pass_rate'])}, "
            f"{latest['status']}"
        )
    return table, info, lines


Command = Callable[[SimpleNamespace, pl.LazyFrame], tuple[pl.DataFrame, dict, list[str]]]
COMMANDS: dict[str, Command] = {
    "rubric": _rubric,
    "tools": _tools,
    "trajectory": _trajectory,
    "consistency": _consistency,
    "monitor": _monitor,
}


def run_metric(args: SimpleNamespace) -> int:
    prog = f"jsoneval runs {args.metric}"
    lf = read_runs(args.runs_file)
    try:
        table, info, lines = COMMANDS[args.metric](args, lf)
        out = write_table(table, args.out)
    except pl.exceptions.PolarsError as exc:
        # a runs file whose rows do not parse, or a column of the wrong type
        raise InputError(_unreadable(Path(args.runs_file))
                         or f"{args.runs_file}: {first_line(exc)}") from None
    except ValueError as exc:  # UsageError and the runs functions' column/weight checks
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    info = {"metric": args.metric, **info, "out": str(out)}
    if args.json:
        print(json.dumps(info, default=str))
    elif not args.quiet:
        print("\n".join(lines))
        print(f"wrote {table.height} rows to {out}")
    return 0


# --- command line ---------------------------------------------------------------------------


def _metric_command(name: str, help: str):
    """A ``jsoneval runs NAME`` command: RUNS_FILE, --out, --json, --quiet and the metric's
    own options (the decorators below it), run by :func:`run_metric`."""

    def decorate(options_of_metric):
        @click.argument("runs_file", metavar="RUNS_FILE")
        @click.option("--out", required=True, help="output table: .parquet, .ndjson or .csv")
        @click.option("--json", is_flag=True, help="print the summary as JSON")
        @click.option("--quiet", is_flag=True, help="print nothing on success")
        @functools.wraps(options_of_metric)
        def command(**options) -> int:
            from .cli import run_command

            # a repeatable option given no times is None, as the metric functions expect
            given = {k: (list(v) or None) if isinstance(v, tuple) else v
                     for k, v in options.items()}
            return run_command(run_metric, SimpleNamespace(metric=name, **given))

        command.__doc__ = f"{help}\n\nRUNS_FILE: runs table (NDJSON, JSON array, Parquet or CSV)."
        return runs_group.command(name, no_args_is_help=True)(command)

    return decorate


@click.group("runs", cls=CommandGroup)
def runs_group() -> None:
    """agent/rubric metrics over a table of runs

    Agent, rubric, consistency and monitoring metrics over a table of runs.
    """


def register(group: click.Group) -> None:
    """Add ``jsoneval runs {rubric,tools,trajectory,consistency,monitor}``."""
    group.add_command(runs_group)


_opt = click.option
_WEIGHTS_HELP = ("dimension weights, e.g. factual_accuracy=0.3,completeness=0.25; 'example' for "
                 "the five rubric dimensions of examples/agent_runs (repeatable)")


@_metric_command("rubric", "weighted rubric score, pass flag and band (runs.rubric_score)")
@_opt("--weights", multiple=True, metavar="NAME=W,...", help=_WEIGHTS_HELP)
@_opt("--threshold", type=float, default=0.7, show_default=True, help="passed = overall >= this")
@_opt("--tag", multiple=True, help="keep runs carrying this tag (repeatable)")
@_opt("--tags-column", default="tags", show_default=True, help="list column of tags")
@_opt("--where", multiple=True, metavar="COLUMN=VALUE",
      help="keep runs whose column equals the value (repeatable)")
def _rubric_options(): ...


@_metric_command("tools", "tool precision and recall per run (runs.tool_choice)")
@_opt("--used", default="tools_used", show_default=True, help="list column of tools used")
@_opt("--expected", default="tools_expected", show_default=True,
      help="list column of expected tools")
@_opt("--expected-by-category", metavar="FILE|example",
      help="JSON file category -> expected tools, or 'example' (examples/agent_runs)")
@_opt("--category", default="category", show_default=True, help="category column")
def _tools_options(): ...


@_metric_command("trajectory", "0.6·Jaccard + 0.4·order score (runs.trajectory_match)")
@_opt("--actual", default="steps", show_default=True, help="list column of the steps taken")
@_opt("--expected", default="expected_steps", show_default=True,
      help="list column of the expected steps")
@_opt("--expected-steps", metavar="A,B,...|example",
      help="one expected trajectory for every run, or 'example' (examples/agent_runs)")
@_opt("--no-pairs-order-score", type=float, default=0.0, show_default=True,
      help="order score when no expected pair is present")
def _trajectory_options(): ...


@_metric_command("consistency", "same-model consistency or cross-model agreement")
@_opt("--value", multiple=True, metavar="COLUMN",
      help="output column to compare across runs (repeatable)")
@_opt("--item", default="item_id", show_default=True, help="item column")
@_opt("--model", default="model", show_default=True, help="model column")
@_opt("--scale", multiple=True, metavar="NAME=LOW:HIGH",
      help="range that normalizes a numeric column, e.g. credit_score=0:100")
@_opt("--ddof", type=int, default=0, show_default=True, help="standard deviation ddof")
@_opt("--across-models", is_flag=True,
      help="one row per item: agreement of the models (default: per item and model)")
def _consistency_options(): ...


@_metric_command("monitor", "pass rate and status per time window (runs.monitor)")
@_opt("--time", default="ts", show_default=True, help="timestamp column; ISO text is parsed")
@_opt("--every", default="1h", show_default=True, help="window length, Polars duration")
@_opt("--score", default="overall", show_default=True, help="score column")
@_opt("--passed", help="boolean pass column (default: score >= threshold)")
@_opt("--weights", multiple=True, metavar="NAME=W,...",
      help="score runs with this rubric first (the score is then 'overall')")
@_opt("--threshold", type=float, default=0.7, show_default=True, help="pass threshold")
@_opt("--sample-rate", type=float, default=1.0, show_default=True, help="share of runs sampled")
@_opt("--seed", type=int, default=0, show_default=True, help="sampling seed")
@_opt("--group-by", multiple=True, metavar="COLUMN",
      help="windows per value of this column, e.g. model (repeatable)")
def _monitor_options(): ...
