"""Recovery time per fault: for each fault window and each partition whose leader the fault
took, how long until the cluster named a new leader, until clients' ops on it succeeded
again, and after the heal; with the ops that failed or timed out meanwhile.

Times are seconds from the moment the fault was in place (its start op's completion: a
cut takes a second or two to install), or from the heal for `after_heal_s`. `first_ok_s`
is the first ok op invoked in the fault, wherever it completed; `in_fault_s` the first
that also completed before the heal: none means the clients were served nothing on that
partition for the whole fault, however soon the cluster had a new leader. The new leader
is the first sample of the run's metadata watch (one a second, harness/run/metadata_watch.py)
in which another broker leads the partition: the committed state, as the cluster reports
it. An op counts for a partition when it names it (a send's key, a kv op's key through the
store's partitioning) or read from it (a poll's records); only ops invoked after the moment
measured from count, so an op already in flight when the fault began proves nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from checkers.gone import outcome
from history import Event

Touched = Callable[[Event, Event], frozenset[int]]
"""Takes an op's invoke and completion. Returns the partitions the op used."""
TIMES = ("new_leader_s", "first_ok_s", "in_fault_s", "after_heal_s")
"""The times a row has, each from the fault's start but after_heal_s, from the heal."""
NODE_FIELDS = ("paused", "killed", "isolated", "node")
"""Where a fault's start records the broker it took (nemesis/process.py, partition.py)."""


@dataclass(frozen=True, slots=True)
class OpSpan:
    """One completed client op: who, when (s), how it ended, which partitions it used."""

    process: int
    invoked: float
    completed: float
    outcome: str
    partitions: frozenset[int]


@dataclass(frozen=True, slots=True)
class LeaderSample:
    """Who led a partition at one moment of the run (s); None when no one did."""

    time: float
    partition: int
    leader: str | None


def op_spans(events: Iterable[Event], touched: Touched) -> list[OpSpan]:
    """Takes a history's events and how to tell the partitions an op used. Returns its
    completed client ops (integer processes), each paired with its invoke."""
    pending: dict[int, Event] = {}
    spans: list[OpSpan] = []
    for event in events:
        process = event.get("process")
        if not isinstance(process, int) or isinstance(process, bool):
            continue
        if event.get("type") == "invoke":
            pending[process] = event
            continue
        invoke = pending.pop(process, None)
        if invoke is None:
            continue
        spans.append(
            OpSpan(
                process,
                invoke["time"] / 1e9,
                event["time"] / 1e9,
                outcome(event),
                touched(invoke, event),
            )
        )
    return spans


def queue_partitions(invoke: Event, completion: Event) -> frozenset[int]:
    """Takes a queue op's invoke and completion. Returns the partitions it sent to (its
    key; a transaction's send micro-ops) or read records from (a poll's, a drain's key)."""
    used: set[int] = set()
    if isinstance(invoke.get("key"), int) and invoke.get("f") in ("send", "drain"):
        used.add(invoke["key"])
    value = completion.get("value")
    if completion.get("f") == "poll" and isinstance(value, dict):
        used |= _partitions_read(value)
    if isinstance(value, list) and completion.get("f") == "txn":
        for mop in value:
            if isinstance(mop, list) and len(mop) >= 2:
                if mop[0] == "send" and isinstance(mop[1], int):
                    used.add(mop[1])
                elif mop[0] == "poll" and isinstance(mop[1], dict):
                    used |= _partitions_read(mop[1])
    return frozenset(used)


def _partitions_read(records: dict[Any, Any]) -> set[int]:
    return {int(p) for p, rs in records.items() if rs and str(p).lstrip("-").isdigit()}


def leader_samples(samples: Iterable[dict[str, Any]]) -> list[LeaderSample]:
    """Takes the metadata watch's samples. Returns, in time order, who led each partition
    at each sample that could say (a sample with an error says nothing)."""
    found: list[LeaderSample] = []
    for sample in samples:
        partitions = sample.get("partitions")
        if not isinstance(partitions, dict) or "error" in partitions:
            continue
        for p, state in partitions.items():
            if str(p).isdigit() and isinstance(state, dict):
                found.append(LeaderSample(sample["time"] / 1e9, int(p), state.get("leader")))
    return sorted(found, key=lambda s: s.time)


