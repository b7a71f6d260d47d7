"""remove-server: a NATS JetStream server leaves the cluster at start and comes back as a
new peer at stop, as Jepsen's NATS membership nemesis does it (issue 38, item 4).

Start (Jepsen's :leave, jepsen-io/nats src/jepsen/nats/nemesis.clj MemberState and
db.clj wipe! and leave!): a random running server is stopped, its JetStream store
deleted and the server killed; then the meta leader is asked to remove it
(`$JS.API.SERVER.REMOVE`, what `nats server raft peer-remove` sends), and the fault
waits until the meta leader no longer lists it and the stream's leader no longer counts
it among the replicas. The meta leader drops it from every stream it held and places
another replica where a server is free (with three servers, none is: the stream runs on
two until a server joins). Stop (Jepsen's :join, db.clj join!): the server starts again,
empty, under a new server_name (n2 comes back as n2-2: NATS says a removed server must
not return under its old name, nats-server#7561), and the fault waits until the meta
leader lists it as current, the stream is whole again (the meta leader adds a new
server to every stream short of replicas) and the server's /healthz is 200, as Jepsen's
view waits for health. nats-server#7545 lost acknowledged writes under these changes.
Each step records what /jsz said then.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from nemesis.cluster import PeerRemovable
from nemesis.core import SingleFault, Skipped, Value, split_f, wait_until
from nemesis.isr import Steps

REMOVE_SERVER = "remove-server"
REMOVED_S = 30.0
"""Bound on the meta leader and the stream's leader no longer listing the server."""
REJOINED_S = 90.0
"""Bound on the new peer being current in the meta group and the stream whole again
(the new server copies the stream from the leader)."""
POLL_S = 1.0

Views = Mapping[str, Mapping[str, Any]]
"""node -> what its server's /jsz says (harness/cluster/nats/members.py membership)."""


def _leading(views: Views, group: str) -> Mapping[str, Any] | None:
    """Returns the view of the server that says it leads the meta group ("meta") or the
    stream ("stream"): the one view that lists every other member's state."""
    for view in views.values():
        if group == "meta" and view["meta_leader"] == view["server"]:
            return view
        if group == "stream" and view["stream"] and view["stream"]["leader"] == view["server"]:
            return view
    return None


def summary(views: Views) -> Value:
    """Takes every answering server's view. Returns what /jsz said, names as NATS gives
    them: the meta leader with its cluster size and peers, the stream's leader with its
    peers, and which servers answered and called themselves healthy."""
    meta = _leading(views, "meta")
    stream = _leading(views, "stream")
    return {
        "answering": sorted(v["server"] for v in views.values()),
        "healthy": sorted(v["server"] for v in views.values() if v["healthy"]),
        "meta_leader": meta["server"] if meta else None,
        "cluster_size": meta["cluster_size"] if meta else None,
        "meta_peers": meta["meta_peers"] if meta else None,
        "stream_leader": stream["server"] if stream else None,
        "stream_peers": stream["stream"]["peers"] if stream else None,
        "last_seq": stream["stream"]["last_seq"] if stream else None,
    }


def replica_count(views: Views) -> int | None:
    """Returns how many replicas the stream's leader counts, itself included (None
    while no server leads it)."""
    stream = _leading(views, "stream")
    return None if stream is None else 1 + len(stream["stream"]["peers"])


def left(views: Views, name: str) -> bool:
    """Returns whether server name is out of the cluster: the meta leader neither is it
    nor lists it, and the stream's leader neither is it nor lists it."""
    meta = _leading(views, "meta")
    stream = _leading(views, "stream")
    if meta is None or stream is None:
        return False
    return name not in (
        meta["server"],
        stream["server"],
        *(p["name"] for p in meta["meta_peers"]),
        *(p["name"] for p in stream["stream"]["peers"]),
    )


def rejoined(views: Views, name: str, replicas: int) -> bool:
    """Returns whether server name is back: the meta leader lists it as current (or is
    it), the stream's leader counts replicas replicas, every one current, and server name
    calls itself healthy."""
    meta = _leading(views, "meta")
    stream = _leading(views, "stream")
    if meta is None or stream is None:
        return False
    in_meta = meta["server"] == name or any(
        p["name"] == name and p["current"] and not p["offline"] for p in meta["meta_peers"]
    )
    peers = stream["stream"]["peers"]
    whole = 1 + len(peers) == replicas and all(p["current"] and not p["offline"] for p in peers)
    healthy = any(v["server"] == name and v["healthy"] for v in views.values())
    return in_meta and whole and healthy


