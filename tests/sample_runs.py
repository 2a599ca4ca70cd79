"""Two real runs of the bundled sample, shared by the integration tests (scored once per session).

Run A uses the sample's own config. Run B changes three things so that the diff has every kind
of change: a looser fuzzy threshold (some FP+FN become TP), exact numbers (some TP become
FP+FN) and list items aligned by index instead of by description (paths of list fields move,
so some rows exist in one run only).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from pathlib import Path

from jsoneval_polars import evaluate
from jsoneval_polars.pipeline import Result

SAMPLE = Path(str(resources.files("jsoneval_polars.sample")))
GT = SAMPLE / "gt.ndjson"
AIO = SAMPLE / "aio.ndjson"


def config_a() -> dict:
    return json.loads((SAMPLE / "config.json").read_text())


def config_b() -> dict:
    cfg = copy.deepcopy(config_a())
    cfg["fuzzy_threshold"] = 0.7
    cfg["numeric"] = {"rel_tol": 0.0, "abs_tol": 0.0}
    cfg["lists"] = {"line_items": {"method": "index"}}
    return cfg


@cache
def run_a() -> Result:
    return evaluate(GT, AIO, config=config_a())


@cache
def run_b() -> Result:
    return evaluate(GT, AIO, config=config_b())
