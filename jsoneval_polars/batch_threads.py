"""Batches scored on threads of this process and taken in order, for every driver (in memory,
tables, NDJSON files).

A batch spends most of its time in the native kernel, Polars and pyarrow, which release the
GIL, so two threads keep two cores busy without worker processes: no imports per worker, no
copy of the batch's texts to another process and no second copy of the libraries in memory
(docs/DECISIONS.md 100, 119). Results come back in the order of the batches, so a run's
tables and error rows do not depend on the threads.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from .file_ranges import balanced_batch_size  # noqa: F401 -- the drivers' import
from .scorers import Scorer, lexical_token_set, resolve_scorer

if TYPE_CHECKING:
    import polars as pl

Part = TypeVar("Part")
Scored = TypeVar("Scored")


def check_batching(batch_size: int, workers: int | None) -> None:
    """A run's batch size and worker count, as the command line checks them (0 workers was
    taken for the default, and 0 pairs a batch for 1)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1; got {batch_size}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1 (None: one per core); got {workers}")


def batch_threads(workers: int | None, scorer: Scorer | str | None, n_pairs: int,
                  batch_size: int) -> int:
    """Threads for a run's batches: :func:`threads_for`, and one for a single batch.

    >>> batch_threads(None, None, 10, 8000), batch_threads(3, "lexical", 20000, 8000)
    (1, 3)
    """
    return 1 if n_pairs <= batch_size else threads_for(workers, scorer)


def threads_for(workers: int | None, scorer: Scorer | str | None) -> int:
    """``workers``, or one per core; one with a semantic scorer other than the built-in
    lexical one (a model, or a user's function with a cache or counters of its own, may not
    expect calls from several threads)."""
    if resolve_scorer(scorer) is not lexical_token_set:
        return 1
    return max(1, workers or os.cpu_count() or 1)


def batch_slices(plan: pl.DataFrame, size: int) -> Iterator[pl.DataFrame]:
    """The plan ``size`` rows at a time; one empty slice for an empty plan (its batch gives
    the run's tables their schemas)."""
    return (plan.slice(start, size) for start in range(0, max(plan.height, 1), size))


@contextlib.contextmanager
def thread_pool(threads: int) -> Iterator[ThreadPoolExecutor | InlinePool]:
    """An executor of ``threads`` threads of this process (this thread for one), with the
    kernel's freed pages kept while it lasts (:func:`freed_pages_kept`). Leaving it, also by
    an error or Ctrl-C, cancels the tasks not started and waits for those under way (a thread
    cannot be stopped)."""
    with freed_pages_kept():
        if threads <= 1:
            yield InlinePool()
            return
        pool = ThreadPoolExecutor(threads, thread_name_prefix="jsoneval-batch")
        try:
            yield pool
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


_keep_lock = threading.Lock()
_keepers = 0  # pools under way that keep the pages
_purge_delay = 0  # mimalloc's setting before the first of them


@contextlib.contextmanager
def freed_pages_kept() -> Iterator[None]:
    """The kernel's allocator (mimalloc) keeps the pages a batch frees for the next batch, and
    hands them back when the last pool under way ends. By default it hands them back a second
    after they are freed, and a run of many batches faulted them in and zeroed them again
    (docs/DECISIONS.md 117). A user's own ``MIMALLOC_PURGE_DELAY`` is left as it is."""
    from .flatten import _native

    if _native is None or "MIMALLOC_PURGE_DELAY" in os.environ:
        yield
        return
    global _keepers, _purge_delay
    with _keep_lock:
        if _keepers == 0:
            _purge_delay = _native.purge_delay(-1)
        _keepers += 1
    try:
        yield
    finally:
        with _keep_lock:
            _keepers -= 1
            if _keepers == 0:
                _native.purge_delay(_purge_delay)
                _native.release_freed_pages()


class InlinePool:
    """The executor interface run in this thread (one thread, one worker)."""

    def submit(self, fn: Callable, *args: Any) -> Future:
        future: Future = Future()
        future.set_result(fn(*args))
        return future

    def map(self, fn: Callable, *iterables: Any) -> Iterator:
        return map(fn, *iterables)


def in_order(pool: Any, score: Callable[[int, Part], Scored], parts: Iterable[Part],
             ahead: int, first: int = 0) -> Iterator[tuple[Part, Scored]]:
    """``(part, score(number, part))`` of each part, numbered from ``first``, ``score`` run on
    ``pool`` (threads or this thread), yielded in the parts' order; at most ``ahead`` parts
    are in flight, so memory holds a few batches whatever the pool."""
    in_flight: collections.deque = collections.deque()
    for number, part in enumerate(parts, first):
        in_flight.append((part, pool.submit(score, number, part)))
        while in_flight and (len(in_flight) >= ahead or in_flight[0][1].done()):
            part_done, future = in_flight.popleft()
            yield part_done, future.result()
    while in_flight:
        part_done, future = in_flight.popleft()
        yield part_done, future.result()
