"""Waits for a starting NATS cluster to be ready: every server's /healthz says JetStream
is on (js-enabled-only), then every server's /jsz names the same meta-group leader and
counts the whole cluster, so a stream created next finds its replicas. Each wait ends at
the deadline, or when a server stops, with that server's log tail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from harness.cluster.errors import ClusterError
from harness.cluster.nats import monitor
from harness.cluster.nats.config import NatsSpec
from harness.cluster.readiness import Deadline

Status = Callable[[str], None]
POLL_S = 0.25


class Starting(Protocol):
    """What the waits ask of a starting NATS cluster (NatsCluster, which calls them)."""

    spec: NatsSpec

    @property
    def nodes(self) -> list[str]:
        """Returns every server's node name."""
        ...

    def ip(self, node: str) -> str:
        """Returns node's address."""
        ...

    def node_states(self) -> dict[str, str]:
        """Returns each node's container state."""
        ...

    def log_tail(self, node: str, lines: int = 30) -> str:
        """Returns the last lines of node's log."""
        ...


def _fail(cluster: Starting, what: str, node: str) -> ClusterError:
    return ClusterError(f"{what}\n--- last lines of {node}'s log ---\n{cluster.log_tail(node)}")


def _check_running(cluster: Starting) -> None:
    states = cluster.node_states()
    for node in cluster.nodes:
        if states.get(node) != "running":
            raise _fail(cluster, f"{node} stopped while starting ({states.get(node)})", node)


def _js_enabled(cluster: Starting, node: str) -> bool:
    try:
        return monitor.health(cluster.ip(node), js_enabled_only=True).ok
    except monitor.MonitorError:
        return False


def _meta_problem(cluster: Starting) -> tuple[str, str] | None:
    """Returns (node, what it lacks) for the first server whose /jsz does not yet show the
    whole meta group under the leader the others name, or a leader that does not yet hear
    from every peer; None when all is there."""
    leaders, views = {}, {}
    for node in cluster.nodes:
        try:
            view = views[node] = monitor.jetstream(node, cluster.ip(node))
        except monitor.MonitorError as err:
            return node, f"its /jsz does not answer ({err})"
        if view.meta_leader is None:
            return node, "it knows no meta leader"
        if view.meta_size != cluster.spec.servers:
            return node, f"its meta group has {view.meta_size} of {cluster.spec.servers} servers"
        leaders[node] = view.meta_leader
    if len(set(leaders.values())) > 1:
        node = sorted(leaders)[0]
        return node, f"the servers name different meta leaders {leaders}"
    leader = next(iter(leaders.values()))
    if leader not in views:
        return leader, "the meta leader is not one of the servers"
    peers = views[leader].meta_peers
    if len(peers) != cluster.spec.servers - 1:
        return leader, f"it leads {len(peers)} meta peers"
    behind = [p.name for p in peers if not p.current or p.offline]
    if behind:
        return leader, f"its meta peers {', '.join(behind)} are not current"
    return None


def wait_ready(cluster: Starting, deadline: Deadline, status: Status) -> None:
    """Returns when JetStream is on in every server and all agree on a meta leader of a
    full meta group; raises ClusterError when a server stops or at the deadline."""
    name = cluster.spec.name
    while waiting := [n for n in cluster.nodes if not _js_enabled(cluster, n)]:
        _check_running(cluster)
        status(f"cluster {name}: waiting for JetStream on {', '.join(waiting)}")
        if deadline.passed():
            raise _fail(cluster, deadline.missed(name, "JetStream was not on"), waiting[0])
        time.sleep(POLL_S)
    while problem := _meta_problem(cluster):
        node, what = problem
        _check_running(cluster)
        status(f"cluster {name}: waiting for the meta group ({node}: {what})")
        if deadline.passed():
            raise _fail(cluster, deadline.missed(name, f"{node}: {what}"), node)
        time.sleep(POLL_S)
