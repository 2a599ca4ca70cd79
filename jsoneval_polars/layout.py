"""The one results layout, written by every driver and read by every command.

::

    OUT/<table>/part-NNNNNN.parquet                  documents, fields, attributes,
    OUT/<table>/<column>=<value>/part-NNNNNN.parquet  alignments, errors, counts
    OUT/summary.json                                  the whole run (SPEC §7)
    OUT/manifest.json                                 version, config, inputs, times, partition

(plus ``attributes_by/`` when a run is sliced with ``by``). A run is written into a staging
folder inside ``OUT`` and then swapped in: a failed run leaves the previous one intact, and
during the swap ``summary.json``, which every reader requires, is removed first and put back
last, so a half-swapped directory never looks complete. A new run replaces every table of the
previous run, in this layout or an older one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from .config import Config
from .exits import first_line
from .schemas import NEVER_NULL

#: The tables of a run, in the order the commands list them.
TABLES = ("documents", "fields", "attributes", "alignments", "errors", "counts")
SUMMARY_FILE, MANIFEST_FILE = "summary.json", "manifest.json"
#: Rows per Parquet row group, Polars' own default, whichever library writes the part.
_ROW_GROUP = 512**2
_FILTERED_BY = ("doc_id",)  # the one column given min/max statistics in a dictionary part
#: Never tried as a dictionary: free text, nearly every value distinct, and the similarities,
#: whose dictionary costs more to build (a hash per float) than it saves once compressed.
_PLAIN_VALUES = ("gt_value", "aio_value", "similarity", "confidence")
#: Values pyarrow encodes at a time: its default (1,024) pays a dictionary column's statistics
#: (a Unique and a Take of the referenced values) and the level encoding per 1,024 rows.
_WRITE_BATCH = 1 << 16
#: Every part's codec, whichever library writes it: Spark's, DuckDB's and pyarrow's default,
#: which every Parquet reader knows (DECISIONS 134).
COMPRESSION = "snappy"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Hive's (and Polars', DuckDB's) null folder
_EXTRA_TABLES = ("attributes_by", "calibration")  # written when asked for
_OLD_ENTRIES = ("summary",)  # an older layout's per-partition summaries


def partition_folder(column: str, value: str | None) -> str:
    """``column=value``: null as Hive writes it; the value percent-encoded ('/' cannot appear)."""
    return f"{column}={NULL_PARTITION if value is None else quote(str(value), safe='')}"


def write_part(
    staging: str | Path, table: str, frame: pl.DataFrame, part: int,
    partition_by: str | None = None, *, on_this_thread: bool = False,
) -> None:
    """Write one part of a table: ``table/part-NNNNNN.parquet``, or one file per value of
    ``partition_by`` under ``table/<column>=<value>/`` (the column lives in the folder name;
    a frame without the column goes to the null partition). ``on_this_thread``: a batch
    thread's part, which pyarrow writes on the calling thread whenever Parquet states its
    types in full (DECISIONS 133); else only a part with Enum columns is pyarrow's."""
    folder, name = Path(staging) / table, f"part-{part:06d}.parquet"
    never_null = NEVER_NULL.get(table, ())
    if partition_by is None:
        folder.mkdir(parents=True, exist_ok=True)
        _write_parquet(frame, folder / name, never_null, on_this_thread)
        return
    if partition_by not in frame.columns:
        frame = frame.with_columns(pl.lit(None, pl.String).alias(partition_by))
    groups = (
        frame.partition_by(partition_by, as_dict=True, maintain_order=True) if frame.height
        else {(None,): frame}  # an empty part keeps the table's schema readable
    )
    for (value,), rows in groups.items():
        target = folder / partition_folder(partition_by, value)
        target.mkdir(parents=True, exist_ok=True)
        _write_parquet(rows.drop(partition_by), target / name, never_null, on_this_thread)


def _write_parquet(frame: pl.DataFrame, path: Path, never_null: Sequence[str] = (),
                   on_this_thread: bool = False) -> None:
    """A part with Enum columns by pyarrow (:func:`_write_dictionaries`), as is a batch
    thread's part (``on_this_thread``): Polars' writer hands a part to its streaming engine's
    threads while the batch thread waits. A whole table of the in-memory driver is Polars'
    (100k pairs: 1.17 against 1.50 s by pyarrow), as is any part holding a type only the
    Arrow schema states in full. Polars reports a failed write (a full disk, a file size
    limit) as a Polars error, pyarrow as an OSError without the file; it is an OSError naming
    the file here, so every command reports it as an output error."""
    enums = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.Enum)]
    plain = all(isinstance(dtype, _PLAIN_PARQUET) for dtype in frame.dtypes)
    if enums and not plain:
        frame, enums = frame.with_columns(pl.col(enums).cast(pl.String)), []
    try:
        if enums or (on_this_thread and plain):
            _write_dictionaries(frame, path, never_null)
        else:
            frame.write_parquet(path, compression=COMPRESSION)
    except pl.exceptions.PolarsError as exc:
        raise OSError(errno.EIO, first_line(exc).rpartition("IO error: ")[2], str(path)) from None


