"""Grudges: who drops whose packets, built by pure functions (Jepsen's nemesis helpers).

A grudge maps each node to the nodes it drops traffic from; `net.apply_grudge` is the
one place that turns a grudge into iptables rules.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

Grudge = dict[str, frozenset[str]]


def complete_grudge(components: Iterable[Iterable[str]]) -> Grudge:
    """Takes disjoint groups of nodes. Returns the grudge in which every node drops
    traffic from every node outside its own group (a clean partition)."""
    groups = [frozenset(c) for c in components]
    everyone = frozenset().union(*groups)
    return {node: everyone - group for group in groups for node in group}


def isolate(node: str, nodes: Sequence[str]) -> Grudge:
    """Takes a node and all nodes. Returns the grudge that cuts it off from the others."""
    return complete_grudge([[node], [n for n in nodes if n != node]])


def bisect(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Takes nodes. Returns a grudge cutting them into two random halves (the smaller half
    first; with an odd count the majority is the larger)."""
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    half = len(shuffled) // 2
    return complete_grudge([shuffled[:half], shuffled[half:]])


def between(group_a: Sequence[str], group_b: Sequence[str]) -> Grudge:
    """Takes two groups. Returns the grudge that cuts every node of one from every node
    of the other, while nodes within a group still see each other."""
    a, b = frozenset(group_a), frozenset(group_b)
    grudge: Grudge = {n: b for n in a}
    grudge.update({n: a for n in b})
    return grudge


def majorities_ring(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Takes nodes. Returns Jepsen's majorities ring: in a random ring, each node sees
    the majority of nodes nearest it and drops the rest, so every node sees a majority
    but no two nodes see the same one (with 4 or more nodes)."""
    ring = list(nodes)
    rng.shuffle(ring)
    n = len(ring)
    majority = n // 2 + 1
    back = (majority - 1) // 2
    grudge: Grudge = {}
    for i, node in enumerate(ring):
        visible = {ring[(i + d) % n] for d in range(-back, majority - back)}
        grudge[node] = frozenset(ring) - visible
    return grudge


def symmetric(grudge: Mapping[str, Iterable[str]]) -> Grudge:
    """Takes a grudge. Returns it made mutual: if a drops b, b drops a too."""
    out: dict[str, set[str]] = {node: set(drops) for node, drops in grudge.items()}
    for node, drops in grudge.items():
        for other in drops:
            out.setdefault(other, set()).add(node)
    return {node: frozenset(drops) for node, drops in out.items() if drops}


def describe(grudge: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """Takes a grudge. Returns it JSON-ready (sorted lists), leaving out nodes with none."""
    return {node: sorted(drops) for node, drops in sorted(grudge.items()) if drops}
