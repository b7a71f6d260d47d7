"""The linearizability search on a kv-append history: 50 clients appending to and reading
10 keys (Jepsen's and Porcupine's key-value shape), about 1,700 ops, 1% crashed.

Run: .venv/bin/python bench/bench_kv_append.py [--runs 5] [--ops 1700] [--clients 50]
[--crash 0.01] (the share of ops that crash).
Each run simulates a seeded history of a real store (each op takes effect at a point
inside its interval, a crashed one later or never) and times the check in this process.
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checkers.linearizable import MODELS, check
from history import Op, OpType

TARGET_S = 0.5
KEYS = 10


def simulate(ops: int, clients: int, seed: int, crash: float = 0.01) -> list[Op]:
    """Returns a kv-append history of a store that is linearizable by construction."""
    rnd = random.Random(seed)
    free = [(0, c, c) for c in range(clients)]  # (free at, client, process)
    next_process = clients
    planned = []
    for i in range(ops):
        t, client, process = heapq.heappop(free)
        call = t + rnd.randint(1_000, 50_000)
        ret = call + int(rnd.expovariate(1 / 2_000_000)) + 10_000
        crashed = rnd.random() < crash
        point = rnd.uniform(call, ret)
        if crashed:
            point = rnd.uniform(call, ret + 20_000_000) if rnd.random() < 0.5 else float("inf")
            process, next_process = next_process, next_process + 1
        f = "get" if rnd.random() < 0.4 else "append"
        planned.append((point, i, process, f, str(rnd.randrange(KEYS)), call, ret, crashed))
        heapq.heappush(free, (ret, client, process))
    state: dict[str, str] = {}
    history = []
    for point, i, process, f, key, call, ret, crashed in sorted(planned):
        value = f"x {process} {i} y "
        if f == "append" and point != float("inf"):
            state[key] = state.get(key, "") + value
        if f == "get":
            value = state.get(key, "")
        if crashed and f == "get":
            continue  # a crashed read says nothing: the checker drops it anyway
        outcome: OpType = "info" if crashed else "ok"
        returned = None if crashed else ret
        history.append(Op(i, process, f, key, value, outcome, call, returned))
    return sorted(history, key=lambda op: op.index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ops", type=int, default=1700)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--crash", type=float, default=0.01)
    args = parser.parse_args()
    times, verdicts = [], set()
    for seed in range(1, args.runs + 1):
        history = simulate(args.ops, args.clients, seed, args.crash)
        started = time.perf_counter()
        result = check(history, MODELS["kv-append"], jobs=1, time_limit=60)
        times.append(time.perf_counter() - started)
        verdicts.add(result["valid"])
    shown = ", ".join(f"{t:.3f}" for t in times)
    print(
        f"{args.clients} clients, {len(history)} ops over {KEYS} keys, {args.crash:.0%} crashed:"
        f" median {statistics.median(times):.3f} s ({shown}), valid={verdicts}, target"
        f" {TARGET_S} s"
    )


if __name__ == "__main__":
    main()
