"""Running the documentation's code blocks in the tests (each one is part of the documentation).

Every fenced ``python`` and ``bash`` block of README.md and docs/*.md is executed, in order, in
one scratch directory per file (tests/test_docs.py), so a snippet cannot rot. Two HTML comments
on the line before a block change that:

* ``<!-- not run: REASON -->``: the block needs what a test cannot have (a YARN cluster, an hour
  of benchmarks, ``pip install`` of the project); REASON says what, and a test checks there is
  one.
* ``<!-- needs: MODULE -->``: the block runs only where MODULE imports (an optional extra such
  as pyspark or the embedding model); elsewhere it is skipped with that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]

_BLOCK = re.compile(
    r"(?:<!--\s*(?P<kind>not run|needs):\s*(?P<note>.*?)\s*-->\n)?"
    r"```(?P<lang>\w*)\n(?P<code>.*?)```",
    flags=re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int
    not_run: str | None = None  # the reason it is not executed
    needs: str | None = None  # a module that must import for it to run


def doc_blocks(path: Path) -> list[Block]:
    """The python and bash blocks of a Markdown file, in order."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        if m.group("lang") not in ("python", "bash"):
            continue
        kind, note = m.group("kind"), m.group("note")
        out.append(Block(
            m.group("lang"), m.group("code"), text.count("\n", 0, m.start("code")) + 1,
            note if kind == "not run" else None, note if kind == "needs" else None,
        ))
    return out


def run_readme_block(heading: str | None = None, namespace: dict | None = None) -> dict:
    """Execute the first ```python block of README.md (after ``heading`` when given, e.g.
    ``"\\n## Spark\\n"``) in this process and return its namespace."""
    text = README.read_text(encoding="utf-8")
    if heading is not None:
        assert heading in text, f"README has no section {heading.strip()!r}"
        text = text.split(heading, 1)[1]
    block = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert block, f"README has no python block after {heading!r}"
    namespace = {} if namespace is None else namespace
    exec(compile(block.group(1), f"README.md ({(heading or 'top').strip()})", "exec"), namespace)
    return namespace
