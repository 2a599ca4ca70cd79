"""``python -m jsoneval_polars`` and the ``jsoneval`` command (pyproject's entry point)."""

import gc
import os
import signal
import sys

from .exits import interrupted


#: NumPy's OpenBLAS starts a thread per core on import, and each spins for about 2^28 cycles
#: (0.1 s) waiting for work before it sleeps: CPU taken from the run's first batches. 2^4
#: cycles: the threads sleep at once and still multiply --bootstrap's matrices. A user's own
#: setting wins (DECISIONS 116).
QUIET_BLAS_THREADS = ("OPENBLAS_THREAD_TIMEOUT", "4")


def _stop_once(signum: int, frame: object) -> None:
    """Ctrl-C stops the command, as Python's own handler does (KeyboardInterrupt); a second one
    while it cleans up and exits (people press twice) is ignored: it interrupted the removal
    of the run's staging folder, or printed tracebacks from the interpreter's shutdown."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main() -> int:
    """The command line. Its libraries (Polars, Arrow, NumPy) take a few tenths of a second to
    load: a Ctrl-C meanwhile ends the command with the same line and code as a Ctrl-C later,
    not with a traceback through the import machinery; and `jsoneval score` reads its NDJSON
    inputs meanwhile (:func:`cli.start_early_scan`). The command's own process only: cli.main
    may run in a notebook, whose Ctrl-C stays its own (and whose NumPy threads too)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if started ignoring it
        signal.signal(signal.SIGINT, _stop_once)
    os.environ.setdefault(*QUIET_BLAS_THREADS)
    early_scan = None
    # the libraries' objects are never garbage: the collector does not walk them as they load
    # (eleven passes, 10 ms) nor later (a full pass in the first batch, 13-22 ms)
    gc.disable()
    try:
        from .cli import main as run, start_early_scan

        early_scan = start_early_scan(sys.argv[1:])
        from . import stream  # noqa: F401 -- the libraries, while the early scan reads
    except KeyboardInterrupt:
        if early_scan is not None:
            early_scan.close()
        return interrupted()
    finally:
        gc.freeze()
        gc.enable()
    # Polars took SIGINT over as it loaded (chaining to the handler above) to raise
    # KeyboardInterrupt inside whichever thread is in a Polars call: a batch thread then
    # stopped part way through Polars' own conversions, which can panic and print a Rust
    # backtrace. Given back to Python, a Ctrl-C reaches the main thread alone, which stops
    # the run once the batches under way end (DECISIONS 119).
    handler = signal.getsignal(signal.SIGINT)
    if handler is not None:  # None: a handler from outside Python, left as it is
        signal.signal(signal.SIGINT, handler)
    try:
        return run(sys.argv[1:], early_scan)
    finally:
        if early_scan is not None:
            early_scan.close()


def command() -> None:
    """The ``jsoneval`` executable (pyproject's entry point): :func:`main`, then the process
    ends without the interpreter's teardown, which freed every object and module of a run one
    by one (0.07-0.11 s after a 100k run; DECISIONS 125). Everything the command writes is
    closed by then: the result tables, the semantic cache (committed batch by batch), the
    staging folders (removed); only its output streams are flushed here."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (cli._closed_pipe) or stream
            pass
    os._exit(code)


if __name__ == "__main__":
    command()
