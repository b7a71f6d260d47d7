"""Benchmarks of `harness run`: wall time of `make run` end to end with the images
present, the control side's peak memory, ops/s reached against --rate (issue 7), and
acknowledged sends/s of the queue workload at --rate 5000 (issue 8).

Each run is a subprocess timed from outside; its peak RSS comes from wait4(2).
Usage: .venv/bin/python bench/bench_run.py [--runs 3] [--rates 100,500,2000]
       [--queue-rate 5000] [--skip-make-run] [--skip-kv]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Runs argv; returns (wall seconds, peak RSS in MiB, exit code)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - started, usage.ru_maxrss / 1024, proc.returncode


def make_run(runs: int) -> None:
    """Times `make run` (60 s of workload, partition-leader) as a newcomer runs it."""
    walls, peaks = [], []
    for _ in range(runs):
        wall, peak, code = timed(["make", "run"])
        walls.append(wall)
        peaks.append(peak)
        print(f"  make run: {wall:.1f} s, peak RSS {peak:.0f} MiB, exit {code}", flush=True)
    print(
        f"make run (60 s workload): median {statistics.median(walls):.1f} s "
        f"(target <= 120 s); peak RSS median {statistics.median(peaks):.0f} MiB "
        f"(target <= 2048 MiB)"
    )


def rate(target: float, concurrency: int, runs: int, workload: str = "kv") -> None:
    """Runs 20 s with no nemesis at a target rate; prints the ok ops/s reached (for the
    queue workload, the acknowledged sends/s)."""
    reached = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as results:
            argv = [
                sys.executable,
                "-m",
                "harness",
                "run",
                "--nemesis",
                "none",
                "--time-limit",
                "20",
                "--rate",
                str(target),
                "--concurrency",
                str(concurrency),
                "--results",
                results,
                "--name",
                "bench-rate",
                "--workload",
                workload,
            ]
            _, peak, code = timed(argv)
            done = Path(results) / "latest" / "results.json"
            if not done.exists():
                print(f"  rate {target:g}: the run exited {code} without results", flush=True)
                continue
            reached.append(_per_second(json.loads(done.read_text()), workload))
            print(
                f"  {workload} rate {target:g}, concurrency {concurrency}: "
                f"{reached[-1]:.0f}/s, peak RSS {peak:.0f} MiB",
                flush=True,
            )
    what = "acknowledged sends/s" if workload == "queue" else "ops/s"
    median = f"{statistics.median(reached):.0f}" if reached else "n/a"
    print(f"{workload} --rate {target:g} --concurrency {concurrency}: median {median} {what}")


def _per_second(body: dict[str, Any], workload: str) -> float:
    if workload == "queue":
        return float(body["queue"]["acknowledged"]) / 20.0
    ops = body["stats"]["count"] - body["final"].get("read", 0)
    return float(ops) / 20.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rates", default="100,500,2000")
    parser.add_argument("--queue-rate", type=float, default=5000.0)
    parser.add_argument("--skip-make-run", action="store_true")
    parser.add_argument("--skip-kv", action="store_true")
    args = parser.parse_args()
    if not args.skip_make_run:
        make_run(args.runs)
    if not args.skip_kv:
        for target in (float(r) for r in args.rates.split(",")):
            for concurrency in (5, 20) if target > 500 else (5,):
                rate(target, concurrency, args.runs)
    for concurrency in (5, 20):
        rate(args.queue_rate, concurrency, args.runs, workload="queue")


if __name__ == "__main__":
    main()
