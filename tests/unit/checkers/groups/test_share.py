"""The share group checks (checkers/groups/share.py) on constructed histories: a clean one gives
nothing, and each with exactly one planted anomaly gives that one; unknown acknowledgements
and a missing final drain are never counted as anomalies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from checkers.groups.share import KINDS, ShareRules, check_share, share_lines

Event = dict[str, Any]
S = 1_000_000_000
START = 7 * S
"""The client clock at the history's time 0."""
RULES = ShareRules(delivery_limit=3)


@dataclass(frozen=True)
class Poll:
    """One poll op: began at `at` s, handed over at +0.1 s, acknowledged at `ack_at` s
    (default +0.2 s), its commit back 0.1 s later; `committed` False: the commit raised."""

    member: int
    at: float
    deliveries: list[tuple[int, int, Any, int]]
    acks: list[str]
    ack_at: float | None = None
    committed: bool = True
    f: str = "poll"


class Share:
    """Builds a share history: sends and polls, each op's events placed by its times."""

    def __init__(self) -> None:
        self.ops: list[tuple[float, Event, float, Event]] = []

    def send(self, partition: int, offset: int, message: int) -> None:
        at = 0.06 * sum(1 for _, i, _, _ in self.ops if i["f"] == "send")  # one at a time
        invoke = {"process": 0, "type": "invoke", "f": "send", "key": partition, "value": message}
        done = {**invoke, "type": "ok", "value": [offset, message]}
        self.ops.append((at, invoke, at + 0.05, done))

    def poll(self, p: Poll) -> None:
        ack_at = p.ack_at if p.ack_at is not None else p.at + 0.2
        r: Event = {
            "began-ns": START + int(p.at * S),
            "polled-ns": START + int((p.at + 0.1) * S),
            "deliveries": [list(d) for d in p.deliveries],
            "ack-reports": [],
        }
        if p.acks:
            r["acks"] = [[d[0], d[1], kind] for d, kind in zip(p.deliveries, p.acks, strict=True)]
            r["acked-ns"] = START + int(ack_at * S)
            r["committed-ns"] = START + int((ack_at + 0.1) * S)
            if p.committed:
                r["committed"] = {str(d[0]): None for d in p.deliveries}
            else:
                r["commit-error"] = "KafkaError: _TIMED_OUT"
                r["committed"] = {}
        end = max(ack_at, p.at) + 0.2
        invoke = {"process": p.member, "type": "invoke", "f": p.f, "value": None}
        done = {
            **invoke,
            "type": "ok" if p.committed else "info",
            "value": [r],
            "member": f"c{p.member}",
            "mono-ns": START + int(end * S),
        }
        self.ops.append((p.at, invoke, end, done))

    def fault(self, at: float, until: float) -> None:
        """A kill-leader window from at to until s, as the nemesis records one."""
        for f, t in (("start-kill-leader", at), ("stop-kill-leader", until)):
            invoke = {"process": "nemesis", "type": "invoke", "f": f, "value": None}
            done = {**invoke, "type": "info", "value": {"killed": "n1"}}
            self.ops.append((t, invoke, t + 0.1, done))

    def events(self) -> list[Event]:
        placed = [(at, e) for begin, i, end, d in self.ops for at, e in ((begin, i), (end, d))]
        placed.sort(key=lambda x: x[0])
        return [e | {"index": n, "time": int(at * S)} for n, (at, e) in enumerate(placed)]


