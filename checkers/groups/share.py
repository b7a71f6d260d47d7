"""The share group checks (KIP-932, Kafka's queues) over a share workload's history: every
acknowledged send ends accepted or archived, no record is held by two members at once, none
is delivered again once accepted, and delivery counts stay under the limit and increase.

Each rule is a `*_cases` function returning cases a person can read; check_share counts
them into the `share` section of results.json. The evidence is the client's: a delivery is
a record a poll handed over, timed from when that poll began to when it returned; an
acknowledgement counts as applied only when commit_sync reported its partition committed
(checkers/groups/share_history.py), and then the broker held the record's acquisition lock for
that member from the acquisition to the moment it applied the acknowledgement (KIP-932: an
acknowledgement of a record whose lock expired, or that another member acquired, fails).
Times come from one monotonic clock; share_pairs.SLACK_NS covers placing the client's
readings on the history's time line. Every finder is linear in the history, or n log n
where it compares a record's deliveries (checkers/groups/share_pairs.py); at most one case
per send, delivery or record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checkers.faults import windows
from checkers.groups.expansion import growths
from checkers.groups.share_history import Delivery, Record, ShareHistory, read_share_history
from checkers.groups.share_pairs import after_accept, count_pairs, overlapping_pair
from checkers.queue.reader import Message, Send
from history import Event

MAX_CASES = 10
KINDS = (
    "lost",
    "stranded",
    "lock-overlap",
    "delivered-after-accept",
    "over-limit",
    "count-not-increasing",
    "mismatched",
    "unexpected",
)
"""Every anomaly kind of the share section; any one makes the run invalid."""
ALLOWED = ("count-reset", "reset-skipped")
"""Kinds found and reported but never invalid: what KIP-932 allows (count_cases), and at
share.auto.offset.reset=latest what was sent before the group started a partition
(reset_skipped_cases)."""
ALLOWED_BECAUSE = {
    "count-reset": "KIP-932 forgets an in-flight delivery when the share-partition leader changes",
    "reset-skipped": "sent below the first offset the group handed out in a partition it "
    "had from the start, which share.auto.offset.reset=latest starts at its log end",
}
BROKER_DELIVERY_LIMIT = 5
"""Kafka's group.share.delivery.count.limit default (GroupCoordinatorConfig, 4.4.0): the
limit of a share group that sets none, so of a history whose run does not say its own."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareRules:
    """What the share group was set up with."""

    delivery_limit: int
    """share.delivery.count.limit: a record is archived once delivered this many times."""
    from_latest: bool = False
    """share.auto.offset.reset=latest: the group starts a partition it has no state for at
    its log end (KIP-932), so what was sent there before is never delivered."""


def outcome(found: list[Delivery], limit: int) -> str:
    """Takes a record's deliveries and the delivery limit. Returns how it ended: accepted,
    rejected, archived-by-limit, maybe (an accept or reject of unknown outcome), or open."""
    if any(d.ack == "accept" and d.ack_ok for d in found):
        return "accepted"
    if any(d.ack == "reject" and d.ack_ok for d in found):
        return "rejected"
    # KIP-932: a record released, or whose lock expired, at the limit is archived.
    if any(d.count is not None and d.count >= limit and d.ack != "accept" for d in found):
        return "archived-by-limit"
    if any(d.ack in ("accept", "reject") for d in found):
        return "maybe"
    return "open"


class Outcomes:
    """Each acknowledged send's deliveries and how they ended: those of its record that
    carried its message (another message there is `mismatched`), each (record, message)
    judged once however many sends name it."""

    def __init__(self, share: ShareHistory, limit: int) -> None:
        self.limit = limit
        self.delivered: dict[tuple[Record, Message], list[Delivery]] = {}
        for record, found in share.deliveries.items():
            for d in found:
                self.delivered.setdefault((record, d.message), []).append(d)
        self.judged: dict[tuple[Record, Message], str] = {}

    def of(self, s: Send) -> tuple[list[Delivery], str]:
        """Takes an acknowledged send. Returns its deliveries and their outcome (or
        never-delivered)."""
        assert s.offset is not None
        key = ((s.partition, s.offset), s.value)
        found = self.delivered.get(key, [])
        if key not in self.judged:
            self.judged[key] = outcome(found, self.limit) if found else "never-delivered"
        return found, self.judged[key]


