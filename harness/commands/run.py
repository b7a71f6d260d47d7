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

from checkers.queue import KINDS, SUB_VIA
from harness.cluster.releases import consumer_protocol_problem, share_problem
from harness.commands.argtypes import IGNORE_HELP, positive, probability, queue_kinds
from harness.commands.cluster import add_cluster_options, cluster_spec
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_INVALID
from harness.progress import StatusLine
from harness.spec import DELIVERY_LIMIT, TestSpec, default_name
from nemesis.names import NEMESES, POWER_FAULTS, PROXY_FAULTS
from workloads.java_driver import KAFKA_CLIENTS_VERSION
from workloads.names import STORES, WORKLOAD_NAMES

# The modules that run a test (Docker's, Kafka's and ZooKeeper's clients) are imported
# by the functions that need them, so that `harness --help` starts fast.

# The test name names folders (and nothing in Docker), so `+` is fine there.
_TEST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
# Jepsen's default :crash-client-interval (jepsen.tests.kafka `crash-client-gen`).
CRASH_CLIENT_INTERVAL_S = 30.0
CLIENTS = ("librdkafka", "java")
"""The Kafka clients --txn can run through."""
GROUP_PROTOCOLS = ("classic", "consumer")
"""The consumer group rebalance protocols: the classic one, and KIP-848's."""


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
    p.add_argument("--workload", choices=sorted(WORKLOAD_NAMES), default="kv")
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
        "--producer-acks",
        choices=("all", "1"),
        default="all",
        help="queue workload: the producers' acks (default all)",
    )
    p.add_argument(
        "--idempotence",
        action="store_true",
        help="queue workload: idempotent producers (they retry; default: one attempt each)",
    )
    p.add_argument(
        "--sub-via",
        choices=SUB_VIA,
        default="assign",
        help="queue workload: consumers are assigned partitions (default) or subscribe in "
        "one consumer group",
    )
    p.add_argument(
        "--consumer-group",
        dest="sub_via",
        action="store_const",
        const="subscribe",
        help="queue workload: the same as --sub-via subscribe",
    )
    p.add_argument(
        "--group-protocol",
        choices=GROUP_PROTOCOLS,
        default="classic",
        help="with --sub-via subscribe: the rebalance protocol, classic (default) or "
        "consumer (KIP-848; Kafka 4.0 and later)",
    )
    p.add_argument(
        "--auto-commit",
        action="store_true",
        help="with --sub-via subscribe: librdkafka commits the positions every 5 s "
        "(default: commit ops do)",
    )
    p.add_argument(
        "--txn",
        action="store_true",
        help="queue workload: each op a Kafka transaction of 1 to 4 sends and polls",
    )
    p.add_argument(
        "--abort-p",
        type=probability,
        default=0.1,
        metavar="P",
        help="with --txn: the probability of aborting a transaction on purpose (default 0.1)",
    )
    p.add_argument(
        "--isolation-level",
        choices=("read_committed", "read_uncommitted"),
        default="read_committed",
        help="queue workload: what consumers read of transactions (default read_committed; "
        "the final drains read committed records only)",
    )
    p.add_argument(
        "--crash-clients",
        type=positive(float),
        nargs="?",
        const=CRASH_CLIENT_INTERVAL_S,
        metavar="S",
        help="queue and share workloads: crash each client about every S seconds (default "
        f"{CRASH_CLIENT_INTERVAL_S:g}, as Jepsen's; with --txn in the middle of a "
        "transaction) and replace it",
    )
    p.add_argument(
        "--client",
        choices=CLIENTS,
        default="librdkafka",
        help="with --txn: the Kafka client the transactions run through: librdkafka "
        "(confluent-kafka, the default; transactions v1) or java (kafka-clients "
        f"{KAFKA_CLIENTS_VERSION}, transactions v2 where the brokers have it: 4.x)",
    )
    p.add_argument(
        "--release-p",
        type=probability,
        default=0.2,
        metavar="P",
        help="share workload: the probability that a consumer releases a record it polled "
        "(delivered again) instead of accepting it (default 0.2)",
    )
    p.add_argument(
        "--reject-p",
        type=probability,
        default=0.05,
        metavar="P",
        help="share workload: the probability that it rejects the record (archived) (default 0.05)",
    )
    p.add_argument(
        "--delivery-limit",
        type=int,
        choices=range(2, 11),
        default=DELIVERY_LIMIT,
        metavar="N",
        help="share workload: the group's delivery count limit, 2 to 10 (a record delivered N "
        f"times is archived; default {DELIVERY_LIMIT}, Kafka's is 5)",
    )
    p.add_argument("--ignore", type=queue_kinds, metavar="KIND,...", help=IGNORE_HELP)
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
    from nemesis.schedule import parse_nemeses

    # Raises SpecError (a ValueError) for a name, count, release or profile no cluster can have.
    cluster = cluster_spec(args, args.cluster_name)
    # The workloads whose clients join a group (Workload.group): the group faults' targets.
    grouped = args.sub_via == "subscribe" or args.workload == "share"
    nemesis = parse_nemeses(args.nemesis, cluster.metadata, grouped)
    if args.idempotence and args.producer_acks != "all":
        raise ValueError("--idempotence needs --producer-acks all (Kafka refuses it otherwise)")
    if args.ignore and args.workload != "queue":
        raise ValueError("--ignore names queue anomaly kinds: it needs --workload queue")
    if args.txn and args.workload != "queue":
        raise ValueError("--txn makes queue ops transactions: it needs --workload queue")
    if args.crash_clients and args.workload not in ("queue", "share"):
        raise ValueError(
            "--crash-clients crashes queue clients: it needs --workload queue or share"
        )
    if args.workload == "share" and (no_share := share_problem(cluster.kafka_version)):
        raise ValueError(no_share)
    if args.release_p + args.reject_p > 1:
        raise ValueError("--release-p and --reject-p add up to more than 1")
    if (group_problem := _group_problem(args, cluster.kafka_version)) is not None:
        raise ValueError(group_problem)
    if args.client != "librdkafka" and not args.txn:
        raise ValueError(f"--client {args.client} runs transactions: it needs --txn")
    if args.txn and args.producer_acks != "all":
        raise ValueError("--txn needs --producer-acks all (Kafka's transactions require it)")
    name = args.name or default_name(args.workload, args.store, nemesis, args.txn, args.client)
    if not _TEST_NAME.fullmatch(name):
        raise ValueError(f"test name {name!r}: use letters, digits and . _ + - (up to 100)")
    return TestSpec(
        name=name,
        workload=args.workload,
        store=args.store,
        nemesis=nemesis,
        kafka_config=args.kafka_config,
        brokers=cluster.brokers,
        zookeepers=cluster.zookeepers,
        kafka_version=cluster.kafka_version,
        metadata=cluster.metadata,
        kraft_roles=cluster.kraft_roles,
        controllers=cluster.controllers,
        # A power cut needs the layer that loses what was not synced.
        faultfs=cluster.faultfs or any(n in POWER_FAULTS for n in nemesis),
        # Late delivery, slow links and the client faults are faultproxy's rules.
        faultproxy=cluster.faultproxy or any(n in PROXY_FAULTS for n in nemesis),
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
        producer_acks=args.producer_acks,
        idempotence=args.idempotence,
        consumer_group=args.sub_via == "subscribe",
        group_protocol=args.group_protocol,
        auto_commit=args.auto_commit,
        ignore=tuple(k for k in KINDS if k in (args.ignore or ())),
        txn=args.txn,
        abort_p=args.abort_p,
        isolation_level=args.isolation_level,
        crash_clients=args.crash_clients,
        client=args.client,
        release_p=args.release_p,
        reject_p=args.reject_p,
        delivery_limit=args.delivery_limit,
    )


