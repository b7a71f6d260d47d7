"""Process faults: SIGKILL or pause a broker (the current leader, or one at random) or
the active controller; stop starts or resumes every node this nemesis took down.

A kill gives no controlled shutdown, so leadership moves only by election. A broker can
also stop by itself (a ZooKeeper session that expires while it starts is fatal to it),
so stopping a kill, like the final heal, starts every node that is not running
(Jepsen's idempotent start of all nodes).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from nemesis.cluster import Cluster
from nemesis.core import (
    SingleFault,
    Skipped,
    Target,
    Value,
    active_controller,
    current_leader,
    partition_states,
    random_broker,
    split_f,
)

Pick = Callable[[Cluster, str, random.Random, list[str]], Target]


def pick_leader(cluster: Cluster, topic: str, rng: random.Random, down: list[str]) -> Target:
    """Returns the current leader of a random partition of topic."""
    return current_leader(cluster, topic, rng)


def pick_random(cluster: Cluster, topic: str, rng: random.Random, down: list[str]) -> Target:
    """Returns a random broker that is not already down."""
    return random_broker(cluster, rng, exclude=down)


def pick_active_controller(
    cluster: Cluster, topic: str, rng: random.Random, down: list[str]
) -> Target:
    """Returns the node that leads the metadata: the KRaft quorum's leader, or on
    ZooKeeper the controller broker."""
    return active_controller(cluster)


@dataclass(frozen=True, slots=True)
class Action:
    """How to take a node down and bring it back."""

    verb: str
    down: Callable[[Cluster, str], None]
    up: Callable[[Cluster, str], None]


KILL = Action("killed", lambda c, n: c.kill(n), lambda c, n: c.start(n))
PAUSE = Action("paused", lambda c, n: c.pause(n), lambda c, n: c.resume(n))

FAULTS: dict[str, tuple[Action, Pick]] = {
    "kill-leader": (KILL, pick_leader),
    "kill-random": (KILL, pick_random),
    "pause-leader": (PAUSE, pick_leader),
    "pause-random": (PAUSE, pick_random),
    "kill-active-controller": (KILL, pick_active_controller),
    "pause-active-controller": (PAUSE, pick_active_controller),
}


DEAD_STATES = ("exited", "created", "dead")


def revive(cluster: Cluster, resume_paused: bool) -> dict[str, str]:
    """Starts every node that is not running (and resumes paused ones if asked).
    Returns each node brought back with the state it was found in."""
    found = {node: cluster.state(node) for node in cluster.nodes}
    revived: dict[str, str] = {}
    for node, state in found.items():
        if state in DEAD_STATES:
            cluster.start(node)
        elif state == "paused" and resume_paused:
            cluster.resume(node)
        else:
            continue
        revived[node] = state
    return revived


class ProcessFault(SingleFault):
    """One process fault: start takes a broker down, stop brings every one it took back."""

    def __init__(
        self, fault: str, topic: str, rng: random.Random, how: tuple[Action, Pick] | None = None
    ) -> None:
        """how: the action and the pick, for a fault FAULTS does not name."""
        super().__init__(fault, topic, rng)
        self._action, self._pick = how or FAULTS[fault]
        self._down: list[str] = []

    def invoke(self, f: str) -> Value:
        """Takes a broker down (start) or brings back every one taken down (stop)."""
        cluster = self.cluster
        action, _ = split_f(f)
        before = partition_states(cluster, self.topic)
        if action == "start":
            target = self._pick(cluster, self.topic, self.rng, self._down)
            # Recorded first: a half-done kill or pause must still be undone.
            self._down.append(target.node)
            self._action.down(cluster, target.node)
            done: Value = {self._action.verb: target.node, "partition": target.partition}
        else:
            if not self._down:
                raise Skipped(f"no broker is {self._action.verb}")
            done = {"restored": self._restore(cluster)}
            if self._action is KILL:
                done["revived"] = revive(cluster, resume_paused=False)
        return {**done, "before": before, "after": partition_states(cluster, self.topic)}

    def teardown(self) -> Value:
        """Brings back every broker this nemesis took down."""
        if self._cluster is None or not self._down:
            return {}
        return {self.fault: {"restored": self._restore(self._cluster)}}

    def _restore(self, cluster: Cluster) -> list[str]:
        restored, errors = [], []
        for node in list(self._down):
            try:
                self._action.up(cluster, node)
            except Exception as err:  # the others must still come back; reported below
                errors.append(f"{node}: {err}")
                continue
            self._down.remove(node)
            restored.append(node)
        if errors:
            raise RuntimeError(f"could not restore {', '.join(errors)}")
        return restored