def clean(drain: bool = True) -> Share:
    """Four records: r(0,0) accepted; r(0,1) released then accepted by another member;
    r(1,0) rejected; r(1,1) released at counts 1, 2 and 3 (archived by the limit)."""
    h = Share()
    for n, (p, o) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)], start=1):
        h.send(p, o, n)
    h.poll(Poll(1, 1.0, [(0, 0, 1, 1)], ["accept"]))
    h.poll(Poll(2, 1.0, [(0, 1, 2, 1), (1, 1, 4, 1)], ["release", "release"]))
    h.poll(Poll(3, 2.0, [(0, 1, 2, 2), (1, 0, 3, 1)], ["accept", "reject"]))
    h.poll(Poll(1, 3.0, [(1, 1, 4, 2)], ["release"]))
    h.poll(Poll(2, 4.0, [(1, 1, 4, 3)], ["release"]))
    if drain:
        h.poll(Poll(9, 10.0, [], [], f="drain"))
    return h


def found(h: Share) -> dict[str, int]:
    result = check_share(h.events(), RULES)
    kinds = {k: v["count"] for k, v in result["kinds"].items() if v["count"]}
    assert (result["valid"] is False) == bool(kinds)
    return kinds


def test_a_clean_history_gives_nothing_and_counts_every_outcome() -> None:
    result = check_share(clean().events(), RULES)
    assert result["valid"] is True
    assert set(result["kinds"]) == set(KINDS)
    assert result["outcomes"] == {
        "accepted": 2,
        "rejected": 1,
        "archived-by-limit": 1,
        "maybe": 0,
        "open": 0,
        "never-delivered": 0,
    }
    assert result["deliveries"] == {
        "total": 7,
        "records": 4,
        "redeliveries": 3,
        "max_count": 3,
        "without_count": 0,
    }
    assert result["acks"]["release"] == {"ok": 4, "unknown": 0}
    assert any("3 redeliveries" in line for line in share_lines(result))


def test_an_acknowledged_send_never_delivered_is_lost_after_the_drain() -> None:
    h = clean()
    h.send(1, 2, 5)
    assert found(h) == {"lost": 1}


def test_without_a_final_drain_nothing_is_lost_but_the_verdict_is_unknown() -> None:
    h = clean(drain=False)
    h.send(1, 2, 5)
    result = check_share(h.events(), RULES)
    assert result["valid"] == "unknown"
    assert result["kinds"]["lost"]["count"] == 0
    assert result["outcomes"]["never-delivered"] == 1


def test_a_record_released_below_the_limit_and_never_delivered_again_is_stranded() -> None:
    h = clean()
    h.send(1, 2, 5)
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], ["release"]))
    assert found(h) == {"stranded": 1}


def test_an_accept_of_unknown_outcome_is_maybe_never_stranded() -> None:
    h = clean()
    h.send(1, 2, 5)
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], ["accept"], committed=False))
    result = check_share(h.events(), RULES)
    assert result["valid"] is True
    assert result["outcomes"]["maybe"] == 1
    assert result["acks"]["accept"]["unknown"] == 1


@pytest.mark.parametrize("overlapping", [True, False])
def test_a_record_acquired_while_another_member_held_its_lock_overlaps(
    overlapping: bool,
) -> None:
    h = clean()
    h.send(1, 2, 5)
    # c4 is handed it at 5.1 s and acknowledges it at 7 s (applied); c5 is handed it at
    # 6.1 s with a higher count: before c4's acknowledgement was even asked.
    kind = "accept" if overlapping else "release"
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], [kind], ack_at=7.0 if overlapping else 5.5))
    h.poll(Poll(5, 6.0, [(1, 2, 5, 2)], ["release" if overlapping else "accept"]))
    assert found(h) == ({"lock-overlap": 1} if overlapping else {})


def test_a_record_delivered_after_its_accept_was_applied() -> None:
    h = clean()
    h.poll(Poll(5, 6.0, [(0, 0, 1, 2)], ["release"]))
    assert found(h) == {"delivered-after-accept": 1}


def test_a_delivery_count_above_the_limit() -> None:
    h = clean()
    h.poll(Poll(5, 6.0, [(1, 1, 4, 4)], ["release"]))
    assert found(h) == {"over-limit": 1}


