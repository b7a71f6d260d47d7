"""Composed crash scenarios, after Jepsen's NATS suite (jepsen-io/nats,
src/jepsen/nats/nemesis.clj: part-kill-package and pause-kill-package, whose kill loses
the writes lazyfs held): a minority of the brokers misses writes while the others, which
acknowledged them, lose power, and the cluster comes back with the stale minority
awake and electable beside replicas that lost their tails.

partition-power-loss: a minority is cut off from every other node until it leaves the
ISR; writes go on acknowledged by the rest; every other broker loses power; the network
heals, so the stale minority is the only broker up (who leads now is recorded while
they are down); stop powers them on and waits for every partition's full ISR.

pause-power-loss: a minority is paused until it leaves the ISR; writes go on; one broker
of the rest (the crasher) loses power and leaves the ISR; the other brokers, which hold
every acknowledged write, are paused; the minority is resumed and the crasher powered
on, so the only brokers awake are the stale minority and a crasher that lost its
unsynced tail; who leads is recorded; stop resumes the paused brokers.

On NATS a broker is a server and the ISR the stream leader's current replicas
(harness/db/nats.py), and pause-power-loss is the sequence of nats-server#7567, which
found a persistent split brain on 2.12.1 with five servers: n1 and n2 paused, n3 killed
with lazyfs losing its unsynced writes, n4 and n5 paused while n1 and n2 resumed and n3
restarted, the three left to elect a leader among themselves for 30 s.

Picks are over the brokers (with three brokers and a replication factor of three, over
every partition's replicas). Every step is read from the cluster, never assumed, and
recorded with its time since the op began, as isr-shrink records its own; a step that
does not happen within its bound is recorded and the sequence stops there.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from typing import Any

from nemesis import grudge as g
from nemesis import net
from nemesis.cluster import Cluster, PowerSwitch
from nemesis.core import SingleFault, Skipped, Value, split_f, wait_until
from nemesis.isr import Steps
from nemesis.power import power_off_all
from nemesis.process import revive

LEAVE_ISR_S = 20.0
"""Bound on a cut-off, paused or powered-off broker leaving every ISR (a session of 6 s,
or replica.lag.time.max.ms, then the ISR change)."""
WRITES_S = 5.0
"""How long writes go on acknowledged without the stale minority."""
WATCH_S = 10.0
"""How long the cluster is watched, once only the stale minority (and the crasher) are
awake, before the op returns: long enough for a session to expire and an election."""
REJOIN_S = 60.0
POLL_S = 0.5
TRUNCATION_LINES = 10


def roles(brokers: list[str], rng: random.Random) -> tuple[list[str], str, list[str]]:
    """Takes the brokers. Returns a random minority (the stale ones), a crasher among the
    others and the rest. Raises Skipped with fewer than three brokers."""
    if len(brokers) < 3:
        raise Skipped(f"a stale minority beside a majority needs 3 brokers, not {len(brokers)}")
    order = sorted(brokers)
    rng.shuffle(order)
    stale = (len(order) - 1) // 2
    return sorted(order[:stale]), order[stale], sorted(order[stale + 1 :])


class Composed(SingleFault):
    """What both scenarios share: the nodes they took down, how they wait, and a teardown
    that heals the network, resumes and powers on whatever they left down."""

    def __init__(
        self,
        fault: str,
        topic: str,
        rng: random.Random,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(fault, topic, rng)
        self._sleep = sleep
        self._clock = clock
        self._switch: PowerSwitch | None = None
        self._off: list[str] = []
        self._paused: list[str] = []
        self._cut = False
        self._in_force = False

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; refuses one whose nodes cannot lose power."""
        if not isinstance(cluster, PowerSwitch):
            raise TypeError(f"{self.fault}: the cluster has no power switch (faultfs)")
        super().setup(cluster)
        self._switch = cluster

    def invoke(self, f: str) -> Value:
        """Runs the scenario (start) or brings every node back and waits for the full ISR
        (stop); returns every step it recorded."""
        action, _ = split_f(f)
        steps = Steps(self.cluster, self.topic, self._clock)
        if action == "start":
            if self._in_force:
                raise Skipped(f"{self.fault} is already in force")
            self._in_force = True
            return self._start(steps)
        if not self._in_force:
            raise Skipped(f"{self.fault} is not in force")
        return self._stop(steps)

    def _start(self, steps: Steps) -> Value:
        raise NotImplementedError

    def _stop(self, steps: Steps) -> Value:
        raise NotImplementedError

    def teardown(self) -> Value:
        """Heals the network and starts or resumes every node this nemesis took down."""
        if self._cluster is None or not self._in_force:
            return {}
        errors = net.remove_chain(self._cluster, self._cluster.nodes) if self._cut else {}
        revived = revive(self._cluster, resume_paused=True)
        self._off, self._paused, self._cut, self._in_force = [], [], False, False
        return {self.fault: {"healed": True, "unreachable": errors, "revived": revived}}

    def _power_off(self, nodes: list[str], steps: Steps) -> None:
        assert self._switch is not None
        self._off += nodes  # recorded first: a half-done cut must still be powered on
        steps.record("powered-off", nodes=nodes, lost=power_off_all(self._switch, nodes))

    def _pause(self, nodes: list[str], steps: Steps) -> None:
        self._paused += nodes
        for node in nodes:
            self.cluster.pause(node)
        steps.record("paused", nodes=nodes)

    def _resume(self, nodes: list[str], steps: Steps) -> None:
        for node in nodes:
            self.cluster.resume(node)
            self._paused.remove(node)
        steps.record("resumed", nodes=nodes)

    def _leave_isr(self, nodes: list[str], steps: Steps) -> bool:
        """Waits until none of nodes is in the committed ISR of any partition of the topic;
        records it, or that it did not happen within LEAVE_ISR_S."""
        ids = {self.cluster.broker_id(n) for n in nodes}

        def left() -> bool:
            return all(not ids & set(p.isr) for p in self.cluster.committed_partitions(self.topic))

        if self._wait(left, LEAVE_ISR_S):
            steps.record("left-isr", nodes=nodes, state=steps.state())
            return True
        steps.record("did-not-leave-isr", nodes=nodes, within_s=LEAVE_ISR_S, state=steps.state())
        return False

    def _watch(self, awake: list[str], steps: Steps) -> None:
        """Watches for WATCH_S while only awake's brokers run, then records who leads."""
        self._sleep(WATCH_S)
        steps.record("watched", awake=awake, watched_s=WATCH_S, state=steps.state())

    def _rejoin(self, steps: Steps) -> None:
        """Waits for every partition's leader and full ISR; records it with the brokers'
        truncation lines."""

        def whole() -> bool:
            parts = self.cluster.committed_partitions(self.topic)
            return bool(parts) and all(
                p.leader >= 0 and set(p.isr) == set(p.replicas) for p in parts
            )

        back = self._wait(whole, REJOIN_S)
        pattern = f"[Tt]runcat.*{re.escape(self.topic)}-[0-9]+"
        truncation = {
            node: lines
            for node in self.cluster.brokers
            if (lines := _log(self.cluster, node, pattern))
        }
        steps.record(
            "rejoined" if back else "did-not-rejoin",
            within_s=REJOIN_S,
            state=steps.state(),
            truncation=[line for lines in truncation.values() for line in lines],
            truncated_on=sorted(truncation),
        )

    def _wait(self, done: Callable[[], bool], bound: float) -> bool:
        return wait_until(done, bound, POLL_S, self._clock, self._sleep)