#: Types a Parquet file states in full without the Arrow schema beside it.
_PLAIN_PARQUET = (pl.Enum, pl.String, pl.Boolean, pl.Float64, pl.Float32, pl.Int64, pl.Int32,
                  pl.Int16, pl.Int8, pl.UInt64, pl.UInt32, pl.UInt16, pl.UInt8)


def _write_dictionaries(frame: pl.DataFrame, path: Path, never_null: Sequence[str]) -> None:
    """Write a part by pyarrow: its Enum columns (core.score_batch's ``dictionary``) become
    Parquet dictionaries as they are, codes and values, with no string hashed again. The Arrow
    schema is left out of the file, so that every reader sees plain strings, as in every other
    part: it would make this part's columns Enums of this part's values, which no other part
    shares. Min/max statistics are written for ``doc_id`` only, the one label whose values
    differ from part to part: every part holds nearly every path, attribute, bucket, strategy
    and cell, so their min/max prune nothing, and each costs ≈ 3 ms of a 7,000-pair
    ``fields`` part. The free text of gt_value and aio_value is not tried as a dictionary
    (pyarrow hashes every value, then falls back to plain pages), nor are the similarities.
    The ``never_null`` columns (schemas.NEVER_NULL) are REQUIRED when they hold no null, so
    no definition levels are written for them. ``benchmarks/write_parts.py`` (one thread):
    that part in 0.08-0.11 s, against 0.10-0.14 s with every label's statistics and 0.13-0.17 s
    for Polars' writer on the strings."""
    import pyarrow.parquet as pq  # Polars' writer would store each part's Enums in the file

    try:
        pq.write_table(_arrow_table(frame, never_null), path, compression=COMPRESSION,
                       store_schema=False, row_group_size=_ROW_GROUP,
                       write_batch_size=_WRITE_BATCH,
                       write_statistics=[c for c in _FILTERED_BY if c in frame.columns],
                       use_dictionary=[c for c in frame.columns if c not in _PLAIN_VALUES])
    except OSError as exc:  # "Error writing bytes to file. Detail: [errno 27] File too large"
        reason = str(exc.strerror or exc).rpartition("Detail: ")[2]
        raise OSError(exc.errno or errno.EIO, reason, str(path)) from None


def _arrow_table(frame: pl.DataFrame, never_null: Sequence[str] = ()) -> Any:
    """A dictionary part as pyarrow writes it: the Enums as dictionaries of large strings
    (pyarrow cannot write a dictionary of string views), the other columns as Polars holds
    them, string views included, where pyarrow writes those (21 and later). Polars otherwise
    copies every text into offsets and bytes first: ≈ 5 ms of a 7,000-pair ``fields`` part's
    60 (benchmarks/RESULTS.md); the file is the same. A ``never_null`` column without a null
    is declared not nullable: Parquet's REQUIRED, by a schema given to the same columns (a
    ``cast`` would load pyarrow.compute, 30 ms of a run's first batch, to change nothing)."""
    import pyarrow as pa

    if int(pa.__version__.split(".")[0]) < 21:
        table = frame.to_arrow()
    else:
        enums = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.Enum)]
        dictionaries = frame.select(enums).to_arrow()
        rest = frame.drop(enums).to_arrow(compat_level=pl.CompatLevel.newest())
        table = pa.table([(dictionaries if name in enums else rest).column(name)
                          for name in frame.columns], names=frame.columns)
    required = {c for c in never_null if c in frame.columns and not frame[c].null_count()}
    schema = pa.schema([f.with_nullable(f.name not in required) for f in table.schema])
    return pa.Table.from_arrays(table.columns, schema=schema)


def check_partition_column(column: str, values: pl.Series, n_documents: int,
                           attributes: Sequence[str]) -> None:
    """A partition column no document has is a misspelt name (one Hive default partition
    would hold the whole run): an error naming the closest top-level member."""
    if n_documents and values.null_count() == values.len():
        from .config import _hint
        from .ingest import InputError

        top = sorted({a.split(".")[0].split("[")[0] for a in attributes})
        raise InputError(f"cannot partition by '{column}': none of the {n_documents} documents "
                         f"has one.{_hint(column, top)}")


