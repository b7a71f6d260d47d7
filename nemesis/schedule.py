"""Which nemeses a run uses (the `--nemesis` option) and the order of their ops: each
fault is started, then stopped one interval later, families taken in seeded turns.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence

from nemesis.core import Compose, Nemesis
from nemesis.isr import IsrShrink
from nemesis.names import ISR_SHRINK, NEMESES, applicable
from nemesis.partition import CUTS, NetworkFault
from nemesis.process import ProcessFault


def parse_nemeses(text: str, metadata: str = "zookeeper") -> tuple[str, ...]:
    """Takes the `--nemesis` text (`none`, `all` or a comma list of names) and the
    cluster's metadata mode, which `all` depends on. Returns the names in the order
    given; raises ValueError naming an unknown one."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    if words == ["none"]:
        return ()
    if words == ["all"]:
        return applicable(metadata)
    unknown = [w for w in words if w not in NEMESES]
    if unknown or not words:
        raise ValueError(
            f"unknown nemesis {', '.join(unknown) or repr(text)}; "
            f"choose none, all or any of: {', '.join(NEMESES)}"
        )
    return tuple(dict.fromkeys(words))


def build_nemesis(names: Sequence[str], topic: str, rng: random.Random) -> Compose:
    """Takes fault names, the topic whose leaders they target, and a seeded random source.
    Returns one nemesis that injects them all."""
    return Compose([_nemesis(name, topic, rng) for name in names])


def _nemesis(name: str, topic: str, rng: random.Random) -> Nemesis:
    if name in CUTS:
        return NetworkFault(name, topic, rng)
    if name == ISR_SHRINK:
        return IsrShrink(topic, rng)
    return ProcessFault(name, topic, rng)


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
