"""`harness cluster up|status|down`: bring a cluster up, report on it, remove it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from harness.argtypes import positive
from harness.cluster.config import PROFILES
from harness.cluster.docker_cluster import ClusterError, ClusterSpec, DockerCluster, cluster_names
from harness.cluster.engine import EngineError, docker_client
from harness.cluster.images import ImageError, ensure_node_image
from harness.progress import StatusLine


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """Adds the options that shape a cluster (shared by `cluster up` and `run`)."""
    parser.add_argument(
        "--brokers", type=positive(int), default=3, help="Kafka brokers (default 3)"
    )
    parser.add_argument(
        "--zookeepers", type=positive(int), default=1, help="ZooKeeper servers (default 1)"
    )
    parser.add_argument(
        "--kafka-config", choices=sorted(PROFILES), default="safe", help="durability profile"
    )


def add_parser(sub: Any) -> None:
    """Registers `cluster` and its subcommands on the top-level subparsers."""
    cluster = sub.add_parser("cluster", help="start, inspect or remove a Kafka cluster")
    cluster_sub = cluster.add_subparsers(dest="cluster_command", metavar="ACTION")
    cluster_sub.required = True
    up = cluster_sub.add_parser("up", help="build images if missing and start the cluster")
    add_cluster_options(up)
    up.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for a full ISR")
    status = cluster_sub.add_parser("status", help="brokers, controller, leaders and ISRs")
    status.add_argument("--json", action="store_true", help="print JSON")
    down = cluster_sub.add_parser("down", help="remove the containers and the network")
    down.add_argument("--all", action="store_true", help="remove every cluster the harness made")
    image = cluster_sub.add_parser("image", help="fetch jars and build the node image if missing")
    for p in (up, status, down):
        p.add_argument("--name", default="harness", help="cluster name (default harness)")
    image.set_defaults(func=cmd_image)
    up.set_defaults(func=cmd_up)
    status.set_defaults(func=cmd_status)
    down.set_defaults(func=cmd_down)


def cmd_image(args: argparse.Namespace) -> int:
    """Fetches the Kafka jars, bootstraps the base image and builds the node image,
    each only when missing or stale."""
    line = StatusLine()
    try:
        tag = ensure_node_image(docker_client(), line.say)
    except (EngineError, ImageError) as err:
        print(f"image build failed: {err}", file=sys.stderr)
        return 1
    line.say(f"node image {tag} is ready")
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Builds what is missing and starts the cluster; prints where it listens."""
    line = StatusLine()
    spec = ClusterSpec(args.name, args.brokers, args.zookeepers, args.kafka_config)
    started = time.monotonic()
    try:
        client = docker_client()
        ensure_node_image(client, line.say)
    except (EngineError, ImageError) as err:
        line.clear()
        print(f"cluster up failed: {err}", file=sys.stderr)
        return 1
    cluster = DockerCluster(spec, client)
    try:
        cluster.up(status=line.update, timeout=args.timeout)
    except ClusterError as err:
        line.clear()
        print(f"cluster up failed: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # A half-started cluster is of no use to anyone: remove it before exiting.
        cluster.down()
        line.say(f"interrupted: cluster {spec.name} removed")
        return 130
    line.say(
        f"cluster {spec.name} up in {time.monotonic() - started:.1f} s: "
        f"{spec.brokers} brokers ({spec.kafka_config}), {spec.zookeepers} ZooKeeper; "
        f"bootstrap {cluster.bootstrap_servers}"
    )
    return 0


def _attached(name: str) -> DockerCluster | None:
    cluster = DockerCluster(ClusterSpec(name=name), docker_client())
    return cluster if cluster.attach() else None


def cmd_status(args: argparse.Namespace) -> int:
    """Prints the cluster's brokers, controller and partitions; 1 if there is no cluster."""
    try:
        cluster = _attached(args.name)
    except EngineError as err:
        print(err, file=sys.stderr)
        return 1
    if cluster is None:
        print(f"no cluster named {args.name}", file=sys.stderr)
        return 1
    info = cluster.describe()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for b in info["brokers"]:
        alive = "alive" if b["alive"] else "DOWN"
        role = " (controller)" if b["id"] == info["controller"] else ""
        print(f"{b['node']}  broker {b['id']}  {b['address']}  {alive}{role}")
    for z in info["zookeeper"]:
        print(f"{z['node']}  zookeeper  {z['address']}  {z['mode'] or 'not answering'}")
    for topic, parts in sorted(info["topics"].items()):
        for p in parts:
            print(f"{topic}[{p['partition']}]  leader {p['leader']}  isr {p['isr']}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    """Removes the cluster; succeeds when there is nothing to remove."""
    try:
        client = docker_client()
        names = cluster_names(client) if args.all else [args.name]
        removed = {name: DockerCluster(ClusterSpec(name=name), client).down() for name in names}
    except EngineError as err:
        print(err, file=sys.stderr)
        return 1
    for name, count in removed.items():
        print(
            f"cluster {name}: removed {count} containers" if count else f"no cluster named {name}"
        )
    return 0
