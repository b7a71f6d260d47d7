"""Benchmark of the transaction checker's core: reading and checking a simulated
100,000-transaction history.

Run: .venv/bin/python bench/bench_txn_check.py [--txns N] [--processes P] [--partitions K]
[--runs R] [--history FILE] (--history: use FILE, writing it first if it does not exist).
The history comes from the unit tests' strictly serializable simulator
(tests/support/txn_sim.py: transactions of 1 to 4 sends and polls, 10% aborted, 5% info, final
drains) and is written once as history.jsonl. Each run is a fresh subprocess that loads
it with history.load and the transaction reader (checkers/txn_ops.TxnStream), then runs
checkers/txn_check.check_txns; it reports the load and check times, the peak RSS and the
anomaly counts (all zero: the history is serializable). The target: load + check <= 30 s.
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

TARGET_S = 30.0


def generate(path: Path, txns: int, processes: int, partitions: int) -> dict[str, int]:
    """Writes the history; returns its size (events, bytes)."""
    from tests.support.txn_sim import TxnSimConfig, simulate, write_jsonl

    config = TxnSimConfig(processes=processes, partitions=partitions, txns=txns)
    events, _ = simulate(1, config)
    write_jsonl(events, path)
    return {"events": len(events), "bytes": path.stat().st_size}


def run_child(path: str) -> dict[str, Any]:
    """Loads and checks the history in this process. Returns the times, RSS and counts."""
    from checkers.txn import TxnHistory, TxnStream, check_txns
    from history import load

    started = time.monotonic()
    history = load(path, keep_events=False, reader=TxnStream(path))
    loaded = time.monotonic()
    assert isinstance(history.read, TxnHistory), history.read
    result = check_txns(history.read)
    done = time.monotonic()
    return {
        "load": loaded - started,
        "check": done - loaded,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "transactions": result["transactions"],
        "graph": result["graph"],
        "anomalies": {kind: k["count"] for kind, k in result["kinds"].items() if k["count"]},
    }


def measure(path: Path) -> dict[str, Any]:
    """Runs one child on the history. Returns what it measured."""
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
    parser.add_argument("--txns", type=int, default=100_000)
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--history", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.history or Path(tmp) / "history.jsonl"
        if not path.exists():
            size = generate(path, args.txns, args.processes, args.partitions)
            print(
                f"history: {args.txns} transactions, {size['events']} events, {size['bytes']} bytes"
            )
        runs = [measure(path) for _ in range(args.runs)]
    for i, r in enumerate(runs, 1):
        total = r["load"] + r["check"]
        print(
            f"run {i}: load {r['load']:.2f} s + check {r['check']:.2f} s = {total:.2f} s, "
            f"peak RSS {r['rss_mib']:.0f} MiB"
        )
    median = statistics.median(r["load"] + r["check"] for r in runs)
    load = statistics.median(r["load"] for r in runs)
    check = statistics.median(r["check"] for r in runs)
    last = runs[-1]
    print(f"transactions: {last['transactions']}")
    print(f"graph: {last['graph']}")
    print(f"anomalies: {last['anomalies'] or 'none'}")
    verdict = "met" if median <= TARGET_S else "MISSED"
    print(
        f"median load + check: {median:.2f} s (load {load:.2f} s, check {check:.2f} s); "
        f"target <= {TARGET_S:.0f} s: {verdict}"
    )


if __name__ == "__main__":
    main()
