"""Which nemeses a run uses (the `--nemesis` option) and the order of their ops: each
fault is started, then stopped one interval later, families taken in seeded turns.

A run asks for all of it once, as a FaultPlan, and then only invokes the plan's nemesis.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nemesis.client import ClientPause, CoordinatorCut
from nemesis.clock import ClockFault
from nemesis.cluster import Cluster
from nemesis.composed import COMPOSED
from nemesis.controllers import REMOVE_CONTROLLER_PARTITIONED, ControllerRemoval
from nemesis.coordinator import coordinator_cut
from nemesis.core import Compose, Nemesis
from nemesis.corrupt import FileCorruption
from nemesis.decommission import DECOMMISSION_KILL_LEADER, Decommission
from nemesis.expand import ADD_PARTITIONS, AddPartitions
from nemesis.isr import IsrShrink
from nemesis.late import LateDelivery
from nemesis.names import (
    BROKER_MEMBERSHIP_FAULTS,
    CLIENT_CLOCK_FAULTS,
    CLIENT_FAULTS,
    CLOCK_FAULTS,
    CONTROLLER_MEMBERSHIP_FAULTS,
    CORRUPT_FAULTS,
    GROUP_CUT,
    GROUP_FAULTS,
    ISR_SHRINK,
    LATE_FAULTS,
    NEMESES,
    POWER_FAULTS,
    PROCESS_FAULTS,
    RENAMED,
    SERVER_MEMBERSHIP_FAULTS,
    SLOW_FAULTS,
    applicable,
)
from nemesis.partition import CUTS, NetworkFault
from nemesis.peer_removal import ServerRemoval
from nemesis.power import PowerLoss
from nemesis.process import ProcessFault, revive
from nemesis.slow import SlowLink


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """A run's faults, planned once: their names, when they come (every `interval` s
    within `time_limit`), the one nemesis that injects them all, and its ops in order."""

    names: tuple[str, ...]
    time_limit: float
    interval: float
    nemesis: Compose
    ops: Iterator[str]

    def shortfall(self) -> str | None:
        """Returns a note when the time limit is too short for every fault to start once,
        else None."""
        started = faults_started(self.time_limit, self.interval)
        if started >= len(self.names):
            return None
        needed = (2 * len(self.names) - 1) * self.interval
        return (
            f"note: only {started} of the {len(self.names)} faults will start: "
            f"{len(self.names)} faults at --nemesis-interval {self.interval:g} "
            f"need a --time-limit over {needed:g} s"
        )

    def heal(self, cluster: Cluster | None) -> dict[str, Any]:
        """Undoes every fault, then starts or resumes every node of cluster that is not
        running (a broker may also have died by itself). Returns what was done, with the
        nodes brought back under `revived`."""
        report = self.nemesis.teardown()
        if cluster is not None:
            report["revived"] = revive(cluster, resume_paused=True)
        return report


def plan_faults(
    names: Sequence[str],
    topic: str,
    time_limit: float,
    interval: float,
    rng: random.Random,
    group: str | None = None,
    on_grown: Callable[[int], None] | None = None,
    client_clocks: Path | None = None,
) -> FaultPlan:
    """Takes fault names, the topic whose leaders they target, the workload's length, the
    nemesis interval, a seeded random source, the run's group, if it has one (the
    target of the group faults), whom add-partitions tells the topic's new partition
    count (the workload's generator) and the folder of the Java clients' clock files
    (the client clock faults'). Returns the run's FaultPlan."""
    nemesis = build_nemesis(names, topic, rng, group, on_grown, client_clocks)
    ops = fault_ops(names, random.Random(rng.random()))
    return FaultPlan(tuple(names), time_limit, interval, nemesis, ops)


def parse_nemeses(text: str, metadata: str = "zookeeper", grouped: bool = False) -> tuple[str, ...]:
    """Takes the `--nemesis` text (`none`, `all` or a comma list of names), the cluster's
    metadata mode and whether the run has a group, which `all` depends on. Returns the
    names in the order given; raises ValueError naming an unknown one, or a group fault
    for a run without a group."""
    words = [RENAMED.get(w.strip(), w.strip()) for w in text.split(",") if w.strip()]
    if words == ["none"]:
        return ()
    if words == ["all"]:
        return applicable(metadata, grouped)
    unknown = [w for w in words if w not in NEMESES]
    if unknown or not words:
        raise ValueError(
            f"unknown nemesis {', '.join(unknown) or repr(text)}; "
            f"choose none, all or any of: {', '.join(NEMESES)}"
        )
    aimless = [w for w in words if w in GROUP_FAULTS and not grouped]
    if aimless:
        raise ValueError(
            f"{', '.join(aimless)} aims at the run's group: it needs a queue workload "
            "with --sub-via subscribe, or --workload share"
        )
    return tuple(dict.fromkeys(words))


def build_nemesis(
    names: Sequence[str],
    topic: str,
    rng: random.Random,
    group: str | None = None,
    on_grown: Callable[[int], None] | None = None,
    client_clocks: Path | None = None,
) -> Compose:
    """Takes fault names, the topic whose leaders they target, a seeded random source,
    the run's group, if any, whom add-partitions tells the new partition count and the
    folder of the Java clients' clock files. Returns one nemesis that injects them all."""
    # Every corruption of a run is one nemesis, where the first is named: together they
    # strike only a minority.
    corrupting = [n for n in names if n in CORRUPT_FAULTS]
    built = [
        FileCorruption(corrupting, topic, rng)
        if name in CORRUPT_FAULTS
        else AddPartitions(topic, rng, on_grown)
        if name == ADD_PARTITIONS
        else ClockFault(name, topic, rng, group, client_clocks)
        if name in CLIENT_CLOCK_FAULTS
        else _nemesis(name, topic, rng, group)
        for name in names
        if name not in corrupting[1:]
    ]
    return Compose(built)


def _nemesis(name: str, topic: str, rng: random.Random, group: str | None) -> Nemesis:
    if name in GROUP_FAULTS and group is None:
        raise ValueError(f"{name} aims at the run's group, and this run has none")
    if name == GROUP_CUT and group is not None:
        return coordinator_cut(topic, group, rng)
    if name in CUTS:
        return NetworkFault(name, topic, rng)
    if name == ISR_SHRINK:
        return IsrShrink(topic, rng)
    if name in POWER_FAULTS:
        return PowerLoss(name, topic, rng, group)
    if name in CLOCK_FAULTS:
        return ClockFault(name, topic, rng, group)
    if name in COMPOSED:
        return COMPOSED[name](topic, rng)
    if name in PROCESS_FAULTS:
        return ProcessFault(name, topic, rng, group)
    if name in LATE_FAULTS:
        return LateDelivery(name, topic, rng)
    if name in SLOW_FAULTS:
        return SlowLink(name, topic, rng)
    if name == "pause-client":
        return ClientPause(name, topic, rng)
    if name in CLIENT_FAULTS:
        return CoordinatorCut(name, topic, rng)
    if name in CONTROLLER_MEMBERSHIP_FAULTS:
        return ControllerRemoval(topic, rng, partitioned=name == REMOVE_CONTROLLER_PARTITIONED)
    if name in BROKER_MEMBERSHIP_FAULTS:
        return Decommission(topic, rng, kill_leader=name == DECOMMISSION_KILL_LEADER)
    if name in SERVER_MEMBERSHIP_FAULTS:
        return ServerRemoval(topic, rng)
    raise ValueError(f"no fault named {name!r}")


def faults_started(time_limit: float, interval: float) -> int:
    """Takes the workload's length and the nemesis interval. Returns how many faults
    start before the workload ends: the k-th (from 0) starts at (2k + 1) intervals."""
    return max(0, math.ceil((time_limit / interval - 1) / 2))


def fault_ops(names: Sequence[str], rng: random.Random) -> Iterator[str]:
    """Takes fault names. Yields nemesis ops forever: start-A, stop-A, start-B, stop-B...,
    every name once per round, each round in a new random order."""
    if not names:
        return
    while True:
        order = list(names)
        rng.shuffle(order)
        for name in order:
            yield f"start-{name}"
            yield f"stop-{name}"
