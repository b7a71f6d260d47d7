"""Turns one key's search outcome into a JSON-ready failure report, and reports into prose.

A report names the op that cannot be linearized, the op that pinned the state it had to
follow (the last op of the longest linearizable prefix to return before it was invoked:
every op that did is linearized before it, in that order), the tail of that prefix, the
states the model could be in after it, and the ops concurrent with the failure. A model
that describes ops and states with the built-in words has them in JSON's spelling, which
`respelled` turns into EDN's for a Jepsen history (spelling.py).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

from checkers.linearizable.model_core import describe_error, describe_op, describe_state
from checkers.linearizable.models import UNREAD, Inconsistent, Model, State, freeze, thaw
from checkers.linearizable.search import Outcome
from checkers.linearizable.spelling import (
    EDN,
    JSON,
    described_state,
    edn_only,
    message_parts,
    message_words,
    op_words,
    said_now,
    spell,
    spelling_of,
    state_words,
)
from history import Op

PREFIX_TAIL = 20  # how many of the prefix's last ops a report keeps
MAX_CONCURRENT = 50
MAX_STATES = 1000


def op_dict(op: Op, model: Model, spelling: str = JSON) -> dict[str, Any]:
    """Takes an op (its value frozen). Returns it as a small JSON-serialisable dict, with a
    description: the model's own, or the built-in words in the spelling."""
    said = {
        "index": op.index,
        "process": op.process,
        "f": op.f,
        "key": thaw(op.key),
        "value": thaw(op.value),
        "type": op.type,
        "call": op.call,
        "ret": op.ret,
    }
    if not spelled(model):
        return said | {"text": model.describe_op(op)}
    return said | {"text": op_words(said | {"value": op.value}, spelling)}


def spelled(model: Model) -> bool:
    """Whether a model's ops and states are described by the built-in words, which the
    report spells as its history does, rather than by its own."""
    return model.describe_op is describe_op and model.describe_state is describe_state


def spelling_for(key: Hashable, ops: Sequence[Op], states: Sequence[State]) -> str:
    """Takes a key, its ops and the states a report names. Returns the spelling the report
    is first said in: EDN's when one of them holds what only EDN can (a set, a keyword),
    else JSON's, which respelled turns into EDN's for a Jepsen history of plain values."""
    values = [freeze(key), *(op.value for op in ops), *states]
    return EDN if any(edn_only(v) for v in values) else JSON


def _describe(model: Model, state: State, spelling: str) -> str:
    return described_state(state, spelling) if spelled(model) else model.describe_state(state)


def failure(
    key: Hashable, outcome: Outcome, ops: Sequence[Op], model: Model, time_limit: float | None
) -> dict[str, Any]:
    """Takes a key, its search outcome (not valid) and its ops. Returns the failure report."""
    from checkers.linearizable.graph import counterexample_graph

    if outcome.valid == "unknown":
        return _unknown(key, outcome, time_limit)
    assert outcome.failing is not None
    failing = outcome.failing
    states = possible_states(model, outcome, ops)
    why = _inconsistency(model, failing, states)
    tail = outcome.prefix[-PREFIX_TAIL:]
    oks_before = [op for op in outcome.prefix if op.type == "ok"]
    concurrent = _concurrent(ops, failing, outcome.prefix)
    graph = counterexample_graph(tail, failing, concurrent)
    pinned = pinning(outcome.prefix, failing)
    pinned_state = replay(model, outcome.prefix[: 0 if pinned is None else pinned + 1])
    tail_values = tail_states(model, outcome.prefix, len(tail))
    spelling = spelling_for(key, ops, [*states, *tail_values])

    def said(op: Op) -> dict[str, Any]:
        return op_dict(op, model, spelling)

    report: dict[str, Any] = {
        "key": thaw(key),
        "valid": False,
        "model": model.name,
        "op": said(failing),
        "previous_ok": said(oks_before[-1]) if oks_before else None,
        "pinned_by": None if pinned is None else said(outcome.prefix[pinned]),
        "pinned_state": _describe(model, pinned_state, spelling),
        "longest_prefix": [said(op) for op in tail],
        "prefix_length": len(outcome.prefix),
        "prefix_states": [_describe(model, st, spelling) for st in tail_values],
        "states": [thaw(s) for s in states],
        "state_descriptions": [_describe(model, s, spelling) for s in states],
        "concurrent": [said(op) for op in concurrent],
        "message": why if isinstance(why, str) else why.message,
        "configurations": outcome.configs,
        "graph": graph,
    }
    if spelled(model):  # what respelled needs to say it all again in EDN's spelling
        report["spelling"] = spelling
        report["pinned_value"] = thaw(pinned_state)
        report["prefix_values"] = [thaw(st) for st in tail_values]
        if not isinstance(why, str):
            report["message"] = said_now(why, spelling)
            report["message_parts"] = message_parts(why)
    return report


