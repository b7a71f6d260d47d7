"""Every completion that wrote or read is a node of the transaction graph, as Elle's is
(kafka.clj writer-of and readers-of take every completion): two info transactions that
read each other's messages are a G1c; a failed one's reads are reads, its writes never
happened (never an edge)."""

from __future__ import annotations

from pathlib import Path

from tests.support.jepsen_kafka import cases, check_ops, found, o


def test_two_info_transactions_reading_each_other_are_a_g1c(tmp_path: Path) -> None:
    outcome = check_ops(
        tmp_path,
        o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
        o(1, 1, "invoke", "txn", "[[:send :y :b] [:poll]]"),
        o(2, 0, "info", "txn", "[[:send :x [0 :a]] [:poll {:y [[0 :b]]}]]"),
        o(3, 1, "info", "txn", "[[:send :y [0 :b]] [:poll {:x [[0 :a]]}]]"),
    )
    [cycle] = cases(outcome, "G1c")
    steps = [(s["from"], s["to"], s["type"]) for s in cycle["steps"]]
    assert steps == [(0, 1, "wr"), (1, 0, "wr")]
    assert found(outcome) == {"G1c": 1}
    assert outcome["valid"] is False


def test_a_failed_transaction_read_is_no_cycle(tmp_path: Path) -> None:
    # As above, but the first transaction failed: its a, read, is unexpected (G1a only
    # when an ok transaction reads it, as kafka.clj g1a-cases takes h/oks), and no edge
    # leaves a failed transaction, so no cycle closes.
    outcome = check_ops(
        tmp_path,
        o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
        o(1, 1, "invoke", "txn", "[[:send :y :b] [:poll]]"),
        o(2, 0, "fail", "txn", "[[:send :x [0 :a]] [:poll {:y [[0 :b]]}]]"),
        o(3, 1, "info", "txn", "[[:send :y [0 :b]] [:poll {:x [[0 :a]]}]]"),
    )
    assert found(outcome) == {"unexpected": 1}