def manifest(
    *, driver: str, config: Config, inputs: Mapping[str, Any], n_read: Mapping[str, int],
    started: datetime, partition_by: str | None, by: Sequence[str] = (),
    **extra: Any,
) -> dict[str, Any]:
    """What ``manifest.json`` records about a run."""
    from . import __version__

    def describe(side: str) -> dict[str, Any]:
        source = inputs.get(side)
        path = str(source) if isinstance(source, str | os.PathLike) else None
        entry: dict[str, Any] = {"path": path, "records": n_read.get(side, 0)}
        if path is None:
            entry["kind"] = None if source is None else type(source).__name__
        elif Path(path).is_file():
            entry["bytes"] = Path(path).stat().st_size
        return entry

    return {
        "package": "jsoneval_polars",
        "version": __version__,
        "driver": driver,
        "config": _plain(dataclasses.asdict(config)),
        "inputs": {side: describe(side) for side in ("gt", "aio")},
        "started": started.isoformat(),
        "finished": now().isoformat(),
        "partition_by": partition_by,
        "by": list(by),
        **extra,
    }


def now() -> datetime:
    return datetime.now(timezone.utc)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return str(value) if isinstance(value, str) else value
    return str(value)


def _check_replaceable(out: Path) -> None:
    """A FileExistsError when ``out`` holds an entry a run replaces (a table folder,
    ``summary.json``...) and is not a results directory (its manifest or, before manifests,
    its summary is not this package's): ``--out .`` in a folder holding ``documents/`` of its
    own would otherwise move that folder away with the previous run's tables."""
    names = (*TABLES, *_EXTRA_TABLES, *_OLD_ENTRIES)
    entries = [entry for name in names for entry in (out / name, out / f"{name}.parquet")
               if entry.exists()]
    entries += [out / name for name in (SUMMARY_FILE, MANIFEST_FILE) if (out / name).exists()]
    if not entries or _is_results(out):
        return
    listed = ", ".join(e.name + ("/" if e.is_dir() else "") for e in entries)
    raise FileExistsError(f"results directory {str(out)!r} holds {listed} that no jsoneval run "
                          "wrote; give a new or empty directory")


def _is_results(out: Path) -> bool:
    """Whether ``out`` holds a run's manifest, or an older run's summary (a partitioned one
    wrote ``summary/<column>=<value>/summary.json``)."""
    if any((out / "summary").glob("*=*/summary.json")):
        return True
    for name, key, value in ((MANIFEST_FILE, "package", "jsoneval_polars"),
                             (SUMMARY_FILE, "n_documents", None)):
        try:
            data = json.loads((out / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and key in data and (value is None or data[key] == value):
            return True
    return False


class RunWriter:
    """Writes one run into a staging folder of ``out``; :meth:`commit` swaps it in.

    Use as a context manager: leaving it by an exception discards the staging folder, and
    ``out`` too when this run made it and nothing else was put in it (a failed first run
    leaves no empty results directory behind).
    Batches on other threads (or processes) may write parts into :attr:`staging` with
    :func:`write_part`.
    """

    def __init__(self, out: str | Path, *, partition_by: str | None = None) -> None:
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise FileExistsError(f"results directory {str(self.out)!r} is a file")
        self.made_out = not self.out.exists()
        if not self.made_out:
            _check_replaceable(self.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.staging = Path(tempfile.mkdtemp(prefix=".jsoneval-staging-", dir=self.out))
        self.partition_by = partition_by

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
        if exc_type is not None and self.made_out:
            with contextlib.suppress(OSError):  # not empty: something else was put there
                self.out.rmdir()

    def write(self, table: str, frame: pl.DataFrame, part: int = 0, *,
              partitioned: bool = True) -> None:
        """Write one part of ``table`` (in Hive folders when the run is partitioned, unless
        ``partitioned`` is False: ``attributes_by`` is one table for the whole run)."""
        write_part(self.staging, table, frame, part, self.partition_by if partitioned else None)

    def commit(self, summary: Mapping[str, Any], manifest: Mapping[str, Any]) -> Path:
        """Swap the staged tables in with ``summary.json`` and ``manifest.json``."""
        for name, data in ((SUMMARY_FILE, summary), (MANIFEST_FILE, manifest)):
            (self.staging / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        trash = self.staging / f".old-{uuid.uuid4().hex}"
        trash.mkdir()
        # the previous run stops looking complete before anything of it is replaced
        for name in (SUMMARY_FILE, MANIFEST_FILE):
            (self.out / name).unlink(missing_ok=True)
        for name in (*TABLES, *_EXTRA_TABLES, *_OLD_ENTRIES):
            for old in (self.out / name, self.out / f"{name}.parquet"):
                if old.exists():
                    os.replace(old, trash / old.name)
        for entry in self.staging.iterdir():
            if entry not in (trash,) and entry.name not in (SUMMARY_FILE, MANIFEST_FILE):
                os.replace(entry, self.out / entry.name)
        os.replace(self.staging / MANIFEST_FILE, self.out / MANIFEST_FILE)
        os.replace(self.staging / SUMMARY_FILE, self.out / SUMMARY_FILE)  # complete from here
        shutil.rmtree(self.staging, ignore_errors=True)
        return self.out
