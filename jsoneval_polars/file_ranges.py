"""How the files driver (:mod:`stream`) cuts its work: an NDJSON file into byte ranges that end
at line ends, each read by the native kernel for its records' ids and offsets, two sorted
files into batches of lines side by side (:class:`LineCuts`, the pass over sorted files), and
the pairs into batches. No Polars here: ``jsoneval score`` starts the first pass over its files
(:class:`EarlyScan`, or for sorted files :class:`EarlyPass`) before its libraries load, and the
two overlap (DECISIONS 124, 132)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .textfile import UTF8_BOM, not_utf8_text, read_exactly

# pairs per batch: 1M shuffled pairs on 2 worker processes peaked at 1.27 GB in all with 8k,
# 1.43-1.55 GB with 10k, 2.2 GB with 20k, at the same speed; 10M peaks where 1M does
# (benchmarks/scale.py)
STREAM_BATCH_SIZE = 8_000
# scan task size: large enough to amortize a task, small for balance (a 96 MB file scanned in
# 0.24-0.32 s against 0.36 with 32 MB tasks); each thread reads its ranges into one buffer it
# keeps (_native.scan_range)
CHUNK_BYTES = 16 << 20
# bytes of an NDJSON file whose line ends estimate its lines (expected_lines)
LINES_SAMPLE = 1 << 20
#: lines of each side the pass over sorted files checks before it cuts its first batch (at
#: most a batch)
PROBE_LINES = 500
SIDES = ("gt", "aio")


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


def balanced_batch_size(n: int, batch_size: int, workers: int) -> int:
    """At most ``batch_size``, with a number of batches that is a multiple of ``workers`` so
    that no worker is left alone with the last batch (100k pairs on 2 workers: 6 batches of
    16,667 rather than 5 of 20,000).

    >>> balanced_batch_size(100_000, 20_000, 2), balanced_batch_size(10, 20_000, 2)
    (16667, 5)
    """
    batches = -(-n // max(1, batch_size))
    batches = max(workers, -(-batches // workers) * workers)
    return max(1, -(-n // batches))


def expected_lines(path: str | Path) -> int:
    """The lines of an NDJSON file, as its first :data:`LINES_SAMPLE` bytes have them: exact
    for a file no larger; beyond, an estimate, which sizes the pairing's buckets (memory, not
    results) without a pass over the file before its ranges are scanned (DECISIONS 121)."""
    total = os.stat(path).st_size
    with open(path, "rb") as f:
        head = f.read(LINES_SAMPLE)
    if len(head) >= total:
        return head.count(b"\n") + (not head.endswith(b"\n") and bool(head))
    return -(-(head.count(b"\n") + 1) * total // len(head))


@dataclass(frozen=True)
class Cut:
    """The next lines of two files side by side: per side the (offset, line) of the first,
    and the offsets and lengths of ``n`` lines; ``short``: a side had fewer than were asked
    for (a blank line, or the end of its file)."""

    starts: dict[str, tuple[int, int]]
    spans: dict[str, tuple[list[int], list[int]]]
    n: int
    short: bool


class LineCuts:
    """Two NDJSON files cut into batches of lines side by side, from their starts, by their
    line ends alone (``_native.next_lines``): line i of one beside line i of the other."""

    def __init__(self, files: Mapping[str, str | Path]) -> None:
        self.files = {side: str(files[side]) for side in SIDES}
        self.at = {side: (0, 1) for side in SIDES}  # (offset, line) of the next line

    def next(self, count: int) -> Cut | None:
        """The next ``count`` lines of each side, or as many as both have; None for none."""
        from .native import _native

        lines = {side: _native.next_lines(path, self.at[side][0], count)
                 for side, path in self.files.items()}
        n = min(len(offsets) for offsets, _, _ in lines.values())
        if n == 0:
            return None
        cut = Cut(dict(self.at), {side: (offsets[:n], lengths[:n])
                                  for side, (offsets, lengths, _) in lines.items()},
                  n, any(len(offsets) < count for offsets, _, _ in lines.values()))
        for side, (offsets, _, end) in lines.items():
            self.at[side] = (end if n == len(offsets) else offsets[n], self.at[side][1] + n)
        return cut


def walk_lines(files: Mapping[str, str | Path], cut: Cut, reading: tuple) -> tuple[tuple, tuple]:
    """Both sides of a cut as the pass over sorted files reads them, by the native kernel
    (``_native.flatten_spans``): each line's id kept, the AIO's items numbered after the GT's
    and its content read as a model's answer may hold it. ``reading``: the id field, whether
    empty containers are null, and the bytes of a string buffer. The run's batches and the
    command's early pass (:class:`EarlyPass`) both walk this way."""
    from .native import _native

    id_field, empty_containers_are_null, segment = reading
    walked, item_base = [], 0
    for side in SIDES:
        offsets, lengths = cut.spans[side]
        # a cut's lines are one range of the file
        buffer = read_exactly(files[side], offsets[0], offsets[-1] + lengths[-1] - offsets[0])
        walked.append(_native.flatten_spans(
            buffer, offsets[0], offsets, lengths, id_field, item_base,
            empty_containers_are_null, segment, meta=[], content=None,
            text_content=side == "aio", lenient=False, keep_id=True))
        item_base = walked[-1][1]
    return walked[0], walked[1]


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


