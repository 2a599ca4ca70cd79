"""DuckDB: the result tables as SQL views, and scoring straight from a DuckDB table or query.

``duckdb`` is imported by the caller (it hands us a connection); this module never imports it
at import time, so ``import jsoneval_polars`` stays light.

>>> import duckdb
>>> from jsoneval_polars import evaluate
>>> con = duckdb.connect()
>>> r = evaluate([{"doc_id": "a", "total": 10}], [{"doc_id": "a", "total": 11}])
>>> register(con, r)
['documents', 'fields', 'attributes', 'alignments', 'errors', 'counts', 'summary']
>>> con.sql("SELECT path, cell FROM fields").fetchall()
[('total', 'FP+FN')]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import polars as pl

from .pipeline import TABLES, Result, evaluate
from .results import ResultSource, as_tables, table_location

if TYPE_CHECKING:  # pragma: no cover
    import duckdb

__all__ = ["VIEWS", "evaluate_duckdb", "query_results", "register"]

#: The names :func:`register` creates (with its ``prefix``): the tables and ``summary``.
VIEWS: tuple[str, ...] = (*TABLES, "summary")

# a table name, optionally qualified (db.schema.table), each part bare or "quoted"
_PART = r'(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_IDENTIFIER = re.compile(rf"^{_PART}(?:\.{_PART}){{0,2}}$")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def register(
    con: duckdb.DuckDBPyConnection,
    source: ResultSource,
    *,
    prefix: str = "",
    materialize: bool = False,
) -> list[str]:
    """Make ``documents``, ``fields``, ``attributes``, ``alignments``, ``errors``, ``counts``
    and a one-row ``summary`` queryable on ``con``, and return their names.

    ``source`` is a :class:`Result` (its frames are handed to DuckDB as Arrow tables, no copy
    to disk) or a results directory (views over its Parquet files, read by DuckDB itself).
    ``prefix`` namespaces the names, so two runs can sit side by side (``prefix="a_"`` gives
    ``a_fields``, ...). The views are temporary: they belong to this connection and are not
    saved in a database file. ``materialize=True`` instead copies each table into the
    connection's database as ``CREATE OR REPLACE TABLE``, which a database file keeps.
    """
    tables = as_tables(source)
    names = []
    for table in TABLES:
        name = prefix + table
        if isinstance(tables, Result):
            _register_arrow(con, name, getattr(tables, table).to_arrow(), materialize)
        else:
            path, is_folder = table_location(tables.directory, table)
            path = path.resolve()
            files = _literal(str(path / "**" / "*.parquet"))
            # partition values are metadata strings: "1" stays a string
            scan = (
                f"read_parquet({files}, hive_partitioning = true, hive_types_autocast = false)"
                if is_folder
                else f"read_parquet({_literal(str(path))})"
            )
            kind = "TABLE" if materialize else "TEMP VIEW"
            con.execute(f"CREATE OR REPLACE {kind} {_ident(name)} AS SELECT * FROM {scan}")
        names.append(name)
    summary = pl.DataFrame([tables.summary])
    _register_arrow(con, prefix + "summary", summary.to_arrow(), materialize)
    names.append(prefix + "summary")
    return names


def _register_arrow(con, name: str, arrow, materialize: bool) -> None:
    if not materialize:
        con.execute(f"DROP VIEW IF EXISTS {_ident(name)}")
        con.register(name, arrow)
        return
    staging = f"__jsoneval_staging_{name}"
    con.register(staging, arrow)
    try:
        con.execute(f"CREATE OR REPLACE TABLE {_ident(name)} AS SELECT * FROM {_ident(staging)}")
    finally:
        con.unregister(staging)


def _relation(con, query_or_table):
    if not isinstance(query_or_table, str):
        return query_or_table  # a DuckDBPyRelation (or anything with to_arrow_table)
    text = query_or_table.strip()
    if _IDENTIFIER.match(text):
        return con.table(text)
    rel = con.sql(text)
    if rel is None:
        raise ValueError(f"the query returned no rows to score (is it a SELECT?): {text[:80]!r}")
    return rel


def evaluate_duckdb(
    con: duckdb.DuckDBPyConnection,
    query_or_table: Any,
    *,
    id_column: str = "doc_id",
    gt_column: str = "gt",
    aio_column: str = "aio",
    safety_column: str | None = None,
    config: Any = None,
    semantic_scorer: Any = None,
    strict: bool = False,
    bootstrap: int | None = None,
    seed: int | None = None,
) -> Result:
    """Score the documents of a DuckDB table, view or query (or a ``DuckDBPyRelation``).

    One row per document: ``id_column`` (any type, read as text), ``gt_column`` and
    ``aio_column`` holding JSON text (``VARCHAR`` or ``JSON``; raw model text in the AIO column
    goes through extraction, SPEC §8) or ``STRUCT`` values. A NULL cell means that side is
    missing, so the rows of a ``FULL JOIN`` of a GT table and an AIO table score as GT-only
    and AIO-only documents. ``safety_column`` names an optional per-document safety score.
    The rest is :func:`evaluate`'s.
    """
    rel = _relation(con, query_or_table)
    frame = pl.from_arrow(rel.to_arrow_table())
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - from_arrow of a table
        frame = frame.to_frame()
    wanted = {"id_column": id_column, "gt_column": gt_column, "aio_column": aio_column}
    if safety_column is not None:
        wanted["safety_column"] = safety_column
    for option, column in wanted.items():
        if column not in frame.columns:
            raise ValueError(
                f"{option}={column!r} is not a column of the DuckDB result; columns: "
                f"{', '.join(frame.columns)}{_hint(column, frame.columns)}"
            )
    ids = pl.col(id_column).cast(pl.String).alias("doc_id")
    gt, aio = (
        frame.filter(pl.col(c).is_not_null()).select(ids, pl.col(c).alias("document"))
        for c in (gt_column, aio_column)
    )
    safety = None
    if safety_column is not None:
        safety = frame.select(ids, pl.col(safety_column).cast(pl.Float64).alias("safety"))
    return evaluate(
        gt, aio, config=config, id_field="doc_id", json_column="document", safety=safety,
        semantic_scorer=semantic_scorer, strict=strict, bootstrap=bootstrap, seed=seed,
    )


def _hint(name: str, options: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, options, n=1)
    return f". Hint: did you mean {close[0]!r}?" if close else ""


def query_results(source: ResultSource, sql: str, *, database: str | None = None) -> pl.DataFrame:
    """Run ``sql`` over a run's tables (see :func:`register`) and return the answer as Polars.

    ``database`` opens that DuckDB file (read-only) so the query can join your own tables;
    otherwise an in-memory database is used.
    """
    import duckdb

    if not sql.strip():
        raise ValueError("the query is empty")
    con = duckdb.connect(database, read_only=True) if database else duckdb.connect()
    try:
        names = register(con, source)
        try:
            rel = con.sql(sql)
        except duckdb.CatalogException as exc:
            if "Table with name" not in str(exc):
                raise
            # a misspelt table: name the run's own (DuckDB's own hint is a second line)
            raise duckdb.CatalogException(
                f"{str(exc).splitlines()[0]} The run's tables: {', '.join(names)}") from None
        if rel is None:
            return pl.DataFrame()
        out = pl.from_arrow(rel.to_arrow_table())
        return out if isinstance(out, pl.DataFrame) else out.to_frame()
    finally:
        con.close()
