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
Times come from one monotonic clock; SLACK_NS covers placing the client's readings on the
history's time line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from checkers.faults import windows
from checkers.groups.share_history import Delivery, Record, ShareHistory, read_share_history
from history import Event

SLACK_NS = 100_000_000
MAX_CASES = 10
KINDS = (
    "lost",
    "stranded",
    "lock-overlap",
    "delivered-after-accept",
    "over-limit",
    "count-not-increasing",
    "mismatched",
)
"""Every anomaly kind of the share section; any one makes the run invalid."""
ALLOWED = ("count-reset",)
"""Kinds found and reported but never invalid: what KIP-932 allows (count_cases)."""
BROKER_DELIVERY_LIMIT = 5
"""Kafka's group.share.delivery.count.limit default (GroupCoordinatorConfig, 4.4.0): the
limit of a share group that sets none, so of a history whose run does not say its own."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareRules:
    """What the share group was set up with."""

    delivery_limit: int
    """share.delivery.count.limit: a record is archived once delivered this many times."""


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


def unresolved_cases(share: ShareHistory, limit: int) -> dict[str, list[dict[str, Any]]]:
    """Every acknowledged send is eventually accepted by some member or archived (KIP-932:
    a record ends Acknowledged or Archived); after a final drain, one never delivered is
    `lost` and one delivered but neither accepted nor archived (its every delivery released
    below the limit, or never acknowledged) is `stranded`. Without a drain, none is judged."""
    cases: dict[str, list[dict[str, Any]]] = {"lost": [], "stranded": []}
    if not share.drained:
        return cases
    for record, message in sorted(share.acked.items()):
        found = share.deliveries.get(record, [])
        if not found:
            cases["lost"].append({"record": list(record), "message": message})
        elif outcome(found, limit) == "open":
            counts = [d.count for d in found]
            acks = [d.ack for d in found]
            cases["stranded"].append(
                {"record": list(record), "message": message, "counts": counts, "acks": acks}
            )
    return cases


def overlap_cases(share: ShareHistory) -> list[dict[str, Any]]:
    """No record is acquired by a member while another holds its lock (KIP-932: a record is
    Acquired by one consumer at a time). D1's lock certainly lasted from before D1's poll
    returned until its applied acknowledgement (asked at ack_sent); D2, a later acquisition
    (a higher delivery count, or itself acknowledged with its own lock certainly held while
    D1's was), was handed over more than SLACK_NS before ack_sent: both held it at once."""
    cases = []
    for record, found in sorted(share.deliveries.items()):
        for a, b in combinations(found, 2):
            for first, second in ((a, b), (b, a)):
                if _held_together(first, second):
                    cases.append(_pair_case(record, first, second))
                    break
    return cases


def _held_together(first: Delivery, second: Delivery) -> bool:
    if not first.ack_ok or first.ack_sent is None:
        return False
    if second.handed >= first.ack_sent - SLACK_NS:
        return False
    later = first.count is not None and second.count is not None and second.count > first.count
    both_held = (
        second.ack_ok and second.ack_sent is not None and first.handed < second.ack_sent - SLACK_NS
    )
    return later or both_held


def after_accept_cases(share: ShareHistory) -> list[dict[str, Any]]:
    """No record is delivered again once accepted (KIP-932: Acknowledged is final): a
    delivery whose poll began more than SLACK_NS after a commit that applied an ACCEPT of
    the same record had returned."""
    cases = []
    for record, found in sorted(share.deliveries.items()):
        for accepted in found:
            if accepted.ack != "accept" or not accepted.ack_ok or accepted.ack_done is None:
                continue
            done = accepted.ack_done
            for again in found:
                if again is not accepted and again.began > done + SLACK_NS:
                    cases.append(_pair_case(record, accepted, again))
    return cases


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
    from the fault, not observed: a fault-free run gets no such allowance."""
    cases: dict[str, list[dict[str, Any]]] = {
        "over-limit": [],
        "count-not-increasing": [],
        "count-reset": [],
    }
    for record, found in sorted(share.deliveries.items()):
        for d in found:
            if d.count is not None and d.count > limit:
                cases["over-limit"].append({"record": list(record), "delivery": _said(d)})
        for earlier, later in combinations(found, 2):
            if earlier.count is None or later.count is None:
                continue
            if later.began > earlier.handed + SLACK_NS and later.count <= earlier.count:
                reset = any(
                    start <= later.began and stop >= earlier.handed for start, stop in faults
                )
                kind = "count-reset" if reset else "count-not-increasing"
                cases[kind].append(_pair_case(record, earlier, later))
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
    """A delivery carries the message its record was sent with (KIP-932 delivers the log's
    records): one at an acknowledged send's offset with another message is `mismatched`."""
    return [
        {"record": list(record), "sent": share.acked[record], "delivery": _said(d)}
        for record, found in sorted(share.deliveries.items())
        if record in share.acked
        for d in found
        if d.message != share.acked[record]
    ]


def check_share(
    events: list[Event], rules: ShareRules, share: ShareHistory | None = None
) -> dict[str, Any]:
    """Takes a share workload's events, the group's rules and the events' ShareHistory if
    already read. Returns the share section: valid (False with any anomaly; unknown when
    no final drain ended and some acknowledged send was never accepted or archived), the
    counts and each kind's first cases."""
    share = share or read_share_history(events)
    limit = rules.delivery_limit
    found = unresolved_cases(share, limit) | count_cases(share, limit, fault_spans(events))
    found["lock-overlap"] = overlap_cases(share)
    found["delivered-after-accept"] = after_accept_cases(share)
    found["mismatched"] = mismatch_cases(share)
    kinds = {k: {"count": len(found[k]), "cases": found[k][:MAX_CASES]} for k in KINDS}
    allowed = {k: {"count": len(found[k]), "cases": found[k][:MAX_CASES]} for k in ALLOWED}
    outcomes = _outcomes(share, limit)
    valid: bool | str = True
    if any(kinds[k]["count"] for k in KINDS):
        valid = False
    elif not share.drained and outcomes["open"] + outcomes["never-delivered"]:
        valid = "unknown"
    partitions = {p for p, _ in share.acked} | {p for p, _ in share.deliveries}
    return {"valid": valid, "delivery_limit": limit, "drained": share.drained} | {
        "partitions": len(partitions),
        "sends": {
            "acknowledged": len(share.acked),
            "info": share.unsure_sends,
            "fail": share.failed_sends,
        },
        "deliveries": _delivery_counts(share),
        "acks": _ack_counts(share),
        "outcomes": outcomes,
        "ack_reports": share.ack_reports,
        "crashed_polls": share.crashed_polls,
        "kinds": kinds,
        "allowed": allowed,
    }


def _outcomes(share: ShareHistory, limit: int) -> dict[str, int]:
    counts = dict.fromkeys(
        ("accepted", "rejected", "archived-by-limit", "maybe", "open", "never-delivered"), 0
    )
    for record in share.acked:
        found = share.deliveries.get(record, [])
        counts[outcome(found, limit) if found else "never-delivered"] += 1
    return counts


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
            lines.append(
                f"share {kind} (allowed: KIP-932 forgets an in-flight delivery when the"
                f" share-partition leader changes): {found['count']}"
            )
    return lines
