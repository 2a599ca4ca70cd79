"""Record options at the engine's speed (docs/DECISIONS.md 85, 86): ``jsoneval score`` on the
generated invoice pairs as they are, with ``--by currency`` (currency is then a slice label,
not a scored field), with each document in a member (``--gt-field doc --aio-field out``, the
AIO's as JSON text in a string, as a model's answer is stored), and the same with one answer in
five in a fenced code block (which needs SPEC §8's extraction, the Python path's, DECISIONS
87), this tree beside an older revision, alternating, in one run.

    python benchmarks/options.py [--n 100000] [--data DIR] [--repeats 5] [--old REV]

Each run is a ``python -m jsoneval_polars score`` process of its own, every table written as
Parquet; its wall seconds, and its CPU seconds with its children's (``wait4``: an older
revision's worker processes). ``--old REV``
checks REV out as a ``git worktree`` under /tmp and builds its extension there (cargo, about a
minute the first time). The table gives medians, the ratio of this tree to the old one, the
micro-F1 (the same documents in members score as the plain ones) and whether every run of a
row had it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from revisions import old_tree  # noqa: E402  (benchmarks/ is not a package)
from run import ensure_data  # noqa: E402

CONFIG = ROOT / "jsoneval_polars" / "sample" / "config.json"
#: option rows: (data variant, command-line options)
OPTIONS = {
    "plain": ("plain", []),
    "--by currency": ("plain", ["--by", "currency"]),
    "--gt-field/--aio-field": ("members", ["--gt-field", "doc", "--aio-field", "out"]),
    "the same, 1 in 5 fenced": ("fenced", ["--gt-field", "doc", "--aio-field", "out"]),
}


def members_data(plain: Path, fenced: int = 0) -> Path:
    """The pairs with each document in a member: GT ``{"doc_id", "doc": {...}}``, AIO
    ``{"doc_id", "out": "<the document as JSON text>"}``, every ``fenced``-th answer (0: none)
    in a fenced code block after a sentence (made once, beside the plain data)."""
    import orjson

    out = plain.parent / f"{plain.name}-members{f'-fenced{fenced}' if fenced else ''}"
    if (out / "aio.ndjson").is_file():
        return out
    out.mkdir(exist_ok=True)
    for side, member, as_text in (("gt", "doc", False), ("aio", "out", True)):
        with open(plain / f"{side}.ndjson", "rb") as src, open(out / f"{side}.ndjson", "wb") as dst:
            for i, line in enumerate(src):
                record = orjson.loads(line)
                doc_id = record.pop("doc_id")
                document = orjson.dumps(record).decode() if as_text else record
                if as_text and fenced and i % fenced == 0:
                    document = f"Here is the invoice:\n```json\n{document}\n```"
                dst.write(orjson.dumps({"doc_id": doc_id, member: document}) + b"\n")
    return out


def score(tree: Path | None, data: Path, options: list[str]) -> dict:
    """One ``jsoneval score`` run: wall and CPU seconds, micro-F1."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(data / "gt.ndjson"),
             "--aio", str(data / "aio.ndjson"), "--config", str(CONFIG), "--out", str(out),
             "--quiet", *options],
            env=env, cwd=tmp, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        stderr = proc.stderr.read()
        proc.stderr.close()
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"score failed ({' '.join(options) or 'no options'}): {stderr}")
        summary = json.loads((out / "summary.json").read_text())
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "micro_f1": summary["micro_f1"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--data", type=Path, help="generated pairs (default: benchmarks/data/N)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--old", help="revision of the engine to run beside this one")
    args = parser.parse_args()
    plain = args.data or ensure_data(args.n)
    data = {"plain": plain, "members": members_data(plain),
            "fenced": members_data(plain, fenced=5)}
    engines: dict[str, Path | None] = {"this": None}
    if args.old:
        engines[f"old {args.old}"] = old_tree(args.old)
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeats):  # alternating, so the machine's load falls on every row
        for option, (variant, extra) in OPTIONS.items():
            for engine, tree in engines.items():
                runs.setdefault((option, engine), []).append(score(tree, data[variant], extra))
    print(f"{args.n:,} pairs, {args.repeats} runs each (medians)\n")
    print("| options | engine | wall s | CPU s | docs/s | wall ÷ old | CPU ÷ old | micro-F1 | "
          "same in every run |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for option in OPTIONS:
        old = runs.get((option, f"old {args.old}")) if args.old else None
        for engine in engines:
            rows = runs[(option, engine)]
            wall = statistics.median(r["wall"] for r in rows)
            cpu = statistics.median(r["cpu"] for r in rows)
            ratios = ["—", "—"]
            if old is not None and engine == "this":
                ratios = [f"{wall / statistics.median(r['wall'] for r in old):.2f}",
                          f"{cpu / statistics.median(r['cpu'] for r in old):.2f}"]
            same = len({r["micro_f1"] for r in rows + (old or [])}) == 1
            print(f"| {option} | {engine} | {wall:.2f} | {cpu:.2f} | {args.n / wall:,.0f} | "
                  f"{ratios[0]} | {ratios[1]} | {rows[0]['micro_f1']:.6f} | "
                  f"{'yes' if same else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
