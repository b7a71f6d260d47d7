"""The queue checker's explanation ties consequences to their cause: inconsistent offsets
that each held a lost send, and poll-skips only on partitions that lost sends, are said
under the lost writes; one that holds no lost send stays a problem of its own."""

from __future__ import annotations

from typing import Any

from checkers.queue import follows_from_loss
from harness.report.explain import explain, explain_points


def _reused(partition: int, offset: int, values: list[int]) -> dict[str, Any]:
    observed = [
        {"partition": partition, "offset": offset, "value": v, "by": "send", "index": v}
        for v in values
    ]
    return {"partition": partition, "offset": offset, "values": values, "observed": observed}


def _skip(partition: int) -> dict[str, Any]:
    return {
        "process": 1,
        "partition": partition,
        "offset": 9,
        "index": 40,
        "prior_offset": 2,
        "prior_index": 30,
        "skipped": [3, 4],
        "skipped_count": 2,
    }


def _queue(reused: list[dict[str, Any]], skips: list[dict[str, Any]]) -> dict[str, Any]:
    def kind(cases: list[dict[str, Any]], invalidating: bool) -> dict[str, Any]:
        return {"count": len(cases), "cases": cases, "invalidating": invalidating, "ignored": False}

    lost = [
        {"index": 1, "process": 1, "partition": 0, "offset": 0, "value": 4, "judged_by": "drain"}
    ]
    return {
        "valid": False,
        "acknowledged": 10,
        "lost": 1,
        "lost_records": [[0, 4]],
        "kinds": {
            "lost-write": kind(lost, True),
            "inconsistent-offsets": kind(reused, True),
            "poll-skip": kind(skips, False),
        },
    }


def test_offsets_reused_after_a_loss_and_skips_on_its_partitions_follow_from_it() -> None:
    queue = _queue([_reused(0, 0, [4, 468])], [_skip(0)])
    assert set(follows_from_loss(queue)) == {"inconsistent-offsets", "poll-skip"}
    said = explain({"valid": False, "queue": queue}, {})
    [(point)] = [
        p
        for p in explain_points({"valid": False, "queue": queue}, {})
        if p.under and p.text.startswith("Following from the same loss")
    ]
    [reused, skipped] = point.under  # each consequence listed under its cause
    assert reused.startswith(
        "1 inconsistent-offsets (makes the history invalid: each held a lost send"
    )
    assert "partition 0 offset 0 held 4 (send op 4) and 468 (send op 468)" in reused
    assert skipped.startswith("1 poll-skip")
    assert not any(s.startswith("1 inconsistent-offsets") for s in said)  # said once


def test_a_reused_offset_without_a_lost_send_is_a_problem_of_its_own() -> None:
    queue = _queue([_reused(0, 0, [4, 468]), _reused(1, 3, [7, 9])], [_skip(1)])
    assert follows_from_loss(queue) == {}
    said = explain({"valid": False, "queue": queue}, {})
    assert not any(s.startswith("Following from") for s in said)
    assert any(s.startswith("2 inconsistent-offsets (makes the history invalid)") for s in said)
    assert follows_from_loss(queue | {"lost_records": [], "lost": 0}) == {}


def test_the_index_lists_a_consequence_after_its_cause() -> None:
    from harness.report import index

    queue = _queue([_reused(0, 0, [4, 468])], [])
    assert index._kinds(queue) == ["1 lost-write", "1 inconsistent-offsets (from the loss)"]
    alone = _queue([_reused(1, 3, [7, 9])], [])
    assert index._kinds(alone) == ["1 inconsistent-offsets", "1 lost-write"]
