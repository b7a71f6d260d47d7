"""`harness cluster up|status|down|image`: bring a cluster up, report on it, remove it.

Exit codes: 0 done (status: healthy), 3 the cluster is not healthy or not there,
130 interrupted (what was being made is removed), 254 bad arguments or a refused
request (a name or count no cluster can have, a cluster that does not fit the
machine, an existing cluster without --replace), 255 Docker or a node failed.
1 is left to mean INVALID, as everywhere in the harness.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any

from harness import signals
from harness.cluster.config import PROFILES
from harness.cluster.labels import CHECKOUT
from harness.cluster.layout import (
    KRAFT_ROLES,
    MAX_BROKERS,
    MAX_CONTROLLERS,
    MAX_ZOOKEEPERS,
    ClusterSpec,
    SpecError,
    count_problem,
    name_problem,
)
from harness.cluster.releases import (
    DEFAULT_VERSION,
    METADATA_MODES,
    default_metadata,
    version_problem,
)
from harness.commands import SUMMARIES
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH, EXIT_INTERRUPTED, EXIT_UNHEALTHY
from harness.progress import StatusLine
from workloads.argtypes import positive

# Docker's client and what drives it are imported by the commands that use them, so that
# `harness --help` starts fast.


def _count(what: str, most: int) -> Callable[[str], int]:
    """Returns an argparse type for a node count: a positive integer up to most."""

    def parse(text: str) -> int:
        count = int(positive(int)(text))
        problem = count_problem(what, count, most)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return count

    parse.__name__ = "int"
    return parse


def _seconds(text: str) -> float:
    """An argparse type for a time bound: a finite number of seconds above zero."""
    seconds = float(positive(float)(text))
    if not math.isfinite(seconds):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds: {text!r}")
    return seconds


def _cluster_name(text: str) -> str:
    """An argparse type for a cluster name Docker accepts."""
    problem = name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def kafka_version(text: str) -> str:
    """An argparse type for a Kafka release the harness runs (harness/cluster/releases.py)."""
    problem = version_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


_SHAPE = {f.name: f.default for f in dataclasses.fields(ClusterSpec)}
"""The cluster options' defaults: ClusterSpec's own."""


def add_cluster_options(parser: Any) -> None:
    """Adds the options that shape a cluster (shared by `cluster up` and `run`), each a
    field of ClusterSpec with its default."""
    parser.add_argument(
        "--brokers",
        type=_count("brokers", MAX_BROKERS),
        default=_SHAPE["brokers"],
        help=f"Kafka brokers, 1 to {MAX_BROKERS} (default {_SHAPE['brokers']})",
    )
    parser.add_argument(
        "--zookeepers",
        type=_count("zookeepers", MAX_ZOOKEEPERS),
        default=_SHAPE["zookeepers"],
        help=f"ZooKeeper servers, 1 to {MAX_ZOOKEEPERS} (default {_SHAPE['zookeepers']})",
    )
    parser.add_argument(
        "--kafka-config",
        choices=sorted(PROFILES),
        default=_SHAPE["kafka_config"],
        help="durability profile; -elr/-no-elr also set eligible leader replicas (KRaft, "
        f"4.x) (default {_SHAPE['kafka_config']})",
    )
    parser.add_argument(
        "--kafka-version",
        type=kafka_version,
        default=_SHAPE["kafka_version"],
        metavar="VERSION",
        help=f"Kafka release, 3.9.1 to 4.4.0 as Maven Central serves them, fetched on first "
        f"use (default {_SHAPE['kafka_version']}; 4.x has no ZooKeeper mode)",
    )
    parser.add_argument(
        "--metadata",
        choices=METADATA_MODES,
        help="where metadata lives (default: zookeeper on 3.9.x, kraft on 4.x)",
    )
    parser.add_argument(
        "--kraft-roles",
        choices=KRAFT_ROLES,
        default=_SHAPE["kraft_roles"],
        help="KRaft: dedicated controllers beside the brokers, or brokers that are "
        f"controllers too (default {_SHAPE['kraft_roles']})",
    )
    parser.add_argument(
        "--controllers",
        type=_count("controllers", MAX_CONTROLLERS),
        default=_SHAPE["controllers"],
        help=f"KRaft: dedicated controllers, 1 to {MAX_CONTROLLERS} "
        f"(default {_SHAPE['controllers']})",
    )
    parser.add_argument(
        "--faultfs",
        action="store_true",
        help="put every node's data directory on faultfs, a FUSE layer that holds each "
        "write until its file is fsynced, so that nodes can lose power (a power-loss "
        "nemesis sets it by itself); its nodes run as root with /dev/fuse and SYS_ADMIN",
    )
    parser.add_argument(
        "--faultproxy",
        action="store_true",
        help="reach every broker through faultproxy, an in-path proxy in its container "
        "that can hold, cut or delay chosen connections' requests (a late-delivery, "
        "slow-link or client nemesis sets it by itself)",
    )
    parser.add_argument(
        "--dynamic-quorum",
        action="store_true",
        help="KRaft: format the controllers as a dynamic quorum (KIP-853), whose voters "
        "can be removed and added while it runs (a controller membership nemesis sets it "
        "by itself)",
    )


def metadata_of(args: argparse.Namespace) -> str:
    """Returns the metadata mode asked for, or the Kafka version's default."""
    return str(args.metadata or default_metadata(args.kafka_version))


