"""A dependency cycle as a case a person can check against the history: its transactions,
each step's evidence as data, and one line of prose per edge.

The lines follow Elle's explainers (kafka.clj `WWExplainer` "sent ... before ... sent",
`WRExplainer` "... which was polled by ...", elle/core.clj's process and realtime
explainers "completed ... before the invocation of ..."), naming each transaction by its
op, e.g. `T12 (op 12, process 3) sent 41 to partition 3 at offset 7; T15 sent 44 there at
offset 8, after it (ww)`.
"""

from __future__ import annotations

from typing import Any

from checkers.txn import words
from checkers.txn.cycles import Step
from checkers.txn.graph import LABELS, PROCESS, WR, WW, Deps

Case = dict[str, Any]


def cycle_case(deps: Deps, cycle: list[Step], names: dict[int, str]) -> Case:
    """Takes the dependency graph, one of its cycles and the history's partition names.
    Returns the cycle as a case: `indexes` (its transactions, in cycle order),
    `processes`, `steps` (each edge's evidence) and `explanation` (a line per edge)."""
    return {
        "indexes": [u for u, _, _ in cycle],
        "processes": [deps.ops[u].process for u, _, _ in cycle],
        "steps": [step_data(deps, step, names) for step in cycle],
        "explanation": [step_line(deps, step, names) for step in cycle],
    }


def step_data(deps: Deps, step: Step, names: dict[int, str]) -> Case:
    """Takes the dependency graph, a cycle's step and the partition names. Returns the
    step's evidence: partition, offsets and messages for ww and wr, the process for
    process order, the two times for real-time order."""
    u, v, label = step
    data: Case = {"from": u, "to": v, "type": LABELS[label]}
    if label == WW:
        p, low, first, high, then = deps.ww[u, v]
        return data | {
            "partition": names.get(p, p),
            "offsets": [low, high],
            "values": [first, then],
        }
    if label == WR:
        p, offset, m = deps.wr[u, v]
        return data | {"partition": names.get(p, p), "offset": offset, "value": m}
    if label == PROCESS:
        return data | {"process": deps.ops[u].process}
    return data | {"completed": deps.ops[u].completed, "invoked": deps.ops[v].invoked}


def step_line(deps: Deps, step: Step, names: dict[int, str]) -> str:
    """Takes the dependency graph, a cycle's step and the partition names. Returns the
    step in prose, the edge's label last in parentheses."""
    u, v, label = step
    before, after = words.txn(deps.ops[u]), words.short(v)
    if label == WW:
        p, low, first, high, then = deps.ww[u, v]
        return (
            f"{before} sent {words.message(first)} to partition {words.partition(p, names)} "
            f"at offset {low}; {after} sent {words.message(then)} there at offset {high}, "
            "after it (ww)"
        )
    if label == WR:
        p, offset, m = deps.wr[u, v]
        return (
            f"{before} sent {words.message(m)} to partition {words.partition(p, names)} at "
            f"offset {offset}; {after} polled it (wr)"
        )
    if label == PROCESS:
        return (
            f"{before} completed before {after}, its process's next transaction, was "
            "invoked (process)"
        )
    completed, invoked = deps.ops[u].completed, deps.ops[v].invoked
    assert completed is not None  # only an ok transaction precedes another in real time
    return (
        f"{before} completed at {words.seconds(completed)}, before {after} was invoked at "
        f"{words.seconds(invoked)} (realtime)"
    )