def pinning(prefix: Sequence[Op], failing: Op) -> int | None:
    """Takes the longest linearizable prefix and the op that could not follow it. Returns
    the position in the prefix of the op that pinned the state the failing op had to
    follow: the last, in linearization order, of the ops that returned before the failing
    op was invoked (each of which any linearization puts before it), or None when none
    had. Whatever comes after it in the prefix overlapped the failing op or crashed."""
    for position in range(len(prefix) - 1, -1, -1):
        ret = prefix[position].ret
        if ret is not None and ret < failing.call:
            return position
    return None


def replay(model: Model, ops: Sequence[Op]) -> State | Inconsistent:
    """Takes ops in a linearization order. Returns the state after them, or the first
    inconsistency (there should be none: the search found this order)."""
    state = model.init
    for op in ops:
        state = model.step(state, op)
        if isinstance(state, Inconsistent):
            break
    return state


def tail_states(model: Model, prefix: Sequence[Op], tail: int) -> list[State]:
    """Takes the longest prefix in linearization order. Returns the state after each of its
    last `tail` ops (what the viewer shows on hover, described)."""
    state: State | Inconsistent = model.init
    found: list[State] = []
    for n, op in enumerate(prefix):
        state = model.step(state, op)
        if isinstance(state, Inconsistent):
            break
        if n >= len(prefix) - tail:
            found.append(state)
    return found


def possible_states(model: Model, outcome: Outcome, ops: Sequence[Op]) -> list[State]:
    """Returns the states the model could be in when the failing op takes effect: after
    the longest prefix (replayed on the original ops), after other orders of the same ops
    the search saw, and after any crashed op not yet placed (skipped ones included). For
    the report only: what could have been read."""
    assert outcome.failing is not None
    start = [replay(model, outcome.prefix)] + [s for s in outcome.states if s != UNREAD]
    found = dict.fromkeys(s for s in start if not isinstance(s, Inconsistent))
    placed = {op.index for op in outcome.prefix}
    limit = math.inf if outcome.failing.ret is None else outcome.failing.ret
    crashed = [op for op in ops if op.type != "ok" and op.index not in placed and op.call <= limit]
    frontier = list(found)
    while frontier and len(found) < MAX_STATES:
        grown = []
        for st in frontier:
            for op in crashed:
                st2 = model.step(st, op)
                if not isinstance(st2, Inconsistent) and st2 not in found:
                    found[st2] = None
                    grown.append(st2)
        frontier = grown
    return list(found)


def _inconsistency(model: Model, failing: Op, states: Sequence[State]) -> Inconsistent | str:
    """Returns why the failing op cannot follow any of the states: the model's
    inconsistency after the first, or a sentence when there is none to give."""
    for st in states:
        result = model.step(st, failing)
        if not isinstance(result, Inconsistent):
            return "it could be linearized here, but then no later op could"
    for st in states:
        result = model.step(st, failing)
        if isinstance(result, Inconsistent):
            return result
    return "no state was reachable"


def _concurrent(ops: Sequence[Op], failing: Op, prefix: Sequence[Op]) -> list[Op]:
    """Returns the ops concurrent with the failing one, ok ops first; crashed ops already
    placed in the prefix are left out (they are accounted for)."""
    from checkers.linearizable.graph import concurrent_with

    placed = {op.index for op in prefix if op.type != "ok"}
    found = [op for op in concurrent_with(ops, failing) if op.index not in placed]
    found.sort(key=lambda op: op.type != "ok")
    return found[:MAX_CONCURRENT]


def _unknown(key: Hashable, outcome: Outcome, time_limit: float | None) -> dict[str, Any]:
    if outcome.cause == "timeout":
        why = f"the time limit of {time_limit} s"
    else:
        why = "the memory bound on the search cache"
    return {
        "key": thaw(key),
        "valid": "unknown",
        "cause": outcome.cause,
        "message": f"gave up at {why} after {outcome.configs:,} configurations",
        "prefix_length": len(outcome.prefix),
        "configurations": outcome.configs,
    }


