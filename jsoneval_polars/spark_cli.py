"""``jsoneval spark-score``: the command line of the Spark driver, declared once here and
registered through ``cli.COMMAND_MODULES`` (``python -m jsoneval_polars.spark`` runs the same
command). pyspark is imported when the command runs.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import click

from .cli import UsageError


def register(group: click.Group) -> None:
    """Add ``jsoneval spark-score`` (for ``cli.COMMAND_MODULES``); pyspark loads on use."""
    group.add_command(spark_score)


_opt = click.option


@click.command("spark-score", no_args_is_help=True)
@_opt("--gt", help="ground truth: path or table:NAME (id + JSON-text column)")
@_opt("--aio", help="AI output: path or table:NAME (id + JSON-text column)")
@_opt("--pairs", help="instead of --gt/--aio: one table with id, GT and AIO columns")
@_opt("--format", help="input format for paths: parquet, orc, json (NDJSON), ... "
      "(default: from the suffix, else parquet)")
@_opt("--config", help="config file (JSON, YAML or TOML)")
@_opt("--id-field", help="id column (default: the config's id_field, doc_id)")
@_opt("--json-column", help="JSON-text column of --gt/--aio (default: json)")
@_opt("--gt-column", help="GT JSON-text column (default: json, or gt with --pairs)")
@_opt("--aio-column", help="AIO JSON-text column (default: json, or aio with --pairs)")
@_opt("--safety-column", help="numeric safety column of --gt or --pairs")
@_opt("--meta", help="comma-separated metadata columns (string or integer) or JSON members "
      "to keep (model,run_id,...)")
@_opt("--gt-field", help="member of each GT JSON record holding the document")
@_opt("--aio-field", help="member of each AIO JSON record holding the document or raw text")
@_opt("--by", help="also write attributes_by/: the attribute table per slice of these "
      "metadata columns (comma-separated; implies --meta for them)")
@_opt("--partitions", type=int,
      help="partitions (default: sized to the input, at most spark.sql.shuffle.partitions)")
@_opt("--chunk-rows", type=int, default=20_000, show_default=True,
      help="input rows per batch of the engine")
@_opt("--master", help="Spark master when not run by spark-submit (e.g. local[4])")
@_opt("--out", required=True, help="output directory (any path Spark can write)")
@_opt("--bootstrap", type=click.IntRange(min=1), metavar="N",
      help="add 95% bootstrap intervals from N resamples of the documents (on the driver)")
@_opt("--seed", type=int, help="seed of the --bootstrap resamples (default: random)")
@_opt("--strict", is_flag=True, help="fail on the first bad record")
@_opt("--json", is_flag=True, help="print the summary as JSON")
@_opt("--quiet", is_flag=True, help="print nothing on success")
def spark_score(**options) -> int:
    """score GT/AIO tables with Apache Spark and write the result tables

    An input is a path (Parquet, ORC, or NDJSON whose records hold an id and a JSON-text
    member) or table:NAME for a catalog table.
    """
    from .cli import run_command

    return run_command(_spark_score, SimpleNamespace(**options))


def _spark_score(args: SimpleNamespace) -> int:
    if args.pairs and (args.gt or args.aio):
        raise UsageError("give --pairs, or --gt and --aio")
    if not args.pairs and not (args.gt and args.aio):
        raise UsageError("give --gt and --aio, or --pairs")
    from pyspark.sql import SparkSession

    from .cli import _names, print_outcome, verdict
    from .config import load_config, parse_config
    from .spark import evaluate_spark, read_source

    builder = SparkSession.builder.appName("jsoneval spark-score")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    config = load_config(args.config) if args.config else parse_config(None)
    default = ("gt", "aio") if args.pairs else (args.json_column or "json",) * 2
    columns = (args.gt_column or default[0], args.aio_column or default[1])
    started = time.perf_counter()
    if args.pairs:
        gt, aio = read_source(spark, args.pairs, args.format), None
    else:
        gt, aio = (read_source(spark, path, args.format) for path in (args.gt, args.aio))
    result = evaluate_spark(
        gt, aio, config=config, id_field=args.id_field, json_column=columns,
        safety_column=args.safety_column, num_partitions=args.partitions,
        chunk_rows=args.chunk_rows, strict=args.strict, bootstrap=args.bootstrap, seed=args.seed,
        metadata=_names(args.meta), by=_names(args.by),
        content_field=(args.gt_field, args.aio_field),
    )
    result.write(args.out)
    result.unpersist()
    by = _names(args.by)
    print_outcome(args, result, started, args.out,
                  (result.attributes_by(by), by) if by else None)
    return verdict(result.summary, {})
