"""Jepsen's Kafka tests of transactions (jepsen-io/jepsen,
jepsen/test/jepsen/tests/kafka_test.clj: g1a-test, int-send-skip-test, g0-test,
g1c-pure-wr-test, g1c-ww-wr-test, precommitted-read-test, empty-history-test), each
history written as the test writes it and checked as `harness check` checks a Jepsen
history.edn, with the test's assertion in our terms.

A cycle's case lists its transactions by their invoke's index, from the lowest (Jepsen's
names the completion ops, from where the search closed it); the differences on purpose
are in docs/CHECKERS.md, "Jepsen's kafka_test.clj, test by test".
"""

from __future__ import annotations

from pathlib import Path

from tests.support.jepsen_kafka import cases, check_ops, found, k, o


def test_g1a(tmp_path: Path) -> None:
    outcome = check_ops(
        tmp_path,
        o(0, 0, "invoke", "send", "[[:send :x 2] [:send :y 3]]"),
        o(1, 0, "fail", "send", "[[:send :x 2] [:send :y 3]]"),
        o(2, 1, "invoke", "poll", "[[:poll]]"),
        o(3, 1, "ok", "poll", "[[:poll {:x [[0 2]]}]]"),
    )
    [case] = cases(outcome, "G1a")
    assert (case["index"], case["writer"], case["partition"], case["value"]) == (2, 0, ":x", 2)
    assert outcome["valid"] is False


def test_int_send_skip(tmp_path: Path) -> None:
    outcome = check_ops(
        tmp_path,
        o(0, 0, "invoke", "send", "[[:send :x :a] [:send :x :c]]"),
        o(1, 0, "ok", "send", "[[:send :x [1 :a]] [:send :x :c]]"),
        o(2, 1, "invoke", "send", "[[:send :x :b]]"),
        o(3, 1, "info", "send", "[[:send :x :b]]"),
        o(4, 2, "invoke", "poll", "[[:poll]]"),
        o(5, 2, "ok", "poll", "[[:poll {:x [[2 :b] [3 :c]]}]]"),
    )
    [case] = cases(outcome, "int-send-skip")
    assert (case["index"], case["values"], case["offsets"]) == (0, [k("a"), k("c")], [1, 3])
    assert [s["value"] for s in case["skipped"]] == [k("b")]
    # Jepsen's checker allows it (allowed-error-types), as ours does.
    assert outcome["kinds"]["int-send-skip"]["invalidating"] is False


G0 = [
    o(0, 0, "invoke", "send", "[[:send :x :a] [:send :y :a]]"),
    o(1, 1, "invoke", "send", "[[:send :x :b] [:send :y :b]]"),
    o(2, 0, "ok", "send", "[[:send :x [0 :a]] [:send :y [1 :a]]]"),
    o(3, 1, "ok", "send", "[[:send :x [1 :b]] [:send :y [0 :b]]]"),
]


def _steps(case: dict[str, object]) -> list[tuple[object, ...]]:
    steps = case["steps"]
    assert isinstance(steps, list)
    return [(s["from"], s["to"], s["type"], s["partition"]) for s in steps]


def test_g0(tmp_path: Path) -> None:
    outcome = check_ops(tmp_path, *G0, ww_deps=True)
    [cycle] = cases(outcome, "G0")
    assert _steps(cycle) == [(0, 1, "ww", ":x"), (1, 0, "ww", ":y")]
    assert outcome["kinds"]["G0"]["invalidating"] is False  # allowed, as Jepsen's checker


def test_g0_is_found_without_ww_deps_too(tmp_path: Path) -> None:
    # Ours reports G0 (allowed) whatever --ww-deps says; Jepsen draws ww edges only with
    # :ww-deps. Nothing polled the four messages: Jepsen's analysis says :unseen too.
    assert found(check_ops(tmp_path, *G0)) == {"G0": 1, "unseen": 4}


