"""Jepsen's Kafka tests of consumers and producers stepping wrong (jepsen-io/jepsen,
jepsen/test/jepsen/tests/kafka_test.clj: poll-skip-test, nonmonotonic-poll-test,
nonmonotonic-send-test, int-poll-skip-test, int-nonmonotonic-poll-test,
int-nonmonotonic-send-test), each history written as the test writes it and checked as
`harness check` checks a Jepsen history.edn, with the test's assertion in our terms.

Our cases name ops by their invoke's index (Jepsen's by the completion op) and say the
offsets skipped (Jepsen the values at them, and a delta in dense positions); the
differences on purpose are in docs/CHECKERS.md, "Jepsen's kafka_test.clj, test by test".
"""

from __future__ import annotations

from pathlib import Path

from tests.support.jepsen_kafka import cases, check_ops, k, o

# poll-skip-test: process 0 reads offsets 1, 2, then 4, then 7; 3 and 6 are known to exist.
POLL_1_2 = [
    o(0, 0, "invoke", "poll", "[[:poll]]"),
    o(1, 0, "ok", "poll", "[[:poll {:x [[1 :a], [2 :b]]}]]"),
]
POLL_3 = [o(2, 1, "invoke", "poll", "[[:poll]]"), o(3, 1, "ok", "poll", "[[:poll {:x [[3 :c]]}]]")]
POLL_4 = [o(6, 0, "invoke", "poll", "[[:poll]]"), o(7, 0, "ok", "poll", "[[:poll {:x [[4 :d]]}]]")]
WRITE_6 = [
    o(10, 2, "invoke", "send", "[[:send :x :f]]"),
    o(11, 2, "ok", "send", "[[:send :x [6 :f]]]"),
]
POLL_7 = [
    o(12, 0, "invoke", "poll", "[[:poll]]"),
    o(13, 0, "ok", "poll", "[[:poll {:x [[7 :g]]}]]"),
]
SENDS = "[[:send :x :a] [:send :x :b] [:send :x :c] [:send :x :d] [:send :x :g]]"
WRITE_ALL = [o(14, 3, "invoke", "send", SENDS), o(15, 3, "info", "send", SENDS)]
SKIPS = [
    {"process": 0, "partition": ":x", "prior_offset": 2, "prior_index": 0, "offset": 4,
     "index": 6, "skipped": [3], "skipped_count": 1},
    {"process": 0, "partition": ":x", "prior_offset": 4, "prior_index": 6, "offset": 7,
     "index": 12, "skipped": [6], "skipped_count": 1},
]  # fmt: skip


def test_poll_skip(tmp_path: Path) -> None:
    history = [*POLL_1_2, *POLL_3, *POLL_4, *WRITE_6, *POLL_7, *WRITE_ALL]
    assert cases(check_ops(tmp_path, *history), "poll-skip") == SKIPS


def test_poll_skip_with_a_subscribe_and_an_assign_that_drop_the_key(tmp_path: Path) -> None:
    sub_y = [o(4, 0, "invoke", "subscribe", "[:y]"), o(5, 0, "ok", "subscribe", "[:y]")]
    assign_y = [o(8, 0, "invoke", "assign", "[:y]"), o(9, 0, "info", "assign", "[:y]")]
    history = [*POLL_1_2, *POLL_3, *sub_y, *POLL_4, *assign_y, *WRITE_6, *POLL_7, *WRITE_ALL]
    assert cases(check_ops(tmp_path, *history), "poll-skip") == []


def test_poll_skip_with_a_subscribe_and_an_assign_that_keep_the_key(tmp_path: Path) -> None:
    sub_xy = [o(4, 0, "invoke", "subscribe", "[:x :y]"), o(5, 0, "ok", "subscribe", "[:x :y]")]
    assign_xy = [o(8, 0, "invoke", "assign", "[:x :y]"), o(9, 0, "ok", "assign", "[:x :y]")]
    history = [*POLL_1_2, *POLL_3, *sub_xy, *POLL_4, *assign_xy, *WRITE_6, *POLL_7, *WRITE_ALL]
    outcome = check_ops(tmp_path, *history)
    assert cases(outcome, "poll-skip") == SKIPS
    # Jepsen's checker allows poll-skip when the consumers subscribe, as ours does.
    assert outcome["kinds"]["poll-skip"]["invalidating"] is False


