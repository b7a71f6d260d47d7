"""`harness run`: start a cluster, run a workload under a nemesis, check the history,
write the results folder and exit with the verdict (Jepsen's options and exit codes).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cluster.layout import ClusterSpec
from harness.cluster.releases import consumer_protocol_problem, share_problem
from harness.commands import SUMMARIES
from harness.commands.cluster import add_cluster_options, cluster_spec
from harness.commands.options import add_options, options_of
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_INVALID
from harness.progress import StatusLine
from harness.spec import DEFAULT_NEMESIS, TestSpec, default_name
from nemesis.names import (
    CLIENT_CLOCK_FAULTS,
    CLOCK_FAULTS,
    CONTROLLER_MEMBERSHIP_FAULTS,
    GROUP_FAULTS,
    IN_ALL,
    LOSES_POWER,
    NATS_CORRUPT_FAULTS,
    NEMESES,
    NETWORK_FAULTS,
    ONLY_ON,
    PROCESS_FAULTS,
    PROXY_FAULTS,
    SERVER_MEMBERSHIP_FAULTS,
)
from workloads.argtypes import positive
from workloads.names import NATS_WORKLOAD_NAMES
from workloads.options import NatsOptions, QueueOptions, ShareOptions

# The modules that run a test (Docker's, Kafka's and ZooKeeper's clients) are imported
# by the functions that need them, so that `harness --help` starts fast.

# The test name names folders (and nothing in Docker), so `+` is fine there.
_TEST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")


def add_parser(sub: Any) -> None:
    """Registers `run` on the top-level subparsers: its options are TestSpec's, the
    cluster's and the workloads' records (workloads.options), grouped, each with its
    default."""
    p = sub.add_parser(
        "run",
        help=SUMMARIES["run"],
        description="Start a cluster, run concurrent clients of the store under test while "
        "a nemesis injects faults, check the history and write results/<name>/<time>/. "
        "Exits 0 valid, 1 invalid, 2 unknown, 130 interrupted, 254 bad arguments, "
        "255 when the run itself broke.",
    )
    test = p.add_argument_group("the test")
    add_options(test, TestSpec)
    test.add_argument(
        "--nemesis",
        default=",".join(DEFAULT_NEMESIS),
        help=f"none, all, or a comma list of: {', '.join(NEMESES)} "
        f"(default {','.join(DEFAULT_NEMESIS)})",
    )
    test.add_argument(
        "--test-count",
        type=positive(int),
        default=1,
        metavar="N",
        help="run N times, stopping at the first invalid run (default 1)",
    )
    test.add_argument("--seed", type=int, help="random seed (default: a fresh one, recorded)")
    add_cluster_options(p.add_argument_group("the cluster"))
    add_options(p, QueueOptions, "the queue workload")
    add_options(p, ShareOptions, "the share workload")
    add_options(p, NatsOptions, "NATS JetStream (--db nats)")
    out = p.add_argument_group("results")
    out.add_argument("--results", default="results", metavar="DIR", help="results root")
    out.add_argument("--name", help="test name (default: from the workload and the faults)")
    out.add_argument(
        "--cluster-name",
        default=_CLUSTER["name"],
        help=f"Docker cluster name (default {_CLUSTER['name']})",
    )
    p.set_defaults(func=run)


_CLUSTER = {f.name: f.default for f in dataclasses.fields(ClusterSpec)}


def spec_from_args(args: argparse.Namespace, seed: int) -> TestSpec:
    """Takes parsed options and a seed. Returns the TestSpec; raises ValueError for
    combinations no parser can refuse alone."""
    from harness.cluster.nats import NatsSpec
    from nemesis.schedule import parse_nemeses

    # Raises SpecError (a ValueError) for a name, count, release or profile no cluster can have.
    cluster = cluster_spec(args, args.cluster_name)
    queue = options_of(args, QueueOptions)
    share = options_of(args, ShareOptions)
    # The workloads whose clients join a group (Workload.group): the group faults' targets.
    grouped = queue.consumer_group or args.workload == "share"
    on_nats = args.db == "nats"
    nemesis = parse_nemeses(args.nemesis, "nats" if on_nats else cluster.metadata, grouped)
    if not on_nats and (nats_only := [n for n in nemesis if n in NATS_CORRUPT_FAULTS]):
        raise ValueError(f"{', '.join(nats_only)} corrupts a NATS server's files: use --db nats")
    if on_nats:
        if args.nemesis == "all":
            nemesis = tuple(n for n in nemesis if n in NATS_FAULTS)
        no_nats = _nats_problem(args.workload, args.store, queue, args.crash_clients, nemesis)
        if no_nats is not None:
            raise ValueError(no_nats)
    if (problem := _workload_problem(args.workload, queue, share, args.crash_clients)) is not None:
        raise ValueError(problem)
    if args.workload == "share" and (no_share := share_problem(cluster.kafka_version)):
        raise ValueError(no_share)
    if (group_problem := _group_problem(args.workload, queue, cluster.kafka_version)) is not None:
        raise ValueError(group_problem)
    moves_clients = [n for n in nemesis if n in CLIENT_CLOCK_FAULTS]
    if moves_clients and not (args.workload == "queue" and queue.txn and queue.client == "java"):
        raise ValueError(
            f"{moves_clients[0]} moves the Java clients' clocks: it needs --workload queue "
            "--txn --client java (librdkafka's clients share the harness's own clock)"
        )
    if "add-partitions" in nemesis and args.workload not in ("queue", "share"):
        raise ValueError("add-partitions grows a queue's topic: it needs --workload queue or share")
    # On NATS the kv workload's store is the bucket, read from its leader or directly.
    store = f"nats-{args.kv_reads}" if on_nats else args.store
    publish = args.publish if on_nats else "once"
    name = args.name or default_name(
        args.workload, store, nemesis, queue.txn, queue.client, publish=publish
    )
    if not _TEST_NAME.fullmatch(name):
        raise ValueError(f"test name {name!r}: use letters, digits and . _ + - (up to 100)")
    # A power cut needs the layer that loses what was not synced.
    faultfs = cluster.faultfs or any(n in LOSES_POWER for n in nemesis)
    # Late delivery, slow links and the client faults are faultproxy's rules.
    faultproxy = cluster.faultproxy or any(n in PROXY_FAULTS for n in nemesis)
    # A clock fault moves what libfaketime tells each node's JVM.
    faketime = any(n in CLOCK_FAULTS for n in nemesis)
    # A voter can be removed and added only in a quorum formatted for it (KIP-853).
    dynamic_quorum = cluster.dynamic_quorum or any(
        n in CONTROLLER_MEMBERSHIP_FAULTS for n in nemesis
    )
    nats = options_of(args, NatsOptions)
    if nats.kv_reads != "leader" and not (on_nats and args.workload == "kv"):
        raise ValueError("--nats-kv-reads is the kv workload's on NATS: it needs --db nats")
    if nats.publish != "once" and not (on_nats and args.workload == "queue"):
        raise ValueError("--nats-publish is the queue workload's on NATS: it needs --db nats")
    if on_nats:
        # Raises SpecError for a server count or release no NATS cluster can have.
        NatsSpec(name=cluster.name, servers=cluster.brokers, version=nats.version, sync=nats.sync)
    return options_of(
        args,
        TestSpec,
        name=name,
        nemesis=nemesis,
        cluster=dataclasses.replace(
            cluster,
            faultfs=faultfs,
            faultproxy=faultproxy,
            faketime=faketime,
            dynamic_quorum=dynamic_quorum,
        ),
        seed=seed,
        queue=queue,
        share=share,
        nats=nats,
    )


# The kills and pauses of a leader or one server: NATS has no coordinator or KRaft quorum.
NATS_FAULTS = (
    frozenset(
        n
        for n in (*NETWORK_FAULTS, *PROCESS_FAULTS)
        if n not in ONLY_ON and n in IN_ALL and n not in GROUP_FAULTS
    )
    | frozenset(f"power-loss-{t}" for t in ("one", "leader", "minority", "majority", "all"))
    | {"pause-power-loss", *SERVER_MEMBERSHIP_FAULTS}
    | frozenset(NATS_CORRUPT_FAULTS)
)
"""The faults --db nats takes: the partitions, flaky-leader, kills and pauses (a leader is
the stream's, an active controller the meta group's leader), power cuts of one server,
the stream's leader, a minority, a majority or all (on faultfs), pause-power-loss,
Jepsen's pause-kill, the sequence of nats-server#7567, remove-server, Jepsen's
membership changes (a server peer-removed and back as a new peer), and the corruptions
of a minority's store files (nemesis/nats_corrupt.py)."""