class EarlyPass:
    """The first batches of the pass over sorted files cut and walked on a thread of its own
    from the moment it is made (``jsoneval score`` makes one, instead of an :class:`EarlyScan`,
    for files that begin with the same increasing ids, while Polars, NumPy and pyarrow load
    on the other core): each batch's two sides as :func:`walk_lines` returns them. A run
    takes a batch's walk (:meth:`take`) only for the same files, unchanged since, the same
    reading and the same lines; anything else costs the walk, never a result."""

    def __init__(self, files: Mapping[str, str | Path], id_field: str,
                 empty_containers_are_null: bool, batch_size: int, workers: int,
                 batches: int) -> None:
        from .native import SEGMENT

        self._files = {side: str(files[side]) for side in SIDES}
        self.reading = (id_field, empty_containers_are_null, SEGMENT)
        self._keys = {side: _file_key(path) for side, path in self._files.items()}
        self._size = balanced_batch_size(max(expected_lines(p) for p in self._files.values()),
                                         batch_size, workers)
        self._walked: dict[int, tuple[Cut, tuple]] = {}
        self._changed = threading.Condition()
        self._stop = self._ended = False
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="jsoneval-early-pass")
        self._pool.submit(self._run, batches)

    def _run(self, batches: int) -> None:
        try:
            cuts = LineCuts(self._files)
            for number in range(batches):
                cut = None if self._stop else cuts.next(self._size)
                if cut is None:
                    return
                walked = walk_lines(self._files, cut, self.reading)
                with self._changed:
                    self._walked[number] = (cut, walked)
                    self._changed.notify_all()
                if cut.short or walked[0][0] is None or walked[1][0] is None:
                    return
        finally:  # an error too ends it: the run walks its batches itself
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def stop(self) -> None:
        """Walk no batch after the one under way (the run's threads take over)."""
        with self._changed:
            self._stop = True

    def matches(self, files: Mapping[str, str | Path], reading: tuple) -> bool:
        """Whether these are the files it walks (the same device, inode, size and time, by
        whatever path), unchanged, read the same way."""
        return reading == self.reading and all(
            _file_key(files[side]) == self._keys[side] for side in SIDES)

    def take(self, number: int, cut: Cut) -> tuple[tuple, tuple] | None:
        """Batch ``number``'s walk (GT, AIO), once, if it walked the same lines; waits while
        the batch is under way."""
        with self._changed:
            self._changed.wait_for(lambda: number in self._walked or self._ended)
            walked = self._walked.pop(number, None)
        return walked[1] if walked is not None and walked[0].spans == cut.spans else None

    def close(self) -> None:
        """Stop and drop the walks no run took."""
        self.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._changed:
            self._walked.clear()
