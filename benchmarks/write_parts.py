"""Time the write of one batch's ``fields`` part, the ways the layout can write it.

    python benchmarks/write_parts.py [--data benchmarks/data/100000] [--n 7000] [--repeats 7]

Scores the first ``n`` pairs of a generated set (``benchmarks/generate.py``) with the core
(files driver settings, ``dictionary=True``), then writes its ``fields`` table to a temporary
folder, alternating: Polars' writer on the decoded strings (what every part was before
docs/DECISIONS.md 71), ``layout.write_part`` on the Enum columns (pyarrow, dictionaries as
they are, statistics for doc_id only, the free text not tried as a dictionary: DECISIONS 76),
the same with statistics for every label and the text tried as a dictionary (the layout
before DECISIONS 76), with statistics for every column, and ``write_part`` as it was before
DECISIONS 127 (every column OPTIONAL, the similarities tried as a dictionary, pyarrow's
1,024-value write batches). ``--table counts`` times the ``counts`` part the same ways.
Medians of ``repeats``, wall and CPU seconds; the dictionary part reads back equal to the
strings.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jsoneval_polars import load_config  # noqa: E402
from jsoneval_polars.core import score_batch  # noqa: E402
from jsoneval_polars.ingest import pair_inputs  # noqa: E402
from jsoneval_polars.layout import _arrow_table, write_part  # noqa: E402


def _batch(data: Path, n: int) -> Any:
    sides = []
    for name in ("gt", "aio"):
        with (data / f"{name}.ndjson").open("rb") as f:
            sides.append(b"".join(itertools.islice(f, n)))
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"{name}.ndjson" for name in ("gt", "aio")]
        for path, text in zip(paths, sides, strict=True):
            path.write_bytes(text)
        pairs = pair_inputs(*paths)
        config = load_config(ROOT / "jsoneval_polars" / "sample" / "config.json")
        return score_batch(pairs, config, dictionary=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "100000")
    ap.add_argument("--n", type=int, default=7000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--table", choices=("fields", "counts"), default="fields")
    args = ap.parse_args()
    coded = getattr(_batch(args.data, args.n), args.table)
    strings = coded.with_columns(pl.col(pl.Enum).cast(pl.String))
    labels = [c for c, t in coded.schema.items() if isinstance(t, pl.Enum)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        ways = {
            "Polars, strings": lambda: strings.write_parquet(out / "a.parquet"),
            "dictionaries, doc_id statistics (write_part)": lambda: write_part(
                out, args.table, coded, 0),
            "write_part before DECISIONS 127": lambda: pq.write_table(
                _arrow_table(coded), out / "d.parquet", compression="zstd", store_schema=False,
                row_group_size=512**2, write_statistics=["doc_id"],
                use_dictionary=[c for c in coded.columns if c not in ("gt_value", "aio_value")]),
            "dictionaries, label statistics": lambda: pq.write_table(
                coded.to_arrow(), out / "b.parquet", compression="zstd", store_schema=False,
                row_group_size=512**2, write_statistics=labels),
            "dictionaries, every statistic": lambda: pq.write_table(
                coded.to_arrow(), out / "c.parquet", compression="zstd", store_schema=False,
                row_group_size=512**2),
        }
        times: dict[str, list[tuple[float, float]]] = {w: [] for w in ways}
        for _ in range(args.repeats):
            for way, write in ways.items():
                t, cpu = time.perf_counter(), time.process_time()
                write()
                times[way].append((time.perf_counter() - t, time.process_time() - cpu))
        equal = pl.read_parquet(out / args.table / "part-000000.parquet").equals(strings)
        sizes = {"Polars, strings": out / "a.parquet",
                 "dictionaries, doc_id statistics (write_part)":
                     out / args.table / "part-000000.parquet",
                 "write_part before DECISIONS 127": out / "d.parquet",
                 "dictionaries, label statistics": out / "b.parquet",
                 "dictionaries, every statistic": out / "c.parquet"}
        print(f"{args.table} part of {args.n} pairs: {coded.height} rows, labels {labels}")
        print(f"  the dictionary part reads back as the strings: {equal}")
        for way, ts in times.items():
            print(f"  {way:45s} {statistics.median(t for t, _ in ts):.4f} s "
                  f"({statistics.median(c for _, c in ts):.4f} CPU-s)  "
                  f"{sizes[way].stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