def _nats_problem(
    workload: str,
    store: str,
    queue: QueueOptions,
    crash_clients: float | None,
    nemesis: tuple[str, ...],
) -> str | None:
    """Returns why a run on NATS cannot be what was asked, or None."""
    if workload not in NATS_WORKLOAD_NAMES:
        return f"--db nats runs the workloads {', '.join(NATS_WORKLOAD_NAMES)}, not {workload}"
    if store != "linearizable":
        return (
            "--store names a store on Kafka; on NATS the kv workload's variant that must "
            "fail is --nats-kv-reads direct"
        )
    if queue.txn or queue.consumer_group or crash_clients:
        return "--db nats: --txn, --sub-via subscribe and --crash-clients are Kafka's"
    if refused := [n for n in nemesis if n not in NATS_FAULTS]:
        return f"--db nats does not take the faults {', '.join(refused)}"
    return None


def _workload_problem(
    workload: str, queue: QueueOptions, share: ShareOptions, crash_clients: float | None
) -> str | None:
    """Returns why the workload options asked cannot run together, or None."""
    if queue.idempotence and queue.producer_acks != "all":
        return "--idempotence needs --producer-acks all (Kafka refuses it otherwise)"
    if queue.ignore and workload != "queue":
        return "--ignore names queue anomaly kinds: it needs --workload queue"
    if queue.txn and workload != "queue":
        return "--txn makes queue ops transactions: it needs --workload queue"
    if crash_clients and workload not in ("queue", "share"):
        return "--crash-clients crashes queue clients: it needs --workload queue or share"
    if share.release_p + share.reject_p > 1:
        return "--release-p and --reject-p add up to more than 1"
    if queue.client != "librdkafka" and not queue.txn:
        return f"--client {queue.client} runs transactions: it needs --txn"
    if queue.txn and queue.producer_acks != "all":
        return "--txn needs --producer-acks all (Kafka's transactions require it)"
    return None


