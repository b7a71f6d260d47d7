"""The 2013 ISR-shrink data loss as a fault (docs/KAFKA.md): the leader, cut from its
followers only, shrinks its ISR to itself and acknowledges alone, then dies; with unclean
election allowed an out-of-sync follower leads, and the old leader truncates on return.

The leader must still reach the controller while its ISR shrinks (its AlterPartition
goes there): after a preferred-leader election, the targets are the partitions led on
ZooKeeper by the controller broker, on KRaft by a broker that is not a controller (the
workload's preferred leaders rotate over the brokers; where the ZooKeeper-mode
controller leads none, one partition's replicas are reordered to put it first). Every
step is read from the cluster, never assumed, and recorded with its time since the start
op was invoked (`after_s`). A step that does not happen within its bound is recorded
with the reason and the sequence stops there: no loss is ever reported that was never
set up. Stop (step 4) heals the network, starts the old leader, waits for it to rejoin
the ISR and records its truncation log lines.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from nemesis import grudge as g
from nemesis import net
from nemesis.cluster import Cluster
from nemesis.core import SingleFault, Skipped, Value, split_f, wait_until
from nemesis.names import ISR_SHRINK as FAULT
from nemesis.process import revive

ISR_SHRINK_WAIT_S = 20.0
"""Bound on step 2: replica.lag.time.max.ms (4 s, checked every 2 s) and the ISR change."""
ACK_ALONE_S = 4.0
"""How long the leader acknowledges alone before it is killed."""
ELECTION_WAIT_S = 25.0
"""Bound on step 3: the dead leader's ZooKeeper session or KRaft broker session (6 s
each), then the (unclean) election."""
REJOIN_WAIT_S = 120.0
"""Bound on the killed leader's return to the ISR after the stop: a JVM start, the log
recovery of an unclean kill and the catch-up. 40 s was too short at load 50, where a
KRaft broker took longer; the wait ends as soon as it is back."""
LEAD_WAIT_S = 10.0
"""Bound on a preferred-leader election reaching the brokers' metadata."""
POLL_S = 0.5
TRUNCATION_LINES = 20


