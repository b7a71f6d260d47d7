"""Partitions added while a run went on (nemesis add-partitions): was anything sent to a
new partition skipped by the consumers? One finder, `skip_cases`, over the raw events.

The rule. For each partition the history's `start-add-partitions` ops added (value
{"partitions": {"from", "to"}}), the acknowledged sends there ([offset, message]) are
set against what the consumers were handed there:

- a queue run (assign or a consumer group): an acknowledged offset that no poll returned
  while some poll returned a later offset of that partition was skipped (the consumers
  started past it, or jumped it); what came after the last poll is not judged, and the
  final drains, which read the log with consumers of their own, tell whether Kafka kept it;
- a share run: an acknowledged record the group never handed out, by a poll or by the
  final drain (the group's own), was skipped; the drain reads until nothing comes.

`new-partition-skip` names each partition with a skip: when it was added, the first
offset skipped, how many. Whether it counts is Kafka's promise for the run's settings:
a consumer group at `auto.offset.reset=latest` starts a partition it has no committed
offset for at the log end, and Kafka documents that records sent to a partition added
under the group before the group found it are then skipped (ConsumerConfig's
auto.offset.reset doc, KAFKA-12261, KAFKA-20539; KIP-1327 proposes a separate reset for
new partitions): reported, never counted. At `earliest`, in assign mode (each assignment
starts at the beginning) and in a share group (KAFKA-20742's fix, 4.4.0: a new partition
of a topic the group knows starts at offset 0, whatever share.auto.offset.reset says), a
skip breaks a promise: counted.

Result layout: {"valid", "reader", "protocol", "offset_reset", "counted", "growths":
[{"index", "time", "from", "to"}], "partitions": {p: {"added_ns", "acked", "read",
"skipped", "first_read"}}, "kinds": {"new-partition-skip": {"count", "cases"}}}.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from checkers.result import Result
from history import Event

KIND = "new-partition-skip"
ADD = "start-add-partitions"
CASES_KEPT = 20


@dataclass(frozen=True, slots=True)
class Readers:
    """Who reads the topic and by which promise: `assign` (each consumer its own
    partitions from the beginning), `group` (a consumer group: its protocol, classic or
    consumer, and its auto.offset.reset) or `share` (a share group: its
    share.auto.offset.reset)."""

    kind: str
    protocol: str | None = None
    offset_reset: str = "earliest"

    @property
    def documented(self) -> bool:
        """Whether Kafka documents a skip on a new partition for these readers: a
        consumer group at latest."""
        return self.kind == "group" and self.offset_reset == "latest"

    def words(self) -> str:
        """Returns the readers in words."""
        if self.kind == "assign":
            return "the assigned consumers (each from the beginning)"
        if self.kind == "share":
            return f"the share group (share.auto.offset.reset={self.offset_reset})"
        return (
            f"the consumer group ({self.protocol or 'classic'} protocol, "
            f"auto.offset.reset={self.offset_reset})"
        )


@dataclass(frozen=True, slots=True)
class Growth:
    """One add-partitions op: its history index, when it returned (history ns) and the
    partition count before and after."""

    index: int
    time: int
    before: int
    after: int


def growths(events: Iterable[Event]) -> list[Growth]:
    """Returns every add-partitions that happened (an info completion with the counts),
    in history order."""
    found = []
    for e in events:
        if e.get("process") != "nemesis" or e.get("f") != ADD or e.get("type") == "invoke":
            continue
        value = e.get("value")
        counts = value.get("partitions") if isinstance(value, dict) else None
        if isinstance(counts, dict) and isinstance(counts.get("from"), int):
            found.append(Growth(e.get("index", -1), e.get("time", 0), counts["from"], counts["to"]))
    return found


def check_expansion(events: Sequence[Event], readers: Readers) -> Result | None:
    """Takes a queue or share history's events and who read the topic. Returns the
    section laid out as the module docstring says, or None when no partition was added."""
    grown = growths(events)
    if not grown:
        return None
    added = {p: g for g in grown for p in range(g.before, g.after)}
    acked, read, drained = _reading(events, set(added), share=readers.kind == "share")
    partitions: dict[str, Any] = {}
    cases = []
    for p, growth in sorted(added.items()):
        offsets = read.get(p, set())
        skipped = sorted(
            o
            for o in acked.get(p, {})
            if o not in offsets
            and (drained if readers.kind == "share" else o < max(offsets, default=-1))
        )
        partitions[str(p)] = {
            "added_ns": growth.time,
            "acked": len(acked.get(p, {})),
            "read": len(offsets & acked.get(p, {}).keys()),
            "skipped": len(skipped),
            "first_read": min(offsets, default=None),
        }
        if skipped:
            cases.append(_case(p, growth, skipped, offsets, acked.get(p, {})))
    counted = not readers.documented
    return {
        "valid": not (cases and counted),
        "reader": readers.kind,
        "protocol": readers.protocol,
        "offset_reset": readers.offset_reset,
        "counted": counted,
        "growths": [
            {"index": g.index, "time": g.time, "from": g.before, "to": g.after} for g in grown
        ],
        "partitions": partitions,
        "kinds": {KIND: {"count": len(cases), "cases": cases[:CASES_KEPT]}} if cases else {},
    }


def _case(
    p: int, growth: Growth, skipped: list[int], read: set[int], acked: dict[int, Any]
) -> dict[str, Any]:
    later = [o for o in read if o > skipped[0]]
    return {
        "partition": p,
        "added_by": growth.index,
        "added_ns": growth.time,
        "partitions": [growth.before, growth.after],
        "first_skipped": skipped[0],
        "first_skipped_message": acked[skipped[0]],
        "skipped": len(skipped),
        "acked": len(acked),
        "read_after": min(later, default=None),
    }


def _reading(
    events: Iterable[Event], partitions: set[int], share: bool
) -> tuple[dict[int, dict[int, Any]], dict[int, set[int]], bool]:
    """Returns, for the partitions asked: each one's acknowledged offsets (offset ->
    message), the offsets the consumers were handed (polls; a share run's drain too), and
    whether a share run's final drain returned."""
    acked: dict[int, dict[int, Any]] = {}
    read: dict[int, set[int]] = {}
    drained = False
    invoked: dict[Any, Event] = {}
    for e in events:
        process = e.get("process")
        if process == "nemesis":
            continue
        if e.get("type") == "invoke":
            invoked[process] = e
            continue
        invoke = invoked.pop(process, {})
        f, value = e.get("f"), e.get("value")
        if e.get("type") != "ok":
            continue
        if f == "send":
            p = _int(invoke.get("key", e.get("key")))
            if p in partitions and isinstance(value, list) and len(value) == 2:
                acked.setdefault(p, {})[value[0]] = value[1]
        elif f == "poll" or (share and f == "drain"):
            drained |= f == "drain"
            for p, offset in _handed(value, share):
                if p in partitions:
                    read.setdefault(p, set()).add(offset)
    return acked, read, drained


def _handed(value: Any, share: bool) -> Iterable[tuple[int, int]]:
    """Yields (partition, offset) of each record a poll's value holds: a queue poll's
    {partition: [[offset, message]]}, a share poll's rounds of deliveries."""
    if share and isinstance(value, list):
        for round_ in value:
            for d in round_.get("deliveries", []) if isinstance(round_, dict) else []:
                if isinstance(d, list) and len(d) >= 2 and (p := _int(d[0])) is not None:
                    yield p, d[1]
    elif isinstance(value, dict):
        for key, records in value.items():
            p = _int(key)
            for r in records if p is not None and isinstance(records, list) else []:
                if isinstance(r, list) and r:
                    yield p, r[0]  # type: ignore[misc]


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, str) and x.isdigit():
        return int(x)
    return None