def error_report(key: Hashable, exc: BaseException) -> dict[str, Any]:
    """Takes a key whose check raised (or exited, in a process of its own). Returns its
    "unknown" report, naming the error and the line that raised it (often in a user's
    model, whose author needs it)."""
    return {
        "key": thaw(key),
        "valid": "unknown",
        "cause": "error",
        "message": f"the check failed: {describe_error(exc)}",
    }


def stopped_report(
    key: Hashable, cause: str, detail: str, time_limit: float | None
) -> dict[str, Any]:
    """Takes a key whose supervised process gave no verdict: a Stopped's cause (`timeout`,
    `died` or `raised`) and detail. Returns the key's "unknown" report."""
    if cause == "timeout":
        message = (
            f"gave up at the time limit of {time_limit} s: the model did not return, "
            "and the process checking it was killed"
        )
    elif cause == "died":
        message = f"the process checking it ended ({detail})"
    else:
        message = f"the check failed: {detail}"
    return {
        "key": thaw(key),
        "valid": "unknown",
        "cause": "timeout" if cause == "timeout" else "error",
        "message": message,
    }


def respelled(result: dict[str, Any], history_format: str | None) -> dict[str, Any]:
    """Takes a linearizability result and its history's format. Returns the result with
    each failure that the built-in words describe said in that history's spelling (EDN's
    for Jepsen's history.edn and logs); the result itself when nothing changes."""
    spelling = spelling_of(history_format)
    failures = result.get("failures")
    if spelling == JSON or not isinstance(failures, list):
        return result
    return result | {"failures": [_respelled(f, spelling) for f in failures]}


def _respelled(fail: dict[str, Any], spelling: str) -> dict[str, Any]:
    if fail.get("spelling") != JSON:  # unknown, or the model's own words
        return fail

    def said(op: Any) -> Any:
        return op if not isinstance(op, dict) else op | {"text": op_words(op, spelling)}

    parts = fail.get("message_parts")
    message = message_words(parts, spelling) if isinstance(parts, dict) else None
    return fail | {
        "spelling": spelling,
        **{name: said(fail.get(name)) for name in ("op", "previous_ok", "pinned_by")},
        "longest_prefix": [said(op) for op in fail.get("longest_prefix", [])],
        "concurrent": [said(op) for op in fail.get("concurrent", [])],
        "state_descriptions": [state_words(v, spelling) for v in fail.get("states", [])],
        "prefix_states": [state_words(v, spelling) for v in fail.get("prefix_values", [])],
        "pinned_state": state_words(fail.get("pinned_value"), spelling),
        "message": message or fail.get("message"),
    }


def explain(result: dict[str, Any]) -> list[str]:
    """Takes a linearizability result. Returns a few readable lines per failing key: what was
    read, which op it had to follow and what could have been read, and which ops were
    concurrent."""
    lines: list[str] = []
    for fail in result.get("failures", []):
        if fail["key"] is None:
            key = "the history"
        else:
            key = f"key {spell(fail['key'], str(fail.get('spelling', JSON)))}"
        if fail["valid"] == "unknown":
            lines.append(f"{key}: unknown ({fail['cause']}): {fail['message']}")
            continue
        lines.extend(_explain_invalid(key, fail))
    return lines


def _explain_invalid(key: str, fail: dict[str, Any]) -> list[str]:
    op = fail["op"]
    lines = [
        f"{key}: not linearizable",
        f"  op {op['index']} ({op['text']}) cannot be linearized: {fail['message']}",
    ]
    pinned, pinned_state = fail.get("pinned_by"), fail.get("pinned_state")
    if pinned is not None:
        lines.append(
            f"  it was invoked after op {pinned['index']} ({pinned['text']}) returned, "
            f"which left the state {pinned_state}"
        )
    elif pinned_state is not None:
        lines.append(f"  it was invoked before any op returned, in the state {pinned_state}")
    prev = fail.get("previous_ok")
    if prev is not None:
        lines.append(
            f"  after the longest linearizable prefix of {fail['prefix_length']} ops, "
            f"ending with op {prev['index']} ({prev['text']})"
        )
    else:
        lines.append("  it would have been the first op linearized")
    states = fail.get("state_descriptions") or []
    if states:
        lines.append("  the state could then only have been: " + " or ".join(states))
    conc = fail.get("concurrent") or []
    if conc:
        shown = "; ".join(f"op {c['index']} ({c['text']})" for c in conc[:6])
        more = f"; and {len(conc) - 6} more" if len(conc) > 6 else ""
        lines.append(f"  concurrent with it: {shown}{more}")
    else:
        lines.append("  no op was concurrent with it")
    return lines