class IsrShrink(SingleFault):
    """The four steps of the ISR-shrink sequence: start does 1-3, stop does 4."""

    def __init__(
        self,
        topic: str,
        rng: random.Random,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(FAULT, topic, rng)
        self._sleep = sleep
        self._clock = clock
        self._leader: str | None = None
        self._killed = False
        self._targets: list[int] = []
        self._cut = False

    def invoke(self, f: str) -> Value:
        """Runs steps 1-3 (start) or step 4 (stop); returns every step it recorded."""
        action, _ = split_f(f)
        if action == "start":
            if self._cut or self._killed:
                raise Skipped(f"{FAULT} is already in force")
            return self._start(Steps(self.cluster, self.topic, self._clock))
        if not (self._cut or self._killed):
            raise Skipped(f"{FAULT} is not in force")
        return self._stop(Steps(self.cluster, self.topic, self._clock))

    def teardown(self) -> Value:
        """Removes every rule and starts every node that is down."""
        if self._cluster is None:
            return {}
        errors = net.remove_chain(self._cluster, self._cluster.nodes)
        revived = revive(self._cluster, resume_paused=False)
        self._cut = self._killed = False
        return {FAULT: {"healed": True, "unreachable": errors, "revived": revived}}

    def _start(self, steps: Steps) -> Value:
        cluster = self.cluster
        leader_id, targets = self._place(steps)
        leader = cluster.node_of_broker(leader_id)
        followers = sorted(
            {
                cluster.node_of_broker(r)
                for p in cluster.partitions(self.topic)
                if p.partition in targets
                for r in p.replicas
            }
            - {leader}
        )
        self._leader, self._targets = leader, targets
        # Marked first: a cut that fails half-way must still be healed.
        self._cut = True
        grudge = g.between([leader], followers)
        net.apply_grudge(cluster, grudge)
        steps.record(
            "cut-from-followers",
            leader=leader,
            followers=followers,
            partitions=targets,
            verified=net.verify_grudge(cluster, grudge),
            state=steps.state(),
        )
        # Step 2, as the controller committed it (the cut-off followers' metadata is stale).
        alone = (leader_id,)
        if not self._wait(
            lambda: _isr_of(cluster, self.topic, targets) == dict.fromkeys(targets, alone),
            ISR_SHRINK_WAIT_S,
        ):
            steps.record("isr-did-not-shrink", within_s=ISR_SHRINK_WAIT_S, state=steps.state())
            return steps.result(leader=leader, partitions=targets, set_up=False)
        steps.record("isr-shrunk", state=steps.state())
        self._sleep(ACK_ALONE_S)
        # Step 3: SIGKILL, so no controlled shutdown moves leadership first.
        self._killed = True
        cluster.kill(leader)
        steps.record("killed", node=leader, acked_alone_s=ACK_ALONE_S)
        elected = self._wait(
            lambda: _all_led_by_others(cluster, self.topic, targets, exclude=leader_id),
            ELECTION_WAIT_S,
        )
        state = steps.state()
        if not elected:
            steps.record("no-leader-elected", within_s=ELECTION_WAIT_S, state=state)
            return steps.result(leader=leader, partitions=targets, set_up=False)
        # Out of sync by the committed ISR; on KRaft with eligible leader replicas
        # (KIP-966) it may instead come from the ELR, which holds every committed write.
        steps.record("follower-elected", state=state, controller=_active_controller(cluster))
        return steps.result(leader=leader, partitions=targets, set_up=True)

    def _place(self, steps: Steps) -> tuple[int, list[int]]:
        """Moves leadership to the preferred replicas, then picks the leader to isolate
        (one that will still reach the controller); returns its id and the partitions it
        leads. Raises Skipped when no such leader leads any."""
        cluster = self.cluster
        try:
            moved = cluster.elect_preferred_leaders(self.topic)
        except Exception as err:  # the leaders may already be where they should: go on
            moved = {-1: str(err)}
        leaders = {p.partition: p.leader for p in cluster.partitions(self.topic)}
        leader = self._reachable_leader(set(leaders.values()) - {-1})
        made_preferred = {}
        if leader not in leaders.values():
            made_preferred = self._lead_one(leader, sorted(leaders))
            leaders = {p.partition: p.leader for p in cluster.partitions(self.topic)}
        steps.record(
            "placed",
            leader=cluster.node_of_broker(leader),
            controller=_active_controller(cluster),
            not_moved={str(p): why for p, why in moved.items() if why},
            **({"made_preferred": made_preferred} if made_preferred else {}),
        )
        targets = [p for p, lead in sorted(leaders.items()) if lead == leader]
        if not targets:
            raise Skipped(
                f"no partition of {self.topic} is led by the controller "
                f"{cluster.node_of_broker(leader)} ({made_preferred})"
            )
        return leader, targets

    def _lead_one(self, broker: int, partitions: list[int]) -> dict[str, str]:
        """Makes broker (the ZooKeeper-mode controller, which leads a one-partition topic
        such as the kv store's only by chance) the preferred leader of one of partitions
        and elects it. Returns {partition: "" once it leads, else why not}."""
        cluster, partition = self.cluster, self.rng.choice(partitions)
        try:
            why = cluster.prefer_leader(self.topic, partition, broker)
            if not why:
                why = cluster.elect_preferred_leaders(self.topic).get(partition, "")
        except Exception as err:  # recorded; the caller then skips with the reason
            why = str(err)

        def leads() -> bool:
            if any(
                p.partition == partition and p.leader == broker
                for p in cluster.partitions(self.topic)
            ):
                return True
            # Elected again: once, on a cluster just up, one election answered done and
            # the old leader was still in place 30 s on.
            cluster.elect_preferred_leaders(self.topic)
            return False

        if not why and not self._wait(leads, LEAD_WAIT_S):
            why = f"broker {broker} did not lead it within {LEAD_WAIT_S:g} s"
        return {str(partition): why}

    def _reachable_leader(self, leaders: set[int]) -> int:
        """Returns a broker that keeps reaching the controller when cut from its followers:
        on ZooKeeper the controller broker itself (its ZooKeeper writes are the ISR change),
        on KRaft a broker that is no controller (the quorum stays reachable)."""
        cluster = self.cluster
        if cluster.metadata != "kraft":
            controller = cluster.controller()
            if controller < 0:
                raise Skipped("no controller known")
            return controller
        dedicated = {cluster.broker_id(b) for b in cluster.brokers} - {
            cluster.broker_id(c) for c in cluster.controllers
        }
        if not dedicated:
            raise Skipped(
                f"{FAULT} needs brokers apart from the controllers on KRaft: a combined "
                "node cut from its followers is cut from the quorum too"
            )
        candidates = sorted(dedicated & leaders)
        if not candidates:
            raise Skipped(f"no broker apart from the controllers leads a partition of {self.topic}")
        return self.rng.choice(candidates)

    def _stop(self, steps: Steps) -> Value:
        cluster = self.cluster
        errors = net.heal(cluster, cluster.nodes)
        self._cut = False
        revived = revive(cluster, resume_paused=False)
        self._killed = False
        steps.record("healed", unreachable=errors, revived=revived)
        leader, targets = self._leader, self._targets
        if leader is None:
            return steps.result()
        leader_id = cluster.broker_id(leader)
        back = self._wait(lambda: _rejoined(cluster, self.topic, targets, leader_id), REJOIN_WAIT_S)
        # Kafka logs "Truncating partition T-P with TruncationState(offset=..." when a
        # replica cuts its log back to the new leader's epoch end (KIP-101).
        names = "|".join(re.escape(f"{self.topic}-{p}") for p in targets)
        truncated = cluster.server_log(leader, f"[Tt]runcat.*({names})([^0-9]|$)", TRUNCATION_LINES)
        steps.record(
            "rejoined" if back else "did-not-rejoin",
            node=leader,
            within_s=REJOIN_WAIT_S,
            state=steps.state(),
            truncation=truncated,
        )
        return steps.result(leader=leader, partitions=targets)

    def _wait(self, done: Callable[[], bool], bound: float) -> bool:
        return wait_until(done, bound, POLL_S, self._clock, self._sleep)


class Steps:
    """The steps of one op as they happen, each stamped with seconds since the op began."""

    def __init__(self, cluster: Cluster, topic: str, clock: Callable[[], float]) -> None:
        self._cluster = cluster
        self._topic = topic
        self._clock = clock
        self._began = clock()
        self.steps: list[Value] = []

    def record(self, step: str, **detail: Any) -> None:
        """Appends a step with its time and what was seen."""
        self.steps.append(
            {"step": step, "after_s": round(self._clock() - self._began, 2), **detail}
        )

    def state(self) -> Value:
        """Returns each partition's leader, leader epoch and ISR by node name, as the
        controller has committed them now, or {"error": ...}."""
        c = self._cluster
        try:
            parts = c.committed_partitions(self._topic)
        except Exception as err:  # reported as seen: no answer is an answer here
            return {"error": str(err)}
        return {
            str(p.partition): {
                "leader": c.node_of_broker(p.leader) if p.leader >= 0 else None,
                "epoch": p.leader_epoch,
                "isr": [c.node_of_broker(b) for b in p.isr],
            }
            for p in parts
        }

    def result(self, **fields: Any) -> Value:
        """Returns the op's value: the fields given and every step."""
        return {**fields, "steps": self.steps}


def _isr_of(cluster: Cluster, topic: str, targets: Sequence[int]) -> dict[int, tuple[int, ...]]:
    parts = cluster.committed_partitions(topic)
    return {p.partition: p.isr for p in parts if p.partition in targets}


def _rejoined(cluster: Cluster, topic: str, targets: Sequence[int], node: int) -> bool:
    # The ISR alone is not enough: where nobody was elected it still names the dead
    # leader, so the node is back only once every partition is led again as well.
    parts = [p for p in cluster.committed_partitions(topic) if p.partition in targets]
    return len(parts) == len(targets) and all(p.leader != -1 and node in p.isr for p in parts)


def _all_led_by_others(cluster: Cluster, topic: str, targets: Sequence[int], exclude: int) -> bool:
    parts = cluster.committed_partitions(topic)
    leaders = {p.partition: p.leader for p in parts if p.partition in targets}
    return len(leaders) == len(targets) and all(
        lead not in (-1, exclude) for lead in leaders.values()
    )


def _active_controller(cluster: Cluster) -> str | None:
    try:
        return cluster.active_controller()
    except Exception:  # recorded as unknown
        return None
