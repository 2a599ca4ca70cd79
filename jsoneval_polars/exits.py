"""The command line's exit codes, the errors that choose them, and its line for a Ctrl-C. No
imports: ``__main__`` and the command's options use them before the libraries load."""

import sys

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_GATE, EXIT_INTERRUPTED, EXIT_PIPE = 0, 1, 2, 3, 130, 141


class InputError(ValueError):
    """Bad input in strict mode; the message names the file, the line and the reason."""


class InputFileError(InputError):
    """An input that cannot be read as a whole (missing, a directory, the wrong format): a
    usage error on the command line (exit 2), not bad records (exit 1)."""


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (Polars and DuckDB add lines of context), or its
    type when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def interrupted() -> int:
    """Say that the command stopped on a Ctrl-C; its exit code."""
    print("\njsoneval: interrupted; results written before this run are unchanged",
          file=sys.stderr)
    return EXIT_INTERRUPTED