def _group_problem(args: argparse.Namespace, kafka_version: str) -> str | None:
    """Returns why the consumer group options asked cannot run together, or None."""
    grouped = args.sub_via == "subscribe"
    if grouped and args.workload != "queue":
        return "--sub-via subscribe is the queue workload's: it needs --workload queue"
    if args.group_protocol != "classic" and not grouped:
        return f"--group-protocol {args.group_protocol} is a group's: it needs --sub-via subscribe"
    if args.group_protocol == "consumer" and (refused := consumer_protocol_problem(kafka_version)):
        return refused
    if args.auto_commit and (not grouped or args.txn):
        return "--auto-commit needs --sub-via subscribe without --txn (transactions commit)"
    return None


def machine_fit_problem(spec: TestSpec) -> str | None:
    """Returns why the asked cluster does not fit the engine's machine, or None (also when
    no engine answers yet: set-up then says so)."""
    from harness.cluster.engine import EngineError, docker_client
    from harness.cluster.resources import engine_machine, fit_problem

    try:
        machine = engine_machine(docker_client())
    except EngineError:
        return None
    return fit_problem(spec.cluster_spec(), machine)


def client_problem(spec: TestSpec) -> str | None:
    """Returns why the client asked cannot run here (the Java client's driver cannot be
    built: no javac, no jars), or None; builds it first when it is needed and not built."""
    if spec.client != "java":
        return None
    from workloads.java_driver import DriverError, ensure_driver

    try:
        ensure_driver()
    except DriverError as err:
        return f"the Java client cannot be built: {err}"
    return None


def run(args: argparse.Namespace) -> int:
    """Runs the test --test-count times (stopping at the first invalid or interrupted
    run); returns the exit code of the last run."""
    from harness.run.core import run_test

    first_seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    try:
        specs = [spec_from_args(args, first_seed + i) for i in range(args.test_count)]
    except ValueError as err:
        print(f"harness run: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if (too_big := machine_fit_problem(specs[0])) is not None:
        print(f"harness run: error: {too_big}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if (no_client := client_problem(specs[0])) is not None:
        print(f"harness run: error: {no_client}", file=sys.stderr)
        return EXIT_BAD_INPUT
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
