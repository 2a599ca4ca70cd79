"""``jsoneval spark-score``: the command line of the Spark driver, declared once here and
registered through ``cli.COMMAND_MODULES`` (``python -m jsoneval_polars.spark`` runs the same
command). pyspark is imported when the command runs.
"""

from __future__ import annotations

import argparse
import time

from .cli import UsageError


def register(sub) -> None:
    """Add ``jsoneval spark-score`` (for ``cli.COMMAND_MODULES``); pyspark loads on use."""
    p = sub.add_parser(
        "spark-score",
        help="score GT/AIO tables with Apache Spark and write the result tables",
        description="Score with Apache Spark. An input is a path (Parquet, ORC, or NDJSON "
        "whose records hold an id and a JSON-text member) or table:NAME for a catalog table.",
    )
    p.add_argument("--gt", help="ground truth: path or table:NAME (id + JSON-text column)")
    p.add_argument("--aio", help="AI output: path or table:NAME (id + JSON-text column)")
    p.add_argument("--pairs", help="instead of --gt/--aio: one table with id, GT and AIO columns")
    p.add_argument("--format", help="input format for paths: parquet, orc, json (NDJSON), ... "
                   "(default: from the suffix, else parquet)")
    p.add_argument("--config", help="config file (JSON, YAML or TOML)")
    p.add_argument("--id-field", help="id column (default: the config's id_field, doc_id)")
    p.add_argument("--json-column", help="JSON-text column of --gt/--aio (default: json)")
    p.add_argument("--gt-column", help="GT JSON-text column (default: json, or gt with --pairs)")
    p.add_argument("--aio-column", help="AIO JSON-text column (default: json, or aio with --pairs)")
    p.add_argument("--safety-column", help="numeric safety column of --gt or --pairs")
    p.add_argument("--partitions", type=int,
                   help="partitions (default: sized to the input, at most "
                   "spark.sql.shuffle.partitions)")
    p.add_argument("--chunk-rows", type=int, default=20_000, help="input rows per engine call")
    p.add_argument("--master", help="Spark master when not run by spark-submit (e.g. local[4])")
    p.add_argument("--out", required=True, help="output directory (any path Spark can write)")
    p.add_argument("--strict", action="store_true", help="fail on the first bad record")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=_spark_score)


def _spark_score(args: argparse.Namespace) -> int:
    if args.pairs and (args.gt or args.aio):
        raise UsageError("give --pairs, or --gt and --aio")
    if not args.pairs and not (args.gt and args.aio):
        raise UsageError("give --gt and --aio, or --pairs")
    from pyspark.sql import SparkSession

    from .cli import print_outcome, verdict
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
        gt, aio = read_source(spark, args.gt, args.format), read_source(spark, args.aio, args.format)
    result = evaluate_spark(
        gt, aio, config=config, id_field=args.id_field, json_column=columns,
        safety_column=args.safety_column, num_partitions=args.partitions,
        chunk_rows=args.chunk_rows, strict=args.strict,
    )
    result.write(args.out)
    result.unpersist()
    print_outcome(args, result, started, args.out)
    return verdict(result.summary, {})
