"""Process faults: SIGKILL or pause the nodes a target names (nemesis.targets: a random
broker, a leader, a minority or majority, the metadata quorum, the active controller, a
coordinator, every node...); stop starts or resumes every node this nemesis took down,
the metadata quorum first.

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
from nemesis.core import SingleFault, Skipped, Value, partition_states, split_f
from nemesis.net import on_nodes
from nemesis.targets import Aim, Chosen, pick, quorum


@dataclass(frozen=True, slots=True)
class Action:
    """How to take a node down and bring it back."""

    verb: str
    down: Callable[[Cluster, str], None]
    up: Callable[[Cluster, str], None]


KILL = Action("killed", lambda c, n: c.kill(n), lambda c, n: c.start(n))
PAUSE = Action("paused", lambda c, n: c.pause(n), lambda c, n: c.resume(n))
ACTIONS = {"kill": KILL, "pause": PAUSE}

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


def why_chosen(chosen: Chosen) -> Value:
    """Returns what a start records of why it took its nodes: the partition that chose
    them (None when none did) and the role, when one did."""
    about: Value = {"partition": chosen.partition}
    if chosen.role is not None:
        about["role"] = chosen.role
    return about


def quorum_first(cluster: Cluster, nodes: list[str]) -> list[str]:
    """Returns nodes with the metadata quorum's first: a broker gives up on a ZooKeeper
    that is not there."""
    keepers = quorum(cluster)
    return sorted(nodes, key=lambda n: n not in keepers)


class ProcessFault(SingleFault):
    """One process fault, VERB-TARGET: start takes the target's nodes down at once,
    stop brings back every node it took."""

    def __init__(
        self, fault: str, topic: str, rng: random.Random, group: str | None = None
    ) -> None:
        """group: the run's consumer or share group (the coordinator target's)."""
        super().__init__(fault, topic, rng)
        verb, _, self._target = fault.partition("-")
        self._action = ACTIONS[verb]
        self._aim = Aim(topic, group)
        self._down: list[str] = []

    def invoke(self, f: str) -> Value:
        """Takes the target's nodes down (start) or brings back every one taken (stop)."""
        cluster = self.cluster
        action, _ = split_f(f)
        before = partition_states(cluster, self.topic)
        if action == "start":
            chosen = pick(self._target, cluster, self._aim, self.rng, self._down)
            # Recorded first: a half-done kill or pause must still be undone.
            self._down.extend(chosen.nodes)
            failed = {
                node: error
                for node, error in on_nodes(chosen.nodes, self._take_down).items()
                if error
            }
            # One node is named alone, so that a report can tell whose partitions it hit.
            nodes = chosen.nodes
            done: Value = {self._action.verb: nodes[0] if len(nodes) == 1 else list(nodes)}
            done |= why_chosen(chosen)
            if self._aim.group is not None and self._target == "coordinator":
                done["coordinates"] = self._aim.group
            if failed:
                done["error"] = "; ".join(f"{n}: {e}" for n, e in failed.items())
        else:
            if not self._down:
                raise Skipped(f"no node is {self._action.verb}")
            done = {"restored": self._restore(cluster)}
            if self._action is KILL:
                done["revived"] = revive(cluster, resume_paused=False)
        return {**done, "before": before, "after": partition_states(cluster, self.topic)}

    def _take_down(self, node: str) -> str:
        try:
            self._action.down(self.cluster, node)
        except Exception as err:  # the other nodes go down all the same; reported
            return str(err)
        return ""

    def teardown(self) -> Value:
        """Brings back every node this nemesis took down."""
        if self._cluster is None or not self._down:
            return {}
        return {self.fault: {"restored": self._restore(self._cluster)}}

    def _restore(self, cluster: Cluster) -> list[str]:
        restored, errors = [], []
        for node in quorum_first(cluster, list(self._down)):
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