class PartitionPowerLoss(Composed):
    """partition-power-loss: a cut-off minority misses writes; the rest lose power."""

    def __init__(self, topic: str, rng: random.Random, **clocks: Any) -> None:
        super().__init__("partition-power-loss", topic, rng, **clocks)

    def _start(self, steps: Steps) -> Value:
        cluster = self.cluster
        stale, crasher, rest = roles(cluster.brokers, self.rng)
        majority = sorted([crasher, *rest])
        self._cut = True
        grudge = g.complete_grudge([stale, [n for n in cluster.nodes if n not in stale]])
        net.apply_grudge(cluster, grudge)
        steps.record("cut-off", nodes=stale, verified=net.verify_grudge(cluster, grudge))
        done: Value = {"stale": stale, "majority": majority}
        if not self._leave_isr(stale, steps):
            return steps.result(**done, set_up=False)
        self._sleep(WRITES_S)
        steps.record("wrote-without", nodes=stale, for_s=WRITES_S)
        self._power_off(majority, steps)
        errors = net.heal(cluster, cluster.nodes)
        self._cut = False
        steps.record("healed", unreachable=errors, state=steps.state())
        self._watch(stale, steps)
        return steps.result(**done, set_up=True)

    def _stop(self, steps: Steps) -> Value:
        errors = net.heal(self.cluster, self.cluster.nodes) if self._cut else {}
        self._cut = False
        on = list(self._off)
        for node in on:
            self.cluster.start(node)
            self._off.remove(node)
        steps.record("powered-on", nodes=on, unreachable=errors)
        self._rejoin(steps)
        self._in_force = False
        return steps.result(powered_on=on)


class PausePowerLoss(Composed):
    """pause-power-loss: a paused minority misses writes; a crasher loses power; the rest
    are paused while the minority and the crasher come back."""

    def __init__(self, topic: str, rng: random.Random, **clocks: Any) -> None:
        super().__init__("pause-power-loss", topic, rng, **clocks)

    def _start(self, steps: Steps) -> Value:
        stale, crasher, rest = roles(self.cluster.brokers, self.rng)
        done: Value = {"stale": stale, "crasher": crasher, "rest": rest}
        self._pause(stale, steps)
        if not self._leave_isr(stale, steps):
            return steps.result(**done, set_up=False)
        self._sleep(WRITES_S)
        steps.record("wrote-without", nodes=stale, for_s=WRITES_S)
        self._power_off([crasher], steps)
        if not self._leave_isr([crasher], steps):
            return steps.result(**done, set_up=False)
        self._pause(rest, steps)
        self._resume(stale, steps)
        self.cluster.start(crasher)
        self._off.remove(crasher)
        steps.record("powered-on", nodes=[crasher])
        self._watch([*stale, crasher], steps)
        return steps.result(**done, set_up=True)

    def _stop(self, steps: Steps) -> Value:
        paused = list(self._paused)
        self._resume(paused, steps)
        if revived := revive(self.cluster, resume_paused=False):  # a crasher left off
            steps.record("revived", revived=revived)
        self._off.clear()
        self._rejoin(steps)
        self._in_force = False
        return steps.result(resumed=paused)


def _log(cluster: Cluster, node: str, pattern: str) -> list[str]:
    try:
        return cluster.server_log(node, pattern, TRUNCATION_LINES)
    except Exception:  # a node that is not running has no log to grep: nothing to say
        return []


COMPOSED: dict[str, Callable[[str, random.Random], Composed]] = {
    "partition-power-loss": PartitionPowerLoss,
    "pause-power-loss": PausePowerLoss,
}
