"""A split brain between the servers' copies of one stream: after the final heal, each
server's copy (sequence -> payload, read from its own disk) is compared sequence by
sequence, and a sequence held with different payloads on different servers is one.

JetStream's Raft promises one log: two servers may be at different lengths (a follower a
few appends behind, a copy still catching up) but never hold different messages at the
same sequence once both hold it. Jepsen's nats-server#7567 ("JetStream streams can end
up in split-brain when a single node experiences a simulated power failure. Acknowledged
records are visible to consumers connected to some nodes, but not others") is this: the
servers' counts and first and last sequences agree while their messages do not, which a
replica view made of counts (`/jsz`) cannot see. A sequence one server holds and another
lacks is counted beside, never called a split brain: it may be a lag.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from checkers.result import UNKNOWN, Result, Validity

Copy = Mapping[int, str]
"""One server's copy of a stream: sequence -> payload."""
CASES_KEPT = 10
"""How many divergent sequences the result lists (its counts are whole)."""


def check(copies: Mapping[str, Copy], unreadable: Mapping[str, str] | None = None) -> Result:
    """Takes server -> its copy of the stream, and server -> why its copy could not be
    read (or read whole). Returns {"valid": False when some sequence is held with
    different payloads on different servers, "unknown" when none is but fewer than two
    copies were read whole, else True; "divergent": how many sequences, "ranges": them as
    [first, last] runs, "sides": each way the servers split (servers that agree joined by
    " ", sides by " | ") -> how many sequences split so, "cases": the first CASES_KEPT,
    each with what every holder held; "servers": per server its message count, first and
    last sequence and how many sequences another server holds that it lacks}."""
    unreadable = dict(unreadable or {})
    everywhere = sorted(set().union(*(c.keys() for c in copies.values()))) if copies else []
    divergent: list[int] = []
    sides: Counter[str] = Counter()
    cases: list[dict[str, Any]] = []
    for seq in everywhere:
        held = {node: copy[seq] for node, copy in sorted(copies.items()) if seq in copy}
        if len(set(held.values())) < 2:
            continue
        divergent.append(seq)
        sides[_split(held)] += 1
        if len(cases) < CASES_KEPT:
            cases.append({"sequence": seq, "held": held})
    valid: Validity = True
    if divergent:
        valid = False
    elif len(copies) - len(unreadable.keys() & copies.keys()) < 2:
        valid = UNKNOWN
    result: Result = {
        "valid": valid,
        "divergent": len(divergent),
        "ranges": _runs(divergent),
        "sides": dict(sides.most_common()),
        "cases": cases,
        "servers": {
            node: {
                "messages": len(copy),
                "first": min(copy, default=0),
                "last": max(copy, default=0),
                "lacks": sum(1 for seq in everywhere if seq not in copy),
            }
            for node, copy in sorted(copies.items())
        },
    }
    if unreadable:
        result["unreadable"] = dict(sorted(unreadable.items()))
    return result


def _split(held: Mapping[str, str]) -> str:
    """Takes what each server holds at one sequence. Returns the servers grouped by what
    they hold, the larger group first: "n1 | n2 n3"."""
    groups: dict[str, list[str]] = {}
    for node, payload in held.items():
        groups.setdefault(payload, []).append(node)
    ordered = sorted(groups.values(), key=lambda nodes: (len(nodes), nodes))
    return " | ".join(" ".join(nodes) for nodes in ordered)


def _runs(seqs: list[int]) -> list[list[int]]:
    """Takes increasing sequences. Returns them as [first, last] runs of consecutive ones."""
    runs: list[list[int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1][1] = seq
        else:
            runs.append([seq, seq])
    return runs


def explain(result: Result, stream: str) -> list[str]:
    """Takes this check's result and the stream's name. Returns its sentences when the
    copies diverge: where, how the servers split, and the first case."""
    if result.get("valid") is not False:
        return []
    ranges = ", ".join(f"{a}" if a == b else f"{a} to {b}" for a, b in result["ranges"][:3])
    more = ", ..." if len(result["ranges"]) > 3 else ""
    split = next(iter(result["sides"]), "")
    first = result["cases"][0] if result["cases"] else None
    said = [
        f"Split brain: after the heal the servers' copies of stream {stream}, read from "
        f"each server's disk, hold different messages at {result['divergent']} sequences "
        f"({ranges}{more}), the servers split {split}."
    ]
    if first is not None:
        held = "; ".join(f"{node} holds {payload!r}" for node, payload in first["held"].items())
        said.append(
            f"At sequence {first['sequence']}: {held}. A stream's Raft log is one log: "
            "a message acknowledged at a sequence is the one every server holds there."
        )
    return said