def taken(window: dict[str, Any]) -> tuple[str | None, list[int]]:
    """Takes a fault window. Returns the broker the fault took (None for a fault of no one
    broker) and the partitions it led when the fault began (every partition then, when no
    one broker was taken)."""
    detail = _dict(window.get("detail"))
    node = next((detail[f] for f in NODE_FIELDS if isinstance(detail.get(f), str)), None)
    led = [
        int(p)
        for p, state in _dict(detail.get("before")).items()
        if str(p).isdigit() and (node is None or _dict(state).get("leader") == node)
    ]
    return node, sorted(led)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def partition_recovery(
    window: dict[str, Any],
    node: str | None,
    partition: int,
    spans: Sequence[OpSpan],
    leaders: Sequence[LeaderSample],
) -> dict[str, Any]:
    """Takes a fault window, the broker it took, one partition it led, the ops and the
    leader samples. Returns that partition's recovery, as the module docstring says."""
    start, stop = window.get("in_force", window["start"]), window.get("stop")
    end = float("inf") if stop is None else stop
    mine = [s for s in spans if partition in s.partitions]
    new = next(
        (
            s
            for s in leaders
            if s.partition == partition and start <= s.time <= end and s.leader not in (None, node)
        ),
        None,
    )
    during = [s for s in mine if start <= s.invoked < end]
    by_client: dict[int, float] = {}
    for s in during:
        if s.outcome == "ok" and s.process not in by_client:
            by_client[s.process] = round(s.completed - start, 3)
    first = _first_ok(mine, start, end)
    served = _first_ok(mine, start, end, done_by=end)
    healed = _first_ok(mine, stop, float("inf")) if stop is not None else None
    return {
        "fault": window["fault"],
        "start": round(start, 3),
        "stop": None if stop is None else round(stop, 3),
        "node": node,
        "partition": partition,
        "new_leader": new.leader if new else None,
        "new_leader_s": round(new.time - start, 3) if new else None,
        "first_ok_s": None if first is None else round(first - start, 3),
        "in_fault_s": None if served is None else round(served - start, 3),
        "first_ok_by_client": {str(p): t for p, t in sorted(by_client.items())},
        "after_heal_s": None if healed is None or stop is None else round(healed - stop, 3),
        "failed": sum(1 for s in during if s.outcome == "fail"),
        "timed_out": sum(1 for s in during if s.outcome == "info"),
    }


def _first_ok(
    spans: Sequence[OpSpan], after: float, before: float, done_by: float = float("inf")
) -> float | None:
    """Returns when the first ok op invoked in [after, before) completed (before done_by),
    or None."""
    done = [
        s.completed
        for s in spans
        if s.outcome == "ok" and after <= s.invoked < before and s.completed < done_by
    ]
    return min(done, default=None)


def recovery_times(
    windows: Sequence[dict[str, Any]], spans: Sequence[OpSpan], leaders: Sequence[LeaderSample]
) -> dict[str, Any]:
    """Takes the fault windows, the ops and the leader samples. Returns {"partitions": a
    partition_recovery per window and partition it took, "summary": per fault, the median
    and worst of each time (windows where it never came counted apart, as `never`)}."""
    rows = []
    for window in windows:
        node, led = taken(window)
        rows += [partition_recovery(window, node, p, spans, leaders) for p in led]
    return {"partitions": rows, "summary": summary(rows)}


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Takes partition_recovery rows. Returns per fault, for each of TIMES: {"median",
    "worst", "never"} over its rows."""
    by_fault: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_fault.setdefault(row["fault"], []).append(row)
    out: dict[str, dict[str, Any]] = {}
    for fault, mine in sorted(by_fault.items()):
        out[fault] = {"windows": len({r["start"] for r in mine}), "partitions": len(mine)}
        for name in TIMES:
            times = [r[name] for r in mine if r[name] is not None]
            out[fault][name] = {
                "median": round(statistics.median(times), 3) if times else None,
                "worst": max(times, default=None),
                "never": len(mine) - len(times),
            }
    return out
