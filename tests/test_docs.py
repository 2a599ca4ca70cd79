"""Every python and bash block of README.md and docs/*.md runs as written (tests/readme_examples.py
says how a block is marked as not runnable here, and why)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from readme_examples import DOCS, README, ROOT, doc_blocks


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_every_block_runs(path: Path, tmp_path: Path):
    blocks = doc_blocks(path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    skipped = []
    for n, block in enumerate(blocks):
        where = f"{path.name}:{block.line}"
        if block.not_run:
            continue
        if block.needs and importlib.util.find_spec(block.needs) is None:
            skipped.append(f"{where} needs {block.needs}")
            continue
        script = tmp_path / f"block{n}.{'py' if block.lang == 'python' else 'sh'}"
        script.write_text(block.code, encoding="utf-8")
        cmd = ([sys.executable, str(script)] if block.lang == "python"
               else ["bash", "-euo", "pipefail", str(script)])
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{where} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stderr, f"{where}:\n{proc.stderr[-3000:]}"
    if skipped:
        pytest.skip("; ".join(skipped))


def test_blocks_not_run_say_why():
    for path in DOCS:
        for block in doc_blocks(path):
            if block.not_run is not None:
                assert len(block.not_run) > 10, f"{path.name}:{block.line}: give the reason"


def test_readme_cites_nothing_a_user_does_not_have():
    """No "SPEC §N" or seed names in the README: the user has neither the SPEC nor the seeds."""
    text = README.read_text(encoding="utf-8")
    for needle in ("SPEC §", "seed00", "../shared"):
        assert needle not in text, needle
