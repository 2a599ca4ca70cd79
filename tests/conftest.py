import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# the tests' own helper modules (reference.py, conformance.py, strategies.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))

# CI draws the same examples every run (a landing must not depend on a lucky draw); local runs
# keep drawing new ones, which is how the engine/reference disagreements were found.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def messy(tmp_path: Path) -> tuple[Path, Path]:
    deep = '{"doc_id":"deep","a":' + "[" * 1100 + "]" * 1100 + "}"
    gt = _write(
        tmp_path / "gt.ndjson",
        [
            '{"doc_id":"1","a":1}',
            '{"doc_id":"2","a":NaN,"b":1e400}',
            "not json",
            "[1,2]",
            '{"doc_id":"1","a":2}',
            '{"doc_id":"3","a":1,"a":2}',
            '{"doc_id":"4","big":123456789012345678901234567890}',
            '{"doc_id":"5","s":"\\ud800"}',
            deep,
            '"a string root"',
        ],
    )
    aio = _write(
        tmp_path / "aio.ndjson",
        [
            '{"doc_id":"1","a":1}',
            '{"doc_id":"2","a":null}',
            '{"doc_id":"3","a":2}',
            '{"doc_id":"4","big":123456789012345678901234567891}',
            '{"doc_id":"5","s":"x"}',
            '{"doc_id":"7","x":[1,{"a":1}]}',
            "{broken",
        ],
    )
    return gt, aio
