"""Apache Spark scale-out: score GT and AIO Spark DataFrames where they live (SPEC §7, §9).

The single-machine engine runs unchanged on the workers; Spark only moves rows and adds counts::

    GT rows ─┐ (doc_id, side, json, safety, row)
             ├─ union ─ repartition(doc_id) ─ sortWithinPartitions(doc_id) ─ mapInArrow ─┐
    AIO rows ┘                                                                          │
       per chunk of whole documents: the batch core (core.score_batch)  ◄───────────────┘
       -> documents, fields, counts, alignments, errors rows and the chunk's run state
          (one tagged Arrow stream)
    driver: states ─ group_by sum ─ rates.finish   (the finish every driver calls)

Every row of one ``doc_id`` lands in one partition, sorted together, so each batch sees
whole documents; a partition is scored in chunks of about ``chunk_rows`` input rows, which
bounds a worker's memory however large the partition. Per-document results do not depend on the
other documents of a chunk, and ``counts`` is additive, so any partitioning gives the same
tables as :func:`jsoneval_polars.evaluate` on one machine (``tests/test_spark.py`` checks it
on the conformance cases and on generated data).

Spark sees no row order, so two things differ from a local run on files: ``line`` in the errors
table is null, and of two rows sharing a ``doc_id`` on one side the first *in the input
DataFrame's order* is kept (the other is an error row). pyspark is imported inside the
functions only: ``import jsoneval_polars.spark`` stays light (the CLI imports it to register
``spark-score``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from . import schemas
from .bootstrap import check_resamples, with_intervals
from .config import Config, parse_config
from .core import needs_documents, score_batch
from .counts import RunState, run_state
from .ingest import (
    InputError,
    ROW_COLUMNS,
    Pairs,
    content_fields,
    metadata_names,
    name_list,
    pair_inputs,
    plan_tables,
    screen_keyed_rows,
)
from .layout import RunWriter, manifest, now
from .pipeline import Result
from .rates import attribute_rates, finish
from .scorers import Scorer

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

# --- declared schemas -----------------------------------------------------------------------
# Spark needs the output schema before any worker runs: the tables declared in schemas.py, in
# Arrow; the workers cast the engine's Arrow output to them.

# Spark's Arrow types for the engine's dtypes (Polars emits large_string, Spark wants string)
_ARROW_TYPES = {
    pl.String: pa.string(),
    pl.Float64: pa.float64(),
    pl.Boolean: pa.bool_(),
    pl.Int64: pa.int64(),
    pl.Int32: pa.int32(),
}
_DDL = {pa.string(): "string", pa.float64(): "double", pa.bool_(): "boolean",
        pa.int64(): "bigint", pa.int32(): "int"}


def _arrow(columns: dict[str, pl.DataType]) -> pa.Schema:
    """The Arrow schema Spark is given for a table declared in schemas.py."""
    return pa.schema([pa.field(name, _ARROW_TYPES[dtype]) for name, dtype in columns.items()])


DOCUMENTS_SCHEMA = _arrow(schemas.DOCUMENTS)
FIELDS_SCHEMA = _arrow(schemas.FIELDS)
COUNTS_SCHEMA = _arrow(schemas.COUNTS)
ALIGNMENTS_SCHEMA = _arrow(schemas.ALIGNMENTS)
ERRORS_SCHEMA = _arrow(schemas.ERRORS)
ATTRIBUTES_SCHEMA = _arrow(schemas.ATTRIBUTES)
# a chunk's run state (counts.RunState): its counts per attribute, and its row of totals
STATE_SCHEMA = COUNTS_SCHEMA.remove(0)
TOTALS_ARROW_SCHEMA = _arrow(schemas.TOTALS)



def table_schemas(metadata: Sequence[str] = ()) -> dict[str, pa.Schema]:
    """The declared schemas of a run's tables, with its metadata columns (strings) where the
    engine puts them: after ``doc_id`` in documents and counts, last in fields, first in a
    chunk's state (its counts per metadata values and attribute)."""
    meta = [pa.field(name, pa.string()) for name in metadata]

    def after_doc_id(schema: pa.Schema) -> pa.Schema:
        return pa.schema([schema.field(0), *meta, *list(schema)[1:]])

    return {
        "documents": after_doc_id(DOCUMENTS_SCHEMA),
        "fields": pa.schema([*FIELDS_SCHEMA, *meta]),
        "counts": after_doc_id(COUNTS_SCHEMA),
        "alignments": ALIGNMENTS_SCHEMA,
        "errors": ERRORS_SCHEMA,
        "state": pa.schema([*meta, *STATE_SCHEMA]),
        "totals": TOTALS_ARROW_SCHEMA,
    }