def _sends(*values: int) -> list[str]:
    asked = " ".join(f"[:send :x {v}]" for v in values)
    done = " ".join(f"[:send :x [{v} {v}]]" for v in values)
    return [o(0, 0, "invoke", "send", f"[{asked}]"), o(1, 0, "ok", "send", f"[{done}]")]


# poll-skip-test, "txn abort": o(1, 1, ...) repeats index 1, as the test writes it; the
# ops are then numbered by position (a warning says so), so that the ok poll of 0 is op 2.
POLLED_0 = [o(1, 1, "invoke", "txn", "[[:poll]]"), o(2, 1, "ok", "txn", "[[:poll {:x [[0 0]]}]]")]


def test_poll_skip_txn_abort_good(tmp_path: Path) -> None:
    history = [
        *_sends(0, 1, 2),
        *POLLED_0,
        o(3, 1, "invoke", "txn", "[[:poll]]"),
        o(4, 1, "fail", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(5, 1, "invoke", "txn", "[[:poll]]"),
        o(6, 1, "info", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(7, 1, "invoke", "txn", "[[:poll]]"),
        o(8, 1, "ok", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
    ]
    outcome = check_ops(tmp_path, *history)
    assert outcome["valid"] is True
    assert {kind: e["count"] for kind, e in outcome["kinds"].items() if e["count"]} == {}
    assert any("numbered by its position" in w for w in outcome["warnings"]), outcome["warnings"]
    assert any("goes on after its info" in w for w in outcome["warnings"])


def test_poll_skip_txn_abort_does_not_roll_back(tmp_path: Path) -> None:
    history = [
        *_sends(0, 1, 2, 3, 4, 5),
        *POLLED_0,
        o(3, 1, "invoke", "txn", "[[:poll]]"),
        o(4, 1, "fail", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(5, 1, "invoke", "txn", "[[:poll]]"),
        o(6, 1, "fail", "txn", "[[:poll {:x [[3 3] [4 4]]}]]"),
        o(7, 1, "invoke", "txn", "[[:poll]]"),
        o(8, 1, "ok", "txn", "[[:poll {:x [[5 5]]}]]"),
    ]
    skips = cases(check_ops(tmp_path, *history), "poll-skip")
    assert [(c["prior_index"], c["index"], c["skipped"]) for c in skips] == [
        (2, 6, [1, 2]),
        (2, 8, [1, 2, 3, 4]),
    ]


def test_poll_skip_txn_abort_info_can_be_a_poll_skip(tmp_path: Path) -> None:
    history = [
        *_sends(0, 1, 2, 3, 4, 5),
        *POLLED_0,
        o(3, 1, "invoke", "txn", "[[:poll]]"),
        o(4, 1, "fail", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(5, 1, "invoke", "txn", "[[:poll]]"),
        o(6, 1, "info", "txn", "[[:poll {:x [[3 3] [4 4]]}]]"),
    ]
    skips = cases(check_ops(tmp_path, *history), "poll-skip")
    assert [(c["prior_index"], c["index"], c["skipped"]) for c in skips] == [(2, 6, [1, 2])]


# nonmonotonic-poll-test: process 0 polls offsets 1 2 3, then goes back and reads 2 again.
SEND_ABCD = "[[:send :x :a] [:send :x :b] [:send :x :c] [:send :x :d]]"
NM_POLLS = [
    o(0, 0, "invoke", "send", SEND_ABCD),
    o(1, 0, "ok", "send", SEND_ABCD),
    o(2, 0, "invoke", "poll", "[[:poll]]"),
    o(3, 0, "ok", "poll", "[[:poll {:x [[1 :a], [2 :b], [3 :c]]}]]"),
]
POLL_234 = [
    o(6, 0, "invoke", "poll", "[[:poll]]"),
    o(7, 0, "ok", "poll", "[[:poll {:x [[2 :b], [3 :c], [4 :d]]}]]"),
]
BACKWARDS = [
    {"process": 0, "partition": ":x", "prior_offset": 3, "prior_index": 2, "offset": 2, "index": 6}
]


def _between(f: str, keys: str, outcome: str = "ok") -> list[str]:
    return [o(4, 0, "invoke", f, keys), o(5, 0, outcome, f, keys)]


def test_nonmonotonic_poll_together(tmp_path: Path) -> None:
    assert cases(check_ops(tmp_path, *NM_POLLS, *POLL_234), "nonmonotonic-poll") == BACKWARDS


def test_nonmonotonic_poll_with_a_subscribe_that_drops_the_key(tmp_path: Path) -> None:
    history = [*NM_POLLS, *_between("subscribe", "[:y]"), *POLL_234]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-poll") == []


def test_nonmonotonic_poll_with_an_assign_that_drops_the_key(tmp_path: Path) -> None:
    history = [*NM_POLLS, *_between("assign", "[:y]"), *POLL_234]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-poll") == []


def test_nonmonotonic_poll_with_a_subscribe_that_keeps_the_key(tmp_path: Path) -> None:
    history = [*NM_POLLS, *_between("subscribe", "[:x :y]"), *POLL_234]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-poll") == BACKWARDS


def test_nonmonotonic_poll_with_an_assign_that_keeps_the_key(tmp_path: Path) -> None:
    history = [*NM_POLLS, *_between("assign", "[:x :y]"), *POLL_234]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-poll") == BACKWARDS


# nonmonotonic-send-test: process 0 sends to offsets 3, 4, then to 1, 2. Its second op
# invokes 1 and 2 and completes them as :a and :b: the completion's values count, as
# Jepsen's analysis reads them, and a warning says so.
SEND_34 = [
    o(0, 0, "invoke", "send", "[[:send :x :c] [:send :x :d]]"),
    o(1, 0, "ok", "send", "[[:send :x [3 :c]] [:send :x [4 :d]]]"),
]
SEND_12 = [
    o(10, 0, "invoke", "send", "[[:send :x 1] [:send :x 2]]"),
    o(11, 0, "ok", "send", "[[:send :x [1 :a]] [:send :x [2 :b]]]"),
]
BACKWARDS_SEND = [
    {"process": 0, "partition": ":x", "prior_offset": 4, "prior_index": 0,
     "prior_value": k("d"), "offset": 1, "index": 10, "value": k("a"), "outcome": "ok"}
]  # fmt: skip


def _before_sends(f: str, keys: str, outcome: str = "ok") -> list[str]:
    return [o(2, 0, "invoke", f, keys), o(3, 0, outcome, f, keys)]


def test_nonmonotonic_send(tmp_path: Path) -> None:
    outcome = check_ops(tmp_path, *SEND_34, *SEND_12)
    assert cases(outcome, "nonmonotonic-send") == BACKWARDS_SEND
    assert any("acknowledge another message" in w for w in outcome["warnings"])


def test_nonmonotonic_send_across_a_subscribe_that_drops_the_key(tmp_path: Path) -> None:
    # Jepsen forgets a process's sends at a subscribe, its producer and consumer being one
    # client; ours compares a producer's sends whatever its consumer does (a difference
    # on purpose: docs/CHECKERS.md).
    history = [*SEND_34, *_before_sends("subscribe", "[:y]"), *SEND_12]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-send") == BACKWARDS_SEND


def test_nonmonotonic_send_across_an_assign_that_drops_the_key(tmp_path: Path) -> None:
    history = [*SEND_34, *_before_sends("assign", "[:y]", "info"), *SEND_12]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-send") == BACKWARDS_SEND


def test_nonmonotonic_send_across_a_subscribe_that_keeps_the_key(tmp_path: Path) -> None:
    history = [*SEND_34, *_before_sends("subscribe", "[:x :y]"), *SEND_12]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-send") == BACKWARDS_SEND


def test_nonmonotonic_send_across_an_assign_that_keeps_the_key(tmp_path: Path) -> None:
    history = [*SEND_34, *_before_sends("assign", "[:x :y]"), *SEND_12]
    assert cases(check_ops(tmp_path, *history), "nonmonotonic-send") == BACKWARDS_SEND


def test_int_poll_skip(tmp_path: Path) -> None:
    sends = "[[:send :x :a] [:send :x :b] [:send :x :d]]"
    history = [
        o(0, 1, "invoke", "send", sends),
        o(1, 1, "info", "send", sends),
        o(2, 0, "invoke", "poll", "[[:poll]]"),
        o(3, 0, "ok", "poll", "[[:poll {:x [[1 :a], [4 :d]]}]]"),
        o(4, 0, "invoke", "poll", "[[:poll] [:poll]]"),
        o(5, 0, "ok", "poll", "[[:poll {:x [[1 :a]]}] [:poll {:x [[4 :d]]}]]"),
        o(6, 0, "invoke", "poll", "[[:poll]]"),
        o(7, 0, "ok", "poll", "[[:poll {:x [[2 :b]]}]]"),
    ]
    skips = cases(check_ops(tmp_path, *history), "int-poll-skip")
    assert [(c["index"], c["prior_offset"], c["offset"], c["skipped"]) for c in skips] == [
        (2, 1, 4, [2]),
        (4, 1, 4, [2]),
    ]


def test_int_nonmonotonic_poll(tmp_path: Path) -> None:
    sends = "[[:send :x :a] [:send :x :b] [:send :x :c]]"
    history = [
        o(0, 0, "invoke", "send", sends),
        o(1, 0, "info", "send", sends),
        o(2, 0, "invoke", "poll", "[[:poll]]"),
        o(3, 0, "ok", "poll", "[[:poll {:x [[3 :c] [1 :a]]}]]"),
        o(4, 0, "invoke", "poll", "[[:poll]]"),
        o(5, 0, "ok", "poll", "[[:poll {:x [[2 :b] [3 :c]]}] [:poll {:x [[3 :c]]}]]"),
    ]
    found = cases(check_ops(tmp_path, *history), "int-nonmonotonic-poll")
    assert [(c["index"], c["prior_offset"], c["offset"]) for c in found] == [(2, 3, 1), (4, 3, 3)]


def test_int_nonmonotonic_send(tmp_path: Path) -> None:
    history = [
        o(0, 0, "invoke", "send", "[[:send :x 3] [:send :x 1]]"),
        o(1, 0, "ok", "send", "[[:send :x [3 :c]] [:send :x [1 :a]]]"),
        o(2, 0, "invoke", "send", "[[:send :y :d] [:send :y :b]]"),
        o(3, 0, "info", "send", "[[:send :y :d] [:send :y :b]]"),
        o(4, 1, "invoke", "send", "[[:send :y :c]]"),
        o(5, 1, "info", "send", "[[:send :y :c]]"),
        o(6, 0, "invoke", "poll", "[[:poll]]"),
        o(7, 0, "ok", "poll", "[[:poll {:y [[2 :b] [3 :c] [4 :d]]}]]"),
    ]
    found = cases(check_ops(tmp_path, *history), "int-nonmonotonic-send")
    assert [
        (c["partition"], c["prior_value"], c["value"], c["prior_offset"], c["offset"])
        for c in found
    ] == [
        (":x", k("c"), k("a"), 3, 1),
        (":y", k("d"), k("b"), 4, 2),
    ]
