"""Replica agreement: every replica of a partition must hold the same records, offset by
offset, below the high watermark; what each replica lacks of the acknowledged writes.

Takes each replica's log as its disk holds it (offset -> value, read from the segment
files after the final heal and drain), each partition's high watermark (what the drain
was told it could read to) and the acknowledged sends. Kafka's replication protocol
promises that every record below the high watermark is on every in-sync replica at
that offset (followers truncate to the leader's epoch end, then fetch; KIP-101), and
after the final heal every replica is in sync: so two replicas that differ at an offset
below it, one holding a record the other does not, or another record there, break that
promise whatever the faults were. Above the high watermark a follower may be a fetch
behind, or hold an uncommitted tail it has yet to truncate: reported, never invalid. So
may a replica the final heal left out of the ISR (the in-sync sets given): the promise
is the in-sync replicas', and one out of sync is neither read from nor elected with
unclean election off, so where only such replicas differ it is reported as behind.

Which replica diverges, at an offset where they differ: the ones that do not hold what
most replicas hold there (ties: what the leader holds), as Jepsen's NATS checker counts
lost writes per node. Offsets no replica holds (a transaction marker's, a compacted
record's) are no divergence. An acknowledged send a replica lacks is one whose message
its log holds at no offset; one that every replica lacks is lost (the lost-acks
checker's question, answered from the disks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from checkers.result import UNKNOWN, Result, Validity, merge_valid

Records = Mapping[int, str]
"""One replica of one partition: offset -> value, as its segment files hold them."""
CASES_KEPT = 20
"""How many divergent offsets, and acknowledged sends a replica lacks, a partition's entry
lists (its counts are whole)."""


def check_replicas(
    logs: Mapping[str, Mapping[int, Records]],
    assignment: Mapping[int, Sequence[str]],
    high_watermarks: Mapping[int, int],
    acked: Iterable[tuple[int, int, int]],
    leaders: Mapping[int, str | None] | None = None,
    unreadable: Collection[str] = (),
    in_sync: Mapping[int, Collection[str]] | None = None,
) -> Result:
    """Takes node -> partition -> its log (a node lacking a partition it is assigned
    holds it empty), partition -> its replicas' nodes, partition -> high watermark, the
    acknowledged sends as (partition, offset, message), partition -> leader node, and the
    nodes whose disks could not be read, and partition -> its in-sync replicas' nodes as
    the disks were read (None: every replica in sync). Returns {"valid": False when
    replicas differ below a high watermark and an in-sync one is among those that
    differ, "unknown" when a replica or a high watermark is missing and nothing differs,
    else True; per partition and per node what differs and what each replica lacks;
    `behind_out_of_isr`: the offsets below a high watermark where only replicas out of
    sync differ; `lost`: how many acknowledged messages no replica holds, each
    partition's in its `lost_everywhere`}."""
    sends: dict[int, list[tuple[int, int]]] = {}
    for partition, offset, message in acked:
        sends.setdefault(partition, []).append((offset, message))
    leaders = leaders or {}
    partitions = {
        p: _partition(
            {n: logs[n].get(p, {}) for n in nodes if n in logs and n not in unreadable},
            [n for n in nodes if n not in logs or n in unreadable],
            high_watermarks.get(p),
            sends.get(p, []),
            leaders.get(p),
            None if in_sync is None or p not in in_sync else set(in_sync[p]),
        )
        for p, nodes in sorted(assignment.items())
    }
    nodes = sorted({n for entry in partitions.values() for n in entry["replicas"]})
    by_node = {
        node: {
            "divergent_below_hw": sum(
                e["replicas"].get(node, {}).get("divergent_below_hw", 0)
                for e in partitions.values()
            ),
            "lacks_acked": sum(
                e["replicas"].get(node, {}).get("lacks_acked", 0) for e in partitions.values()
            ),
            "partitions": [
                p
                for p, e in partitions.items()
                if e["replicas"].get(node, {}).get("divergent_below_hw")
            ],
        }
        for node in nodes
    }
    unknown = [
        f"partition {p}: " + "; ".join(_unknown_reasons(e))
        for p, e in partitions.items()
        if e["valid"] == UNKNOWN
    ]
    return {
        "valid": merge_valid(True, *(e["valid"] for e in partitions.values())),
        **({"unknown": unknown} if unknown else {}),
        "partitions_checked": len(partitions),
        "divergent_below_hw": sum(e["divergent_below_hw"] for e in partitions.values()),
        "divergent_above_hw": sum(e["divergent_above_hw"] for e in partitions.values()),
        "behind_out_of_isr": sum(e["behind_out_of_isr"] for e in partitions.values()),
        "lost": sum(len(e["lost_everywhere"]) for e in partitions.values()),
        "nodes": by_node,
        "partitions": {str(p): e for p, e in partitions.items()},
    }


def _partition(
    copies: Mapping[str, Records],
    missing: Sequence[str],
    hw: int | None,
    sends: Sequence[tuple[int, int]],
    leader: str | None,
    isr: set[str] | None = None,
) -> dict[str, Any]:
    """One partition: its readable copies by node, the replicas that could not be read,
    its high watermark (None: unknown), its acknowledged (offset, message), leader and
    in-sync replicas (None: all)."""
    offsets = sorted(set().union(*(c.keys() for c in copies.values())))
    below: list[dict[str, Any]] = []
    above = behind = 0
    blamed: Counter[str] = Counter()
    for offset in offsets:
        held = {node: copy.get(offset) for node, copy in copies.items()}
        if len(set(held.values())) <= 1:
            continue
        if hw is not None and offset < hw:
            wrong = _diverging(held, leader)
            if isr is not None and not isr.intersection(wrong):
                behind += 1  # only replicas out of sync differ: they lag, nobody reads them
                continue
            blamed.update(wrong)
            below.append({"offset": offset, "held": dict(sorted(held.items())), "diverge": wrong})
        else:
            above += 1
    present = {node: set(copy.values()) for node, copy in copies.items()}
    lacking = {
        node: sorted(m for _, m in sends if str(m) not in values)
        for node, values in present.items()
    }
    everywhere = sorted(set.intersection(*(set(v) for v in lacking.values()))) if copies else []
    valid: Validity = True
    if below:
        valid = False
    elif missing or hw is None or not copies:
        valid = UNKNOWN
    entry: dict[str, Any] = {
        "valid": valid,
        "high_watermark": hw,
        "leader": leader,
        "acknowledged": len(sends),
        "replicas": {
            node: {
                "records": len(copy),
                "log_end": max(copy, default=-1) + 1,
                **({} if isr is None else {"in_isr": node in isr}),
                "divergent_below_hw": blamed[node],
                "lacks_acked": len(lacking[node]),
                "lacks": lacking[node][:CASES_KEPT],
            }
            for node, copy in sorted(copies.items())
        },
        "divergent_below_hw": len(below),
        "divergent_above_hw": above,
        "behind_out_of_isr": behind,
        "divergences": below[:CASES_KEPT],
        "lost_everywhere": everywhere,
    }
    if missing:
        entry["unreadable"] = sorted(missing)
    if hw is None:
        entry["unknown"] = "no high watermark known (no final drain of this partition)"
    return entry


def _unknown_reasons(entry: dict[str, Any]) -> list[str]:
    reasons = []
    if entry.get("unreadable"):
        reasons.append(f"the replicas on {', '.join(entry['unreadable'])} could not be read")
    if "unknown" in entry:
        reasons.append(entry["unknown"])
    return reasons or ["no replica could be read"]


def _diverging(held: Mapping[str, str | None], leader: str | None) -> list[str]:
    """Takes what each replica holds at one offset (None: nothing). Returns the replicas
    that do not hold what most do; on a tie, those that do not hold what the leader does."""
    counts = Counter(held.values())
    most = max(counts.values())
    tied = [value for value, n in counts.items() if n == most]
    if len(tied) == 1:
        reference = tied[0]
    elif leader is not None and leader in held and held[leader] in tied:
        reference = held[leader]
    else:  # no leader to break the tie: every replica differs from some other
        return sorted(held)
    return sorted(node for node, value in held.items() if value != reference)
