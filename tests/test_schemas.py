"""The result tables are declared once (schemas.py): what the engine returns and what a run
directory holds have exactly those columns and types, and the package's modules import each
other without a cycle."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import polars as pl
import pytest

from jsoneval_polars import evaluate, schemas
from jsoneval_polars.results import read_results

PACKAGE = Path(__file__).resolve().parent.parent / "jsoneval_polars"
SAMPLE = PACKAGE / "sample"


@pytest.fixture(scope="module")
def sample_result():
    config = json.loads((SAMPLE / "config.json").read_text())
    return evaluate(SAMPLE / "gt.ndjson", SAMPLE / "aio.ndjson", config=config)


@pytest.mark.parametrize("table", sorted(schemas.TABLES))
def test_engine_tables_have_the_declared_columns(sample_result, table):
    assert dict(getattr(sample_result, table).schema) == schemas.TABLES[table]


def test_a_run_directory_holds_the_declared_tables(sample_result, tmp_path):
    sample_result.write(tmp_path / "run")
    stored = read_results(tmp_path / "run")
    for table, columns in schemas.TABLES.items():
        assert dict(getattr(stored, table).collect_schema()) == columns, table


def test_metadata_columns_follow_doc_id_in_documents_and_end_fields():
    gt = [{"doc_id": "a", "model": "m1", "x": 1}, {"doc_id": "b", "model": "m2", "x": 2}]
    aio = [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 3}]
    result = evaluate(gt, aio, metadata=["model"])
    assert result.documents.columns == ["doc_id", "model", *list(schemas.DOCUMENTS)[1:]]
    assert result.fields.columns == [*schemas.FIELDS, "model"]
    assert result.documents.schema["model"] == pl.String


def test_spark_declares_the_same_tables():
    pytest.importorskip("pyarrow")
    from jsoneval_polars import spark

    for name, declared in [("documents", spark.DOCUMENTS_SCHEMA), ("fields", spark.FIELDS_SCHEMA),
                           ("counts", spark.COUNTS_SCHEMA), ("errors", spark.ERRORS_SCHEMA),
                           ("alignments", spark.ALIGNMENTS_SCHEMA),
                           ("attributes", spark.ATTRIBUTES_SCHEMA)]:
        assert declared.names == list(schemas.TABLES[name]), name


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules a module imports, at its top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            found.update(n for n in names if n in modules)
    return found


def test_no_import_cycle_between_the_package_modules():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    graph = {m: _imports(PACKAGE / f"{m}.py", modules) for m in modules}
    state: dict[str, str] = {}  # "open" while on the DFS stack, then "done"

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for dep in sorted(graph[module]):
            if state.get(dep) == "open":
                cycle = trail[trail.index(dep):] + [module, dep]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep, [*trail, module])
        state[module] = "done"

    for module in sorted(modules):
        if module not in state:
            visit(module, [])
