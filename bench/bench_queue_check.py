"""Benchmark of the queue checker: `harness check` on a simulated 1,000,000-op queue history.

Run: .venv/bin/python bench/bench_queue_check.py [--ops N] [--partitions P] [--runs R]
[--history FILE] [--baseline DIR] [--memory M] (--history: use FILE, writing it first if
it does not exist; --baseline: also time `harness check` of the checkout in DIR, say a
worktree of the commit before a change, alternating with this one's run by run, and print
the ratios; --memory: then M more runs of each, untimed, sampling the summed PSS of all
their processes, which the target is judged on instead of the peak RSS).
The history comes from the unit tests' simulated topic (tests/support/queue_sim.py: 10
workers, sends and polls, assigns and seeks, info ops, transaction markers, 100 planted
losses, final drains) and is written once as history.jsonl in a temporary folder. Each
run is two fresh subprocesses: `python -m harness check FILE --json` timed from outside,
its peak RSS from wait4(2), the model guessed as a user would leave it; then the same
path in process (the history read as harness check reads it, in halves by two processes
when it may fork, then the check), which reports the load and check times apart. CPU is
the process's and its children's (a long queue history's reading and check fork one
each); peak RSS is the largest of theirs.
"""

from __future__ import annotations

import argparse
import json
import os
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

TARGET_S, TARGET_MIB = 10.0, 10**9 / 2**20  # 1 GB, read as the stricter 10^9 bytes
PLANTED_LOSSES = 100


def generate(path: Path, ops: int, partitions: int) -> dict[str, int]:
    """Writes the history; returns its size (events, records, bytes)."""
    from tests.support.queue_sim import SimConfig, simulate, write_jsonl

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
    """Loads and checks the history in this process as `harness check` does; returns the
    times, verdict and peak RSS."""
    from checkers import queue
    from checkers.queue import load_queue_halves
    from history import load

    started = time.monotonic()
    jobs = os.cpu_count() or 1  # as harness check: in halves when it may fork
    history = load_queue_halves(path, jobs) or load(
        path, keep_events=False, reader=queue.QueueStream(path)
    )
    loaded = time.monotonic()
    result = queue.check_read(history.read, jobs=jobs)  # as harness check
    done = time.monotonic()
    return {
        "load": loaded - started,
        "check": done - loaded,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "valid": result["valid"],
        "acknowledged": result["acknowledged"],
        "lost": result["lost"],
    }


def measure_split(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    measured: dict[str, Any] = json.loads(out.stdout)
    return measured


def measure_cli(path: Path, root: Path = ROOT) -> dict[str, Any]:
    """Runs `python -m harness check PATH --json` of the checkout in root; returns its wall
    and CPU (user + system) times, peak RSS, exit code and verdict."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "harness", "check", str(path), "--json"]
    started = time.monotonic()
    child = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE)
    assert child.stdout is not None
    printed = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    outcome = json.loads(printed)
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "exit": child.returncode,
        "valid": outcome["valid"],
        "acknowledged": outcome["acknowledged"],
        "lost": outcome["lost"],
    }


def summed_pss(path: Path, root: Path = ROOT) -> float:
    """Runs `python -m harness check PATH --json` of the checkout in root, sampling every
    0.1 s the PSS of it and every process it forked (Linux's smaps_rollup: a page two
    processes share counts half to each, so the sum is what they hold together). Returns
    the peak of that sum, MiB."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "harness", "check", str(path), "--json"]
    child = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL)
    peak = 0
    while child.poll() is None:
        peak = max(peak, sum(_pss_kib(pid) for pid in _process_tree(child.pid)))
        time.sleep(0.1)
    return peak / 1024


