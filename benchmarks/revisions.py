"""An older revision of the engine to time beside this tree (``--old REV`` of the benchmarks):
a ``git worktree`` under /tmp, with its own native extension built beside its package (cargo,
about a minute the first time; revisions from before the Rust core have none to build)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def old_tree(rev: str) -> Path:
    """The worktree of ``rev``, for ``PYTHONPATH``."""
    path = Path("/tmp") / f"jsoneval_old_{rev.replace('/', '_')}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev],
                       check=True, capture_output=True)
    extension = path / "jsoneval_polars" / "_native.abi3.so"
    if (path / "Cargo.toml").exists() and not extension.exists():
        target = path / "target"
        subprocess.run(["cargo", "build", "--quiet", "--release", "--features",
                        "python pyo3/extension-module"], cwd=path, check=True,
                       env={**os.environ, "CARGO_TARGET_DIR": str(target),
                            "PYO3_PYTHON": sys.executable})
        shutil.copy(target / "release" / "libjsoneval_native.so", extension)
    return path
