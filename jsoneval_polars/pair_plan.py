"""The pair plan of two files of any size, in bounded memory (SPEC §9 pairing).

The files driver's scan hands over, per side and in line order, one small table per chunk of
the file: each record's line, doc_id, has_id, byte offset and length. Up to
:data:`BUCKET_RECORDS` records a side they stay in memory and are paired at once by
:func:`ingest.pair_records`, the pairing every driver uses. Beyond that, each chunk's rows are
spilled to one of K Arrow IPC files per side, chosen by a hash of the doc_id, so every record
of one id, on both sides, lands in the same bucket; the buckets are then paired one at a time
by the same :func:`pair_records`, which compares the ids themselves (ids whose hashes collide
only share a bucket). Duplicate ids, records without an id and one-sided documents are
therefore reported exactly as for the whole input; the pairing error rows are put back in the
whole input's order (GT then AIO, by line). Memory holds one bucket's records at a time
(10M pairs: K = 10); the pair plans of the buckets go to disk too and are read back one at a
time while scoring.

Positional pairing (a side without any id) needs the global record order and holds both
sides' records (line, offset, length, id) in memory: a documented limit (DECISIONS).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Self

import polars as pl
import pyarrow as pa
import pyarrow.ipc

from .ingest import SCAN_SCHEMA, ErrorRows, pair_records

# records per side per bucket. Pairing 1M records a side takes ~150 MB (records of both sides
# and the plan); the scan's worker batches need about 1 GB beside it (benchmarks/scale.py)
BUCKET_RECORDS = 1_000_000
SIDES = ("gt", "aio")


class PairPlan:
    """Records of both sides in, the pair plan out, bucket by bucket.

    Use as a context manager: the spill directory (created under ``spill_parent`` only when
    the input needs buckets) is removed on exit, also on an error or Ctrl-C.
    """

    def __init__(self, spill_parent: str | Path, *, bucket_records: int | None = None) -> None:
        self.bucket_records = bucket_records or BUCKET_RECORDS
        self.buckets = 1
        self.spill_parent = Path(spill_parent)
        self.dir: Path | None = None
        self.has_id = dict.fromkeys(SIDES, False)
        self.n_records = dict.fromkeys(SIDES, 0)
        self.n_pairs = 0
        self._parts: dict[str, list[pl.DataFrame]] = {s: [] for s in SIDES}
        # the scan's columns, also when no chunk comes (two empty files)
        self._schema: dict[str, pl.DataType] = dict(SCAN_SCHEMA)
        self._writers: dict[tuple[str, int], pa.ipc.RecordBatchFileWriter] = {}
        self._plans: list[pl.DataFrame | Path] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def expect(self, n_records: int) -> None:
        """Size the buckets, before the first :meth:`add`, for at most ``n_records`` records a
        side (a line count will do)."""
        self.buckets = max(1, -(-n_records // self.bucket_records))

    @property
    def spilled(self) -> bool:
        return self.buckets > 1

    def add(self, side: str, table: pl.DataFrame) -> None:
        """The next chunk of ``side``'s records, in line order."""
        self.has_id[side] |= bool(table["has_id"].any())
        self.n_records[side] += table.height
        if not self.spilled:
            self._parts[side].append(table)
            return
        # nulls (records without an id) go to bucket 0; pair_records reports them there
        bucket = (pl.col("doc_id").hash(seed=0) % self.buckets).fill_null(0).alias("_bucket")
        for (k,), part in table.with_columns(bucket).partition_by(
            "_bucket", as_dict=True, include_key=False
        ).items():
            self._write(("records", side, k), part)

    def pair(self, id_field: str, files: Mapping[str, str | None], errors: ErrorRows) -> int:
        """Pair every bucket (plans kept for :meth:`plans`); the pairing error rows go to
        ``errors`` in the whole input's order. Returns the number of pairs."""
        for writer in self._writers.values():  # the records are all in
            writer.close()
        self._writers.clear()
        by_id = self.has_id["gt"] and self.has_id["aio"]
        if not self.spilled or not by_id:
            plan = pair_records(self._side("gt"), self._side("aio"), id_field, files, errors)
            self._parts = {s: [] for s in SIDES}
            self._plans, self.n_pairs = [plan], plan.height
            return self.n_pairs
        found = ErrorRows(strict=False)  # sorted and handed on below (strict: the first raises)
        for k in range(self.buckets):
            plan = pair_records(*(self._bucket(side, k) for side in SIDES), id_field, files,
                                found, by_id=True)
            self.n_pairs += plan.height
            self._plans.append(self._write(("plan", k), plan))
        for row in sorted(found.rows, key=lambda r: (SIDES.index(r["source"]), r["line"])):
            errors.add(*(row[c] for c in ("source", "file", "line", "doc_id", "error",
                                          "severity")))
        return self.n_pairs

    def plans(self) -> Iterator[pl.DataFrame]:
        """The pair plan of each bucket in turn (:func:`pair_records` columns), read back from
        disk when spilled; together one row per pair."""
        while self._plans:
            plan = self._plans.pop(0)
            yield plan if isinstance(plan, pl.DataFrame) else _read(plan)

    def _side(self, side: str) -> pl.DataFrame:
        """All records of one side in line order."""
        if not self.spilled:
            return pl.concat(self._parts[side]) if self._parts[side] else pl.DataFrame(
                schema=self._schema)
        return pl.concat([self._bucket(side, k) for k in range(self.buckets)]).sort("line")

    def _bucket(self, side: str, k: int) -> pl.DataFrame:
        path = None if self.dir is None else self.dir / f"records-{side}-{k}.arrow"
        if path is None or not path.exists():  # no record of this side hashed here
            return pl.DataFrame(schema=self._schema)
        return _read(path)

    def _write(self, key: tuple, table: pl.DataFrame) -> Path:
        """Append ``table`` to the IPC file of ``key`` (opened on first use)."""
        if self.dir is None:
            self.spill_parent.mkdir(parents=True, exist_ok=True)
            self.dir = Path(tempfile.mkdtemp(prefix=".jsoneval-spill-", dir=self.spill_parent))
        path = self.dir / ("-".join(map(str, key)) + ".arrow")
        arrow = table.to_arrow()
        writer = self._writers.get(key)
        if writer is None:
            writer = self._writers[key] = pa.ipc.new_file(str(path), arrow.schema)
        writer.write_table(arrow)
        if key[0] == "plan":
            writer.close()  # one write per plan file
            del self._writers[key]
        return path


def _read(path: Path) -> pl.DataFrame:
    # read, not memory-mapped: mapped pages would count in the resident memory we bound
    with pa.OSFile(str(path)) as f:
        return pl.from_arrow(pa.ipc.open_file(f).read_all())