def _process_tree(pid: int) -> list[int]:
    found = [pid]
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as children:
                for child in children.read().split():
                    found += _process_tree(int(child))
    except OSError:  # it ended while being looked at
        pass
    return found


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            return next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def report_memory(before: list[float], after: list[float]) -> None:
    """Prints the summed PSS peaks of the baseline's runs and this checkout's, and their
    medians."""
    runs = ", ".join(f"{m:,.0f}" for m in after)
    line = f"summed PSS, peak: this {runs} MiB, median {statistics.median(after):,.0f}"
    if before:
        old = ", ".join(f"{m:,.0f}" for m in before)
        line += f"; baseline {old} MiB, median {statistics.median(before):,.0f}"
    print(line)


def report_baseline(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    """Prints each pair of runs, the baseline's then this checkout's, and the medians of
    their figures and of the ratios this/baseline, pair by pair."""
    for i, (old, new) in enumerate(zip(before, after, strict=True), 1):
        print(
            f"pair {i}: baseline {old['wall']:.2f} s (CPU {old['cpu']:.2f} s, "
            f"{old['rss_mib']:,.0f} MiB, valid {old['valid']}, {old['lost']} lost), this "
            f"{new['wall']:.2f} s (CPU {new['cpu']:.2f} s, {new['rss_mib']:,.0f} MiB, valid "
            f"{new['valid']}, {new['lost']} lost)"
        )
    for figure in ("wall", "cpu", "rss_mib"):
        ratios = [new[figure] / old[figure] for old, new in zip(before, after, strict=True)]
        print(
            f"{figure}: baseline median {statistics.median(o[figure] for o in before):.2f}, "
            f"this {statistics.median(n[figure] for n in after):.2f}; ratio this/baseline "
            f"median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--history", type=Path, help="use this history file (made if missing)")
    parser.add_argument("--baseline", type=Path, help="also time the checkout in this folder")
    parser.add_argument(
        "--memory", type=int, default=0, help="then this many runs sampling the summed PSS"
    )
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
        baseline = []
        runs = []
        for _ in range(args.runs):
            if args.baseline:  # first, then this checkout: each pair as alike as can be
                baseline.append(measure_cli(path, args.baseline.resolve()))
            runs.append((measure_cli(path), measure_split(path)))
        memory_before: list[float] = []
        memory = []
        for _ in range(args.memory):  # apart from the timed runs: sampling costs a little
            if args.baseline:
                memory_before.append(summed_pss(path, args.baseline.resolve()))
            memory.append(summed_pss(path))
    if baseline:
        report_baseline(baseline, [cli for cli, _ in runs])
    if memory:
        report_memory(memory_before, memory)
    for i, (cli, split) in enumerate(runs, 1):
        print(
            f"run {i}: harness check {cli['wall']:.2f} s (CPU {cli['cpu']:.2f} s), "
            f"peak RSS {cli['rss_mib']:,.0f} MiB, "
            f"exit {cli['exit']}, valid {cli['valid']}, {cli['acknowledged']:,} acknowledged, "
            f"{cli['lost']} lost; in process: load {split['load']:.2f} s, check "
            f"{split['check']:.2f} s, peak RSS {split['rss_mib']:,.0f} MiB"
        )
    wall = statistics.median(cli["wall"] for cli, _ in runs)
    cpu = statistics.median(cli["cpu"] for cli, _ in runs)
    rss = statistics.median(memory or [cli["rss_mib"] for cli, _ in runs])
    load = statistics.median(split["load"] for _, split in runs)
    check = statistics.median(split["check"] for _, split in runs)
    met = wall <= TARGET_S and rss <= TARGET_MIB
    print(
        f"median of {len(runs)}: harness check {wall:.2f} s (CPU {cpu:.2f} s), "
        f"{'summed PSS' if memory else 'peak RSS'} {rss:,.0f} MiB "
        f"(target <= {TARGET_S:.0f} s, <= {TARGET_MIB:,.0f} MiB: {'met' if met else 'NOT met'}); "
        f"in process: load {load:.2f} s, check {check:.2f} s"
    )


if __name__ == "__main__":
    main()
