"""remove-controller and remove-controller-partitioned: a voter of the KRaft quorum is
removed from the voter set while the cluster runs, and added back at stop (KIP-853's
kafka-metadata-quorum remove-controller and add-controller; issue 37, item 4).

The removed controller keeps running: it goes on fetching the metadata log as an
observer, so it is the spare that is added back (no extra node is needed), and
add-controller runs in it, as Kafka's documentation says it must. In
remove-controller-partitioned another voter is first cut off from every node, so that
the new voter set of two holds a voter that cannot answer: Raft commits a voter change
by a majority of the new set (Ongaro's thesis, 4.1; KIP-853 keeps the rule), and the
quorum stalls until the heal at stop. Each step is read back from the quorum's leader
(`describe --status`), never assumed, and recorded with its time, as isr-shrink's are.
The cluster must be formatted for it (a dynamic quorum: ClusterSpec.dynamic_quorum, set
by a run naming these faults); with fixed voters, or on ZooKeeper, the fault is skipped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from nemesis import grudge as g
from nemesis import net
from nemesis.cluster import Cluster, QuorumMembers, Reconfigurable
from nemesis.core import SingleFault, Skipped, Value, split_f, wait_until
from nemesis.isr import Steps

REMOVE_CONTROLLER = "remove-controller"
REMOVE_CONTROLLER_PARTITIONED = "remove-controller-partitioned"
VOTERS_S = 30.0
"""Bound on the voter set showing a change once the tool returned (or gave up)."""
ADD_BACK_S = 60.0
"""Bound on adding the controller back: add-controller is refused until the observer
has caught up with the leader, and after a stall the quorum needs time to recover."""
POLL_S = 1.0
"""Pause between questions; each is a JVM run of the tool, itself a few seconds."""


class ControllerRemoval(SingleFault):
    """Removes a random voter at start (after cutting off another, when partitioned) and
    adds it back at stop; the teardown heals the network and adds it back."""

    def __init__(
        self,
        topic: str,
        rng: random.Random,
        partitioned: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        fault = REMOVE_CONTROLLER_PARTITIONED if partitioned else REMOVE_CONTROLLER
        super().__init__(fault, topic, rng)
        self._partitioned = partitioned
        self._sleep = sleep
        self._clock = clock
        self._removed: str | None = None
        self._cut = False
        self._avoid: tuple[str, ...] = ()
        """The voter cut off, which the tools neither run in nor ask."""

    def invoke(self, f: str) -> Value:
        """Takes start- (remove a voter) or stop- (add it back). Returns the voter sets
        before and after and every step."""
        action, _ = split_f(f)
        quorum = self._quorum()
        steps = Steps(self.cluster, self.topic, self._clock)
        if action == "start":
            if self._removed is not None:
                raise Skipped(f"{self._removed} is already removed")
            return self._remove(quorum, steps)
        if self._removed is None:
            raise Skipped("no controller is removed")
        return self._add_back(quorum, steps)

    def teardown(self) -> Value:
        """Heals the network and adds the removed controller back."""
        if self._cluster is None or (self._removed is None and not self._cut):
            return {}
        quorum = self._quorum()
        return {self.fault: self._add_back(quorum, Steps(self.cluster, self.topic, self._clock))}

    def _quorum(self) -> Reconfigurable:
        cluster = self.cluster
        if cluster.metadata != "kraft" or not isinstance(cluster, Reconfigurable):
            raise Skipped(f"{self.fault} needs a KRaft quorum")
        return cluster

    def _remove(self, quorum: Reconfigurable, steps: Steps) -> Value:
        cluster = self.cluster
        try:
            members = _members(quorum)
        except Exception as err:  # no leader answers now: nothing was changed
            raise Skipped(f"the quorum did not say who votes: {err}") from err
        if any(not v.directory_id for v in members.voters):
            raise Skipped("the quorum's voters are fixed (controller.quorum.voters)")
        nodes = _voter_nodes(cluster, members)
        if len(nodes) < (3 if self._partitioned else 2):
            raise Skipped(f"{len(nodes)} running voters: too few to remove one")
        steps.record("quorum", **_said(cluster, members))
        cut = None
        if self._partitioned:
            leader = cluster.node_of_broker(members.leader)
            cut = self.rng.choice(sorted(n for n in nodes if n != leader) or sorted(nodes))
            self._cut, self._avoid = True, (cut,)
            grudge = g.complete_grudge([[cut], [n for n in cluster.nodes if n != cut]])
            net.apply_grudge(cluster, grudge)
            steps.record("cut-off", nodes=[cut], verified=net.verify_grudge(cluster, grudge))
        victim = self.rng.choice(sorted(n for n in nodes if n != cut))
        victim_id = cluster.broker_id(victim)
        directory = next(v.directory_id for v in members.voters if v.node_id == victim_id)
        self._removed = victim  # first: a removal that half happened is still added back
        try:
            said = quorum.remove_controller(victim, directory, avoid=self._avoid)
            steps.record("remove-controller", node=victim, said=said)
        except Exception as err:  # it may still commit later (a stalled quorum): watched below
            steps.record("remove-controller-failed", node=victim, error=str(err))
        after = self._await(quorum, lambda m: victim_id not in m.voter_ids, steps, "removed")
        return steps.result(
            removed=victim,
            cut_off=cut,
            voters={"before": _names(cluster, members), "after": after},
        )

    def _add_back(self, quorum: Reconfigurable, steps: Steps) -> Value:
        cluster = self.cluster
        if self._cut:
            errors = net.heal(cluster, cluster.nodes)
            self._cut, self._avoid = False, ()
            steps.record("healed", unreachable=errors)
        victim = self._removed
        if victim is None:
            return steps.result(added=None)
        victim_id = cluster.broker_id(victim)
        if cluster.state(victim) != "running":
            cluster.start(victim)
            steps.record("started", node=victim)

        def added() -> bool:
            if victim_id in _members(quorum, self._avoid, quick=True).voter_ids:
                return True
            steps.record("add-controller", node=victim, said=quorum.add_controller(victim))
            return True

        tries = _Tries(added, steps, victim)
        back = wait_until(tries, ADD_BACK_S, POLL_S, self._clock, self._sleep)
        after = self._await(quorum, lambda m: victim_id in m.voter_ids, steps, "added")
        if back:
            self._removed = None
        return steps.result(added=victim if back else None, voters={"after": after})

    def _await(
        self,
        quorum: Reconfigurable,
        done: Callable[[QuorumMembers], bool],
        steps: Steps,
        step: str,
    ) -> list[str] | None:
        """Waits until the quorum's voters satisfy done; records `step` with the voter set
        and the leader, or `not-<step>` after VOTERS_S. Returns the voters last seen."""
        seen: list[QuorumMembers] = []
        errors: list[str] = []

        def check() -> bool:
            try:
                seen.append(_members(quorum, self._avoid, quick=True))
            except Exception as err:  # no leader answers: asked again until the bound
                errors.append(str(err)[-300:])
                raise
            return done(seen[-1])

        ok = wait_until(check, VOTERS_S, POLL_S, self._clock, self._sleep)
        if not seen:
            said = errors[-1] if errors else "no answer"
            steps.record(
                f"not-{step}", within_s=VOTERS_S, error=f"the quorum never answered: {said}"
            )
            return None
        steps.record(
            step if ok else f"not-{step}", within_s=VOTERS_S, **_said(self.cluster, seen[-1])
        )
        return _names(self.cluster, seen[-1])


class _Tries:
    """add-controller asked again until it lands, each refusal recorded once (the observer
    may still be catching up)."""

    def __init__(self, ask: Callable[[], bool], steps: Steps, node: str) -> None:
        self._ask = ask
        self._steps = steps
        self._node = node
        self._refusals: set[str] = set()

    def __call__(self) -> bool:
        try:
            return self._ask()
        except Exception as err:
            said = str(err)[-200:]
            if said not in self._refusals:
                self._refusals.add(said)
                self._steps.record("add-controller-refused", node=self._node, error=said)
            raise


def _members(
    quorum: Reconfigurable, avoid: tuple[str, ...] = (), quick: bool = False
) -> QuorumMembers:
    """The quorum's members; quick: without directory ids, asked without a JVM (every
    wait), else with them, from Kafka's tool (the start, which needs them)."""
    return quorum.quorum_members(avoid, directories=not quick)


def _voter_nodes(cluster: Cluster, members: QuorumMembers) -> list[str]:
    """The running controller nodes that are voters now."""
    ids = set(members.voter_ids)
    return [
        c
        for c in cluster.controllers
        if cluster.broker_id(c) in ids and cluster.state(c) == "running"
    ]


def _names(cluster: Cluster, members: QuorumMembers) -> list[str]:
    return [cluster.node_of_broker(i) for i in members.voter_ids]


def _said(cluster: Cluster, members: QuorumMembers) -> dict[str, Any]:
    return {
        "voters": _names(cluster, members),
        "observers": sorted(cluster.node_of_broker(i) for i in members.observers),
        "leader": cluster.node_of_broker(members.leader) if members.leader >= 0 else None,
        "epoch": members.epoch,
        "high_watermark": members.high_watermark,
    }
