"""Late delivery: requests held in faultproxy (the in-path proxy in front of every
broker) and then delivered, in order, after their senders gave up on them, as a
network that holds a connection's bytes and then hands them all over would (issue 37,
item 1; the window of KAFKA-17754, where a Produce or EndTxn that arrives late lands in
a later transaction of its producer).

Each fault holds one connection per client (the first to send the request it names),
so that the client's retry on a new connection goes through and the client moves on,
while the old request waits out HOLD_S (past the clients' request, socket and message
timeouts) and reaches the broker after all. Its stop waits until every held request has
been delivered and answered, and records what was held, for how long, what the broker
answered and how many requests waited across an EndTxn of their own producer
(nemesis.proxy).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from nemesis import proxy
from nemesis.cluster import Cluster
from nemesis.core import Skipped, Value, current_leader, split_f

HOLD_S = 12.0
"""How long each held connection is held: past the clients' request (4 s), socket (5 s)
and message (8 s) timeouts (kvstore.Timeouts), so that the client has given up on the
request and retried it elsewhere before it arrives."""
MARKER_HOLD_S = 32.0
"""How long a coordinator's markers are held: past a broker's own request.timeout.ms
(30 s, Kafka's default), after which the coordinator sends them again elsewhere."""

Where = Callable[[Cluster, str, random.Random], tuple[list[str], Value, Value]]
"""Takes the cluster, the topic and a random source. Returns the brokers whose proxies
get the rule, what the fault aims at (for the record) and the rule's own selectors."""


@dataclass(frozen=True, slots=True)
class Late:
    """One late-delivery fault: the requests it holds and where."""

    apis: tuple[str, ...]
    where: Where
    hold_s: float = HOLD_S


def _clients_to_leader(
    cluster: Cluster, topic: str, rng: random.Random
) -> tuple[list[str], Value, Value]:
    target = current_leader(cluster, topic, rng)
    about = {"leader": target.node, "partition": target.partition}
    return [target.node], about, {"exclude_peers": _addresses(cluster)}


def _clients_to_every_broker(
    cluster: Cluster, topic: str, rng: random.Random
) -> tuple[list[str], Value, Value]:
    return cluster.brokers, {}, {"exclude_peers": _addresses(cluster)}


def _brokers_to_every_broker(
    cluster: Cluster, topic: str, rng: random.Random
) -> tuple[list[str], Value, Value]:
    return cluster.brokers, {}, {"peers": _addresses(cluster)}


def _follower_to_leader(
    cluster: Cluster, topic: str, rng: random.Random
) -> tuple[list[str], Value, Value]:
    target = current_leader(cluster, topic, rng)
    state = next(p for p in cluster.partitions(topic) if p.partition == target.partition)
    followers = [cluster.node_of_broker(b) for b in state.replicas]
    followers = [f for f in followers if f != target.node]
    if not followers:
        raise Skipped(f"partition {target.partition} has no follower")
    follower = rng.choice(followers)
    about = {"leader": target.node, "partition": target.partition, "follower": follower}
    return [target.node], about, {"peers": [cluster.ip(follower)]}


def _addresses(cluster: Cluster) -> list[str]:
    return [cluster.ip(n) for n in cluster.nodes]


FAULTS: dict[str, Late] = {
    "late-produce": Late(("Produce",), _clients_to_leader),
    "late-end-txn": Late(("EndTxn",), _clients_to_every_broker),
    "late-txn-requests": Late(
        ("AddPartitionsToTxn", "AddOffsetsToTxn", "TxnOffsetCommit"), _clients_to_every_broker
    ),
    "late-txn-markers": Late(("WriteTxnMarkers",), _brokers_to_every_broker, MARKER_HOLD_S),
    "late-replication": Late((), _follower_to_leader),
}
"""Each fault by name: clients' Produce requests to one partition's leader; clients'
EndTxn requests, or their other transaction requests, to whichever broker coordinates
them; a coordinator's markers to every partition leader; a follower's requests (its
fetches) to its leader."""


class LateDelivery(proxy.ProxyFault):
    """One late-delivery fault: start installs its rule, stop ends it and waits until
    every held request was delivered, then records what was held."""

    def invoke(self, f: str) -> Value:
        """Installs the rule (start), or ends it and says what it held (stop)."""
        late = FAULTS[self.fault]
        action, _ = split_f(f)
        if action == "start":
            if self.installed:
                raise Skipped(f"{self.fault} is holding already")
            brokers, about, selectors = late.where(self.cluster, self.topic, self.rng)
            rule = {
                "name": self.fault,
                "action": "hold",
                "direction": "up",
                "apis": list(late.apis),
                "per_client": 1,
                "hold_ms": round(late.hold_s * 1000),
                **selectors,
            }
            self.installed = proxy.install(self.proxies, brokers, rule)
            holding = list(late.apis) or "every request"
            return {"holding": holding, "hold_s": late.hold_s, "brokers": brokers, **about}
        if not self.installed:
            raise Skipped(f"{self.fault} holds nothing")
        installed = self.take_installed()
        reports = proxy.end(self.proxies, installed, release_now=False)
        since = min(i.since for i in installed)
        ends = proxy.ends_since(self.proxies, self.cluster.brokers, since)
        markers = proxy.markers_since(self.proxies, self.cluster.brokers, since)
        return proxy.summary(reports, ends, markers)
