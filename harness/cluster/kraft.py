"""Questions only a KRaft cluster answers, asked over Kafka's own protocol (harness/
cluster/wire.py): the controller quorum, its active controller, the committed state of
a topic's partitions, and the finalized features (eligible leader replicas).

Committed partition state: a broker applies a metadata record only once the quorum
has committed it, so every broker's metadata is a committed state, but a broker cut
off from the controllers keeps an old one. So the active controller is asked which
broker has replicated the most of the metadata log among those that fetched within
the last 3 s, and that broker alone is asked (a Metadata request, which also carries
leader epochs). The answer is at most one metadata fetch behind the controller.
"""

from __future__ import annotations

from typing import Protocol

from harness.cluster import wire
from harness.cluster.admin import AdminError
from harness.cluster.config import CONTROLLER_PORT
from harness.cluster.quorum import (
    Quorum,
    ask_all,
    freshest_broker,
    leader_answer,
    now_ms,
    quorum_view,
)
from harness.cluster.wire import WireError
from nemesis.cluster import PartitionState

KAFKA_PORT = 9092
TIMEOUT_S = 1.5


class KraftNodes(Protocol):
    """What these questions need of a cluster."""

    @property
    def brokers(self) -> list[str]:
        """Returns the broker nodes."""
        ...

    @property
    def controllers(self) -> list[str]:
        """Returns the quorum's voter nodes."""
        ...

    def ip(self, node: str) -> str:
        """Returns node's address."""
        ...

    def broker_id(self, node: str) -> int:
        """Returns node's Kafka node id."""
        ...

    def node_states(self) -> dict[str, str]:
        """Returns each node's container state."""
        ...


def describe_quorum(cluster: KraftNodes) -> Quorum:
    """Returns the quorum as its leader describes it now; raises AdminError when no
    controller answers as leader."""
    running = _running(cluster, cluster.controllers)
    answers = ask_all(
        {c: cluster.ip(c) for c in running},
        lambda address: wire.describe_quorum(address, CONTROLLER_PORT, TIMEOUT_S),
    )
    leader = leader_answer(answers)
    if leader is None:
        why = "; ".join(f"{c}: {a}" for c, a in answers.items()) or "no controller is running"
        raise AdminError(f"no controller answers as the quorum's leader ({why})")
    return quorum_view(leader, now_ms())


def _running(cluster: KraftNodes, nodes: list[str]) -> list[str]:
    states = cluster.node_states()
    return [n for n in nodes if states.get(n) == "running"]


def committed_partitions(cluster: KraftNodes, topic: str) -> list[PartitionState]:
    """Returns each partition of topic as the quorum has committed it, read from the
    broker with the freshest metadata (see the module's docstring); raises AdminError
    when no broker reaching the quorum can say."""
    quorum = describe_quorum(cluster)
    ids = {cluster.broker_id(b): b for b in _running(cluster, cluster.brokers)}
    chosen = freshest_broker(quorum, list(ids))
    if chosen is None:
        raise AdminError("no running broker has fetched the metadata log within 3 s")
    try:
        parts = wire.metadata(cluster.ip(ids[chosen]), KAFKA_PORT, topic, TIMEOUT_S)
    except WireError as err:
        raise AdminError(f"broker {chosen} did not describe {topic!r}: {err}") from err
    return [
        PartitionState(p.partition, p.leader, p.replicas, tuple(sorted(p.isr)), p.leader_epoch)
        for p in parts
    ]


def finalized_features(cluster: KraftNodes) -> dict[str, int]:
    """Returns the feature levels the cluster has finalized, as the first broker that
    answers reports them; raises AdminError when none does."""
    errors = []
    for broker in _running(cluster, cluster.brokers):
        try:
            return wire.finalized_features(cluster.ip(broker), KAFKA_PORT, TIMEOUT_S)
        except WireError as err:
            errors.append(f"{broker}: {err}")
    raise AdminError(f"no broker reported the finalized features ({'; '.join(errors)})")
