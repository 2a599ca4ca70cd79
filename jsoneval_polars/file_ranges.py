"""How the files driver (:mod:`stream`) cuts its work: an NDJSON file into byte ranges that end
at line ends, each read by the native kernel for its records' ids and offsets, and the pairs
into batches. No Polars here: ``jsoneval score`` starts that first pass (:class:`EarlyScan`)
before its libraries load, and the two overlap (DECISIONS 124)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .textfile import UTF8_BOM, not_utf8_text

# pairs per batch: 1M shuffled pairs on 2 worker processes peaked at 1.27 GB in all with 8k,
# 1.43-1.55 GB with 10k, 2.2 GB with 20k, at the same speed; 10M peaks where 1M does
# (benchmarks/scale.py)
STREAM_BATCH_SIZE = 8_000
# scan task size: large enough to amortize a task, small for balance (a 96 MB file scanned in
# 0.24-0.32 s against 0.36 with 32 MB tasks); each thread reads its ranges into one buffer it
# keeps (_native.scan_range)
CHUNK_BYTES = 16 << 20


def byte_ranges(path: str | Path, size: int = CHUNK_BYTES, start: int = 0,
                ) -> list[tuple[int, int]]:
    """(start, stop) of byte ranges of about ``size`` from byte ``start`` (a line's start)
    that end at a line end (the last at the file's end)."""
    total = os.stat(path).st_size
    bounds = []
    with open(path, "rb") as f:
        while start < total:
            pos, newline = min(start + size, total) - 1, -1
            while pos < total:  # the first line end at or after pos
                f.seek(pos)
                tail = f.read(1 << 16)
                cut = tail.find(b"\n")
                if cut >= 0:
                    newline = pos + cut
                    break
                pos += len(tail)
            stop = total if newline < 0 else newline + 1
            bounds.append((start, stop))
            start = stop
    return bounds


@dataclass(frozen=True)
class RangeRead:
    """One byte range of an NDJSON file as the native kernel read it (``_native.scan_range``):
    its records as an Arrow table, the lines it declined and their spans, and its line ends.
    The bytes are kept only where more is read from them: declined lines (read again in
    Python) and a file's first range (its first record may be a config given as an input)."""

    scanned: tuple
    line_ends: int
    data: bytes | None


def read_range(path: str, start: int, stop: int, id_field: str,
               content_field: str | None) -> RangeRead:
    """Bytes ``[start, stop)`` of an NDJSON file, which end at a line end or the file's end,
    read by the native kernel without the GIL (so threads read ranges side by side), into a
    buffer each thread reuses."""
    from .native import _native

    scanned, line_ends, data = _native.scan_range(path, start, stop, id_field, content_field)
    return RangeRead(scanned, line_ends, data)


def _file_key(path: str | Path) -> tuple[int, ...]:
    """The file at ``path`` as it is now: the same key means the same bytes were scanned."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def looks_like_ndjson(path: str | Path) -> bool:
    """Whether a file seems to hold NDJSON: plain UTF-8 text whose first line is one object.
    Only a guess, enough to start an :class:`EarlyScan` (the driver decides what a file holds,
    ``ingest.text_kind``, and reads nothing the guess got wrong)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    if not_utf8_text(head) is not None or head.startswith(b"BZh"):
        return False
    first = head.removeprefix(UTF8_BOM).lstrip().partition(b"\n")
    return first[1] == b"\n" and first[0][:1] == b"{" and first[0].rstrip()[-1:] == b"}"


class EarlyScan:
    """The byte ranges of NDJSON files read on threads of their own from the moment it is made
    (:func:`read_range`), for a later run to take (:meth:`take`) instead of reading them again.
    ``jsoneval score`` makes one before Polars, NumPy and pyarrow load (a quarter second on one
    core, which the ranges' reads fill; DECISIONS 124). A range is taken only for the same file,
    unchanged since, the same bounds, id field and content field: a guess that was wrong costs
    the reads, never a result. :meth:`close` drops the ranges no run took."""

    def __init__(self, files: Iterable[tuple[str | Path, str | None]], id_field: str,
                 threads: int) -> None:
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="jsoneval-early-scan")
        self._reads: dict[tuple, Future[RangeRead]] = {}
        for path, content_field in files:
            key = _file_key(path)
            for start, stop in byte_ranges(path):
                self._reads[(key, start, stop, id_field, content_field)] = self._pool.submit(
                    read_range, str(path), start, stop, id_field, content_field)

    def take(self, path: str | Path, start: int, stop: int, id_field: str,
             content_field: str | None) -> Future[RangeRead] | None:
        """The read of this range of this file, if one was started; once. A read still waiting
        for a thread is cancelled instead (None): the run's own threads read it sooner."""
        read = self._reads.pop((_file_key(path), start, stop, id_field, content_field), None)
        return None if read is None or read.cancel() else read

    def close(self) -> None:
        """Cancel the reads not started and drop those not taken (a read under way ends on its
        own: a thread cannot be stopped)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._reads.clear()