G1C_PURE_WR = [
    o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
    o(1, 1, "invoke", "txn", "[[:send :y :b] [:poll]]"),
    o(2, 0, "ok", "txn", "[[:send :x [0 :a]] [:poll {:y [[0 :b]]}]]"),
    o(3, 1, "ok", "txn", "[[:send :y [0 :b]] [:poll {:x [[0 :a]]}]]"),
]


def test_g1c_pure_wr(tmp_path: Path) -> None:
    outcome = check_ops(tmp_path, *G1C_PURE_WR)
    [cycle] = cases(outcome, "G1c")
    assert _steps(cycle) == [(0, 1, "wr", ":x"), (1, 0, "wr", ":y")]
    assert outcome["valid"] is False
    assert found(outcome) == {"G1c": 1}  # its -process and -realtime variants are implied


G1C_WW_WR = [
    o(0, 0, "invoke", "txn", "[[:send :x :a] [:send :y :c]]"),
    o(1, 1, "invoke", "txn", "[[:poll] [:send :y :b]]"),
    o(2, 0, "ok", "txn", "[[:send :x [0 :a]] [:send :y [2 :c]]]"),
    o(3, 1, "ok", "txn", "[[:poll {:x [[0 :a]]}] [:send :y [1 :b]]]"),
]


def test_g1c_ww_wr_with_ww_deps(tmp_path: Path) -> None:
    outcome = check_ops(tmp_path, *G1C_WW_WR, ww_deps=True)
    [cycle] = cases(outcome, "G1c")
    assert _steps(cycle) == [(0, 1, "wr", ":x"), (1, 0, "ww", ":y")]
    # With ww edges, Kafka's lack of write isolation makes such a G1c normal: Jepsen's
    # checker allows it under :ww-deps (allowed-error-types), and so does ours.
    assert outcome["kinds"]["G1c"]["invalidating"] is False
    assert outcome["kinds"]["G1c"]["wr_only"] == 0
    # b and c were never polled: unseen, which Jepsen's checker counts too.
    assert found(outcome) == {"G1c": 1, "unseen": 2}


def test_g1c_of_reads_alone_still_counts_with_ww_deps(tmp_path: Path) -> None:
    # A deliberate difference: Jepsen allows every G1c under :ww-deps; ours only those
    # that need a ww edge, so --ww-deps never turns an invalid history valid.
    outcome = check_ops(tmp_path, *G1C_PURE_WR, ww_deps=True)
    assert _steps(cases(outcome, "G1c")[0]) == [(0, 1, "wr", ":x"), (1, 0, "wr", ":y")]
    assert outcome["kinds"]["G1c"]["wr_only"] == 1
    assert outcome["kinds"]["G1c"]["invalidating"] is True
    assert outcome["valid"] is False


def test_g1c_ww_wr_is_no_g1c_without_ww_deps(tmp_path: Path) -> None:
    # b and c were never polled: Jepsen's analysis says :unseen too.
    assert found(check_ops(tmp_path, *G1C_WW_WR)) == {"unseen": 2}


def test_precommitted_read(tmp_path: Path) -> None:
    outcome = check_ops(
        tmp_path,
        o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
        o(1, 0, "ok", "txn", "[[:send :x [0 :a]] [:poll {:x [[0 :a]]}]]"),
    )
    [case] = cases(outcome, "precommitted-read")
    assert (case["index"], case["partition"], case["value"]) == (0, ":x", k("a"))


def test_empty_history(tmp_path: Path) -> None:
    # Jepsen's checker calls it invalid (Elle's empty-transaction-graph is an anomaly it
    # does not allow); ours says it cannot tell: nothing was written or read.
    outcome = check_ops(
        tmp_path, o(0, 0, "invoke", "assign", "[:x]"), o(1, 0, "ok", "assign", "[:x]")
    )
    assert outcome["valid"] == "unknown"
    assert any("empty-transaction-graph" in reason for reason in outcome["unknown"])