def expansion_lines(result: Result) -> list[str]:
    """Takes the section. Returns its lines: what grew and each partition's skip."""
    if "error" in result:
        return [f"partition expansion: the check failed: {result['error']}"]
    grown = result.get("growths", [])
    parts = result.get("partitions", {})
    readers = Readers(
        result.get("reader", "group"),
        result.get("protocol"),
        result.get("offset_reset", "earliest"),
    )
    lines = [
        f"partition expansion: {len(grown)} add-partitions, {len(parts)} partitions added; "
        f"{sum(p['acked'] for p in parts.values())} sends acknowledged there, "
        f"{sum(p['read'] for p in parts.values())} read by {readers.words()}, "
        f"{sum(p['skipped'] for p in parts.values())} skipped"
    ]
    for case in result.get("kinds", {}).get(KIND, {}).get("cases", []):
        lines.append(skip_sentence(case, readers, result.get("counted", True)))
    return lines


def skip_sentence(case: dict[str, Any], readers: Readers, counted: bool) -> str:
    """Returns one case as a sentence a person can check against the history."""
    before, after = case["partitions"]
    later = case.get("read_after")
    seen = f", while it read offset {later} there" if later is not None else ""
    if not counted:
        why = (
            "Kafka documents this for auto.offset.reset=latest (a partition added under the "
            "group starts at its log end once found: KAFKA-20539), so it is not counted"
        )
    elif readers.kind == "share":
        why = (
            "a share group starts a new partition of a topic it knows at offset 0 whatever "
            "share.auto.offset.reset says (KAFKA-20742, fixed in 4.4.0), so it counts"
        )
    else:
        why = "these readers start a partition at its first offset, so it counts"
    return (
        f"{KIND}: partition {case['partition']} was added {case['added_ns'] / 1e9:.1f} s into "
        f"the run (history index {case['added_by']}: {before} -> {after} partitions); "
        f"{readers.words()} never read {case['skipped']} of its {case['acked']} acknowledged "
        f"sends, the first at offset {case['first_skipped']} (message "
        f"{case['first_skipped_message']}){seen}. {why}."
    )