def cluster_spec(args: argparse.Namespace, name: str) -> ClusterSpec:
    """Takes the options add_cluster_options added and a cluster name. Returns the
    ClusterSpec; raises SpecError for a combination no cluster can have."""
    return ClusterSpec(
        name,
        args.brokers,
        args.zookeepers,
        args.kafka_config,
        kafka_version=args.kafka_version,
        metadata="kraft" if metadata_of(args) == "kraft" else "zookeeper",
        kraft_roles="combined" if args.kraft_roles == "combined" else "dedicated",
        controllers=args.controllers,
        faultfs=args.faultfs,
        faultproxy=args.faultproxy,
        dynamic_quorum=args.dynamic_quorum,
    )


def add_parser(sub: Any) -> None:
    """Registers `cluster` and its subcommands on the top-level subparsers."""
    cluster = sub.add_parser(
        "cluster",
        help=SUMMARIES["cluster"],
        description=__doc__.split("\n\n", 1)[1],
    )
    cluster_sub = cluster.add_subparsers(dest="cluster_command", metavar="ACTION")
    cluster_sub.required = True
    up = cluster_sub.add_parser(
        "up",
        help="build images if missing and start the cluster",
        description="Starts the cluster and waits for a full ISR. On failure, timeout or "
        "^C (SIGTERM, SIGHUP) everything it made is removed again.",
    )
    add_cluster_options(up)
    up.add_argument(
        "--timeout",
        type=_seconds,
        default=120.0,
        metavar="S",
        help="seconds for the whole start, up to a full ISR (default 120)",
    )
    up.add_argument(
        "--replace",
        action="store_true",
        help="remove a cluster of the same name first (without it, up refuses)",
    )
    status = cluster_sub.add_parser(
        "status",
        help="nodes, controller, leaders and ISRs; exit 3 when not healthy",
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    down = cluster_sub.add_parser("down", help="remove the containers and the network")
    which = down.add_mutually_exclusive_group()
    which.add_argument(
        "--checkout",
        action="store_true",
        help=f"remove every cluster made from this checkout ({CHECKOUT})",
    )
    which.add_argument(
        "--all",
        action="store_true",
        help="remove every cluster the harness made on this engine, anyone's",
    )
    image = cluster_sub.add_parser("image", help="fetch jars and build the node image if missing")
    image.add_argument(
        "--kafka-version", type=kafka_version, default=DEFAULT_VERSION, metavar="VERSION"
    )
    for p in (up, status, down):
        p.add_argument(
            "--name", type=_cluster_name, default="harness", help="cluster name (default harness)"
        )
    image.set_defaults(func=cmd_image)
    up.set_defaults(func=cmd_up)
    status.set_defaults(func=cmd_status)
    down.set_defaults(func=cmd_down)


def cmd_image(args: argparse.Namespace) -> int:
    """Fetches the Kafka jars, bootstraps the base image and builds the node image,
    each only when missing or stale."""
    from harness.cluster.engine import EngineError, docker_client
    from harness.cluster.images import ImageError, ensure_node_image

    line = StatusLine()
    try:
        tag = ensure_node_image(docker_client(), line.say, args.kafka_version)
    except (EngineError, ImageError) as err:
        print(f"image build failed: {err}", file=sys.stderr)
        return EXIT_CRASH
    line.say(f"node image {tag} is ready")
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Builds what is missing and starts the cluster; prints where it listens."""
    from docker.errors import DockerException

    from harness.cluster.docker_cluster import ClusterError, ClusterRefused, DockerCluster
    from harness.cluster.engine import EngineError, docker_client
    from harness.cluster.images import ImageError, ensure_node_image

    signals.install()
    line = StatusLine()
    try:
        spec = cluster_spec(args, args.name)
    except SpecError as err:
        print(f"harness cluster up: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    started = time.monotonic()
    try:
        client = docker_client()
        ensure_node_image(client, line.say, spec.kafka_version)
        cluster = DockerCluster(spec, client)
        cluster.up(status=line.update, timeout=args.timeout, replace=args.replace)
    except KeyboardInterrupt as interrupt:
        line.say(f"interrupted ({str(interrupt) or 'SIGINT'}): nothing of cluster {spec.name} left")
        return EXIT_INTERRUPTED
    except ClusterRefused as err:
        line.say(f"cluster up refused: {err}")
        return EXIT_BAD_INPUT
    except (ClusterError, EngineError, ImageError, DockerException) as err:
        line.say(f"cluster up failed, nothing of cluster {spec.name} left: {err}")
        return EXIT_CRASH
    line.say(
        f"cluster {spec.name} up in {time.monotonic() - started:.1f} s: {shape(spec)}; "
        f"bootstrap {cluster.bootstrap_servers}"
    )
    return 0


def shape(spec: ClusterSpec) -> str:
    """Returns a cluster's shape in a few words, e.g. "Kafka 4.4.0 on KRaft, 3 brokers
    and 3 controllers (safe)"."""
    counts = spec.role_counts()
    if spec.metadata == "zookeeper":
        nodes = f"{spec.brokers} brokers and {counts['zookeeper']} ZooKeeper"
        mode = "ZooKeeper"
    elif "combined" in counts:
        nodes, mode = f"{spec.brokers} brokers that are also the controllers", "KRaft"
    else:
        nodes, mode = f"{spec.brokers} brokers and {counts['controller']} controllers", "KRaft"
    return f"Kafka {spec.kafka_version} on {mode}, {nodes} ({spec.kafka_config})"


def cmd_status(args: argparse.Namespace) -> int:
    """Prints the cluster's nodes, controller and partitions; 0 when healthy, 3 when not
    (or when there is no such cluster)."""
    from docker.errors import DockerException

    from harness.cluster.docker_cluster import DockerCluster
    from harness.cluster.engine import EngineError, docker_client
    from harness.cluster.status import describe

    try:
        cluster = DockerCluster(ClusterSpec(name=args.name), docker_client())
        attached = cluster.attach()
    except (EngineError, DockerException) as err:
        print(err, file=sys.stderr)
        return EXIT_CRASH
    if not attached:
        print(f"no cluster named {args.name}", file=sys.stderr)
        return EXIT_UNHEALTHY
    info = describe(cluster)
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print_status(info)
    return 0 if info["healthy"] else EXIT_UNHEALTHY


def print_status(info: dict[str, Any]) -> None:
    """Prints describe()'s status as lines a person reads, problems last."""
    for b in info["brokers"]:
        alive = "alive" if b["alive"] else "DOWN"
        # On KRaft a broker names a random broker as "controller": the quorum says who leads.
        is_controller = b["id"] == info["controller"] and info.get("quorum") is None
        role = " (controller)" if is_controller else ""
        print(f"{b['node']}  broker {b['id']}  {b['address']}  {b['state']}  {alive}{role}")
    for z in info["zookeeper"]:
        mode = z["mode"] or "not answering"
        print(f"{z['node']}  zookeeper  {z['address']}  {z['state']}  {mode}")
    if info.get("quorum") is not None:
        print_quorum(info["quorum"])
    for topic, parts in sorted(info["topics"].items()):
        for p in parts:
            print(f"{topic}[{p['partition']}]  leader {p['leader']}  isr {p['isr']}")
    if info["healthy"]:
        print("healthy")
    for problem in info["problems"]:
        print(f"NOT HEALTHY: {problem}")


def print_quorum(quorum: dict[str, Any]) -> None:
    """Prints the KRaft quorum: its leader and epoch, then one line per voter."""
    if quorum["leader"] is None:
        print(f"quorum  no leader ({quorum['error']})")
    else:
        print(
            f"quorum  leader {quorum['leader_node']} (node {quorum['leader']})  "
            f"epoch {quorum['epoch']}  high watermark {quorum['high_watermark']}"
        )
    for v in quorum["voters"]:
        role = "leader" if v["id"] == quorum["leader"] else "voter"
        ago = v["last_fetch_ago_ms"]
        fetched = "" if ago is None else f"  fetched {ago / 1000:.1f} s ago"
        lag = "" if v["lag"] is None else f"  lag {v['lag']}"
        print(f"{v['node']}  controller {v['id']}  {v['state']}  {role}{lag}{fetched}")


def cmd_down(args: argparse.Namespace) -> int:
    """Removes the cluster (or this checkout's, or all); succeeds when there is nothing
    to remove."""
    from docker.errors import DockerException

    from harness.cluster.docker_cluster import DockerCluster, cluster_names
    from harness.cluster.engine import EngineError, docker_client

    signals.install()
    try:
        client = docker_client()
        if args.all or args.checkout:
            names = cluster_names(client, checkout=None if args.all else CHECKOUT)
        else:
            names = [args.name]
        with signals.shielded():
            removed = {name: DockerCluster(ClusterSpec(name=name), client).down() for name in names}
    except (EngineError, DockerException) as err:
        print(err, file=sys.stderr)
        return EXIT_CRASH
    for name, count in removed.items():
        print(
            f"cluster {name}: removed {count} containers" if count else f"no cluster named {name}"
        )
    if not names:
        print("no clusters to remove")
    return 0
