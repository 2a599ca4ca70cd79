"""The JSON-text column of a table input, as a batch reads it (:class:`ingest.TablePlan`).

A table in memory (a Polars frame, an Arrow producer) keeps its own column (:class:`ColumnTexts`),
as do table files of at most :data:`SPILL_ABOVE` bytes. Larger Parquet or Arrow IPC files read
by ``jsoneval score`` are read a record batch at a time and their texts written end to end to a
spill file beside the results (:func:`spill_file`), so that the run holds the ids, the metadata
and two integers per row, not the texts: 1M pairs of ~1 KB documents held 2.7 GB of text before
(DECISIONS 97). A batch reads its rows back by offset, as the NDJSON
driver reads its lines (:func:`flatten.read_spans`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from .flatten import TextSpans, read_spans

#: Rows per record batch read from a table file (≈ 64 MB of ~1 KB documents).
CHUNK_ROWS = 1 << 16
#: Table files of at most this many bytes in all (uncompressed) are read whole, as a table in
#: memory is: spilling writes and reads the texts once more (≈ 0.5 s for the 220 MB of 100k
#: pairs here), which bounds the memory only where it matters.
SPILL_ABOVE = 256 << 20


class ColumnTexts:
    """The texts of a table in memory: its own column, as UTF-8 bytes (no copy)."""

    def __init__(self, column: pl.Series) -> None:
        self.column = column.cast(pl.Binary)

    def take(self, rows: pl.Series) -> list[bytes | None]:
        return self.column.gather(rows).to_list()

    def one(self, row: int) -> bytes:
        return self.column[row]


class SpilledTexts:
    """The texts of a table file, end to end in ``path``: row ``i`` is ``lengths[i]`` bytes at
    ``offsets[i]`` (a null cell: 0 bytes)."""

    def __init__(self, path: Path, offsets: pl.Series, lengths: pl.Series) -> None:
        self.path, self.offsets, self.lengths = path, offsets, lengths

    def take(self, rows: pl.Series) -> TextSpans:
        """The texts of these rows (a null row, a side the pair does not have: null)."""
        return read_spans(self.path, self.offsets.gather(rows), self.lengths.gather(rows))

    def one(self, row: int) -> bytes:
        with open(self.path, "rb") as f:
            return os.pread(f.fileno(), self.lengths[row], self.offsets[row])


class TableFile:
    """A Parquet or Arrow IPC file, read column by column and a record batch at a time."""

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path, self.is_parquet = path, path.suffix.lower() == ".parquet"
        if self.is_parquet:
            with pq.ParquetFile(path) as f:
                self.schema = pl.from_arrow(f.schema_arrow.empty_table()).schema
                self.height = f.metadata.num_rows
                #: bytes of the table uncompressed (Parquet's own figure; an IPC file's size)
                self.size = sum(f.metadata.row_group(i).total_byte_size
                                for i in range(f.metadata.num_row_groups))
        else:
            # mapped, so that counting the rows reads the batches' headers only
            with pa.memory_map(str(path)) as source, pa.ipc.open_file(source) as reader:
                self.schema = pl.from_arrow(reader.schema.empty_table()).schema
                self.height = sum(reader.get_batch(i).num_rows
                                  for i in range(reader.num_record_batches))
            self.size = path.stat().st_size

    @property
    def columns(self) -> list[str]:
        return list(self.schema)

    def read_all(self) -> pl.DataFrame:
        read = pl.read_parquet if self.is_parquet else pl.read_ipc
        return read(self.path)

    def read(self, columns: list[str]) -> pl.DataFrame:
        """These columns of every row (the ids and metadata: small beside the texts)."""
        if not columns:
            return pl.DataFrame()
        parts = [pl.from_arrow(b) for b in self._batches(columns)]
        return (pl.concat(parts) if parts
                else pl.DataFrame(schema={c: self.schema[c] for c in columns}))

    def _batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """The file opened for one pass only: an open Parquet reader holds its last row
        group's buffers (180 MB of a 1M-row file's texts), which no later step reads."""
        import pyarrow.parquet as pq

        if self.is_parquet:
            with pq.ParquetFile(self.path) as f:
                yield from f.iter_batches(batch_size=CHUNK_ROWS, columns=columns)
            return
        with pa.ipc.open_file(pa.OSFile(str(self.path))) as reader:
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i).select(columns)

    def column_chunks(self, name: str) -> Iterator[pa.Array]:
        for batch in self._batches([name]):
            yield batch.column(0)


def spill_file(table: TableFile, column: str, folder: Path,
               each_chunk: Callable[[int, pl.Series], None]) -> SpilledTexts:
    """Write the texts of ``column`` end to end to a file in ``folder``, a record batch at a
    time, calling ``each_chunk(first row, the chunk's cells)`` on each batch (the plan reads
    its null and unreadable cells there)."""
    fd, name = tempfile.mkstemp(prefix="texts-", dir=folder)
    offsets, lengths = [], []
    written, row = 0, 0
    with os.fdopen(fd, "wb", buffering=0) as out:  # one write per batch, no copy
        for chunk in table.column_chunks(column):
            each_chunk(row, pl.from_arrow(chunk))  # type: ignore[arg-type]
            cells = chunk.cast(pa.large_string())
            _, starts, data = cells.buffers()
            ends = np.frombuffer(starts, dtype=np.int64)[cells.offset:
                                                        cells.offset + len(cells) + 1]
            if data is not None:  # None: every cell of the chunk is null
                out.write(memoryview(data)[ends[0]:ends[-1]])
            offsets.append(written + ends[:-1] - ends[0])
            lengths.append(np.diff(ends))
            written += int(ends[-1] - ends[0])
            row += len(cells)
    # the decoding buffers are freed; pyarrow's allocator would keep their pages for the run
    pa.default_memory_pool().release_unused()

    def column(parts: list[np.ndarray]) -> pl.Series:
        return pl.Series(np.concatenate(parts) if parts else [], dtype=pl.Int64)

    return SpilledTexts(Path(name), column(offsets), column(lengths))


def spill_folder(parent: Path) -> Path:
    """A new hidden folder for a run's spilled texts, under ``parent`` (made if need be)."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".jsoneval-tables-", dir=parent))


def remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
