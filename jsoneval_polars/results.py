"""Result tables from an in-memory :class:`~jsoneval_polars.pipeline.Result` or a results directory.

A results directory is what every driver writes (layout.py): ``<table>/**/*.parquet`` per
table (Hive partition folders allowed), ``summary.json`` and ``manifest.json``.
:func:`read_results` opens such a directory lazily; the consumers (``duckdb_sql``, ``diff``,
``report``) take either form through :func:`as_tables`, so a run scored in this process and
one scored yesterday are handled alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import polars as pl

from .layout import MANIFEST_FILE, SUMMARY_FILE, TABLES
from .pipeline import Result, summary_line

__all__ = ["ResultTables", "ResultSource", "as_tables", "read_results", "table_location"]


def table_location(directory: str | Path, table: str) -> tuple[Path, bool] | None:
    """``(path, is_folder)`` of a table in a results directory, or None when it is not there
    (``is_folder`` is False only for a single ``<table>.parquet`` of an older layout)."""
    d = Path(directory)
    single = d / f"{table}.parquet"
    if single.is_file():
        return single, False
    folder = d / table
    if folder.is_dir() and any(folder.rglob("*.parquet")):
        return folder, True
    return None


@dataclass(frozen=True, repr=False)
class ResultTables:
    """The result tables of a stored run, read lazily from its directory.

    Same reading surface as :class:`Result`: ``lazy(table)``, the eager ``documents``,
    ``fields``, ``attributes``, ``alignments``, ``errors`` and the ``summary`` dict.
    """

    directory: Path
    summary: dict[str, Any]
    manifest: dict[str, Any]
    _frames: dict[str, pl.LazyFrame] = field(repr=False)
    timings: dict[str, float] = field(default_factory=dict)  # of the run that wrote it, if known

    def __repr__(self) -> str:
        return f"ResultTables({str(self.directory)!r}): {summary_line(self.summary)}"

    def lazy(self, table: str) -> pl.LazyFrame:
        if table not in self._frames:
            raise KeyError(f"no table {table!r}; tables: {', '.join(self._frames)}")
        return self._frames[table]

    @property
    def documents(self) -> pl.DataFrame:
        return self.lazy("documents").collect()

    @property
    def fields(self) -> pl.DataFrame:
        return self.lazy("fields").collect()

    @property
    def attributes(self) -> pl.DataFrame:
        return self.lazy("attributes").collect()

    @property
    def alignments(self) -> pl.DataFrame:
        return self.lazy("alignments").collect()

    @property
    def errors(self) -> pl.DataFrame:
        return self.lazy("errors").collect()

    @property
    def counts(self) -> pl.DataFrame:
        return self.lazy("counts").collect()

    @property
    def calibration(self) -> pl.DataFrame | None:
        """The calibration table (calibration.py) when the run had confidences, else None."""
        return self._frames["calibration"].collect() if "calibration" in self._frames else None

    def attributes_by(self, by: str | list[str]) -> pl.DataFrame:
        """The attribute table per slice of metadata columns, from the stored counts."""
        from .rates import attribute_rates

        return attribute_rates(self.counts, by=[by] if isinstance(by, str) else by)


ResultSource = Union[Result, ResultTables, str, Path]


def read_results(directory: str | Path) -> ResultTables:
    """Open a results directory written by :meth:`Result.write` (or ``jsoneval score --out``).

    Raises ``FileNotFoundError`` naming what is missing when the directory is not a results
    directory.
    """
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"results directory {str(d)!r} does not exist")
    manifest_path = d / MANIFEST_FILE
    manifest = (json.loads(manifest_path.read_text(encoding="utf-8"))
                if manifest_path.is_file() else {})
    partition = manifest.get("partition_by")
    # partition values are strings (metadata columns): do not let "1" become an integer
    hive_schema = {partition: pl.String} if partition else None
    frames: dict[str, pl.LazyFrame] = {}
    missing = []
    for name in TABLES:
        loc = table_location(d, name)
        if loc is None:
            if name != "counts":  # runs written before counts were stored have none
                missing.append(f"{name}/")
            continue
        path, is_folder = loc
        # the files listed, never a glob pattern: an output path may hold '[' or '*'
        files = sorted(path.rglob("*.parquet")) if is_folder else [path]
        frames[name] = pl.scan_parquet(files, hive_partitioning=is_folder, glob=False,
                                       hive_schema=hive_schema if is_folder else None)
    for name in ("calibration",):  # optional tables, present when the run computed them
        loc = table_location(d, name)
        if loc is not None:
            files = sorted(loc[0].rglob("*.parquet")) if loc[1] else [loc[0]]
            frames[name] = pl.scan_parquet(files, glob=False)
    if partition and "counts" in frames:
        # stored per partition; the run's attribute table is summed from the counts
        from .rates import attribute_rates

        frames["attributes"] = attribute_rates(frames["counts"])
    summary_path = d / SUMMARY_FILE
    if not summary_path.is_file():
        missing.append(SUMMARY_FILE)
    if missing:
        present = sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) or ["nothing"]
        raise FileNotFoundError(
            f"{str(d)!r} is not a complete results directory: missing {', '.join(missing)} "
            f"(it holds {', '.join(present[:12])}); write one with Result.write(dir) or "
            "`jsoneval score --out dir`"
        )
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    return ResultTables(directory=d, summary=summary, manifest=manifest, _frames=frames)


def as_tables(source: ResultSource) -> Result | ResultTables:
    """A :class:`Result` or :class:`ResultTables` as is; a path goes to :func:`read_results`."""
    if isinstance(source, Result | ResultTables):
        return source
    if isinstance(source, str | Path):
        return read_results(source)
    raise TypeError(
        f"expected a Result, ResultTables or a results directory path; got {type(source).__name__}"
    )
