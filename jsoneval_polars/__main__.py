"""``python -m jsoneval_polars`` and the ``jsoneval`` command (pyproject's entry point)."""

import sys

from .exits import interrupted


def main() -> int:
    """The command line. Its libraries (Polars, Arrow, NumPy) take a few tenths of a second to
    load: a Ctrl-C meanwhile ends the command with the same line and code as a Ctrl-C later,
    not with a traceback through the import machinery."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        return interrupted()
    return run(sys.argv[1:])


if __name__ == "__main__":  # worker processes (spawn) import this module without running it
    raise SystemExit(main())
