"""A share workload's history read from its raw events: the acknowledged sends, and every
delivery of a record to a member with the acknowledgement it got and its commit's result.

workloads/share_client.py records a poll's (or a drain's) completion value as a list of
rounds, each {began-ns, polled-ns, deliveries: [[partition, offset, message, delivery
count]], acks: [[partition, offset, accept|release|reject]], acked-ns, committed:
{partition: None or the error}, commit-error, committed-ns}; times on the client's
monotonic clock, placed on the history's as checkers/group_history.clock_start says. An
acknowledgement is `ok` only when commit_sync reported its partition committed without
error; any other result (an error, no answer, a commit that raised) leaves it `unknown`:
the broker may still have applied it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers.groups.consumer_history import clock_start
from history import Event, History, MalformedOp, pair_invocations

Record = tuple[int, int]
"""A record of the topic: (partition, offset)."""
READS = frozenset({"poll", "drain"})
ROUND_TIMES = ("began-ns", "polled-ns")


@dataclass(frozen=True, slots=True)
class Delivery:
    """One record handed to a member by a poll (history ns throughout): `began` when its
    poll began, `handed` when it returned; its acknowledgement (None if none was made),
    when the commit carrying it was asked (`ack_sent`) and returned (`ack_done`), and
    whether the broker reported it applied (`ack_ok`)."""

    member: str
    index: int
    record: Record
    message: Any
    count: int | None
    began: int
    handed: int
    ack: str | None = None
    ack_sent: int | None = None
    ack_done: int | None = None
    ack_ok: bool = False


@dataclass
class ShareHistory:
    """A share workload's history, as the module docstring says."""

    acked: dict[Record, Any] = field(default_factory=dict)
    """Every acknowledged send: record -> message."""
    unsure_sends: int = 0
    failed_sends: int = 0
    deliveries: dict[Record, list[Delivery]] = field(default_factory=dict)
    """Every record's deliveries, in the order their polls returned."""
    crashed_polls: int = 0
    drained: bool = False
    """Whether a final drain ended ok (nothing more to hand out)."""
    ack_reports: dict[str, int] = field(default_factory=lambda: {"ok": 0, "error": 0})
    """Offsets the acknowledgement commit callback reported, committed ok or not."""


def read_share_history(events: Sequence[Event]) -> ShareHistory:
    """Takes a share history's events. Returns its ShareHistory."""
    invocations, _ = pair_invocations(events)
    start = clock_start(inv.completion for inv in invocations)
    share = ShareHistory()
    for inv in invocations:
        invoke, done = inv.invoke, inv.completion
        if done is None:  # in flight at the end: what it was handed is not known
            continue
        f = invoke.get("f")
        if f == "send":
            _read_send(share, invoke, done)
        elif f in ("poll", "drain") and isinstance(done.get("value"), list):
            member = str(done.get("member", invoke["process"]))
            for r in done["value"]:
                _read_round(share, member, invoke["index"], r, start)
            share.crashed_polls += "crashed" in done
            share.drained |= f == "drain" and done["type"] == "ok"
    for found in share.deliveries.values():
        found.sort(key=lambda d: d.handed)
    return share


def _read_send(share: ShareHistory, invoke: Event, done: Event) -> None:
    if done["type"] == "ok":
        offset, message = done["value"]
        share.acked[(int(invoke["key"]), int(offset))] = message
    elif done["type"] == "info":
        share.unsure_sends += 1
    else:
        share.failed_sends += 1


def _read_round(
    share: ShareHistory, member: str, index: int, r: dict[str, Any], start: int
) -> None:
    acks = {(int(p), int(o)): kind for p, o, kind in r.get("acks", [])}
    committed = r.get("committed", {})
    sure = "commit-error" not in r
    for report in r.get("ack-reports", []):
        share.ack_reports["ok" if report["error"] is None else "error"] += len(report["offsets"])
    for p, o, message, count in r["deliveries"]:
        record = (int(p), int(o))
        ack = acks.get(record)
        delivery = Delivery(
            member,
            index,
            record,
            message,
            count,
            r["began-ns"] - start,
            r["polled-ns"] - start,
            ack,
            _at(r.get("acked-ns"), start),
            _at(r.get("committed-ns"), start),
            ack is not None and sure and str(p) in committed and committed[str(p)] is None,
        )
        share.deliveries.setdefault(record, []).append(delivery)


def _at(mono_ns: int | None, start: int) -> int | None:
    return None if mono_ns is None else mono_ns - start


def is_share_value(value: Any) -> bool:
    """Takes a poll's or drain's completion value. Returns whether it is a share workload's,
    a list of rounds each with its deliveries (a queue poll's is a map of partitions,
    a Jepsen micro-op poll's a list of lists)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(r, dict) and "deliveries" in r for r in value)
    )


def share_events(events: Sequence[Event]) -> bool:
    """Takes a history's events. Returns whether its first poll or drain completion that
    carries a value is a share workload's."""
    for e in events:
        if e.get("f") in READS and e.get("type") != "invoke" and e.get("value") is not None:
            return is_share_value(e["value"])
    return False


class Shaped(Exception):
    """ShapeProbe met the first poll or drain with a value: `share` says whose it is."""

    def __init__(self, share: bool) -> None:
        super().__init__("share" if share else "not share")
        self.share = share


class ShapeProbe:
    """A history Reader that stops the load (raises Shaped) at the first poll or drain
    completed with a value, so that a long history is told apart from its first lines."""

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does; raises Shaped at the first read."""
        value = None if completion is None else completion.get("value")
        if invoke.get("f") in READS and value is not None:
            raise Shaped(is_share_value(value))

    def finish(self) -> object:
        """Returns None: no poll or drain carried a value."""
        return None


def reject_malformed(history: History) -> None:
    """Takes a share history loaded with its events. Raises MalformedOp for the first op
    read_share_history cannot read: a read whose value is not a list of rounds, a round
    without its times or with deliveries not [partition, offset, message, count], an ok
    send whose value is not [offset, message]."""
    invocations, _ = pair_invocations(history.events)
    for inv in invocations:
        done, f = inv.completion, inv.invoke.get("f")
        if done is None or done["type"] == "fail":
            continue
        problem = None
        if f in READS and done.get("value") is not None:
            problem = _reads_problem(done["value"])
        elif f == "send" and done["type"] == "ok":
            value = done.get("value")
            if not (isinstance(value, list) and len(value) == 2 and type(value[0]) is int):
                problem = f"an ok send's value must be [offset, message], not {value!r:.80}"
            elif type(inv.invoke.get("key")) is not int:
                problem = f"a send's key must be its partition, not {inv.invoke.get('key')!r:.40}"
        if problem is not None:
            raise MalformedOp(inv.invoke["index"], problem, in_value=True)


def _reads_problem(value: Any) -> str | None:
    if not is_share_value(value):
        return f"a share poll or drain value must be a list of rounds, not {value!r:.80}"
    for r in value:
        if any(type(r.get(t)) is not int for t in ROUND_TIMES):
            return f"a round must have integer {' and '.join(ROUND_TIMES)}: {r!r:.80}"
        if not isinstance(r["deliveries"], list):
            return f"a round's deliveries must be a list, not {r['deliveries']!r:.80}"
        for d in r["deliveries"]:
            shaped = isinstance(d, list) and len(d) == 4
            if not (shaped and type(d[0]) is int and type(d[1]) is int):
                return f"a delivery must be [partition, offset, message, count], not {d!r:.80}"
    return None
