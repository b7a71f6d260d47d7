"""Benchmark of the queue checker: load and check a simulated 1,000,000-op queue history.

Run: .venv/bin/python bench/bench_queue_check.py [--ops N] [--partitions P] [--runs R]
[--history FILE] (--history: use FILE, writing it first if it does not exist).
The history comes from the unit tests' simulated topic (tests/unit/queue_sim.py: 10
workers, sends and polls, assigns and seeks, info ops, transaction markers, 100 planted
losses, final drains) and is written once as history.jsonl in a temporary folder. Each
run loads and checks it in a fresh subprocess, which reports its times and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_S, TARGET_MIB = 30.0, 2048
PLANTED_LOSSES = 100


def generate(path: Path, ops: int, partitions: int) -> dict[str, int]:
    """Writes the history; returns its size (events, records, bytes)."""
    from tests.unit.queue_sim import SimConfig, simulate, write_jsonl

    config = SimConfig(partitions=partitions, workers=10, ops=ops, losses=PLANTED_LOSSES)
    events, _ = simulate(1, config)
    write_jsonl(events, path)
    records = sum(
        len(e["value"]) if e["f"] == "drain" else sum(len(rs) for rs in e["value"].values())
        for e in events
        if e["type"] == "ok" and e["f"] in ("poll", "drain")
    )
    return {"events": len(events), "records": records, "bytes": path.stat().st_size}


def run_child(path: str) -> dict[str, Any]:
    """Loads and checks the history in this process; returns times, verdict and peak RSS."""
    from checkers import queue
    from harness.history import load

    started = time.monotonic()
    history = load(path)
    loaded = time.monotonic()
    result = queue.check(history.events, idempotent=False)
    done = time.monotonic()
    return {
        "load": loaded - started,
        "check": done - loaded,
        "total": done - started,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "valid": result["valid"],
        "acknowledged": result["acknowledged"],
        "lost": result["lost"],
    }


def measure(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    measured: dict[str, Any] = json.loads(out.stdout)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--history", type=Path, help="use this history file (made if missing)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = args.history or Path(folder) / "history.jsonl"
        if not path.exists():
            started = time.monotonic()
            size = generate(path, args.ops, args.partitions)
            print(
                f"history: {args.ops:,} ops, {args.partitions} partitions, {size['events']:,} "
                f"events, {size['records']:,} polled or drained records, "
                f"{size['bytes'] / 2**20:,.0f} MiB (made in {time.monotonic() - started:.0f} s)"
            )
        runs = [measure(path) for _ in range(args.runs)]
    for i, r in enumerate(runs, 1):
        print(
            f"run {i}: load {r['load']:.2f} s, check {r['check']:.2f} s, total "
            f"{r['total']:.2f} s, peak RSS {r['rss_mib']:,.0f} MiB; valid {r['valid']}, "
            f"{r['acknowledged']:,} acknowledged, {r['lost']} lost"
        )
    medians = {k: statistics.median(r[k] for r in runs) for k in ("load", "check", "total")}
    rss = statistics.median(r["rss_mib"] for r in runs)
    met = medians["total"] <= TARGET_S and rss <= TARGET_MIB
    print(
        f"median of {len(runs)}: load {medians['load']:.2f} s, check {medians['check']:.2f} s, "
        f"total {medians['total']:.2f} s, peak RSS {rss:,.0f} MiB "
        f"(target <= {TARGET_S:.0f} s, <= {TARGET_MIB} MiB: {'met' if met else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
