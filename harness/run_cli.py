"""`harness run`: start a cluster, run a workload under a nemesis, check the history,
write the results folder and exit with the verdict (Jepsen's options and exit codes).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from harness.argtypes import positive
from harness.cluster.cli import add_cluster_options
from harness.core import EXIT_INTERRUPTED, EXIT_INVALID, run_test
from harness.progress import StatusLine
from harness.spec import TestSpec, default_name
from nemesis.schedule import NEMESES, parse_nemeses
from workloads import WORKLOADS
from workloads.store_client import STORES

EXIT_BAD_ARGS = 254
# Docker names: the test name also names folders, so keep it to what both accept.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")


def add_parser(sub: Any) -> None:
    """Registers `run` on the top-level subparsers."""
    p = sub.add_parser(
        "run",
        help="run a test: workload + nemesis on a fresh cluster, then check",
        description="Start a cluster, run concurrent clients of the store under test while "
        "a nemesis injects faults, check the history and write results/<name>/<time>/. "
        "Exits 0 valid, 1 invalid, 2 unknown, 130 interrupted, 254 bad arguments, "
        "255 when the run itself broke.",
    )
    p.add_argument("--workload", choices=sorted(WORKLOADS), default="kv")
    p.add_argument("--store", choices=list(STORES), default="linearizable")
    p.add_argument(
        "--nemesis",
        default="partition-leader",
        help=f"none, all, or a comma list of: {', '.join(NEMESES)} (default partition-leader)",
    )
    add_cluster_options(p)
    p.add_argument(
        "--time-limit",
        type=positive(float),
        default=60.0,
        metavar="S",
        help="seconds of workload (default 60)",
    )
    p.add_argument("--concurrency", type=positive(int), default=5, help="client processes")
    p.add_argument("--rate", type=positive(float), default=100.0, help="total ops/s (default 100)")
    p.add_argument("--keys", type=positive(int), default=8, help="keys (default 8)")
    p.add_argument(
        "--partitions",
        type=positive(int),
        default=1,
        help="partitions of the store's topic (default 1)",
    )
    p.add_argument(
        "--nemesis-interval",
        type=positive(float),
        default=10.0,
        metavar="S",
        help="seconds between fault changes (default 10)",
    )
    p.add_argument(
        "--test-count",
        type=positive(int),
        default=1,
        metavar="N",
        help="run N times, stopping at the first invalid run",
    )
    p.add_argument("--seed", type=int, help="random seed (default: a fresh one, recorded)")
    p.add_argument(
        "--check-time-limit",
        type=positive(float),
        default=60.0,
        metavar="S",
        help="seconds of linearizability search per key before unknown",
    )
    p.add_argument(
        "--leave-cluster-running",
        action="store_true",
        help="keep the cluster after the run (faults healed)",
    )
    p.add_argument("--results", default="results", metavar="DIR", help="results root")
    p.add_argument("--name", help="test name (default workload-store-nemesis)")
    p.add_argument("--cluster-name", default="harness", help="Docker cluster name")
    p.set_defaults(func=run)


def spec_from_args(args: argparse.Namespace, seed: int) -> TestSpec:
    """Takes parsed options and a seed. Returns the TestSpec; raises ValueError for
    combinations no parser can refuse alone."""
    nemesis = parse_nemeses(args.nemesis)
    name = args.name or default_name(args.workload, args.store, nemesis)
    for label, text in (("test name", name), ("cluster name", args.cluster_name)):
        if not _NAME.fullmatch(text):
            raise ValueError(f"{label} {text!r}: use letters, digits and . _ + - (up to 100)")
    return TestSpec(
        name=name,
        workload=args.workload,
        store=args.store,
        nemesis=nemesis,
        kafka_config=args.kafka_config,
        brokers=args.brokers,
        zookeepers=args.zookeepers,
        time_limit=args.time_limit,
        concurrency=args.concurrency,
        rate=args.rate,
        keys=args.keys,
        partitions=args.partitions,
        nemesis_interval=args.nemesis_interval,
        seed=seed,
        cluster_name=args.cluster_name,
        leave_cluster_running=args.leave_cluster_running,
        check_time_limit=args.check_time_limit,
    )


def run(args: argparse.Namespace) -> int:
    """Runs the test --test-count times (stopping at the first invalid or interrupted
    run); returns the exit code of the last run."""
    first_seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    try:
        specs = [spec_from_args(args, first_seed + i) for i in range(args.test_count)]
    except ValueError as err:
        print(f"harness run: error: {err}", file=sys.stderr)
        return EXIT_BAD_ARGS
    line = StatusLine()
    code = 0
    for i, spec in enumerate(specs, start=1):
        count = f" ({i} of {len(specs)})" if len(specs) > 1 else ""
        line.say(
            f"run {spec.name}{count}: seed {spec.seed}, {spec.time_limit:g} s, "
            f"nemesis {', '.join(spec.nemesis) or 'none'}"
        )
        outcome = run_test(spec, Path(args.results), line)
        code = outcome.exit_code
        if code in (EXIT_INVALID, EXIT_INTERRUPTED) or code > 2:
            break
    return code
