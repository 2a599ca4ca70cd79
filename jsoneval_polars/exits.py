"""The command line's exit codes, and its line for a Ctrl-C. No imports: ``__main__`` uses
them before the libraries load."""

import sys

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_GATE, EXIT_INTERRUPTED, EXIT_PIPE = 0, 1, 2, 3, 130, 141


def interrupted() -> int:
    """Say that the command stopped on a Ctrl-C; its exit code."""
    print("\njsoneval: interrupted; results written before this run are unchanged",
          file=sys.stderr)
    return EXIT_INTERRUPTED
