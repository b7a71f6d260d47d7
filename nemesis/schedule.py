"""Which nemeses a run uses (the `--nemesis` option) and the order of their ops: each
fault is started, then stopped one interval later, families taken in seeded turns.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from nemesis.core import Compose, Nemesis
from nemesis.partition import CUTS, NetworkFault
from nemesis.process import FAULTS, ProcessFault

NEMESES: tuple[str, ...] = (*CUTS, *FAULTS)
"""Every fault the harness can inject, by the name `--nemesis` takes."""


def parse_nemeses(text: str) -> tuple[str, ...]:
    """Takes the `--nemesis` text: `none`, `all` or a comma list of names. Returns the
    names in the order given; raises ValueError naming an unknown one."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    if words == ["none"]:
        return ()
    if words == ["all"]:
        return NEMESES
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
    parts: list[Nemesis] = [
        NetworkFault(n, topic, rng) if n in CUTS else ProcessFault(n, topic, rng) for n in names
    ]
    return Compose(parts)


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
