"""Rewrites a simulated queue history's sends and polls in Jepsen's micro-op shape
(jepsen.tests.kafka: an op's value is a list of [send key value] and [poll] micro-ops),
merging now and then a process's ok send and the ok poll that follows it into one txn op.

What the history says is unchanged: the same sends, polls and moves, in the same order
for each process, so the checker must find exactly what it found in the flat history.
"""

from __future__ import annotations

import random
from typing import Any

Event = dict[str, Any]
Op = tuple[int, int]
"""An op by its invoke's and completion's positions in the event list."""


def as_micro_ops(events: list[Event], rng: random.Random) -> list[Event]:
    """Takes a history's events and a random source. Returns them with every send and
    poll a micro-op op, some consecutive ok send and ok poll of one process one txn op,
    indexes renumbered."""
    out = [_rewritten(e) for e in events]
    for send, poll in _mergeable(events):
        if rng.random() < 0.5:
            _merge(out, send, poll)
    kept = [e for e in out if e]
    return [e | {"index": i} for i, e in enumerate(kept)]


def _rewritten(e: Event) -> Event:
    if e["f"] == "send":
        key = e["key"]
        rest = {k: v for k, v in e.items() if k != "key"}
        return rest | {"value": [["send", key, e["value"]]]}
    if e["f"] == "poll":
        done = e["type"] == "ok"
        return e | {"value": [["poll", e["value"]] if done else ["poll"]]}
    return dict(e)


def _mergeable(events: list[Event]) -> list[tuple[Op, Op]]:
    """Returns each ok send op followed, on its process, by an ok poll op."""
    open_: dict[Any, int] = {}
    last: dict[Any, tuple[str, Op]] = {}
    pairs = []
    for i, e in enumerate(events):
        process = e["process"]
        if e["type"] == "invoke":
            open_[process] = i
            continue
        if process not in open_:
            continue  # a nemesis event
        op = (open_.pop(process), i)
        kind = f"{e['f']} {e['type']}"
        before = last.get(process)
        if kind == "poll ok" and before is not None and before[0] == "send ok":
            pairs.append((before[1], op))
        last[process] = (kind, op)
    return pairs


def _merge(out: list[Event], send: Op, poll: Op) -> None:
    # The txn is invoked where the send was and completes where the poll did; the send's
    # completion and the poll's invoke go.
    (send_invoke, send_done), (poll_invoke, poll_done) = send, poll
    asked = [*out[send_invoke]["value"], ["poll"]]
    done = [*out[send_done]["value"], *out[poll_done]["value"]]
    out[send_invoke] = out[send_invoke] | {"f": "txn", "value": asked}
    out[poll_done] = out[poll_done] | {"f": "txn", "value": done}
    out[send_done] = out[poll_invoke] = {}
