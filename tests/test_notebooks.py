"""The notebooks in notebooks/ run top to bottom in a fresh kernel; they are stored without
outputs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need the dev extra (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="notebook tests need the dev extra (nbclient)")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _run(path: Path, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return nb


def _outputs(nb) -> list[str]:
    """Each output's text; a cell's consecutive prints to one stream are one text (the kernel
    sends a slow loop's prints in as many messages as it happens to flush)."""
    texts = []
    for cell in nb.cells:
        previous = None
        for out in cell.get("outputs", []):
            stream = out.get("name") if out.get("output_type") == "stream" else None
            data = out.get("data", {})
            text = data.get("image/svg+xml") or data.get("text/plain") or out.get("text", "")
            if stream is not None and stream == previous:
                texts[-1] += text
            else:
                texts.append(text)
            previous = stream
    return texts


def test_the_expected_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "duckdb.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    nb = _run(path, tmp_path)  # raises CellExecutionError, naming the cell, on any failure
    outputs = _outputs(nb)
    assert all("Traceback" not in o for o in outputs)
    if path.stem == "quickstart":
        svgs = [o for o in outputs if o.lstrip().startswith("<svg")]
        assert len(svgs) == 3 and all('class="bar"' in s for s in svgs)
        assert 'class="threshold"' in svgs[2]
        assert (tmp_path / "report.html").is_file()
        # the planted regression is significant, the four flipped fields are not
        verdicts = next(o for o in outputs if "regressed:" in o)
        assert "regressed: micro-F1 delta -" in verdicts
        lines = dict(line.strip().split(":", 1) for line in verdicts.strip().splitlines())
        assert lines["regressed"].endswith(" significant")
        assert not lines["regressed"].endswith("not significant")
        assert lines["noisy"].endswith("not significant")
        pages = [out.get("data", {}).get("text/html", "") for cell in nb.cells
                 for out in cell.get("outputs", [])]
        assert any("Got worse (1 attributes)" in p and "vendor.name" in p for p in pages)
        assert (tmp_path / "results" / "fields" / "part-000000.parquet").is_file()
    if path.stem == "duckdb":
        from sample_runs import run_a

        mean_rqs, n_documents = ast.literal_eval(outputs[-1])  # scored from a DuckDB table
        assert n_documents == run_a().summary["n_documents"]
        assert mean_rqs == pytest.approx(run_a().summary["mean_rqs"])
