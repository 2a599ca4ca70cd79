"""The files driver's one pass over sorted files (DECISIONS 132).

Files a pipeline writes in one order list the same ids on both sides, each greater than the one
before. For them the pairing gives line i of one file to line i of the other and reports
nothing (:func:`ingest.pair_records`, DECISIONS 131), so the scan's parse of every line only
confirms what the order already says. This pass takes the lines of both files in batches as
they come (``_native.next_lines``: line ends only, nothing parsed) and lets each batch's own
walk read the ids (:func:`ingest.read_sorted_pairs`). A batch is scored only when each of its
lines is a record the kernel reads, its two sides hold the same ids, each greater than the one
before, and every batch before it held too (:class:`_Verdicts`: batches run side by side).

The first batch that does not hold ends the pass, unscored, as does a blank line or the end of
one file before the other's. The driver then scans the rest of both files from the first line
the pass did not score and pairs every record, the pass's included, by SPEC §9, scoring the
pairs the pass did not (stream.py). The pass's records are each its id's first, with its
partner beside it, so nothing after them changes a pair it scored: a later record of one of
their ids is that id's duplicate, as in any other order.

The first batch is small (:data:`PROBE_LINES`) and the next is cut only after its verdict, so
files in another order cost one small walk; files that stop being sorted later cost the
batches in flight when it shows (at most ``2 × workers``), walked and not scored.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .batch_threads import balanced_batch_size, in_order
from .ingest import Pairs
from .native import _native

SIDES = ("gt", "aio")
#: lines of each side in the pass's first batch, the one the others wait for (at most a
#: batch)
PROBE_LINES = 500


@dataclass(frozen=True)
class Chunk:
    """A batch of the pass: ``plan`` has per side line, offset and length (no doc_id yet);
    ``starts`` per side the (offset, line) of its first line."""

    number: int
    plan: pl.DataFrame
    starts: dict[str, tuple[int, int]]


@dataclass(frozen=True)
class Passed:
    """What the pass scored: per side its first line not scored and that line's offset (the
    rest of the file starts there), its pairs and batches, and whether it scored every line of
    both files (two empty files: no, the scan writes their empty tables)."""

    next_line: dict[str, int]
    offsets: dict[str, int]
    n_pairs: int
    batches: int
    complete: bool


class _Verdicts:
    """Each batch's verdict for the batch after it, which waits for it: the last id of a batch
    that holds, None for one that does not."""

    def __init__(self) -> None:
        self._given: dict[int, str | None] = {}
        self._changed = threading.Condition()

    def give(self, number: int, last_id: str | None) -> None:
        with self._changed:
            self._given[number] = last_id
            self._changed.notify_all()

    def wait(self, number: int) -> str | None:
        with self._changed:
            self._changed.wait_for(lambda: number in self._given)
            return self._given[number]


def score_sorted(
    files: Mapping[str, str | Path], *, pool: Any, workers: int, batch_size: int,
    expected: int, read: Callable[[pl.DataFrame], Pairs | None],
    score: Callable[[int, Pairs, float], Any],
    scored: Callable[[Chunk, Any, pl.Series], None],
    sorted_files: Callable[[], None] = lambda: None,
) -> Passed:
    """Run the pass over ``files`` on ``pool``: ``read`` reads a chunk's pairs
    (:func:`ingest.read_sorted_pairs`), ``score(number, pairs, read_seconds)`` scores and writes
    a batch, ``scored(chunk, result, doc_ids)`` hears each scored batch in order on this thread;
    ``sorted_files`` is called once the first batch holds. ``expected``: the lines expected of
    each side, which size the batches as the scan's plan would be cut."""
    verdicts = _Verdicts()
    task = _Task(read, score, verdicts)
    size = balanced_batch_size(max(1, expected - PROBE_LINES), batch_size, workers)
    ends = {side: os.stat(files[side]).st_size for side in SIDES}
    # per side the (offset, line) of the next line to cut
    at = {side: (0, 1) for side in SIDES}
    cut = {"batches": 0, "broken": None}

    def chunks() -> Iterator[Chunk]:
        count = min(PROBE_LINES, size)
        while cut["broken"] is None:
            lines = {side: _native.next_lines(str(files[side]), at[side][0], count)
                     for side in SIDES}
            n = min(len(offsets) for offsets, _, _ in lines.values())
            if n == 0:
                return
            chunk = Chunk(cut["batches"], _plan(lines, at, n), dict(at))
            for side, (offsets, lengths, end) in lines.items():
                at[side] = (end if n == len(offsets) else offsets[n], at[side][1] + n)
            cut["batches"] += 1
            yield chunk
            if chunk.number == 0:
                if verdicts.wait(0) is None:
                    return
                sorted_files()
            if any(len(offsets) < count for offsets, _, _ in lines.values()):
                return  # a blank line, or the end of a file
            count = size

    n_pairs = 0
    for chunk, result in in_order(pool, task, chunks(), 2 * workers):
        if result is None:
            cut["broken"] = cut["broken"] or chunk
            continue
        n_pairs += chunk.plan.height
        scored(chunk, *result)
    broken = cut["broken"]
    where = broken.starts if broken else at
    return Passed(next_line={side: line for side, (_, line) in where.items()},
                  offsets={side: offset for side, (offset, _) in where.items()},
                  n_pairs=n_pairs, batches=broken.number if broken else cut["batches"],
                  complete=broken is None and cut["batches"] > 0
                  and all(at[s][0] >= ends[s] for s in SIDES))


def _plan(lines: Mapping[str, tuple[list[int], list[int], int]],
          at: Mapping[str, tuple[int, int]], n: int) -> pl.DataFrame:
    """The first ``n`` lines of each side side by side."""
    columns = {}
    for side, (offsets, lengths, _) in lines.items():
        first = at[side][1]
        columns[f"{side}_line"] = pl.int_range(first, first + n, dtype=pl.Int64, eager=True)
        columns[f"{side}_offset"] = pl.Series(offsets[:n], dtype=pl.Int64)
        columns[f"{side}_length"] = pl.Series(lengths[:n], dtype=pl.Int64)
    return pl.DataFrame(columns)


@dataclass(frozen=True)
class _Task:
    """One batch of the pass on a thread: read, judged, and scored only if it holds."""

    read: Callable[[pl.DataFrame], Pairs | None]
    score: Callable[[int, Pairs, float], Any]
    verdicts: _Verdicts

    def __call__(self, number: int, chunk: Chunk) -> tuple[Any, pl.Series] | None:
        import time

        t = time.perf_counter()
        last = pairs = None
        try:
            pairs = self.read(chunk.plan)
            ids = None if pairs is None else pairs.table["doc_id"]
            if ids is not None and (ids.tail(-1) > ids.head(-1)).all():
                before = self.verdicts.wait(number - 1) if number else None
                if number == 0 or before is not None and ids[0] > before:
                    last = ids[-1]
        finally:  # an error too is a verdict, so no batch waits for ever
            self.verdicts.give(number, last)
        if last is None:
            return None
        return self.score(number, pairs, time.perf_counter() - t), ids