def _group_problem(workload: str, queue: QueueOptions, kafka_version: str) -> str | None:
    """Returns why the consumer group options asked cannot run together, or None."""
    grouped = queue.consumer_group
    if grouped and workload != "queue":
        return "--sub-via subscribe is the queue workload's: it needs --workload queue"
    if queue.group_protocol != "classic" and not grouped:
        return f"--group-protocol {queue.group_protocol} is a group's: it needs --sub-via subscribe"
    if queue.group_protocol == "consumer" and (refused := consumer_protocol_problem(kafka_version)):
        return refused
    if queue.auto_offset_reset != "earliest" and not grouped:
        return "--auto-offset-reset is a group's: it needs --sub-via subscribe"
    if queue.auto_commit and (not grouped or queue.txn):
        return "--auto-commit needs --sub-via subscribe without --txn (transactions commit)"
    return None


def machine_fit_problem(spec: TestSpec) -> str | None:
    """Returns why the asked cluster does not fit the engine's machine, or None (also when
    no engine answers yet: set-up then says so; NATS servers are sized by their own set-up,
    which refuses what does not fit)."""
    if spec.db == "nats":
        return None
    from harness.cluster.engine import EngineError, docker_client
    from harness.cluster.resources import engine_machine, fit_problem

    try:
        machine = engine_machine(docker_client())
    except EngineError:
        return None
    return fit_problem(spec.cluster, machine)


def client_problem(spec: TestSpec) -> str | None:
    """Returns why the client asked cannot run here (the Java client's driver cannot be
    built: no javac, no jars), or None; builds it first when it is needed and not built."""
    if spec.queue.client != "java":
        return None
    from workloads.java_driver import DriverError, ensure_driver

    try:
        ensure_driver()
    except DriverError as err:
        return f"the Java client cannot be built: {err}"
    return None


_ONE_RUN_ONLY = ("--seed", "--test-count")
"""What rerun_command takes out of a command line: the series, and the seed it set."""


def rerun_command(argv: Sequence[str], seed: int) -> str:
    """Takes the command line `harness` was given (from the subcommand on) and one run's
    seed. Returns the shell command that runs that one test again: the same arguments
    without --test-count, with this run's seed. Empty when argv is not a `run` command."""
    if not argv or argv[0] != "run":
        return ""
    kept: list[str] = []
    skip_value = False
    for arg in argv[1:]:
        if skip_value:
            skip_value = False
        elif arg in _ONE_RUN_ONLY:
            skip_value = True
        elif not arg.startswith(tuple(f"{flag}=" for flag in _ONE_RUN_ONLY)):
            kept.append(arg)
    return shlex.join(["harness", "run", *kept, "--seed", str(seed)])


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
        rerun = rerun_command(getattr(args, "argv", ()), spec.seed)
        outcome = run_test(spec, Path(args.results), line, rerun)
        code = outcome.exit_code
        if code in (EXIT_INVALID, EXIT_INTERRUPTED) or code > 2:
            break
    return code