class ServerRemoval(SingleFault):
    """Removes a random server at start and brings it back as a new peer at stop;
    teardown brings it back too."""

    def __init__(
        self,
        topic: str,
        rng: random.Random,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(REMOVE_SERVER, topic, rng)
        self._sleep = sleep
        self._clock = clock
        self._removed: str | None = None
        self._replicas = 0
        """The stream's replica count before the removal: what makes it whole again."""
        self._left = False
        """Whether the removed server was seen out of the meta group and the stream."""

    def invoke(self, f: str) -> Value:
        """Takes start- (remove a server) or stop- (bring it back as a new peer). Returns
        the server, its names and every step with what /jsz said."""
        action, _ = split_f(f)
        members = self._members()
        steps = Steps(self.cluster, self.topic, self._clock)
        if action == "start":
            if self._removed is not None:
                raise Skipped(f"{self._removed} is already removed")
            return self._remove(members, steps)
        if self._removed is None:
            raise Skipped("no server is removed")
        return self._rejoin(members, steps)

    def teardown(self) -> Value:
        """Brings a removed server back as a new peer."""
        if self._cluster is None or self._removed is None:
            return {}
        steps = Steps(self.cluster, self.topic, self._clock)
        return {self.fault: self._rejoin(self._members(), steps)}

    def _members(self) -> PeerRemovable:
        cluster = self.cluster
        if not isinstance(cluster, PeerRemovable):
            raise Skipped(f"{self.fault} removes a NATS JetStream server: this cluster has none")
        return cluster

    def _views(self, members: PeerRemovable) -> Views:
        try:
            return members.membership(self.topic)
        except Exception:  # no server answers now: asked again, or recorded as nothing
            return {}

    def _remove(self, members: PeerRemovable, steps: Steps) -> Value:
        cluster = self.cluster
        running = sorted(n for n in cluster.brokers if cluster.state(n) == "running")
        if len(running) < 3:
            raise Skipped(f"{len(running)} running servers: too few to remove one")
        before = self._views(members)
        replicas = replica_count(before)
        if replicas is None:
            raise Skipped(f"no server leads {self.topic} now: nothing was changed")
        victim = self.rng.choice(running)
        name = members.server_name(victim)
        steps.record("members-before", node=victim, server=name, jsz=summary(before))
        self._removed, self._replicas = victim, replicas  # first: a half-done removal is undone
        self._left = False
        steps.record("wiped", node=victim, server=name, **members.wipe(victim))
        self._left = self._peer_remove(members, steps, victim, name)
        return steps.result(node=victim, removed=name if self._left else None, replicas=replicas)

    def _peer_remove(self, members: PeerRemovable, steps: Steps, victim: str, name: str) -> bool:
        """Asks for server name's removal until an answer says it is done, as Jepsen's
        nemesis repeats a pending leave (only the meta leader answers: none while the
        victim was the leader and the others elect another), and waits until it is out.
        Records the answer (or the last failure) and what /jsz said; returns whether it
        left within REMOVED_S."""
        views: list[Views] = []
        failures: list[str] = []
        answered = False

        def gone() -> bool:
            nonlocal answered
            if not answered:
                try:
                    said = members.remove_peer(victim)
                except Exception as err:  # no meta leader yet: asked again
                    failures.append(str(err)[-300:])
                else:
                    answered = True
                    steps.record("peer-remove", server=name, said=said, failures=len(failures))
            views[:] = [self._views(members)]
            return left(views[0], name)

        ok = wait_until(gone, REMOVED_S, POLL_S, self._clock, self._sleep)
        if not answered:
            last = failures[-1] if failures else None
            steps.record("peer-remove-failed", server=name, error=last, asked=len(failures))
        seen = summary(views[0]) if views else None
        step = "server-left" if ok else "server-not-left"
        steps.record(step, server=name, within_s=REMOVED_S, jsz=seen)
        return ok

    def _rejoin(self, members: PeerRemovable, steps: Steps) -> Value:
        victim, replicas = self._removed, self._replicas
        assert victim is not None
        if self.cluster.state(victim) == "running":  # killed and started by another fault
            self.cluster.kill(victim)
        if not self._left:  # never back under a name the cluster still lists
            self._left = self._peer_remove(members, steps, victim, members.server_name(victim))
        name = members.rejoin(victim)
        self._removed = None
        steps.record("rejoining", node=victim, server=name)
        views: list[Views] = []

        def back() -> bool:
            views[:] = [self._views(members)]
            return rejoined(views[0], name, replicas)

        ok = wait_until(back, REJOINED_S, POLL_S, self._clock, self._sleep)
        seen = summary(views[0]) if views else None
        step = "server-rejoined" if ok else "server-not-rejoined"
        steps.record(step, server=name, within_s=REJOINED_S, jsz=seen)
        return steps.result(node=victim, rejoined=name if ok else None, replicas=replicas)
