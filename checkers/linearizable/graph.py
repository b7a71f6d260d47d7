"""Real-time order over operations, for a counterexample: the ops concurrent with the one
that could not be linearized, and the graph a counterexample shows, as plain data.

An edge a -> b means a returned before b was invoked (crashed ops never return). Plain
dicts, not networkx: importing networkx took a fifth of `harness check`'s CPU time on
Porcupine's etcd logs, for graphs of a few dozen ops.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from history import Op


def _ret(op: Op) -> float:
    return math.inf if op.ret is None else op.ret


def precedence(ops: Iterable[Op]) -> dict[int, dict[int, str]]:
    """Takes ops. Returns, per op index in the order given, the ops it precedes in real
    time (an edge a -> b iff a returned before b was invoked), each of kind "real-time".
    Quadratic: meant for a neighbourhood, not a whole history."""
    ops = list(ops)
    edges: dict[int, dict[int, str]] = {op.index: {} for op in ops}
    by_ret = sorted(ops, key=_ret)
    for b in ops:
        for a in by_ret:
            if _ret(a) >= b.call:
                break
            edges[a.index][b.index] = "real-time"
    return edges


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
    sorted by invoke time: those overlapping it (real-time order is an interval order, so
    an op overlapping the target is neither before nor after it through any other)."""
    return sorted(overlapping(ops, target), key=lambda op: (op.call, op.index))


def counterexample_graph(
    prefix: Sequence[Op], failing: Op, concurrent: Sequence[Op]
) -> dict[str, Any]:
    """Takes the tail of the longest linearizable prefix, the op that could not follow it and
    the ops concurrent with that op. Returns their real-time precedence graph plus the
    prefix's linearization order as edges of kind "linearized", as plain data: its nodes
    (index and role: prefix, concurrent or failing) and edges ([from, to, kind])."""
    members = {op.index: op for op in (*prefix, failing, *concurrent)}
    edges = precedence(members.values())
    for a, b in itertools.pairwise(prefix):
        edges[a.index].setdefault(b.index, "linearized")
    roles = {op.index: "prefix" for op in prefix}
    for op in concurrent:
        roles.setdefault(op.index, "concurrent")
    roles[failing.index] = "failing"
    return {
        "nodes": [{"index": n, "role": roles[n]} for n in edges],
        "edges": [[a, b, kind] for a, out in edges.items() for b, kind in out.items()],
    }
