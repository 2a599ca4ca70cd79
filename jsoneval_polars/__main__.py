"""``python -m jsoneval_polars`` and the ``jsoneval`` command (pyproject's entry point)."""

import signal
import sys

from .exits import EXIT_INTERRUPTED, interrupted


def main() -> int:
    """The command line. Its libraries (Polars, Arrow, NumPy) take a few tenths of a second to
    load: a Ctrl-C meanwhile ends the command with the same line and code as a Ctrl-C later,
    not with a traceback through the import machinery. Once a Ctrl-C has stopped it, a second
    one (pressed twice, as people do) is ignored while the process exits: it printed
    tracebacks from the interpreter's shutdown, or ended the process without its code."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        code = interrupted()
    else:
        code = run(sys.argv[1:])
    if code == EXIT_INTERRUPTED:  # the command's own process only: cli.main may run in a notebook
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while it exits
    return code


if __name__ == "__main__":  # worker processes (spawn) import this module without running it
    raise SystemExit(main())