def unresolved_cases(share: ShareHistory, outcomes: Outcomes) -> dict[str, list[dict[str, Any]]]:
    """Every acknowledged send is eventually accepted by some member or archived (KIP-932:
    a record ends Acknowledged or Archived); after a final drain, one whose message was
    never delivered at its record is `lost` and one delivered but neither accepted nor
    archived (its every delivery released below the limit, or never acknowledged) is
    `stranded`. Without a drain, none is judged. Two sends acknowledged at one record are
    judged each: the one whose message never came is lost."""
    cases: dict[str, list[dict[str, Any]]] = {"lost": [], "stranded": []}
    if not share.drained:
        return cases
    for s in share.acked:
        found, ended = outcomes.of(s)
        record = [s.partition, s.offset]
        if ended == "never-delivered":
            cases["lost"].append({"record": record, "message": s.value, "index": s.index})
        elif ended == "open":
            counts = [d.count for d in found]
            acks = [d.ack for d in found]
            cases["stranded"].append(
                {"record": record, "message": s.value, "counts": counts, "acks": acks}
            )
    return cases


def reset_skipped_cases(
    lost: list[dict[str, Any]], share: ShareHistory, from_latest: bool, events: Sequence[Event]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Takes the lost cases. Returns them split into those still lost and those
    share.auto.offset.reset=latest explains: at latest, a lost send below the first offset
    the group handed out in its partition, of a partition the topic had from the start (a
    partition add-partitions made is the expansion check's: since KAFKA-20742's fix a new
    partition of a topic the group knows starts at 0 whatever the setting)."""
    if not from_latest:
        return lost, []
    grown = growths(events)
    original = grown[0].before if grown else None
    first: dict[int, int] = {}
    for partition, offset in share.deliveries:
        first[partition] = min(first.get(partition, offset), offset)
    kept: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for case in lost:
        partition, offset = case["record"]
        from_start = original is None or partition < original
        (skipped if from_start and offset < first.get(partition, -1) else kept).append(case)
    return kept, skipped


def overlap_cases(share: ShareHistory) -> list[dict[str, Any]]:
    """No record is acquired by a member while another holds its lock (KIP-932: a record is
    Acquired by one consumer at a time). D1's lock certainly lasted from before D1's poll
    returned until its applied acknowledgement (asked at ack_sent); D2, a later acquisition
    (a higher delivery count, or itself acknowledged with its own lock certainly held while
    D1's was), was handed over more than SLACK_NS before ack_sent: both held it at once.
    One case per record, with the first such pair found (share_pairs.overlapping_pair)."""
    cases = []
    for record, found in sorted(share.deliveries.items()):
        pair = overlapping_pair(found)
        if pair is not None:
            cases.append(_pair_case(record, *pair))
    return cases


def after_accept_cases(share: ShareHistory) -> list[dict[str, Any]]:
    """No record is delivered again once accepted (KIP-932: Acknowledged is final): a
    delivery whose poll began more than SLACK_NS after a commit that applied an ACCEPT of
    the same record had returned. One case per such delivery."""
    return [
        _pair_case(record, *pair)
        for record, found in sorted(share.deliveries.items())
        for pair in after_accept(found)
    ]


def count_cases(
    share: ShareHistory, limit: int, faults: Sequence[tuple[int, int]] = ()
) -> dict[str, list[dict[str, Any]]]:
    """Delivery counts never exceed the limit and grow with each delivery of a record
    (KIP-932: each acquisition adds one; at the limit the record is archived): `over-limit`
    a count above it; `count-not-increasing` a delivery whose poll began more than SLACK_NS
    after an earlier one was handed over, with a count no higher. But KIP-932 does not
    persist the Acquired state ("an Acquired record with a delivery count of 1 is recorded
    as Available with a delivery count of 0 ... memory of the in-flight delivery will be
    lost" when the share-partition leader fails; "the delivery count cannot be relied upon
    to be precise in all situations"): so where a fault (faults: ns, None-free, the window
    from its start to its stop, or to the end of the run when it was never healed) was in
    force at any time from the earlier hand-over to the later poll, or began in between,
    the pair is `count-reset`, reported and allowed. The leader's failover is inferred
    from the fault, not observed: a fault-free run gets no such allowance. One case per
    later delivery: count-not-increasing when some earlier one is not excused, else
    count-reset (share_pairs.count_pairs)."""
    cases: dict[str, list[dict[str, Any]]] = {
        "over-limit": [],
        "count-not-increasing": [],
        "count-reset": [],
    }
    for record, found in sorted(share.deliveries.items()):
        for d in found:
            if d.count is not None and d.count > limit:
                cases["over-limit"].append({"record": list(record), "delivery": _said(d)})
        unexcused, reset = count_pairs(found, faults)
        cases["count-not-increasing"] += [_pair_case(record, *pair) for pair in unexcused]
        cases["count-reset"] += [_pair_case(record, *pair) for pair in reset]
    return cases


def fault_spans(events: Sequence[Event]) -> list[tuple[int, int]]:
    """Takes a history's events. Returns each fault window as (start, stop) in history ns,
    stop at the last event's time when it was never healed."""
    end = max((int(e.get("time", 0)) for e in events), default=0)
    return [
        (int(w["start"] * 1e9), end if w["stop"] is None else int(w["stop"] * 1e9))
        for w in windows(events)
    ]


def mismatch_cases(share: ShareHistory) -> list[dict[str, Any]]:
    """A record holds one message (KIP-932 delivers the log's records): its first
    acknowledged send's, else its first delivery's. Another acknowledged send at it, or a
    delivery of it, with another message is `mismatched`: never overwritten, never
    unjudged."""
    sent: dict[Record, Send] = {}
    cases: list[dict[str, Any]] = []
    for s in share.acked:
        record = (s.partition, s.offset)
        first = sent.setdefault(record, s)  # type: ignore[arg-type]
        if not _same(s.value, first.value):
            other = {"index": s.index, "message": s.value}
            cases.append({"record": list(record), "sent": first.value, "sent_again": other})
    for record, found in sorted(share.deliveries.items()):
        first_sent = sent.get(record)
        held = found[0].message if first_sent is None else first_sent.value
        for d in found:
            if not _same(d.message, held):
                said = {"sent": held} if first_sent else {"first_delivered": _said(found[0])}
                cases.append({"record": list(record), **said, "delivery": _said(d)})
    return cases


def unexpected_cases(share: ShareHistory) -> list[dict[str, Any]]:
    """Every message delivered was sent to its partition (KIP-932 delivers the log's
    records): one that no send to it attempted, or whose every send there certainly
    failed, is `unexpected` (the queue checker's kind), once per partition and message."""
    attempted: dict[int, dict[Message, bool]] = {}  # message -> whether some send did not fail
    for s in share.sends:
        mine = attempted.setdefault(s.partition, {})
        mine[s.value] = mine.get(s.value, False) or s.outcome != "fail"
    cases = []
    seen: set[tuple[int, Message]] = set()
    for record, found in sorted(share.deliveries.items()):
        for d in found:
            key = (record[0], d.message)
            if key in seen or attempted.get(record[0], {}).get(d.message, False):
                continue
            seen.add(key)
            write = "failed" if d.message in attempted.get(record[0], {}) else "never sent"
            cases.append({"record": list(record), "write": write, "delivery": _said(d)})
    return cases


def check_share(
    events: list[Event], rules: ShareRules, share: ShareHistory | None = None
) -> dict[str, Any]:
    """Takes a share workload's events, the group's rules and the events' ShareHistory if
    already read. Returns the share section: valid (False with any anomaly; unknown when
    no final drain ended and some acknowledged send was never accepted or archived), the
    counts and each kind's first cases."""
    share = share or read_share_history(events)
    limit = rules.delivery_limit
    outcomes = Outcomes(share, limit)
    found = unresolved_cases(share, outcomes) | count_cases(share, limit, fault_spans(events))
    found["lost"], found["reset-skipped"] = reset_skipped_cases(
        found["lost"], share, rules.from_latest, events
    )
    found["lock-overlap"] = overlap_cases(share)
    found["delivered-after-accept"] = after_accept_cases(share)
    found["mismatched"] = mismatch_cases(share)
    found["unexpected"] = unexpected_cases(share)
    kinds = {k: {"count": len(found[k]), "cases": found[k][:MAX_CASES]} for k in KINDS}
    allowed = {k: {"count": len(found[k]), "cases": found[k][:MAX_CASES]} for k in ALLOWED}
    ended = _outcomes(share, outcomes)
    valid: bool | str = True
    if any(kinds[k]["count"] for k in KINDS):
        valid = False
    elif not share.drained and ended["open"] + ended["never-delivered"]:
        valid = "unknown"
    partitions = {s.partition for s in share.acked} | {p for p, _ in share.deliveries}
    return {"valid": valid, "delivery_limit": limit, "drained": share.drained} | {
        "partitions": len(partitions),
        "sends": _send_counts(share),
        "deliveries": _delivery_counts(share),
        "acks": _ack_counts(share),
        "outcomes": ended,
        "ack_reports": share.ack_reports,
        "crashed_polls": share.crashed_polls,
        "kinds": kinds,
        "allowed": allowed,
    }


def _send_counts(share: ShareHistory) -> dict[str, int]:
    acked = len(share.acked)
    info = sum(1 for s in share.sends if s.outcome == "info")
    failed = sum(1 for s in share.sends if s.outcome == "fail")
    return {"acknowledged": acked, "info": info, "fail": failed}


def _outcomes(share: ShareHistory, outcomes: Outcomes) -> dict[str, int]:
    counts = dict.fromkeys(
        ("accepted", "rejected", "archived-by-limit", "maybe", "open", "never-delivered"), 0
    )
    for s in share.acked:
        counts[outcomes.of(s)[1]] += 1
    return counts


def _same(a: Message, b: Message) -> bool:
    # Messages are read exactly (ints, strings, EDN keywords): equal only of one kind.
    return a.__class__ is b.__class__ and a == b


def _delivery_counts(share: ShareHistory) -> dict[str, int]:
    every = [d for found in share.deliveries.values() for d in found]
    counts = [d.count for d in every if d.count is not None]
    return {
        "total": len(every),
        "records": len(share.deliveries),
        "redeliveries": sum(1 for c in counts if c > 1),
        "max_count": max(counts, default=0),
        "without_count": len(every) - len(counts),
    }


def _ack_counts(share: ShareHistory) -> dict[str, dict[str, int]]:
    acks = {kind: {"ok": 0, "unknown": 0} for kind in ("accept", "release", "reject")}
    for found in share.deliveries.values():
        for d in found:
            if d.ack is not None:
                acks[d.ack]["ok" if d.ack_ok else "unknown"] += 1
    return acks


def _said(d: Delivery) -> dict[str, Any]:
    return {
        "member": d.member,
        "op": d.index,
        "message": d.message,
        "count": d.count,
        "handed_s": round(d.handed / 1e9, 3),
        "ack": d.ack,
        "ack_ok": d.ack_ok,
        "ack_sent_s": None if d.ack_sent is None else round(d.ack_sent / 1e9, 3),
    }


def _pair_case(record: Record, first: Delivery, second: Delivery) -> dict[str, Any]:
    return {"record": list(record), "first": _said(first), "second": _said(second)}


def share_lines(section: dict[str, Any]) -> list[str]:
    """Takes the share section. Returns its counts and anomalies in a few lines."""
    if "error" in section:
        return [f"the share checks failed: {section['error']}"]
    d, acks, o = section["deliveries"], section["acks"], section["outcomes"]
    lines = [
        f"share: {section['sends']['acknowledged']} sends acknowledged; {d['total']} "
        f"deliveries of {d['records']} records, {d['redeliveries']} redeliveries, max "
        f"delivery count {d['max_count']} (limit {section['delivery_limit']})",
        "share acks applied: "
        + ", ".join(f"{n} {kind}" for kind, n in ((k, v["ok"]) for k, v in acks.items()))
        + f"; {sum(v['unknown'] for v in acks.values())} of unknown outcome",
        f"share outcomes: {o['accepted']} accepted, {o['rejected']} rejected, "
        f"{o['archived-by-limit']} archived by the limit, {o['maybe']} maybe, "
        + ("final drain done" if section["drained"] else "no final drain"),
    ]
    for kind, found in section["kinds"].items():
        if found["count"]:
            lines.append(f"share {kind}: {found['count']} (first: {found['cases'][0]})")
    for kind, found in section.get("allowed", {}).items():
        if found["count"]:
            lines.append(f"share {kind} (allowed: {ALLOWED_BECAUSE[kind]}): {found['count']}")
    return lines
