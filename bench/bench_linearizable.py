"""Benchmarks of the linearizability checker on histories of a simulated atomic register.

Run: .venv/bin/python bench/bench_linearizable.py [--runs N] [--case NAME]. Each run of each
case happens in a fresh subprocess, which reports wall time and peak RSS.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checkers.linearizable import MODELS, check
from history import Op


@dataclass(frozen=True)
class Case:
    """One benchmark: a history shape, whether it must be valid, and the time target."""

    name: str
    ops: int
    keys: int
    concurrency: int
    crash: float
    anomaly: bool
    target_s: float
    domain: int = 0  # written values: unique when 0, else drawn from range(domain)


CASES = {
    c.name: c
    for c in (
        Case("single-key-10k", 10_000, 1, 5, 0.01, False, 5.0),
        Case("1000-keys-100k", 100_000, 1_000, 10, 0.01, False, 20.0),
        Case("invalid-5k", 5_000, 1, 5, 0.01, True, 10.0),
        # harder, not run by default: many crashes, or Jepsen's values drawn from range(5)
        Case("crashy-10k", 10_000, 1, 5, 0.10, False, 5.0),
        Case("small-values-10k", 10_000, 1, 5, 0.05, False, 5.0, domain=5),
    )
}
DEFAULT_CASES = ["single-key-10k", "1000-keys-100k", "invalid-5k"]


@dataclass
class _Plan:
    index: int
    process: int
    key: int
    f: str
    call: int
    ret: int
    crashed: bool
    point: float


def _intervals(rnd: random.Random, case: Case, count: int) -> list[_Plan]:
    """Workers issue ops back to back; durations around 1 ms; a crashed worker comes back
    as a new process. Each op gets the point at which it really takes effect."""
    free = [(0, w, w) for w in range(case.concurrency)]  # (free at, worker, process)
    next_process = case.concurrency
    plans = []
    for i in range(count):
        t, worker, process = heapq.heappop(free)
        call = t + rnd.randint(1_000, 50_000)
        ret = call + int(rnd.expovariate(1 / 1_000_000)) + 10_000
        crashed = rnd.random() < case.crash
        point = rnd.uniform(call, ret)
        if crashed:
            point = rnd.uniform(call, ret + 20_000_000) if rnd.random() < 0.5 else float("inf")
        f = rnd.choices(["read", "write", "cas"], weights=[2, 1, 1])[0]
        plans.append(_Plan(i, process, rnd.randrange(case.keys), f, call, ret, crashed, point))
        if crashed:
            process, next_process = next_process, next_process + 1
        heapq.heappush(free, (ret, worker, process))
    return plans


def simulate(case: Case, seed: int) -> list[Op]:
    """Returns the history of a real atomic register per key (unique written values; a cas
    compares against the current value half of the time), with about case.ops ops once the
    failed ones are dropped."""
    first = len(_simulate(case, seed, case.ops))
    return _simulate(case, seed, case.ops * case.ops // first)


def _simulate(case: Case, seed: int, count: int) -> list[Op]:
    rnd = random.Random(seed)
    state: dict[int, int | None] = {}
    counter = 0
    ops: list[Op] = []
    for p in sorted(_intervals(rnd, case, count), key=lambda p: p.point):
        current = state.get(p.key)
        takes_effect = p.point != float("inf")
        counter += 1
        new = rnd.randrange(case.domain) if case.domain else counter
        value: Any
        if p.f == "read":
            value = current
        elif p.f == "write":
            value = new
            if takes_effect:
                state[p.key] = new
        else:
            old = current if rnd.random() < 0.5 else rnd.randint(1, max(1, counter))
            if case.domain:
                old = current if rnd.random() < 0.5 else rnd.randrange(case.domain)
            value = [old, new]
            if old != current and not p.crashed:
                continue  # the cas failed: a fail op, dropped before checking
            if old == current and takes_effect:
                state[p.key] = new
        if p.crashed and p.f == "read":
            value = None
        ops.append(
            Op(
                index=p.index,
                process=p.process,
                f=p.f,
                key=p.key,
                value=value,
                type="info" if p.crashed else "ok",
                call=p.call,
                ret=None if p.crashed else p.ret,
            )
        )
    ops.sort(key=lambda op: op.index)
    return _with_anomaly(ops) if case.anomaly else ops


def _with_anomaly(ops: list[Op]) -> list[Op]:
    """Makes the first ok read after the middle return a value overwritten long before."""
    middle = len(ops) // 2
    old_values = [op.value for op in ops[: middle - 200] if op.f == "write" and op.type == "ok"]
    for i in range(middle, len(ops)):
        op = ops[i]
        if op.f == "read" and op.type == "ok":
            ops[i] = Op(
                index=op.index,
                process=op.process,
                f="read",
                key=op.key,
                value=old_values[-1],
                type="ok",
                call=op.call,
                ret=op.ret,
            )
            return ops
    raise RuntimeError("no read after the middle")


def run_child(name: str, seed: int) -> dict[str, Any]:
    """Generates a history and checks it. Returns time, verdict and peak RSS (MiB)."""
    case = CASES[name]
    ops = simulate(case, seed)
    started = time.perf_counter()
    result = check(ops, MODELS["cas-register"], time_limit=120)
    elapsed = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "case": name,
        "seed": seed,
        "time": elapsed,
        "valid": result["valid"],
        "ops": len(ops),
        "rss_mib": own,
        "children_rss_mib": kids,
        "crashed": sum(op.type == "info" for op in ops),
    }


def _measure(name: str, seed: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--seed", str(seed)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--child")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child, args.seed)))
        return
    print(f"cores: {os.cpu_count()}, python {sys.version.split()[0]}, runs: {args.runs}")
    for name in args.case or DEFAULT_CASES:
        case = CASES[name]
        runs = [_measure(name, seed) for seed in range(1, args.runs + 1)]
        expected = not case.anomaly
        wall = statistics.median(r["time"] for r in runs)
        rss = max(r["rss_mib"] for r in runs)
        kids = max(r["children_rss_mib"] for r in runs)
        verdicts = {str(r["valid"]) for r in runs}
        ok = all(r["valid"] is expected for r in runs) and wall <= case.target_s
        workers = f" + largest worker {kids:.0f} MiB" if kids else ""
        print(
            f"{name:16} median {wall:6.2f} s  {case.ops / wall:8,.0f} ops/s  "
            f"peak RSS {rss:.0f} MiB{workers}  "
            f"valid={','.join(sorted(verdicts))}  target {case.target_s:.0f} s  "
            f"{'PASS' if ok else 'FAIL'}"
        )


if __name__ == "__main__":
    main()
