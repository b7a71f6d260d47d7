"""decommission-broker and decommission-kill-leader: a broker is decommissioned as an
operator does it, while the clients run, and brought back at stop (issue 37, item 4).

Start: every partition with a replica on the broker (the internal topics' too) is
reassigned to its other replicas (kafka-reassign-partitions; with three brokers and a
replication factor of three each keeps two), the reassignment is awaited until no
partition is left on the broker, the broker is stopped (a controlled shutdown) and, on
KRaft, unregistered (kafka-cluster unregister). Stop: the broker is started, registers
again, and every partition it held is reassigned back to its first replicas, in their
order, and the topic's preferred leaders are elected. decommission-kill-leader kills a
partition leader on another broker once the partitions have left the broker, and
starts it again DEAD_S after the broker stopped and was unregistered: for that while the
partitions' only live replica is the third broker's. (Killing it before the
reassignment cannot work: kafka-reassign-partitions refuses a target replica on a broker
the cluster does not list, and a killed KRaft broker is fenced out of that list.) Every
step is read back from the cluster and recorded with its time, as isr-shrink's are.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping

from nemesis.cluster import Disks, PartitionState, Reassignable
from nemesis.core import SingleFault, Skipped, Value, current_leader, split_f, wait_until
from nemesis.isr import Steps

DECOMMISSION_BROKER = "decommission-broker"
DECOMMISSION_KILL_LEADER = "decommission-kill-leader"
REASSIGN_S = 60.0
"""Bound on a reassignment completing: shrinking is at once, growing back copies what
the broker missed while it was away."""
REGISTER_S = 60.0
"""Bound on a started broker registering again (its reassignment is refused before)."""
DEAD_S = 5.0
"""How long the killed leader of decommission-kill-leader stays dead while the
reassignment waits for it."""
POLL_S = 0.5

Moves = dict[tuple[str, int], tuple[int, ...]]
Assignment = Mapping[str, list[PartitionState]]


def away_from(assignment: Assignment, broker: int) -> tuple[Moves, Moves]:
    """Takes every topic's partitions and a broker id. Returns the moves that take each
    partition off the broker (its other replicas, in order) and the moves that put them
    back as they are now. A partition whose only replica is the broker cannot move and
    is left out of both."""
    away: Moves = {}
    back: Moves = {}
    for topic, parts in assignment.items():
        for p in parts:
            if broker in p.replicas and len(p.replicas) > 1:
                away[(topic, p.partition)] = tuple(r for r in p.replicas if r != broker)
                back[(topic, p.partition)] = p.replicas
    return away, back


def unsettled(assignment: Assignment, moves: Moves) -> list[str]:
    """Takes every topic's partitions and the moves asked. Returns the partitions
    ("topic-p") whose reassignment is not done, in order: done is the replicas asked and
    every one of them in the ISR (Kafka's own test; while a replica is being added, the
    metadata already lists it among the replicas, out of the ISR until it caught up)."""
    now = {(t, p.partition): p for t, parts in assignment.items() for p in parts}
    return [
        f"{t}-{p}"
        for (t, p), replicas in sorted(moves.items())
        if (t, p) not in now
        or set(now[(t, p)].replicas) != set(replicas)
        or not set(replicas) <= set(now[(t, p)].isr)
    ]


def held_by(assignment: Assignment, broker: int) -> list[str]:
    """Returns the partitions ("topic-p") that have a replica on broker, in order."""
    return sorted(
        f"{t}-{p.partition}"
        for t, parts in assignment.items()
        for p in parts
        if broker in p.replicas
    )


class Decommission(SingleFault):
    """Decommissions a random broker at start and brings it back at stop; teardown
    brings it back too."""

    def __init__(
        self,
        topic: str,
        rng: random.Random,
        kill_leader: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            DECOMMISSION_KILL_LEADER if kill_leader else DECOMMISSION_BROKER, topic, rng
        )
        self._kill_leader = kill_leader
        self._sleep = sleep
        self._clock = clock
        self._away: str | None = None
        self._back: Moves = {}

    def invoke(self, f: str) -> Value:
        """Takes start- (decommission a broker) or stop- (bring it back). Returns the
        broker, the partitions moved and every step."""
        action, _ = split_f(f)
        tools = self._tools()
        steps = Steps(self.cluster, self.topic, self._clock)
        if action == "start":
            if self._away is not None:
                raise Skipped(f"{self._away} is already decommissioned")
            return self._decommission(tools, steps)
        if self._away is None:
            raise Skipped("no broker is decommissioned")
        return self._bring_back(tools, steps)

    def teardown(self) -> Value:
        """Starts the decommissioned broker and reassigns its partitions back."""
        if self._cluster is None or self._away is None:
            return {}
        return {
            self.fault: self._bring_back(
                self._tools(), Steps(self.cluster, self.topic, self._clock)
            )
        }

    def _tools(self) -> Reassignable:
        cluster = self.cluster
        if not isinstance(cluster, Reassignable) or not isinstance(cluster, Disks):
            raise Skipped(f"{self.fault}: this cluster cannot reassign partitions")
        return cluster

    def _decommission(self, tools: Reassignable, steps: Steps) -> Value:
        cluster = self.cluster
        brokers = [b for b in cluster.brokers if cluster.state(b) == "running"]
        if len(brokers) < 3:
            raise Skipped(f"{len(brokers)} running brokers: too few to take one away")
        victim = self.rng.choice(sorted(brokers))
        victim_id = cluster.broker_id(victim)
        try:
            away, back = away_from(tools.replica_assignment(), victim_id)
        except Exception as err:  # no metadata now: nothing was changed
            raise Skipped(f"the replicas' places are unknown: {err}") from err
        if not away:
            raise Skipped(f"{victim} holds no partition that can move")
        self._away, self._back = victim, back  # first: a half-done move is still undone
        try:
            said = tools.reassign(away)
            steps.record("reassigning", node=victim, partitions=len(away), said=_last_line(said))
        except Exception as err:  # it may have started all the same: the wait below says
            steps.record("reassign-failed", node=victim, error=str(err)[-300:])
        if not self._settle(tools, away, steps, "reassigned-away"):
            return steps.result(decommissioned=None, node=victim, moved=len(away), set_up=False)
        steps.record(
            "left-on-it", node=victim, partitions=held_by(tools.replica_assignment(), victim_id)
        )
        killed = self._kill_a_leader(victim, steps) if self._kill_leader else None
        assert isinstance(cluster, Disks)
        cluster.stop(victim)
        steps.record("stopped", node=victim)
        if cluster.metadata == "kraft":
            try:
                steps.record("unregistered", node=victim, said=tools.unregister_broker(victim_id))
            except Exception as err:  # recorded: the broker re-registers at stop either way
                steps.record("unregister-failed", node=victim, error=str(err)[-300:])
        if killed is not None:
            self._sleep(DEAD_S)
            cluster.start(killed)
            steps.record("started", node=killed, dead_s=DEAD_S, state=steps.state())
        return steps.result(decommissioned=victim, moved=len(away), killed=killed, set_up=True)

    def _kill_a_leader(self, victim: str, steps: Steps) -> str:
        """Kills the leader of a random partition of the topic that is not the victim
        (another broker when the victim leads them all); returns it."""
        try:
            leader = current_leader(self.cluster, self.topic, self.rng).node
        except Skipped:
            leader = victim
        if leader == victim:
            leader = self.rng.choice(sorted(b for b in self.cluster.brokers if b != victim))
        self.cluster.kill(leader)
        steps.record("killed-leader", node=leader, state=steps.state())
        return leader

    def _bring_back(self, tools: Reassignable, steps: Steps) -> Value:
        cluster = self.cluster
        victim, back = self._away, self._back
        assert victim is not None
        for node in cluster.brokers:  # the victim, and a killed leader a failed start left
            if cluster.state(node) != "running":
                cluster.start(node)
                steps.record("started", node=node)
        refusals: list[str] = []

        def reassigned() -> bool:
            try:
                tools.reassign(back)
            except Exception as err:  # refused until the broker has registered again
                refusals.append(str(err)[-200:])
                raise
            return True

        if not wait_until(reassigned, REGISTER_S, 1.0, self._clock, self._sleep):
            steps.record("not-reassigning-back", node=victim, error=refusals[-1:])
            return steps.result(recommissioned=None, node=victim)
        steps.record("reassigning-back", node=victim, partitions=len(back), refused=len(refusals))
        settled = self._settle(tools, back, steps, "reassigned-back")
        elected = cluster.elect_preferred_leaders(self.topic) if settled else {}
        steps.record(
            "preferred-leaders", refused={str(p): why for p, why in elected.items() if why}
        )
        self._away, self._back = None, {}
        return steps.result(recommissioned=victim, moved=len(back), set_up=settled)

    def _settle(self, tools: Reassignable, moves: Moves, steps: Steps, step: str) -> bool:
        """Waits until every partition of moves has the replicas asked; records `step`
        with the time taken, or `not-<step>` with what is left after REASSIGN_S."""
        began = self._clock()
        left: list[str] = []

        def done() -> bool:
            left[:] = unsettled(tools.replica_assignment(), moves)
            return not left

        ok = wait_until(done, REASSIGN_S, POLL_S, self._clock, self._sleep)
        took = round(self._clock() - began, 2)
        if ok:
            steps.record(step, partitions=len(moves), took_s=took, state=steps.state())
        else:
            steps.record(
                f"not-{step}", within_s=REASSIGN_S, unsettled=left[:20], state=steps.state()
            )
        return ok


def _last_line(said: str) -> str:
    """The tool's verdict: it prints the whole current assignment before it."""
    lines = said.strip().splitlines()
    return lines[-1] if lines else ""
