"""Where the cores go during ``jsoneval score``: each thread's CPU seconds, the process's cores
in use over time, and (``--halves``) what the threads lose to sharing one process.

    python benchmarks/cpu_use.py [--data benchmarks/data/100000] [--repeats 3] [--halves]

Runs the command on ``--data``'s ``gt.ndjson`` and ``aio.ndjson`` (benchmarks/generate.py)
with the sample config, reading every thread's user + system time from
``/proc/<pid>/task/*/stat`` every ``--interval`` seconds (Linux only). A thread's last reading
is its total (a thread that ends between readings loses its last interval). The threads are
grouped by name: the command's Python threads are all ``python``; the two that ran the most
are reported as the batch threads, beside Polars' pool (``polars-N``) and the rest.

``--halves`` splits both files at their middle line and scores each half in a process of its
own, with one batch thread each, side by side, alternating with the whole run: the same work
on the same cores without a GIL or a Polars pool shared between the batch threads (each
process imports its libraries on its own). The two halves' ``documents`` tables together hold
as many rows as the whole run's; the script checks it.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "jsoneval_polars" / "sample" / "config.json"
_TICK = os.sysconf("SC_CLK_TCK")


def thread_times(pid: int) -> dict[int, tuple[str, float]]:
    """Each live thread of process ``pid``: its name and CPU seconds (user + system)."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            times[int(tid)] = _stat(f"/proc/{pid}/task/{tid}/stat")
        except OSError:  # the thread ended since the listing
            continue
    return times


def _stat(path: str) -> tuple[str, float]:
    """The name and CPU seconds (user + system) of a ``/proc`` stat file. A process's counts
    its threads that have ended too."""
    stat = Path(path).read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return stat[stat.index("(") + 1:stat.rindex(")")], (int(fields[11]) + int(fields[12])) / _TICK


def watch(command: list[str], interval: float) -> tuple[float, dict, list[tuple[float, float]]]:
    """Run ``command``: its wall seconds, each thread's last reading and the process's
    (time, CPU seconds) readings."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT)
    last, readings = {}, []
    while proc.poll() is None:
        try:
            last.update(thread_times(proc.pid))
            # the process's own count: the sum of the live threads drops when one ends
            readings.append((time.perf_counter() - start, _stat(f"/proc/{proc.pid}/stat")[1]))
        except OSError:  # the process ended since poll()
            break
        time.sleep(interval)
    proc.wait()
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} exited with {proc.returncode}")
    return wall, last, readings


def by_role(threads: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per role: the two busiest ``python`` threads (the batch threads), the other
    Python threads, Polars' pool, and the rest by name."""
    python = sorted((cpu for name, cpu in threads.values() if name == "python"), reverse=True)
    roles: dict[str, float] = collections.defaultdict(float)
    roles["batch threads"] = sum(python[:2])
    roles["other python threads"] = sum(python[2:])
    for name, cpu in threads.values():
        if name != "python":
            roles["polars pool" if name.startswith("polars-") else name] += cpu
    return dict(roles)


def cores_in_use(readings: list[tuple[float, float]], step: float = 0.5) -> list[str]:
    """The process's cores in use per ``step`` seconds, from its (time, CPU) readings."""
    marks, (t0, c0) = [], (0.0, 0.0)
    for t, cpu in readings:
        if t - t0 >= step:
            marks.append(f"{t0:.1f}-{t:.1f}s {(cpu - c0) / (t - t0):.2f}")
            t0, c0 = t, cpu
    return marks


def split(data: Path, into: Path) -> list[Path]:
    """Both files of ``data`` cut at their middle line: two folders of half the pairs."""
    halves = [into / "first", into / "second"]
    for half in halves:
        half.mkdir(parents=True, exist_ok=True)
    for side in ("gt", "aio"):
        lines = (data / f"{side}.ndjson").read_bytes().splitlines(keepends=True)
        middle = len(lines) // 2
        for half, part in zip(halves, (lines[:middle], lines[middle:]), strict=True):
            (half / f"{side}.ndjson").write_bytes(b"".join(part))
    return halves


def score(data: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "jsoneval_polars", "score", "--gt", str(data / "gt.ndjson"),
            "--aio", str(data / "aio.ndjson"), "--config", str(CONFIG), "--out", str(out),
            "--quiet", *extra]


def side_by_side(commands: list[list[str]]) -> float:
    """Wall seconds of ``commands`` run at once."""
    start = time.perf_counter()
    procs = [subprocess.Popen(command, cwd=ROOT) for command in commands]
    if any(proc.wait() for proc in procs):
        raise SystemExit("a half's run failed")
    return time.perf_counter() - start


def documents(out: Path) -> int:
    return pl.scan_parquet(out / "documents" / "*.parquet").select(pl.len()).collect().item()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--interval", type=float, default=0.05)
    ap.add_argument("--halves", action="store_true")
    args = ap.parse_args()
    missing = [name for name in ("gt.ndjson", "aio.ndjson") if not (args.data / name).is_file()]
    if missing:
        raise SystemExit(f"{args.data} has no {' or '.join(missing)}: make the pairs with "
                         f"python benchmarks/generate.py --n 100000 --out {args.data}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        halves = split(args.data, tmp / "halves") if args.halves else []
        walls, half_walls, roles = [], [], collections.defaultdict(list)
        for _ in range(args.repeats):
            shutil.rmtree(tmp / "whole", ignore_errors=True)
            wall, threads, readings = watch(score(args.data, tmp / "whole"), args.interval)
            walls.append(wall)
            for role, cpu in by_role(threads).items():
                roles[role].append(cpu)
            print(f"whole run {wall:.2f} s, {sum(cpu for _, cpu in threads.values()):.2f} CPU-s;"
                  f" cores in use: {', '.join(cores_in_use(readings))}")
            if halves:
                outs = [tmp / f"half{i}" for i in range(len(halves))]
                for out in outs:
                    shutil.rmtree(out, ignore_errors=True)
                half_walls.append(side_by_side([score(half, out, "--workers", "1")
                                                for half, out in zip(halves, outs, strict=True)]))
                print(f"two halves side by side {half_walls[-1]:.2f} s")
        print(f"whole run, median of {args.repeats}: {statistics.median(walls):.2f} s")
        for role, cpus in sorted(roles.items(), key=lambda kv: -statistics.median(kv[1])):
            print(f"  {role:22s} {statistics.median(cpus):6.2f} CPU-s")
        if halves:
            ratio = statistics.median(h / w for h, w in zip(half_walls, walls, strict=True))
            print(f"two one-thread processes on the halves ÷ the whole run: {ratio:.3f}")
            same = sum(documents(tmp / f"half{i}") for i in range(2)) == documents(tmp / "whole")
            print(f"same documents: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
