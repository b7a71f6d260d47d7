"""The transaction anomalies seen without the dependency graph, on histories written by
hand: aborted reads (G1a), precommitted reads, int-send-skip; and the transactions'
outcome counts."""

from __future__ import annotations

import json

from tests.support.txn_builder import Txns, found, poll, send


def test_an_ok_poll_of_an_aborted_message_is_an_aborted_read() -> None:
    txns = Txns()
    writer = txns.add(0, 1_000, 2_000, [send(0, 0, 7)], outcome="fail")
    reader = txns.add(1, 3_000, 4_000, [poll({0: [[0, 7]]})])
    result = txns.check()
    assert found(result) == {"G1a": 1}
    (case,) = result["kinds"]["G1a"]["cases"]
    assert (case["index"], case["writer"]) == (txns.index(reader), txns.index(writer))
    assert (case["partition"], case["offset"], case["value"]) == (0, 0, 7)
    assert case["explanation"] == (
        f"T{txns.index(reader)} (op {txns.index(reader)}, process 1) polled 7 at partition 0 "
        f"offset 0; T{txns.index(writer)} (op {txns.index(writer)}, process 0) sent it, and "
        "failed (aborted)"
    )


def test_a_read_of_an_info_message_is_no_aborted_read_and_proves_it_committed() -> None:
    txns = Txns()
    txns.add(0, 1_000, 2_000, [send(0, 0, 7)], outcome="info")
    txns.add(1, 3_000, 4_000, [poll({0: [[0, 7]]})])
    result = txns.check()
    assert found(result) == {}
    assert result["transactions"] == {
        "committed": 1,
        "aborted": 0,
        "unknown": 1,
        "info_committed": 1,
    }


def test_an_aborted_message_read_by_a_failed_poll_is_no_aborted_read() -> None:
    txns = Txns()
    txns.add(0, 1_000, 2_000, [send(0, 0, 7)], outcome="fail")
    txns.add(1, 3_000, 4_000, [poll({0: [[0, 7]]})], outcome="fail")
    assert found(txns.check()) == {}


def test_a_transaction_polling_its_own_send_is_a_precommitted_read() -> None:
    txns = Txns()
    t = txns.add(0, 1_000, 2_000, [send(0, 3, 7), poll({0: [[3, 7]]})])
    result = txns.check()
    assert found(result) == {"precommitted-read": 1}
    (case,) = result["kinds"]["precommitted-read"]["cases"]
    assert (case["index"], case["offset"], case["value"]) == (txns.index(t), 3, 7)
    assert "sent 7 to partition 0 and polled it, at offset 3" in case["explanation"]


def test_another_transactions_message_between_two_sends_is_an_int_send_skip() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000, 4_000, [send(0, 0, 1), send(0, 2, 3)])
    t2 = txns.add(1, 1_500, 3_000, [send(0, 1, 2)])
    result = txns.check()
    assert result["kinds"]["int-send-skip"]["count"] == 1
    (case,) = result["kinds"]["int-send-skip"]["cases"]
    assert case["index"] == txns.index(t1)
    assert (case["values"], case["offsets"]) == ([1, 3], [0, 2])
    assert case["skipped"] == [{"offset": 1, "value": 2, "writer": txns.index(t2)}]
    assert case["explanation"].endswith(f"between them: 2 at 1 (T{txns.index(t2)})")


def test_a_gap_nobody_saw_a_message_in_is_no_int_send_skip() -> None:
    # Offset 1 holds a transaction marker, or an aborted message: nothing observed there.
    txns = Txns()
    txns.add(0, 1_000, 4_000, [send(0, 0, 1), send(0, 2, 3)])
    txns.add(1, 5_000, 6_000, [poll({0: [[0, 1], [2, 3]]})])
    assert found(txns.check()) == {}


def test_the_result_is_plain_json() -> None:
    txns = Txns()
    txns.add(0, 1_000, 2_000, [send(0, 0, 7)], outcome="fail")
    txns.add(1, 3_000, 4_000, [send(1, 0, 8), poll({0: [[0, 7]], 1: [[0, 8]]})])
    result = txns.check()
    assert json.loads(json.dumps(result)) == result
