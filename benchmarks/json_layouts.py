"""JSON arrays and pretty-printed objects against NDJSON: the same records scored by
``jsoneval score`` (sample config) from NDJSON, from a JSON array on one line (as ``json.dump``
writes it), from an array with one element per line and from objects indented as ``jq .``
writes them, alternating in the same run (docs/DECISIONS.md 109, 110).

    python benchmarks/json_layouts.py [--n 100000 | --data DIR] [--repeats 3]

Data: benchmarks/generate.py (seed 0), generated into benchmarks/data/<n>/ unless it is there
(or the gt.ndjson and aio.ndjson of ``--data``); the other layouts are written from it into a
temporary folder. Wall seconds and the peak resident memory of the command's process tree
(sampled every 50 ms), medians of ``repeats``; the ratio to NDJSON is the median of each
round's ratio. Every layout must give NDJSON's micro-F1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import CONFIG, _run, ensure_data  # noqa: E402

_SCORE = """
import json, sys, tempfile, time
from jsoneval_polars.cli import main

if __name__ == "__main__":
    gt, aio, config = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        code = main(["score", "--gt", gt, "--aio", aio, "--config", config, "--out", out,
                     "--quiet"])
        seconds = time.perf_counter() - t
        summary = json.load(open(out + "/summary.json"))
    assert code == 0, code
    print(json.dumps({"seconds": seconds, "n": summary["n_documents"],
                      "micro_f1": summary["micro_f1"]}))
"""


def _write_layouts(data: Path, folder: Path) -> dict[str, dict[str, Path]]:
    layouts = {
        "array, one line": lambda lines: b"[" + b",".join(lines) + b"]",
        "array, an element a line": lambda lines: b"[\n" + b",\n".join(lines) + b"\n]\n",
        "objects, indented (jq .)": lambda lines: b"".join(
            json.dumps(json.loads(line), indent=2, ensure_ascii=False).encode() + b"\n"
            for line in lines),
    }
    files = {"NDJSON": {side: data / f"{side}.ndjson" for side in ("gt", "aio")}}
    for number, (name, write) in enumerate(layouts.items()):
        files[name] = {}
        for side in ("gt", "aio"):
            lines = (data / f"{side}.ndjson").read_bytes().rstrip(b"\n").split(b"\n")
            files[name][side] = folder / f"{side}-{number}.json"
            files[name][side].write_bytes(write(lines))
    return files


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--data", type=Path, help="a folder with gt.ndjson and aio.ndjson")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    data = args.data or ensure_data(args.n)
    if args.data:
        with open(data / "gt.ndjson", "rb") as f:
            args.n = sum(1 for line in f if line.strip())
    with tempfile.TemporaryDirectory(dir=data.parent) as tmp:
        files = _write_layouts(data, Path(tmp))
        runs: dict[str, list[dict]] = {name: [] for name in files}
        for _ in range(args.repeats):
            for name, sides in files.items():
                runs[name].append(_run(_SCORE, str(sides["gt"]), str(sides["aio"]),
                                       str(CONFIG)))
    f1 = {r["micro_f1"] for rs in runs.values() for r in rs}
    if len(f1) != 1:
        raise SystemExit(f"the formats disagree on micro-F1: {sorted(f1)}")
    print(f"{args.n:,} pairs, `jsoneval score` with the sample config, medians of "
          f"{args.repeats}; micro-F1 {f1.pop():.6f} in every run\n")
    print("| input | s | docs/s | ÷ NDJSON (per round) | peak RSS MB |")
    print("|---|---:|---:|---|---:|")
    for name, rs in runs.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        ratios = [r["seconds"] / base["seconds"] for r, base in zip(rs, runs["NDJSON"],
                                                                    strict=True)]
        print(f"| {name} | {seconds:.2f} | {args.n / seconds:,.0f} | "
              f"{statistics.median(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)}) | "
              f"{statistics.median(r['rss_mb'] for r in rs):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
