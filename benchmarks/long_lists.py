"""Long lists and long texts (issue 11): time and peak memory of ``evaluate``, this engine
beside an older revision, in one run.

    python benchmarks/long_lists.py [--old REV] [--cases a,b,...] [--limit-mb 6000]

Each case runs in its own subprocess (PYTHONPATH = this tree, or a ``git worktree`` of REV
under /tmp for the old engine), which generates its seeded input, times ``evaluate`` end to end
and prints one JSON line; the parent samples the child's resident memory every 20 ms (and
kills it past ``--limit-mb``: the old engine needs > 6 GB for 5,000 items) and reads its peak
from ``wait4``. Cases:

* ``invoice-2000``, ``invoice-5000``: one invoice with N line items per side (description
  FUZZY, matched on it; amount NUMERIC; AIO shuffled, 30% of descriptions edited, amounts
  perturbed, a few items dropped and added);
* ``records-2500x10``: three documents of 2,500 records x 10 fields (strings, integers, a
  date, a boolean, a float; default match fields), AIO shuffled and perturbed;
* ``text-1mb-fuzzy``, ``text-1mb-semantic``: two different 1 MB texts under FUZZY / SEMANTIC
  (the default lexical scorer);
* ``invoices-small``: 20,000 invoices of 1-10 line items (small lists must not get slower).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from revisions import old_tree  # noqa: E402  (benchmarks/ is not a package)

ROOT = HERE.parent
CASES = ("invoice-2000", "invoice-5000", "records-2500x10", "text-1mb-fuzzy",
         "text-1mb-semantic", "invoices-small")
WORDS = ("steel bolt nut washer screw bracket hinge valve pipe cable clamp gasket flange "
         "spring bearing seal filter pump motor sensor relay switch fuse panel").split()


# --- inputs (seeded) --------------------------------------------------------------------------


def _edit(rnd: random.Random, s: str, n: int) -> str:
    chars = list(s)
    for _ in range(n):
        p = rnd.randrange(len(chars))
        chars[p] = rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789")
    return "".join(chars)


def _aio_list(rnd: random.Random, items: list[dict], edit) -> list[dict]:
    out = [edit(dict(x)) for x in items if rnd.random() >= 0.02]
    out += [edit(dict(rnd.choice(items))) for _ in range(len(items) // 50)]
    rnd.shuffle(out)
    return out


def _invoice(rnd: random.Random, doc_id: str, n: int) -> tuple[dict, dict]:
    items = [
        {"description": " ".join(rnd.choice(WORDS) for _ in range(4)) + f" {rnd.randrange(10**6)}",
         "quantity": rnd.randint(1, 20), "amount": round(rnd.uniform(1, 1000), 2)}
        for _ in range(n)
    ]

    def edit(x: dict) -> dict:
        if rnd.random() < 0.3:
            x["description"] = _edit(rnd, x["description"], rnd.randint(1, 3))
        if rnd.random() < 0.2:
            x["amount"] = round(x["amount"] * rnd.uniform(0.95, 1.05), 2)
        return x

    head = {"doc_id": doc_id, "vendor": "ACME Industrial Supply", "total": 1234.5}
    return {**head, "line_items": items}, {**head, "line_items": _aio_list(rnd, items, edit)}


INVOICE_CONFIG = {
    "field_strategies": {"description": "FUZZY", "amount": "NUMERIC"},
    "lists": {"line_items": {"match_fields": ["description"], "threshold": 0.8,
                             "method": "greedy"}},
}


def _records(rnd: random.Random, doc_id: str, n: int) -> tuple[dict, dict]:
    cities = [f"City {c}" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    recs = [
        {"name": f"{rnd.choice(WORDS)} {rnd.choice(WORDS)}", "city": rnd.choice(cities),
         "ref": f"R-{rnd.randrange(10**6):06d}", "note": " ".join(rnd.choices(WORDS, k=5)),
         "qty": rnd.randint(1, 50), "year": rnd.randint(1990, 2025), "code": rnd.randrange(100),
         "date": f"2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",
         "active": rnd.random() < 0.5, "price": round(rnd.uniform(1, 500), 2)}
        for _ in range(n)
    ]

    def edit(x: dict) -> dict:
        if rnd.random() < 0.3:
            key = rnd.choice(["name", "note", "ref"])
            x[key] = _edit(rnd, x[key], 1)
        if rnd.random() < 0.1:
            x["qty"] += 1
        return x

    return ({"doc_id": doc_id, "records": recs},
            {"doc_id": doc_id, "records": _aio_list(rnd, recs, edit)})


def _text(rnd: random.Random, n: int) -> str:
    words = []
    size = 0
    while size < n:
        w = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
        words.append(w)
        size += len(w) + 1
    return " ".join(words)[:n]


def inputs(case: str) -> tuple[list[dict], list[dict], dict | None]:
    rnd = random.Random(11)
    if case.startswith("invoice-"):
        g, a = _invoice(rnd, "inv-0", int(case.split("-")[1]))
        return [g], [a], INVOICE_CONFIG
    if case == "records-2500x10":
        pairs = [_records(rnd, f"doc-{i}", 2500) for i in range(3)]
        return [g for g, _ in pairs], [a for _, a in pairs], None
    if case.startswith("text-1mb-"):
        strategy = case.rsplit("-", 1)[1].upper()
        g = {"doc_id": "t", "text": _text(rnd, 1 << 20)}
        a = {"doc_id": "t", "text": _text(rnd, 1 << 20)}
        return [g], [a], {"field_strategies": {"text": strategy}}
    if case == "invoices-small":
        pairs = [_invoice(rnd, f"inv-{i}", rnd.randint(1, 10)) for i in range(20_000)]
        return [g for g, _ in pairs], [a for _, a in pairs], INVOICE_CONFIG
    raise SystemExit(f"unknown case {case!r}; cases: {', '.join(CASES)}")


def child(case: str) -> None:
    gt, aio, config = inputs(case)
    import polars as pl

    from jsoneval_polars import evaluate

    evaluate([{"doc_id": "w", "t": "ab"}], [{"doc_id": "w", "t": "ac"}])  # imports, first calls
    started = time.perf_counter()
    result = evaluate(gt, aio, config=config)
    seconds = time.perf_counter() - started
    al = result.alignments
    matched = al.filter(pl.col("gt_index").is_not_null() & pl.col("aio_index").is_not_null())
    print(json.dumps({
        "seconds": seconds,
        "align_s": getattr(result, "timings", {}).get("align"),
        "matched": matched.height,
        "micro_f1": result.summary.get("micro_f1"),
        "warnings": result.errors.height,
    }))


# --- parent: run, sample, report -------------------------------------------------------------


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_case(case: str, tree: Path, limit_mb: float, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, __file__, "--child", case], env=env, cwd=tree,
                                stdout=out, stderr=err, text=True)
        killed = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            rss = _rss_mb(proc.pid)
            if rss > limit_mb:
                killed = f"killed at {rss:,.0f} MB (limit {limit_mb:,.0f})"
            elif time.perf_counter() - started > timeout:
                killed = f"killed after {timeout:.0f} s"
            if killed:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    row = {"case": case, "peak_mb": usage.ru_maxrss / 1024,
           "wall_s": time.perf_counter() - started}
    if killed or proc.returncode:
        row["error"] = killed or (stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return row
    row.update(json.loads(stdout.strip().splitlines()[-1]))
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--old", help="revision of the engine to run beside this one")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--limit-mb", type=float, default=6000)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    engines = [("this", ROOT)] + ([(f"old {args.old}", old_tree(args.old))] if args.old else [])
    print(f"{'case':<20} {'engine':<14} {'evaluate s':>10} {'align s':>8} {'peak MB':>9} "
          f"{'matched':>8}  notes")
    for case in args.cases.split(","):
        for name, tree in engines:
            r = run_case(case, tree, args.limit_mb, args.timeout)
            peak = f"{r['peak_mb']:,.0f}" if r.get("peak_mb") else "-"
            if "error" in r:
                print(f"{case:<20} {name:<14} {'-':>10} {'-':>8} {peak:>9} {'-':>8}  {r['error']}",
                      flush=True)
                continue
            align_s = f"{r['align_s']:.2f}" if r.get("align_s") is not None else "-"
            print(f"{case:<20} {name:<14} {r['seconds']:>10.2f} {align_s:>8} {peak:>9} "
                  f"{r['matched']:>8}  micro-F1 {r['micro_f1']:.4f}, {r['warnings']} warning "
                  "rows", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