def output_schema(declared: dict[str, pa.Schema]) -> pa.Schema:
    """The workers' one Arrow stream: a ``kind`` tag and one struct column per table, of which
    only the tagged one is set. The driver splits it with filter + select after persisting it."""
    return pa.schema([pa.field("kind", pa.string())]
                     + [pa.field(name, pa.struct(list(s))) for name, s in declared.items()])


TABLE_SCHEMAS: dict[str, pa.Schema] = table_schemas()
_OUTPUT_SCHEMA = output_schema(TABLE_SCHEMAS)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _ddl_type(t: pa.DataType) -> str:
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{_quote(f.name)}: {_ddl_type(f.type)}" for f in t) + ">"
    return _DDL[t]


def spark_ddl(schema: pa.Schema) -> str:
    """Spark DDL (``"`a` string, `b` double"``) of one of the declared Arrow schemas."""
    return ", ".join(f"{_quote(f.name)} {_ddl_type(f.type)}" for f in schema)


# --- worker side ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _PartitionScorer:
    """The function given to ``mapInArrow`` (pickled to the workers with its settings).

    Input batches hold (doc_id, side, json, safety, row, then one ``_meta_<i>`` column per
    metadata name) sorted by doc_id; output batches follow ``output_schema`` of the run's
    ``table_schemas``.
    """

    config: Config
    id_field: str
    null_messages: tuple[tuple[str, str], ...]  # side -> error for a null JSON cell
    has_safety: bool
    semantic_scorer: Scorer | str | None
    strict: bool
    chunk_rows: int
    metadata: tuple[str, ...] = ()
    #: per side (gt, aio), the member of each JSON record holding its document (None: the
    #: record is the document)
    content_field: tuple[str | None, str | None] = (None, None)
    #: per side (gt, aio), the metadata names that are columns of its frame (they win over
    #: members of those names, as a table's own columns do locally)
    own_metadata: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pending: list[pa.RecordBatch] = []
        n_pending = 0
        for batch in batches:
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            n_pending += batch.num_rows
            if n_pending < self.chunk_rows:
                continue
            ready, rest = _split_before_last_id(pa.Table.from_batches(pending))
            if ready.num_rows:  # else one doc_id fills the chunk: keep reading
                yield from self._score_chunk(ready)
                pending, n_pending = rest.to_batches(), rest.num_rows
        if n_pending:
            yield from self._score_chunk(pa.Table.from_batches(pending))

    def _score_chunk(self, chunk: pa.Table) -> Iterator[pa.RecordBatch]:
        """The per-document tables of a chunk of whole documents, and its run state."""
        rows = pl.from_arrow(chunk).sort("row")
        n_read = dict(rows.group_by("side").len().iter_rows())
        # decided here, not by the engine: a chunk may hold one side only, where the engine
        # would pair by position
        usable, errors = screen_keyed_rows(rows, self.id_field, dict(self.null_messages),
                                           strict=self.strict)
        states = [run_state(errors=errors, n_read=n_read)]
        declared = table_schemas(self.metadata)
        output = output_schema(declared)
        if usable.height:
            gt, aio = (
                usable.filter(pl.col("side") == side).select(
                    "doc_id", "json",
                    *[pl.col(f"_meta_{self.metadata.index(name)}").alias(name) for name in own])
                for side, own in zip(("gt", "aio"), self.own_metadata, strict=True)
            )
            pairs = _chunk_pairs(gt, aio, self.config, self.strict, self.metadata,
                                 self.content_field)
            if self.has_safety:
                known = usable.filter(pl.col("safety").is_not_null())
                pairs = pairs.with_safety(dict(zip(known["doc_id"], known["safety"], strict=True)))
            # the batch core, not evaluate(): a chunk is a batch of the run, and only the
            # driver's finish sees the whole run (its warnings, its status)
            batch = score_batch(pairs, self.config, semantic_scorer=self.semantic_scorer,
                                strict=self.strict)
            pairing_errors = pl.DataFrame(pairs.errors, schema=schemas.ERRORS)
            states += [run_state(errors=pairing_errors), batch.state]
            # a row position inside one chunk means nothing to the user: line is null;
            # records were counted above
            errors = pl.concat([errors, pairing_errors, batch.errors]).with_columns(
                pl.lit(None, pl.Int64).alias("line"))
            for kind in ("documents", "fields", "counts", "alignments"):
                frame = getattr(batch, kind)
                if frame.height:
                    yield _tagged(kind, frame, declared, output)
        if errors.height:
            yield _tagged("errors", errors, declared, output)
        for state in states:
            if state.counts.height:
                yield _tagged("state", state.counts, declared, output)
            yield _tagged("totals", state.totals, declared, output)


