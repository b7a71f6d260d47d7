"""The one place that touches the network: grudges and packet loss as iptables rules
inside the nodes, their removal, and probes that show a cut really took effect.

Rules live in a chain of their own (HARNESS) jumped to from INPUT, so healing is
one flush per node and never touches rules the harness did not add.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from nemesis.cluster import Cluster, ServicePorts

CHAIN = "HARNESS"
KAFKA_PORT, ZOOKEEPER_PORT = 9092, 2181
PROBE_TIMEOUT_S = 1
T = TypeVar("T")

_HOOK = (
    f"iptables -N {CHAIN} 2>/dev/null; "
    f"iptables -C INPUT -j {CHAIN} 2>/dev/null || iptables -I INPUT -j {CHAIN}"
)


class NetError(RuntimeError):
    """A rule could not be installed or removed inside a node."""


def on_nodes(nodes: Iterable[str], action: Callable[[str], T]) -> dict[str, T]:
    """Takes nodes and an action. Runs it on every node at once; returns node -> result."""
    nodes = list(nodes)
    if not nodes:
        return {}
    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        return dict(zip(nodes, pool.map(action, nodes), strict=True))


def _run(cluster: Cluster, node: str, script: str) -> str:
    code, out = cluster.exec(node, ["sh", "-c", script])
    if code != 0:
        raise NetError(f"{node}: `{script}` exited {code}: {out.strip()[-300:]}")
    return out


def apply_grudge(cluster: Cluster, grudge: Mapping[str, Iterable[str]]) -> None:
    """Takes a grudge (node -> nodes it drops). Makes each node drop every packet from the
    nodes it holds a grudge against. Raises NetError if a node refused."""

    def install(node: str) -> None:
        drops = " ".join(
            f"&& iptables -A {CHAIN} -s {cluster.ip(other)} -j DROP"
            for other in sorted(grudge[node])
        )
        _run(cluster, node, f"{_HOOK}; true {drops}")

    on_nodes([n for n, drops in grudge.items() if drops], install)


def drop_share(cluster: Cluster, node: str, probability: float) -> None:
    """Makes node drop that share of the packets reaching it from outside (iptables'
    statistic match: this kernel has no netem)."""
    _run(
        cluster,
        node,
        f"{_HOOK}; iptables -A {CHAIN} ! -i lo -m statistic --mode random "
        f"--probability {probability:.3f} -j DROP",
    )


def heal(cluster: Cluster, nodes: Iterable[str]) -> dict[str, str]:
    """Takes nodes. Removes every harness rule inside each; returns node -> error for the
    nodes that could not be reached (a stopped node has lost its rules with its netns)."""

    def flush(node: str) -> str:
        try:
            _run(cluster, node, f"iptables -F {CHAIN} 2>/dev/null; true")
        except Exception as err:  # a paused or stopped node: reported, the rest still heal
            return str(err)
        return ""

    return {node: err for node, err in on_nodes(nodes, flush).items() if err}


def remove_chain(cluster: Cluster, nodes: Iterable[str]) -> dict[str, str]:
    """Takes nodes. Removes the harness chain and its hook entirely (teardown); returns
    node -> error for nodes that could not be reached."""
    script = (
        f"iptables -F {CHAIN} 2>/dev/null; "
        f"while iptables -D INPUT -j {CHAIN} 2>/dev/null; do :; done; "
        f"iptables -X {CHAIN} 2>/dev/null; true"
    )

    def remove(node: str) -> str:
        try:
            _run(cluster, node, script)
        except Exception as err:  # reported by the caller, the other nodes still heal
            return str(err)
        return ""

    return {node: err for node, err in on_nodes(nodes, remove).items() if err}


def rules(cluster: Cluster, node: str) -> list[str]:
    """Returns the harness rules installed in node now (iptables -S form)."""
    out = _run(cluster, node, f"iptables -S {CHAIN} 2>/dev/null; true")
    return [line for line in out.splitlines() if line.startswith("-A")]


def service_port(cluster: Cluster, node: str) -> int:
    """Returns the port node serves on: the one the cluster names (ServicePorts), else
    Kafka's for brokers and ZooKeeper's otherwise."""
    if isinstance(cluster, ServicePorts):
        return cluster.service_port(node)
    return KAFKA_PORT if node in cluster.brokers else ZOOKEEPER_PORT


def reachable(cluster: Cluster, node: str, peers: Iterable[str]) -> dict[str, bool]:
    """Takes a node and peers. Tries a TCP connection from inside node to each peer's
    service port at once; returns peer -> whether it connected within a second."""

    def probe(peer: str) -> str:
        connect = shlex.quote(f"</dev/tcp/{cluster.ip(peer)}/{service_port(cluster, peer)}")
        return (
            f"(timeout {PROBE_TIMEOUT_S} bash -c {connect} 2>/dev/null "
            f"&& echo {peer}=up || echo {peer}=down) &"
        )

    probes = " ".join(probe(p) for p in sorted(peers))
    out = _run(cluster, node, f"{probes} wait")
    answers = dict(line.split("=", 1) for line in out.split() if "=" in line)
    return {peer: answers.get(peer) == "up" for peer in sorted(peers)}


def verify_grudge(cluster: Cluster, grudge: Mapping[str, Iterable[str]]) -> dict[str, object]:
    """Takes an applied grudge. Probes, from each node, every node it drops; returns
    {"cut": bool (every probe failed), "leaks": ["a->b", ...]}."""
    probed = on_nodes(
        [n for n, drops in grudge.items() if drops],
        lambda node: reachable(cluster, node, grudge[node]),
    )
    leaks = [f"{a}->{b}" for a, peers in probed.items() for b, up in peers.items() if up]
    return {"cut": not leaks, "leaks": leaks}
