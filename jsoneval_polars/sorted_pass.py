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

Before the first batch, the pass walks the first lines of both files (:data:`file_ranges.
PROBE_LINES`) and goes on only if they hold, so files in another order cost one small walk;
files that stop being sorted later cost the batches in flight when it shows (at most
``2 × workers``), walked and not scored. The batches are those the scan's plan would cut.

``jsoneval score`` walks the first batches of files that begin sorted while its libraries load
(:class:`file_ranges.EarlyPass`, on the core that is idle then); the pass takes each walk whose
lines it cuts the same (DECISIONS 132).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from . import file_ranges
from .batch_threads import balanced_batch_size, in_order
from .file_ranges import SIDES, Cut, LineCuts
from .ingest import Pairs


@dataclass(frozen=True)
class Chunk:
    """A batch of the pass: its lines (``cut``) and ``plan``, per side line, offset and length
    (no doc_id yet)."""

    number: int
    cut: Cut
    plan: pl.DataFrame


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
    expected: int, read: Callable[[Chunk], Pairs | None],
    score: Callable[[int, Pairs, float], Any],
    scored: Callable[[Chunk, Any, pl.Series], None],
    sorted_files: Callable[[], None] = lambda: None,
) -> Passed:
    """Run the pass over ``files`` on ``pool``: ``read`` reads a chunk's pairs
    (:func:`ingest.read_sorted_pairs`; the probe's is numbered -1), ``score(number, pairs,
    read_seconds)`` scores and writes a batch, ``scored(chunk, result, doc_ids)`` hears each
    scored batch in order on this thread; ``sorted_files`` is called once the probe holds.
    ``expected``: the lines expected of each side, which size the batches as the scan's plan
    would be cut."""
    verdicts = _Verdicts()
    task = _Task(read, score, verdicts)
    # the batches the scan's plan of `expected` pairs would have (so small files give the
    # same sums, bit for bit)
    size = balanced_batch_size(expected, batch_size, workers)
    ends = {side: os.stat(files[side]).st_size for side in SIDES}
    cuts = LineCuts(files)
    cut = {"batches": 0, "broken": None}

    def chunks() -> Iterator[Chunk]:
        probe = LineCuts(files).next(min(file_ranges.PROBE_LINES, size))
        if probe is None or _Task.ids(read(Chunk(-1, probe, _plan(probe)))) is None:
            return
        sorted_files()
        while cut["broken"] is None:
            lines = cuts.next(size)
            if lines is None:
                return
            yield Chunk(cut["batches"], lines, _plan(lines))
            cut["batches"] += 1
            if lines.short:
                return  # a blank line, or the end of a file

    n_pairs = 0
    for chunk, result in in_order(pool, task, chunks(), 2 * workers):
        if result is None:
            cut["broken"] = cut["broken"] or chunk
            continue
        n_pairs += chunk.plan.height
        scored(chunk, *result)
    broken = cut["broken"]
    where = broken.cut.starts if broken else cuts.at
    return Passed(next_line={side: line for side, (_, line) in where.items()},
                  offsets={side: offset for side, (offset, _) in where.items()},
                  n_pairs=n_pairs, batches=broken.number if broken else cut["batches"],
                  complete=broken is None and cut["batches"] > 0
                  and all(cuts.at[s][0] >= ends[s] for s in SIDES))


def _plan(cut: Cut) -> pl.DataFrame:
    """A cut's lines of each side side by side."""
    columns = {}
    for side, (offsets, lengths) in cut.spans.items():
        first = cut.starts[side][1]
        columns[f"{side}_line"] = pl.int_range(first, first + cut.n, dtype=pl.Int64, eager=True)
        columns[f"{side}_offset"] = pl.Series(offsets, dtype=pl.Int64)
        columns[f"{side}_length"] = pl.Series(lengths, dtype=pl.Int64)
    return pl.DataFrame(columns)


@dataclass(frozen=True)
class _Task:
    """One batch of the pass on a thread: read, judged, and scored only if it holds."""

    read: Callable[[Chunk], Pairs | None]
    score: Callable[[int, Pairs, float], Any]
    verdicts: _Verdicts

    def __call__(self, number: int, chunk: Chunk) -> tuple[Any, pl.Series] | None:
        t = time.perf_counter()
        last = pairs = None
        try:
            pairs = self.read(chunk)
            ids = self.ids(pairs)
            if ids is not None:
                before = self.verdicts.wait(number - 1) if number else None
                if number == 0 or (before is not None and ids[0] > before):
                    last = ids[-1]
        finally:  # an error too is a verdict, so no batch waits for ever
            self.verdicts.give(number, last)
        if last is None:
            return None
        return self.score(number, pairs, time.perf_counter() - t), ids

    @staticmethod
    def ids(pairs: Pairs | None) -> pl.Series | None:
        """A batch's doc_ids when both sides held the same ones, each greater than the one
        before; else None."""
        ids = None if pairs is None else pairs.table["doc_id"]
        return ids if ids is not None and (ids.tail(-1) > ids.head(-1)).all() else None