def _chunk_pairs(gt: pl.DataFrame, aio: pl.DataFrame, config: Config, strict: bool,
                 metadata: Sequence[str] = (),
                 content_field: tuple[str | None, str | None] = (None, None)) -> Pairs:
    """The pairs of a chunk's (doc_id, json, own metadata columns) rows: from their JSON text
    to the leaves table (ingest.plan_tables), or as Python records where the documents
    themselves are needed (ANLS*, sibling confidences) or the native kernel is missing."""
    texts = None if needs_documents(config) else plan_tables(
        gt, aio, id_field="doc_id", json_column="json", strict=strict, metadata=metadata,
        content_field=content_field)
    if texts is None:
        return pair_inputs(gt, aio, id_field="doc_id", json_column="json", strict=strict,
                           metadata=metadata, content_field=content_field)
    pairs = texts.read_pairs(texts.plan, strict=strict,
                             empty_containers_are_null=config.empty_containers_are_null)
    pairs.errors = texts.errors + pairs.errors
    return pairs


def _split_before_last_id(table: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(rows before the last doc_id's run, that run): rows are sorted by doc_id, so every
    doc_id in the first part is complete. Null ids sort first, so a null last id means that
    every row has a null id, and all are ready."""
    ids = table.column("doc_id")
    last = ids[table.num_rows - 1]
    if not last.is_valid:
        return table, table.slice(0, 0)
    cut = table.num_rows - pc.sum(pc.equal(ids, last)).as_py()
    return table.slice(0, cut), table.slice(cut)


def _tagged(kind: str, frame: pl.DataFrame, declared: dict[str, pa.Schema],
            output: pa.Schema) -> pa.RecordBatch:
    """One output batch of ``output`` (the run's stream): ``kind``, the struct column of that
    table, nulls for the others."""
    schema = declared[kind]
    arrow = frame.select(schema.names).to_arrow().cast(schema)
    n = arrow.num_rows
    columns = []
    for out in output:
        if out.name == "kind":
            columns.append(pa.array([kind] * n, pa.string()))
        elif out.name == kind:
            children = [column.combine_chunks() for column in arrow.columns]
            columns.append(pa.StructArray.from_arrays(children, fields=list(schema)))
        else:
            columns.append(pa.nulls(n, out.type))
    return pa.RecordBatch.from_arrays(columns, schema=output)


# --- driver side ----------------------------------------------------------------------------


@dataclass
class SparkResult:
    """The result tables of :func:`evaluate_spark`.

    ``documents``, ``fields``, ``counts``, ``alignments`` and ``errors`` are Spark DataFrames
    over one persisted scoring pass (call :meth:`unpersist` when done); ``attributes`` is the
    small per-attribute table as Polars (``attributes_spark`` is the same as a Spark
    DataFrame); ``summary`` holds the keys of :attr:`jsoneval_polars.Result.summary`.
    ``metadata`` names the run's metadata columns, and :meth:`attributes_by` slices the
    attribute table by them (``by``: the slices :meth:`write` writes as ``attributes_by/``).
    """

    documents: DataFrame
    fields: DataFrame
    counts: DataFrame
    alignments: DataFrame
    errors: DataFrame
    attributes: pl.DataFrame
    attributes_spark: DataFrame
    summary: dict[str, Any]
    scored: DataFrame  # the persisted tagged stream the tables are selected from
    manifest: dict[str, Any] = field(default_factory=dict)
    # the finish's warning rows (names that occur in no document): in ``errors``, not in scored
    finish_warnings: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(
        schema=schemas.ERRORS))
    metadata: tuple[str, ...] = ()
    by: tuple[str, ...] = ()
    # the run's state: its counts summed per (metadata values, attribute), on the driver
    state_counts: pl.DataFrame | None = None

    def unpersist(self) -> None:
        self.scored.unpersist()

    def attributes_by(self, by: str | Sequence[str]) -> pl.DataFrame:
        """The attribute table per slice of metadata columns, from the summed counts (no
        re-scoring; the same table as :meth:`jsoneval_polars.Result.attributes_by`)."""
        by = [by] if isinstance(by, str) else list(by)
        missing = [c for c in by if c not in self.metadata]
        if missing or self.state_counts is None:
            raise KeyError(f"no metadata column(s) {missing}; pass metadata=[...] to "
                           f"evaluate_spark(); metadata: {list(self.metadata)}")
        return attribute_rates(self.state_counts, by=by)

    def to_polars(self) -> Result:
        """The whole result on the driver as a local :class:`jsoneval_polars.Result` (one
        Spark job). Only for results that fit in the driver's memory."""
        stream = pl.from_arrow(self.scored.toArrow().cast(
            output_schema(table_schemas(self.metadata))))
        tables = {
            kind: stream.filter(pl.col("kind") == kind).select(pl.col(kind).struct.unnest())
            for kind in ("documents", "fields", "counts", "alignments", "errors")
        }
        tables["errors"] = pl.concat([tables["errors"], self.finish_warnings])
        return Result(**tables, attributes=self.attributes, summary=dict(self.summary),
                      manifest=dict(self.manifest))

    def write(self, out: str) -> str:
        """Write the run in the results layout (layout.py): each table a folder of Spark part
        files, ``summary.json`` and ``manifest.json``, swapped in whole as every driver's run
        is. ``out`` is a local path; on another file system (``s3://...``) the tables are
        written in place and the summary is a one-line JSON text folder ``out/summary``."""
        tables = ("documents", "fields", "attributes_spark", "alignments", "errors", "counts")
        base = out.rstrip("/")
        if "://" in base and not base.startswith("file://"):
            for name in tables:
                getattr(self, name).write.mode("overwrite").parquet(
                    f"{base}/{name.removesuffix('_spark')}")
            spark = self.documents.sparkSession
            if self.by:
                sliced = pa.schema([*(pa.field(n, pa.string()) for n in self.by),
                                    *ATTRIBUTES_SCHEMA])
                spark.createDataFrame(self.attributes_by(self.by).to_arrow().cast(sliced),
                                      schema=spark_ddl(sliced)).coalesce(1) \
                    .write.mode("overwrite").parquet(f"{base}/attributes_by")
            line = spark.createDataFrame([(json.dumps(self.summary),)], "value string")
            line.coalesce(1).write.mode("overwrite").text(f"{base}/summary")
            return base
        with RunWriter(base.removeprefix("file://")) as writer:
            for name in tables:
                getattr(self, name).write.parquet(
                    str(writer.staging / name.removesuffix("_spark")))
            if self.by:
                writer.write("attributes_by", self.attributes_by(self.by), partitioned=False)
            return str(writer.commit(self.summary, self.manifest))


def evaluate_spark(
    gt: DataFrame,
    aio: DataFrame | None = None,
    *,
    config: Config | dict | str | Path | None = None,
    id_field: str | None = None,
    json_column: str | tuple[str, str] | None = None,
    safety_column: str | None = None,
    num_partitions: int | None = None,
    chunk_rows: int = 20_000,
    semantic_scorer: Scorer | str | None = None,
    strict: bool = False,
    bootstrap: int | None = None,
    seed: int | None = None,
    metadata: Sequence[str] = (),
    by: Sequence[str] = (),
    content_field: str | tuple[str | None, str | None] | None = None,
) -> SparkResult:
    """Score AI output against ground truth held in Spark DataFrames.

    ``gt`` and ``aio`` each have an id column (``id_field``, default the config's ``id_field``,
    ``doc_id``) and a column of JSON text (``json_column``, default ``"json"``; a
    ``(gt_column, aio_column)`` pair when the names differ). With ``aio=None``, ``gt`` is one
    pairs DataFrame with columns ``json_column`` (default ``("gt", "aio")``); there a null GT
    or AIO cell means the document is absent on that side. ``safety_column`` names a numeric
    column of ``gt`` (or the pairs frame) with the per-document safety score; null means 1.0.

    The documents are co-partitioned by id into ``num_partitions`` partitions (default
    ``spark.sql.shuffle.partitions``) and scored in chunks of about ``chunk_rows`` input rows
    by :func:`jsoneval_polars.evaluate` on the workers. ``config`` is validated here, before
    any Spark job; ``semantic_scorer`` must be picklable (it runs on the workers).

    One Spark job runs here: the scoring pass, persisted (call :meth:`SparkResult.unpersist`
    when done), with the per-attribute sums of ``counts`` and the summary's sums. Reading the
    result tables afterwards reads the persisted pass; nothing is scored twice.

    ``bootstrap=N`` (``seed``) adds the intervals of :func:`jsoneval_polars.evaluate`: the
    per-(document, attribute) sums of ``counts`` and each document's RQS are collected to the
    driver (a second job) and resampled there by the same code, so the same data and seed give
    the same intervals as the other drivers. At most :data:`BOOTSTRAP_MAX_DOCUMENTS` documents.

    ``metadata`` names labels that are not scored and travel to ``documents``, ``fields`` and
    ``counts``, as in :func:`jsoneval_polars.evaluate`: a column of a frame (string or
    integer; in a pairs frame, the document's), else a member of the JSON; the AIO's value
    wins over the GT's. ``by`` (metadata too) is kept for :meth:`SparkResult.write`, which
    writes ``attributes_by/``; :meth:`SparkResult.attributes_by` slices by any of them.
    ``content_field`` names the member of each JSON record holding the document (one name, or
    a (gt, aio) pair), as in :func:`jsoneval_polars.evaluate`.

    >>> res = evaluate_spark(gt_df, aio_df, config=config)  # doctest: +SKIP
    >>> res.summary["mean_rqs"], res.documents.count()  # doctest: +SKIP
    """
    if bootstrap is not None:
        check_resamples(bootstrap)
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    cfg = parse_config(config)
    started = now()
    id_field = id_field or cfg.id_field
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1; got {chunk_rows}")
    if num_partitions is not None and num_partitions < 1:
        raise ValueError(f"num_partitions must be >= 1; got {num_partitions}")
    by = name_list(by)
    metadata = metadata_names(metadata, by, id_field=id_field)
    if ROW_COLUMNS in ((json_column,) if isinstance(json_column, str) else json_column or ()):
        raise InputError(
            f"json_column={ROW_COLUMNS!r} (a column per field) is read by evaluate() and "
            "jsoneval score; in Spark, make one JSON column of them with "
            "pyspark.sql.functions.to_json(struct(...)), option ignoreNullFields=false"
        )
    if aio is None:
        gt_col, aio_col = _two_names(json_column, ("gt", "aio"))
        _check_columns(gt, "pairs", id_field, [gt_col, aio_col], safety_column)
        own = _metadata_columns(gt, "pairs", metadata, [id_field, gt_col, aio_col])
        rows = _pairs_rows(gt, id_field, gt_col, aio_col, safety_column, metadata, own)
        own_metadata = (own, own)
        null_messages = (("gt", f"both '{gt_col}' and '{aio_col}' are null"),
                         ("aio", f"column '{aio_col}' is null"))
    else:
        gt_col, aio_col = _two_names(json_column, ("json", "json"))
        _check_columns(gt, "gt", id_field, [gt_col], safety_column)
        _check_columns(aio, "aio", id_field, [aio_col], None)
        own_metadata = (_metadata_columns(gt, "gt", metadata, [id_field, gt_col]),
                        _metadata_columns(aio, "aio", metadata, [id_field, aio_col]))
        rows = _side_rows(gt, "gt", id_field, gt_col, safety_column, metadata,
                          own_metadata[0]).unionByName(
            _side_rows(aio, "aio", id_field, aio_col, None, metadata, own_metadata[1]))
        null_messages = (("gt", f"column '{gt_col}' is null"),
                         ("aio", f"column '{aio_col}' is null"))

    scorer = _PartitionScorer(
        config=cfg, id_field=id_field, null_messages=null_messages,
        has_safety=safety_column is not None, semantic_scorer=semantic_scorer, strict=strict,
        chunk_rows=chunk_rows, metadata=tuple(metadata), own_metadata=own_metadata,
        content_field=content_fields(content_field),
    )
    run_schemas = table_schemas(metadata)
    partitions = num_partitions or _partitions_for(rows, aio is None and [gt] or [gt, aio])
    rows = rows.repartition(partitions, "doc_id")
    scored = (
        rows.sortWithinPartitions("doc_id", "side", "row")
        .mapInArrow(scorer, spark_ddl(output_schema(run_schemas)))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    tables = {
        kind: scored.where(F.col("kind") == kind).select(f"{kind}.*")
        for kind in ("documents", "fields", "counts", "alignments", "errors")
    }
    # one job: the scoring pass (persisted) and the group-by sum of the chunks' states
    kind = F.col("kind")
    state_columns = run_schemas["state"]
    sums = _to_polars(
        scored.where(kind.isin("state", "totals"))
        .groupBy(kind, *[F.col("state").getField(name).alias(name) for name in metadata],
                 F.col("state.attribute"))
        .agg(*[F.sum(f"state.{c}").alias(c) for c in schemas.ADDITIVE_COLUMNS],
             *[F.sum(f"totals.{c}").alias(c) for c in schemas.TOTALS]),
        pa.schema([pa.field("kind", pa.string()), *state_columns, *TOTALS_ARROW_SCHEMA]),
    )
    totals = sums.filter(pl.col("kind") == "totals").select(list(schemas.TOTALS))
    state = RunState(
        sums.filter(pl.col("kind") == "state").select(state_columns.names),
        totals if totals.height else run_state().totals,  # no input rows at all
    )
    # the same finish as every driver; its warning rows join the errors table
    attributes, summary, warnings = finish(state, config=cfg, metadata=metadata)
    if bootstrap is not None:
        attributes, summary = _with_intervals(attributes, summary, tables, bootstrap, seed)
    spark = rows.sparkSession
    finish_warnings = pl.DataFrame(warnings, schema=schemas.ERRORS)
    if warnings:
        arrow = finish_warnings.to_arrow().cast(ERRORS_SCHEMA)
        tables["errors"] = tables["errors"].unionByName(
            spark.createDataFrame(arrow, schema=spark_ddl(ERRORS_SCHEMA)))
    attributes_schema = ATTRIBUTES_SCHEMA
    if bootstrap is not None:
        attributes_schema = attributes_schema.append(pa.field("f1_low", pa.float64())).append(
            pa.field("f1_high", pa.float64()))
    attributes_spark = spark.createDataFrame(
        attributes.to_arrow().cast(attributes_schema), schema=spark_ddl(attributes_schema)
    )
    return SparkResult(
        **tables,
        attributes=attributes,
        attributes_spark=attributes_spark,
        summary=summary,
        scored=scored,
        finish_warnings=finish_warnings,
        manifest=manifest(driver="spark", config=cfg, inputs={}, started=started,
                          n_read={"gt": summary["n_read_gt"], "aio": summary["n_read_aio"]},
                          partition_by=None, num_partitions=partitions, chunk_rows=chunk_rows,
                          by=by),
        metadata=tuple(metadata),
        by=tuple(by),
        state_counts=state.counts,
    )


#: Documents a bootstrapped Spark run may have: their per-attribute counts are resampled on the
#: driver (about 40 attributes x 3 counts x 8 bytes per document, dense below 2^25 cells).
BOOTSTRAP_MAX_DOCUMENTS = 2_000_000


def _with_intervals(attributes: pl.DataFrame, summary: dict[str, Any],
                    tables: dict[str, DataFrame], n_resamples: int, seed: int | None,
                    ) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The bootstrap intervals (bootstrap.py) from the counts summed per (document, attribute)
    in Spark and the documents' RQS, collected to the driver."""
    from pyspark.sql import functions as F

    n_docs = summary["n_documents"]
    if n_docs > BOOTSTRAP_MAX_DOCUMENTS:
        raise ValueError(
            f"bootstrap on Spark resamples on the driver, up to {BOOTSTRAP_MAX_DOCUMENTS:,} "
            f"documents; this run has {n_docs:,}: bootstrap a sample of the documents")
    counts = pl.from_arrow(
        tables["counts"].groupBy("doc_id", "attribute")
        .agg(*[F.sum(c).alias(c) for c in ("tp", "fp", "fn")]).toArrow())
    documents = pl.from_arrow(tables["documents"].select("doc_id", "rqs").toArrow())
    if not counts.height:  # toArrow of no rows keeps no types
        counts = pl.DataFrame(schema={"doc_id": pl.String, "attribute": pl.String,
                                      "tp": pl.Int64, "fp": pl.Int64, "fn": pl.Int64})
    if not documents.height:
        documents = pl.DataFrame(schema={"doc_id": pl.String, "rqs": pl.Float64})
    return with_intervals(attributes, summary, counts, documents, n_resamples, seed)


def _partitions_for(rows: DataFrame, inputs: list[DataFrame]) -> int:
    """Partitions sized to the data: the inputs' own partition count (Spark sizes those to the
    files, about 128 MB each), at least the default parallelism so every core works, at most
    ``spark.sql.shuffle.partitions``. The default of 200 shuffle partitions made 306 documents
    take 95 s on local[2]: 200 tasks, each starting a Python worker."""
    spark = rows.sparkSession
    ceiling = int(spark.conf.get("spark.sql.shuffle.partitions", "200"))
    parallelism = spark.sparkContext.defaultParallelism
    given = sum(df.rdd.getNumPartitions() for df in inputs)
    return max(1, min(ceiling, max(parallelism, given)))


def _to_polars(df: DataFrame, schema: pa.Schema) -> pl.DataFrame:
    """A small Spark result on the driver as Polars, with the declared column types."""
    table = df.toArrow()
    if table.num_rows == 0:
        table = schema.empty_table()
    return pl.from_arrow(table.select(schema.names).cast(schema))


def _two_names(json_column, default: tuple[str, str]) -> tuple[str, str]:
    if json_column is None:
        return default
    if isinstance(json_column, str):
        return json_column, json_column
    gt_col, aio_col = json_column
    return gt_col, aio_col


def _check_columns(df, what: str, id_field: str, json_columns: list[str], safety: str | None):
    """Fail on the driver, before any job, naming the column and what the frame has."""
    from pyspark.sql.types import NumericType, StringType

    types = {f.name: f.dataType for f in df.schema.fields}
    for name, role in [(id_field, "id"), *[(c, "JSON") for c in json_columns]] + (
        [(safety, "safety")] if safety else []
    ):
        if name not in types:
            raise InputError(
                f"{what} DataFrame has no {role} column '{name}'; columns: {sorted(types)}"
            )
    for name in json_columns:
        if not isinstance(types[name], StringType):
            raise InputError(
                f"{what} column '{name}' must hold JSON text (string); got "
                f"{types[name].simpleString()} (convert with pyspark.sql.functions.to_json, "
                "option ignoreNullFields=false to keep null members)"
            )
    if safety and not isinstance(types[safety], NumericType):
        raise InputError(
            f"{what} column '{safety}' must be numeric; got {types[safety].simpleString()}"
        )


def _metadata_columns(df, what: str, metadata: list[str], taken: list[str]) -> tuple[str, ...]:
    """The metadata names that are columns of ``df`` (not its id or JSON columns), checked to
    hold strings or integers, whose text Spark and Python spell alike."""
    from pyspark.sql.types import IntegralType, StringType

    types = {f.name: f.dataType for f in df.schema.fields}
    own = tuple(name for name in metadata if name in types and name not in taken)
    for name in own:
        if not isinstance(types[name], StringType | IntegralType):
            raise InputError(
                f"{what} metadata column '{name}' is {types[name].simpleString()}; metadata "
                f"columns must be strings or integers (cast it to string first)")
    return own


def _metadata_rows(metadata: list[str], own: tuple[str, ...]) -> list:
    """One string column ``_meta_<i>`` per metadata name: the frame's own column, else null
    (the worker reads the member of that name from the JSON)."""
    from pyspark.sql import functions as F

    return [(F.col(_quote(name)) if name in own else F.lit(None)).cast("string")
            .alias(f"_meta_{i}") for i, name in enumerate(metadata)]


def _side_rows(df, side: str, id_field: str, json_col: str, safety: str | None,
               metadata: list[str] = (), own: tuple[str, ...] = ()):
    from pyspark.sql import functions as F

    return df.select(
        F.col(_quote(id_field)).cast("string").alias("doc_id"),
        F.lit(side).alias("side"),
        F.col(_quote(json_col)).alias("json"),
        (F.col(_quote(safety)) if safety else F.lit(None)).cast("double").alias("safety"),
        F.monotonically_increasing_id().alias("row"),
        *_metadata_rows(list(metadata), own),
    )


def _pairs_rows(df, id_field: str, gt_col: str, aio_col: str, safety: str | None,
                metadata: list[str] = (), own: tuple[str, ...] = ()):
    """GT and AIO rows of a pairs frame: a null cell is an absent document; a row with both
    null becomes one GT row with null JSON (an error row: nothing is lost). The frame's own
    metadata columns go with both sides."""
    from pyspark.sql import functions as F

    meta = _metadata_rows(list(metadata), own)
    base = df.select(
        F.col(_quote(id_field)).cast("string").alias("doc_id"),
        F.col(_quote(gt_col)).alias("gt"),
        F.col(_quote(aio_col)).alias("aio"),
        (F.col(_quote(safety)) if safety else F.lit(None)).cast("double").alias("safety"),
        F.monotonically_increasing_id().alias("row"),
        *meta,
    )
    names = [f"_meta_{i}" for i in range(len(meta))]
    gt = base.where(F.col("gt").isNotNull() | F.col("aio").isNull()).select(
        "doc_id", F.lit("gt").alias("side"), F.col("gt").alias("json"), "safety", "row", *names
    )
    aio = base.where(F.col("aio").isNotNull()).select(
        "doc_id", F.lit("aio").alias("side"), F.col("aio").alias("json"), "safety", "row", *names
    )
    return gt.unionByName(aio)


# --- inputs of the command line (declared in cli.py) -----------------------------------------


_FORMATS = {".parquet": "parquet", ".orc": "orc", ".ndjson": "json", ".jsonl": "json",
            ".json": "json"}


def read_source(spark: SparkSession, source: str, fmt: str | None) -> DataFrame:
    if source.startswith("table:"):
        return spark.table(source.removeprefix("table:"))
    fmt = fmt or _FORMATS.get(Path(source.rstrip("/")).suffix.lower(), "parquet")
    return spark.read.format(fmt).load(source)


if __name__ == "__main__":
    # ``python -m jsoneval_polars.spark ...`` is ``jsoneval spark-score ...`` (for spark-submit);
    # run the package's copy of the CLI, so that the function shipped to the workers is pickled
    # by reference to jsoneval_polars.spark, not by value from __main__
    from jsoneval_polars.cli import main as _main

    raise SystemExit(_main(["spark-score", *sys.argv[1:]]))
