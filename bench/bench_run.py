"""Benchmarks of `harness run` (issue 7): wall time of `make run` end to end with the
images present, the control side's peak memory, and ops/s reached against --rate.

Each run is a subprocess timed from outside; its peak RSS comes from wait4(2).
Usage: .venv/bin/python bench/bench_run.py [--runs 3] [--rates 100,500,2000]
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


def rate(target: float, concurrency: int, runs: int) -> None:
    """Runs 20 s with no nemesis at a target rate; prints the ok ops/s reached."""
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
            ]
            _, peak, _ = timed(argv)
            body = json.loads((Path(results) / "latest" / "results.json").read_text())
            ops = body["stats"]["count"] - body["final"].get("read", 0)
            reached.append(ops / 20.0)
            print(
                f"  rate {target:g}, concurrency {concurrency}: {ops / 20.0:.0f} ops/s, "
                f"peak RSS {peak:.0f} MiB",
                flush=True,
            )
    print(
        f"--rate {target:g} --concurrency {concurrency}: median "
        f"{statistics.median(reached):.0f} ops/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rates", default="100,500,2000")
    parser.add_argument("--skip-make-run", action="store_true")
    args = parser.parse_args()
    if not args.skip_make_run:
        make_run(args.runs)
    for target in (float(r) for r in args.rates.split(",")):
        for concurrency in (5, 20) if target > 500 else (5,):
            rate(target, concurrency, args.runs)


if __name__ == "__main__":
    main()
