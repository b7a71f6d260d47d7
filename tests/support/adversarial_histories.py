"""Histories shaped to make a check do the most work per byte of input, written at any
scale n (n the size of the shape: members, deliveries, transactions, records), each with
the test.json that makes `harness check` judge it as its run would: the inputs of the
memory and time bounds (test_check_bounds.py).

- group_overlaps(n): n members each assigned partition 0 while the others hold it, then
  each revoking it: n^2/2 double ownerships, pair by pair.
- group_takeovers(n): one member assigned partition 0 n times, reading and committing
  each time: every assignment's first poll and its commits, among n of each.
- share_redeliveries(n): one record delivered n times, each acknowledged and applied while
  the others held it: n^2/2 pairs of deliveries.
- txn_realtime(n): n transactions running at once, then n more: each of the first
  completed before each of the second began, n^2 real-time pairs.
- queue_unexpected(n): one poll of n records no send wrote.
- queue_inconsistent(n): two polls that read n offsets each with another message there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

Event = dict[str, Any]
MONO = 10**15
"""The client clock at the history's time 0."""


def write(folder: Path, events: Iterable[Event], spec: dict[str, Any]) -> Path:
    """Writes events (indexed and timed in order) as folder/history.jsonl, and spec as
    its test.json. Returns the history's path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "history.jsonl"
    with path.open("w") as out:
        for i, e in enumerate(events):
            out.write(json.dumps({"index": i, "time": e.pop("time", i), **e}) + "\n")
    (folder / "test.json").write_text(json.dumps({"spec": spec}))
    return path


GROUP = {"workload": "queue", "consumer_group": True, "auto_commit": False}
SHARE = {"workload": "share", "delivery_limit": 5}
TXN = {"workload": "queue", "consumer_group": False, "txn": True}
QUEUE = {"workload": "queue", "consumer_group": False}


def _op(
    process: int, f: str, value: Any, done: Any, key: int | None = None, **completion: Any
) -> list[Event]:
    keyed = {} if key is None else {"key": key}
    return [
        {"process": process, "type": "invoke", "f": f, **keyed, "value": value},
        {"process": process, "type": "ok", "f": f, **keyed, "value": done, **completion},
    ]


def _log(kind: str, at: int) -> dict[str, Any]:
    return {"group-log": [{"type": kind, "partitions": [0], "mono-ns": MONO + at}]}


def group_overlaps(n: int) -> list[Event]:
    """n members assigned partition 0 in turn, none revoking until all hold it."""
    events: list[Event] = []
    for kind in ("assigned", "revoked"):
        for m in range(n):
            at = len(events)
            done: Event = {"member": f"m{m}", "mono-ns": MONO + at + 1} | _log(kind, at)
            events += _op(m, "poll", None, {}, **done)
    return events + _op(n, "commit", None, {})


def group_takeovers(n: int) -> list[Event]:
    """One member assigned partition 0 n times: it reads on from the commit each time."""
    events: list[Event] = []
    for offset in range(n):
        events += _op(1, "send", offset, [offset, offset], key=0)
    for offset in range(n):
        for kind, value in (("assigned", {"0": [[offset, offset]]}), ("revoked", {})):
            at = len(events)
            done: Event = {"member": "m0", "mono-ns": MONO + at + 1} | _log(kind, at)
            events += _op(0, "poll", None, value, **done)
            if kind == "assigned":
                events += _op(0, "commit", None, {"0": offset + 1}, member="m0")
    return events + _op(2, "drain", None, [[o, o] for o in range(n)], key=0)


def share_redeliveries(n: int) -> list[Event]:
    """Record (0, 0) sent once and delivered n times, each delivery acknowledged and applied
    long after the next was handed over: every two held its lock at once."""
    events = _op(0, "send", 1, [0, 1], key=0)
    s = 10**9
    for k in range(n):
        began = MONO + k * s
        r = {
            "began-ns": began,
            "polled-ns": began + 1,
            "deliveries": [[0, 0, 1, 1]],
            "acks": [[0, 0, "release"]],
            "acked-ns": began + 10 * n * s,
            "committed-ns": began + 10 * n * s + 1,
            "committed": {"0": None},
        }
        events += _op(k + 1, "poll", None, [r], member=f"m{k}", **{"mono-ns": began + 2})
    drain: Event = {"member": "d", "mono-ns": MONO + n * s}
    empty = {"began-ns": MONO + n * s - 2, "polled-ns": MONO + n * s - 1, "deliveries": []}
    return events + _op(n + 1, "drain", None, [empty], **drain)


def txn_realtime(n: int) -> list[Event]:
    """n two-send transactions invoked together and completed together, then n more."""
    events: list[Event] = []
    offsets = [0] * 16
    drained: list[list[list[int]]] = [[] for _ in range(16)]
    for group in range(2):
        done = []
        for t in range(n):
            mops: list[list[Any]] = []
            asked: list[list[Any]] = []
            for _ in range(2):
                p, m = len(events) % 16, len(events) * 2 + len(mops)
                mops.append(["send", p, [offsets[p], m]])
                asked.append(["send", p, m])
                drained[p].append([offsets[p], m])
                offsets[p] += 1
            process = group * n + t
            events.append({"process": process, "type": "invoke", "f": "txn", "value": asked})
            done.append({"process": process, "type": "ok", "f": "txn", "value": mops})
        events += done
    for p in range(16):
        events += _op(2 * n, "drain", None, drained[p], key=p)
    return events


def queue_unexpected(n: int) -> list[Event]:
    """One poll of n records of messages no send wrote."""
    return _op(0, "poll", None, {"0": [[i, i] for i in range(n)]})


def queue_inconsistent(n: int) -> list[Event]:
    """Two consumers' polls that hold two messages at each of n offsets."""
    first = {"0": [[i, i] for i in range(n)]}
    second = {"0": [[i, n + i] for i in range(n)]}
    return _op(0, "poll", None, first) + _op(1, "poll", None, second)


SHAPES: dict[str, tuple[Callable[[int], list[Event]], dict[str, Any]]] = {
    "group_overlaps": (group_overlaps, GROUP),
    "group_takeovers": (group_takeovers, GROUP),
    "share_redeliveries": (share_redeliveries, SHARE),
    "txn_realtime": (txn_realtime, TXN),
    "queue_unexpected": (queue_unexpected, QUEUE),
    "queue_inconsistent": (queue_inconsistent, QUEUE),
}
