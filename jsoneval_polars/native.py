"""The native kernel (Rust, ``src/``, module ``jsoneval_polars._native``) as the package loads
it, and which kernel runs. No imports beyond it: the command's first pass over its files
(:mod:`file_ranges`) starts before Polars loads."""

from __future__ import annotations

import os
import warnings

# The kernel's allocator (mimalloc) reads this as the extension loads; at 0 it turns transparent
# huge pages off for the process (prctl PR_SET_THP_DISABLE). Faulting in 2 MB pages (zeroed,
# compacted for) made large batches slower and larger: evaluate() of 100k pairs 7.1-7.9 s and
# 2.52 GB with them, 5.8-6.1 s and 2.42 GB without (docs/DECISIONS.md 75). A user's own
# setting wins.
os.environ.setdefault("MIMALLOC_ALLOW_THP", "0")
try:
    from . import _native
except ImportError:  # the package imported from a source tree whose extension is not built
    _native = None
    warnings.warn(
        f"jsoneval_polars: the native core is not built in {os.path.dirname(__file__)} (a source "
        "tree shadowing the installed package? run `jsoneval`, or `pip install -e .`); the "
        "Python path runs instead, with the same results, slower",
        RuntimeWarning, stacklevel=2,
    )

#: The kernel :func:`flatten.flatten` runs: "native" unless the environment sets
#: JSONEVAL_PURE_PYTHON=1 or the extension is not built ("python"). Both give identical tables.
KERNEL = ("python" if _native is None or os.environ.get("JSONEVAL_PURE_PYTHON") == "1"
          else "native")

#: Bytes per data buffer of the native kernel's string columns: Arrow string views address a
#: buffer with 32-bit offsets. Tests make it small (``flatten._SEGMENT``) to cut strings across
#: several buffers.
SEGMENT = 2**31 - 1
