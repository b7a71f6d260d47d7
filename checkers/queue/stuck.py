"""A read_committed consumer stuck below the high watermark after the faults: the final
drains that gave up short of it, as `stuck-consumer` cases (a liveness failure).

The rule. A final drain runs after the last fault healed, reads one partition from the
beginning at read_committed and must reach the high watermark it was told (every record
there acknowledged by the in-sync replicas) within its catch-up time, three times the
workload's transaction timeout: a transaction left open by a crashed client holds the
last stable offset for at most that timeout before its coordinator aborts it. A drain that
gave up with its position below that high watermark saw a last stable offset that
nothing moved: a transaction whose COMMIT or ABORT marker the partition will never get,
as an unclean election leaves one (KAFKA-20716; apache/kafka#22937 documents it as a
limitation of unclean election under transactions). Kafka's `kafka-transactions.sh
find-hanging` names such a transaction; the history only shows where the consumer stopped.

A case per partition says its last such drain's op, process, the position it reached, the
high watermark, how many attempts and how long they waited in all, the last record read,
the acknowledged sends at or past the position (what it could not hand out), and whether a
later drain got there after all. Reported, never counted against the
history (checkers/queue/policy.py): no read was wrong, one never came.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from checkers.queue.records import Drain, Send, Stalled

KIND = "stuck-consumer"
Case = dict[str, Any]


def stuck_cases(
    stalled: Sequence[Stalled], sends: Sequence[Send], drains: Mapping[int, Drain]
) -> list[Case]:
    """Takes the final reads that gave up (QueueHistory.stalled), the history's sends and
    its last ok drain of each partition. Returns a case for each partition whose drains
    stopped below the high watermark, from the last of them, in partition order."""
    stopped: dict[int, list[Stalled]] = defaultdict(list)
    for stall in stalled:
        if stall.position < stall.high_watermark:
            stopped[stall.partition].append(stall)
    if not stopped:
        return []
    acked: dict[int, list[tuple[int, Send]]] = defaultdict(list)
    for send in sends:
        if send.outcome == "ok" and send.offset is not None:
            acked[send.partition].append((send.offset, send))
    return [
        _case(attempts, acked.get(partition, []), drains.get(partition))
        for partition, attempts in sorted(stopped.items())
    ]


def _case(attempts: list[Stalled], acked: list[tuple[int, Send]], drain: Drain | None) -> Case:
    stall = attempts[-1]
    behind = [
        send
        for offset, send in sorted(acked, key=lambda pair: pair[0])
        if stall.position <= offset < stall.high_watermark
    ]
    waited = sum(a.time - a.invoked for a in attempts) / 1e9
    # A drain that got there after all: the last stable offset moved, later than it should.
    then_drained = drain is not None and drain.index > stall.index
    case: Case = {
        "index": stall.index,
        "process": stall.process,
        "partition": stall.partition,
        "position": stall.position,
        "high_watermark": stall.high_watermark,
        "attempts": len(attempts),
        "waited_s": round(waited, 3),
        "then_drained": then_drained,
        "last_read": None if stall.last_read is None else list(stall.last_read),
        "acked_behind": len(behind),
    }
    if behind:
        first = behind[0]
        case["first_behind"] = {"offset": first.offset, "value": first.value, "index": first.index}
    last = (
        "nothing read"
        if stall.last_read is None
        else f"last read {stall.last_read[1]!r} at offset {stall.last_read[0]}"
    )
    what = (
        f"; {len(behind)} acknowledged sends at or past it never handed out, the first "
        f"{behind[0].value!r} at offset {behind[0].offset} (op {behind[0].index})"
        if behind
        else ""
    )
    tries = f" in {len(attempts)} attempts" if len(attempts) > 1 else ""
    after = "; a later drain got there" if then_drained else ""
    case["explanation"] = (
        f"the final drain of partition {stall.partition} (op {stall.index}, process "
        f"{stall.process}) stayed at offset {stall.position} for {waited:.1f} s{tries}, below "
        f"the high watermark {stall.high_watermark} ({last}){what}{after}"
    )
    return case
