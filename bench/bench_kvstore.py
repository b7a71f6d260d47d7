"""Fault-free throughput and latency (p50, p99) of KafkaMap get and replace on the 3-broker cluster.

Each client thread owns one instance and loops: get a key, then replace it with its successor.

Usage: .venv/bin/python bench/bench_kvstore.py [--runs 3] [--warmup-runs 1] [--bootstrap H:P,...]
(without --bootstrap it starts a cluster named kvbench and removes it at the end)
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar

from harness.cluster.admin import Admin
from harness.cluster.docker_cluster import ClusterSpec, DockerCluster
from kvstore import KafkaMap, create_store_topic

T = TypeVar("T")
TARGET_OPS_PER_S = 300
TARGET_P99_MS = 100


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run's figures: aggregate throughput and per-operation latency percentiles (ms)."""

    ops_per_s: float
    get_p50_ms: float
    get_p99_ms: float
    replace_p50_ms: float
    replace_p99_ms: float
    errors: int


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Returns the nearest-rank q-th percentile of already sorted values."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values)) - 1))
    return sorted_values[rank]


def client_loop(
    m: KafkaMap, keys: list[str], warm_until: float, until: float, seed: int
) -> tuple[list[float], list[float], int]:
    """Runs get-then-replace until `until`.

    Returns the get and replace latencies after warm-up, and the error count.
    """
    rng = random.Random(seed)
    gets: list[float] = []
    replaces: list[float] = []
    errors = 0
    while (now := time.monotonic()) < until:
        key = rng.choice(keys)
        try:
            value = m.get(key)
            read = time.monotonic()
            if isinstance(value, int):
                m.replace(key, value, value + 1)
            else:
                m.put(key, 0)
            done = time.monotonic()
        except Exception:  # counted: a fault-free run should have none
            errors += 1
            continue
        if now >= warm_until:
            gets.append(read - now)
            replaces.append(done - read)
    return gets, replaces, errors


def one_run(bootstrap: str, args: argparse.Namespace) -> RunResult:
    """Creates a fresh topic, runs the clients, closes them. Returns the figures."""
    topic = f"bench-kv-{uuid.uuid4().hex[:8]}"
    create_store_topic(Admin(bootstrap), topic)
    keys = [f"k{i}" for i in range(args.keys)]
    maps = [KafkaMap(bootstrap, topic, f"bench-{i}") for i in range(args.clients)]
    try:
        results: list[tuple[list[float], list[float], int]] = [([], [], 0)] * args.clients
        start = time.monotonic()
        warm_until, until = start + args.warmup, start + args.warmup + args.duration

        def run(i: int) -> None:
            results[i] = client_loop(maps[i], keys, warm_until, until, seed=i)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for m in maps:
            m.close()
    gets = sorted(x for r in results for x in r[0])
    replaces = sorted(x for r in results for x in r[1])
    return RunResult(
        ops_per_s=round((len(gets) + len(replaces)) / args.duration, 1),
        get_p50_ms=round(percentile(gets, 50) * 1000, 1),
        get_p99_ms=round(percentile(gets, 99) * 1000, 1),
        replace_p50_ms=round(percentile(replaces, 50) * 1000, 1),
        replace_p99_ms=round(percentile(replaces, 99) * 1000, 1),
        errors=sum(r[2] for r in results),
    )


def median_result(runs: Sequence[RunResult]) -> RunResult:
    """Returns the per-figure median over runs."""
    fields = asdict(runs[0]).keys()
    return RunResult(**{f: statistics.median(asdict(r)[f] for r in runs) for f in fields})


def measured_runs(bootstrap: str, args: argparse.Namespace) -> list[RunResult]:
    """Runs args.warmup_runs unmeasured runs, then args.runs measured ones, printing each.

    Fresh brokers are several times slower until the JIT has compiled their hot paths.
    """
    runs = []
    for i in range(args.warmup_runs + args.runs):
        result = one_run(bootstrap, args)
        label = (
            f"warm-up run {i + 1}" if i < args.warmup_runs else f"run {i + 1 - args.warmup_runs}"
        )
        print(f"{label}: {json.dumps(asdict(result))}", flush=True)
        if i >= args.warmup_runs:
            runs.append(result)
    return runs


def report(runs: Sequence[RunResult]) -> bool:
    """Prints the median of runs against the targets. Returns whether both are met."""
    median = median_result(runs)
    print(f"median of {len(runs)}: {json.dumps(asdict(median))}")
    ok = (
        median.ops_per_s >= TARGET_OPS_PER_S
        and max(median.get_p99_ms, median.replace_p99_ms) <= TARGET_P99_MS
    )
    print(
        f"targets (>= {TARGET_OPS_PER_S} ops/s, p99 <= {TARGET_P99_MS} ms): "
        f"{'met' if ok else 'NOT met'}"
    )
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the benchmark. Returns 0 when the median meets both targets, else 1."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", help="an existing cluster; default: start one")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup-runs", type=int, default=1)
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds per run")
    parser.add_argument("--clients", type=int, default=5, help="threads, one instance each")
    parser.add_argument("--keys", type=int, default=20)
    args = parser.parse_args(argv)
    runs = on_cluster(args.bootstrap, "kvbench", lambda bootstrap: measured_runs(bootstrap, args))
    return 0 if report(runs) else 1


def on_cluster(bootstrap: str | None, name: str, run: Callable[[str], T]) -> T:
    """Returns run(bootstrap) on the given cluster, or on a 3-broker safe cluster `name`
    started for it and removed afterwards."""
    if bootstrap is not None:
        return run(bootstrap)
    cluster = DockerCluster(ClusterSpec(name=name, brokers=3, kafka_config="safe"))
    try:
        cluster.up()
        return run(cluster.bootstrap_servers)
    finally:
        cluster.down()


if __name__ == "__main__":
    sys.exit(main())