def test_a_delivery_count_that_does_not_increase() -> None:
    h = clean()
    h.send(1, 2, 5)
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], ["release"]))
    h.poll(Poll(5, 6.0, [(1, 2, 5, 1)], ["accept"]))
    assert found(h) == {"count-not-increasing": 1}


@pytest.mark.parametrize("fault", [(5.5, 5.8), (4.0, 5.2), (5.3, 9.0)])
def test_a_count_that_starts_again_after_a_fault_is_allowed(fault: tuple[float, float]) -> None:
    # KIP-932 keeps no Acquired state: a share-partition leader's failover forgets the
    # in-flight delivery, and the record comes back with the count it had before it.
    h = clean()
    h.send(1, 2, 5)
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], []))  # handed over at 5.1 s, never acknowledged
    h.fault(*fault)
    h.poll(Poll(5, 6.0, [(1, 2, 5, 1)], ["accept"]))
    result = check_share(h.events(), RULES)
    assert result["valid"] is True
    assert result["allowed"]["count-reset"]["count"] == 1
    assert result["kinds"]["count-not-increasing"]["count"] == 0
    assert any("count-reset (allowed" in line for line in share_lines(result))


def test_a_fault_over_before_the_first_delivery_allows_nothing() -> None:
    h = clean()
    h.send(1, 2, 5)
    h.fault(0.5, 1.0)
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], ["release"]))
    h.poll(Poll(5, 6.0, [(1, 2, 5, 1)], ["accept"]))
    assert found(h) == {"count-not-increasing": 1}


def test_a_delivery_with_another_message_than_was_sent() -> None:
    h = clean()
    h.send(1, 2, 5)
    h.poll(Poll(4, 5.0, [(1, 2, 6, 1)], ["accept"]))
    # As the queue checker says of a drain holding another message at an acknowledged
    # offset: that record's two messages, the one sent never delivered, one never sent.
    assert found(h) == {"mismatched": 1, "lost": 1, "unexpected": 1}


def test_a_crashed_poll_holds_its_records_until_someone_else_gets_them() -> None:
    h = clean()
    h.send(1, 2, 5)
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], []))
    h.poll(Poll(5, 11.0, [(1, 2, 5, 2)], ["accept"]))
    assert found(h) == {}


def test_at_latest_a_send_below_the_first_offset_handed_out_is_reset_skipped() -> None:
    # A send at offset 0 of partition 2, never delivered, while offset 1 was: at latest the
    # group started partition 2 past it (documented), at earliest it is lost.
    h = clean(drain=False)
    h.send(2, 0, 5)
    h.send(2, 1, 6)
    h.poll(Poll(1, 5.0, [(2, 1, 6, 1)], ["accept"]))
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    assert found(h) == {"lost": 1}
    latest = check_share(h.events(), ShareRules(delivery_limit=3, from_latest=True))
    assert latest["valid"] is True
    assert latest["allowed"]["reset-skipped"]["count"] == 1
    assert any("reset-skipped (allowed" in line for line in share_lines(latest))


def test_at_latest_a_partition_added_later_is_left_lost() -> None:
    # The same skip on a partition add-partitions made (2 -> 3) stays lost: since
    # KAFKA-20742's fix a new partition of a known topic starts at 0.
    h = clean(drain=False)
    grown = {"partitions": {"from": 2, "to": 3}}
    invoke = {"process": "nemesis", "type": "invoke", "f": "start-add-partitions", "value": None}
    h.ops.append((4.0, invoke, 4.1, {**invoke, "type": "info", "value": grown}))
    h.send(2, 0, 5)
    h.send(2, 1, 6)
    h.poll(Poll(1, 5.0, [(2, 1, 6, 1)], ["accept"]))
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    latest = check_share(h.events(), ShareRules(delivery_limit=3, from_latest=True))
    assert latest["kinds"]["lost"]["count"] == 1
    assert latest["allowed"]["reset-skipped"]["count"] == 0
