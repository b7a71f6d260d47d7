"""Info ops proven committed (checkers/queue/commits.py): a message of theirs read by an ok
poll or a drain proves every other message of the op, and the offsets its completion
gave; the final drain owes each of them as it owes an acknowledged send. Each history
plants one anomaly, or none."""

from __future__ import annotations

from checkers import queue
from tests.support.queue_builder import QueueHistoryBuilder
from tests.support.queue_sim import SimConfig, simulate


def _lost(b: QueueHistoryBuilder) -> list[tuple[int, object, str]]:
    result = queue.check(b.events)
    return [
        (c["partition"], c["value"], c["judged_by"]) for c in result["kinds"]["lost-write"]["cases"]
    ]


def test_an_info_send_a_poll_read_is_owed_to_the_final_drain() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(1, 0, 11, None, outcome="info")
    b.poll(2, {0: [(0, 10), (1, 11)]})
    b.drain(3, 0, [(0, 10)])  # 11 was read, so committed: the drain lacks it
    assert _lost(b) == [(0, 11, "drain")]


def test_an_info_send_nobody_read_is_owed_nothing() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(1, 0, 11, None, outcome="info")
    b.poll(2, {0: [(0, 10)]})
    b.drain(3, 0, [(0, 10)])
    assert _lost(b) == []


def test_one_message_read_proves_the_others_of_its_op() -> None:
    b = QueueHistoryBuilder()
    sends = [["send", 0, 10], ["send", 1, 20]]
    b.micro(0, "send", sends, outcome="info")
    b.poll(1, {0: [(0, 10)]})
    b.drain(2, 0, [(0, 10)])
    b.drain(2, 1, [])  # 20 was sent in the op whose 10 was read: lost
    assert _lost(b) == [(1, 20, "drain")]


def test_a_read_by_a_poll_that_did_not_complete_ok_proves_nothing() -> None:
    b = QueueHistoryBuilder()
    b.micro(0, "send", [["send", 0, 10], ["send", 1, 20]], outcome="info")
    b.poll(1, {0: [(0, 10)]}, outcome="fail")
    b.drain(2, 1, [])
    assert _lost(b) == []


def test_an_offset_an_info_op_claimed_counts_once_it_is_proven() -> None:
    b = QueueHistoryBuilder()
    done = [["send", 0, 10], ["send", 1, [0, 20]]]  # 20 at offset 0 of partition 1
    b.micro(0, "send", [["send", 0, 10], ["send", 1, 20]], done, outcome="info")
    b.send(1, 1, 21, 0)  # another message acknowledged at that offset
    assert queue.check(b.events)["kinds"]["inconsistent-offsets"]["count"] == 0
    b.poll(2, {0: [(0, 10)]})  # proves the op
    [case] = queue.check(b.events)["kinds"]["inconsistent-offsets"]["cases"]
    assert (case["partition"], case["offset"], sorted(case["values"])) == (1, 0, [20, 21])


def test_simulated_histories_with_info_sends_stay_clean() -> None:
    for seed in range(5):
        events, planted = simulate(seed, SimConfig(ops=400, info_rate=0.2))
        result = queue.check(events)
        assert {c["value"] for c in result["kinds"]["lost-write"]["cases"]} == planted.losses


def test_a_transaction_committed_in_part_is_said_so() -> None:
    # KAFKA-17754's shape: an op of unknown outcome whose 10 was read and whose 20 is not
    # in the final drain. The case and the report say a transaction tore, with no offset.
    from harness.report.explain import explain

    b = QueueHistoryBuilder()
    b.micro(0, "send", [["send", 0, 10], ["send", 1, 20]], outcome="info")
    b.poll(1, {0: [(0, 10)]})
    b.drain(2, 0, [(0, 10)])
    b.drain(2, 1, [])
    result = queue.check(b.events)
    words = queue.case_words("lost-write", result["kinds"]["lost-write"]["cases"][0])
    assert "ended info, its transaction committed (another of its sends was read)" in words
    assert "offset None" not in words and "at partition 1;" in words
    said = explain({"valid": False, "queue": result}, {"kafka_config": "safe"})
    assert any("committed only in part (op 0)" in s for s in said), said
