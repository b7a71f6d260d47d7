"""Grudges built by the pure helpers in nemesis/grudge.py."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nemesis import grudge as g

NODES = ["n1", "n2", "n3", "zk1"]


def test_isolate_cuts_one_node_both_ways() -> None:
    grudge = g.isolate("n2", NODES)
    assert grudge["n2"] == {"n1", "n3", "zk1"}
    assert all(grudge[n] == {"n2"} for n in ("n1", "n3", "zk1"))


def test_between_keeps_each_group_whole() -> None:
    grudge = g.between(["n1", "n2"], ["zk1"])
    assert grudge == {"n1": {"zk1"}, "n2": {"zk1"}, "zk1": {"n1", "n2"}}


@given(st.integers(2, 9), st.integers(0, 10_000))
def test_bisect_is_a_clean_split_into_two_halves(n: int, seed: int) -> None:
    nodes = [f"n{i}" for i in range(n)]
    grudge = g.bisect(nodes, random.Random(seed))
    sides = {frozenset(set(nodes) - grudge[x]) for x in nodes}
    assert len(sides) == 2
    small, large = sorted(sides, key=len)
    assert small | large == set(nodes) and not small & large
    assert len(small) == n // 2
    assert g.symmetric(grudge) == grudge


@given(st.integers(4, 11), st.integers(0, 10_000))
def test_majorities_ring_gives_every_node_its_own_majority(n: int, seed: int) -> None:
    nodes = [f"n{i}" for i in range(n)]
    grudge = g.majorities_ring(nodes, random.Random(seed))
    seen = {x: frozenset(nodes) - grudge[x] for x in nodes}
    assert all(x in seen[x] and len(seen[x]) == n // 2 + 1 for x in nodes)
    assert len(set(seen.values())) == n, "no two nodes may see the same majority"


def test_symmetric_makes_drops_mutual_and_describe_sorts() -> None:
    grudge = g.symmetric({"a": {"b"}, "c": set()})
    assert grudge == {"a": {"b"}, "b": {"a"}}
    assert g.describe({"b": {"z", "a"}, "a": set()}) == {"b": ["a", "z"]}


@pytest.mark.parametrize("components", [[["a"], ["b", "c"]], [["a", "b"], ["c"], ["d"]]])
def test_complete_grudge_drops_exactly_the_other_components(components: list[list[str]]) -> None:
    grudge = g.complete_grudge(components)
    for comp in components:
        for node in comp:
            assert grudge[node] == {x for c in components if c is not comp for x in c}
