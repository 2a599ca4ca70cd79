"""Running the README's Python examples in the tests (each one is part of the documentation)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def run_readme_block(heading: str | None = None, namespace: dict | None = None) -> dict:
    """Execute the first ```python block of README.md (after ``heading`` when given, e.g.
    ``"\\n## Spark\\n"``) and return its namespace."""
    text = README.read_text(encoding="utf-8")
    if heading is not None:
        assert heading in text, f"README has no section {heading.strip()!r}"
        text = text.split(heading, 1)[1]
    block = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert block, f"README has no python block after {heading!r}"
    namespace = {} if namespace is None else namespace
    exec(compile(block.group(1), f"README.md ({(heading or 'top').strip()})", "exec"), namespace)
    return namespace
