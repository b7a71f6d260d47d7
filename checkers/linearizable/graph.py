"""Graphs over operations, with networkx: real-time precedence, counterexamples, cycles.

Nodes are op indexes carrying the Op as attribute `op`; an edge a -> b means a precedes b.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import networkx as nx

from history import Op


def _ret(op: Op) -> float:
    return math.inf if op.ret is None else op.ret


def precedence_graph(ops: Iterable[Op]) -> nx.DiGraph:
    """Takes ops. Returns the DiGraph with an edge a -> b iff a returned before b was invoked
    (crashed ops never return). Quadratic: meant for a neighbourhood, not a whole history."""
    graph = nx.DiGraph()
    ops = list(ops)
    for op in ops:
        graph.add_node(op.index, op=op)
    by_ret = sorted(ops, key=_ret)
    for b in ops:
        for a in by_ret:
            if _ret(a) >= b.call:
                break
            graph.add_edge(a.index, b.index, kind="real-time")
    return graph


def overlapping(ops: Sequence[Op], target: Op) -> list[Op]:
    """Takes ops and one of them. Returns the ops whose interval overlaps the target's, which
    are the only candidates for being concurrent with it."""
    return [
        op
        for op in ops
        if op.index != target.index and op.call <= _ret(target) and target.call <= _ret(op)
    ]


def concurrent_with(ops: Sequence[Op], target: Op) -> list[Op]:
    """Takes ops and one of them. Returns the ops neither before nor after it in real time,
    sorted by invoke time."""
    graph = precedence_graph([*overlapping(ops, target), target])
    related = nx.ancestors(graph, target.index) | nx.descendants(graph, target.index)
    found = [graph.nodes[n]["op"] for n in graph if n != target.index and n not in related]
    return sorted(found, key=lambda op: (op.call, op.index))


def counterexample_graph(prefix: Sequence[Op], failing: Op, concurrent: Sequence[Op]) -> nx.DiGraph:
    """Takes the tail of the longest linearizable prefix, the op that could not follow it and
    the ops concurrent with that op. Returns their real-time precedence graph plus the
    prefix's linearization order as edges of kind "linearized"."""
    members = {op.index: op for op in (*prefix, failing, *concurrent)}
    graph = precedence_graph(members.values())
    for op in prefix:
        graph.nodes[op.index]["role"] = "prefix"
    for op in concurrent:
        graph.nodes[op.index].setdefault("role", "concurrent")
    graph.nodes[failing.index]["role"] = "failing"
    for a, b in itertools.pairwise(prefix):
        if not graph.has_edge(a.index, b.index):
            graph.add_edge(a.index, b.index, kind="linearized")
    return graph


def cycles(graph: nx.DiGraph, limit: int = 10, length: int | None = 8) -> list[list[Any]]:
    """Takes a DiGraph. Returns up to `limit` of its simple cycles of at most `length`
    nodes, each a list of nodes."""
    found: list[list[Any]] = []
    for cycle in nx.simple_cycles(graph, length_bound=length):
        found.append(list(cycle))
        if len(found) >= limit:
            break
    return found


def to_json(graph: nx.DiGraph) -> dict[str, Any]:
    """Takes a counterexample graph. Returns its nodes (with roles) and edges as plain data."""
    return {
        "nodes": [{"index": n, "role": graph.nodes[n].get("role", "")} for n in graph],
        "edges": [[a, b, graph.edges[a, b].get("kind", "")] for a, b in graph.edges],
    }
