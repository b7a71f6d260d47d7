"""Recovery time per fault on constructed histories: a known fault window, known leader
samples and known first ok ops give the times worked out by hand; an op in flight when
the fault began, a partition the fault did not take, and a fault never recovered from;
and how the report, the terminal and the rate plot say it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from checkers import perf
from checkers.recovery import (
    leader_samples,
    op_spans,
    queue_partitions,
    recovery_times,
    taken,
)
from harness.report.page import write_report
from harness.report.plots.images import RATE_FILE
from harness.report.plots.perf import rate_plot
from harness.report.recovery_section import recovery_lines
from harness.run.verdict import summary_lines

S = 1_000_000_000  # ns per second
PAUSE = {
    "fault": "pause-leader",
    "start": 10.0,
    "stop": 20.0,
    "detail": {
        "paused": "n2",
        "partition": 0,
        "before": {"0": {"leader": "n2", "isr": ["n1", "n2"]}, "1": {"leader": "n1"}},
    },
}


def op(process: int, invoked: float, completed: float, kind: str, **fields: Any) -> list[Any]:
    invoke = {"process": process, "type": "invoke", "time": int(invoked * S)}
    invoke |= {k: v for k, v in fields.items() if k != "value"}
    done = {"process": process, "type": kind, "time": int(completed * S)} | fields
    return [invoke, done]


def events() -> list[dict[str, Any]]:
    ops = [
        op(0, 9.5, 10.5, "ok", f="send", key=0, value=[3, 1]),  # in flight at the fault
        op(1, 11.0, 15.0, "fail", f="send", key=0, value=2),
        op(2, 12.0, 16.0, "info", f="send", key=0, value=3),
        op(3, 12.5, 12.6, "ok", f="send", key=1, value=[0, 4]),  # partition 1: not taken
        op(1, 17.0, 17.5, "ok", f="poll", value={"0": [[3, 1]], "1": []}),
        op(7, 18.0, 18.2, "ok", f="send", key=0, value=[4, 5]),  # process 2's successor
        op(1, 20.5, 20.7, "ok", f="send", key=0, value=[5, 6]),
    ]
    flat = sorted((e for pair in ops for e in pair), key=lambda e: e["time"])
    return [e | {"index": i} for i, e in enumerate(flat)]


def samples() -> list[dict[str, Any]]:
    def at(t: float, leader: str | None) -> dict[str, Any]:
        return {"time": int(t * S), "partitions": {"0": {"leader": leader}, "1": {"leader": "n1"}}}

    unreadable = {"time": 14 * S, "partitions": {"error": "x"}}
    return [at(9.0, "n2"), at(13.0, "n2"), unreadable, at(17.0, "n3"), at(21.0, "n3")]


def test_times_from_the_fault_to_a_new_leader_a_first_ok_op_and_after_the_heal() -> None:
    spans = op_spans(events(), queue_partitions)
    found = recovery_times([PAUSE], spans, leader_samples(samples()))
    (row,) = found["partitions"]
    assert (row["node"], row["partition"], row["new_leader"]) == ("n2", 0, "n3")
    assert row["new_leader_s"] == 7.0
    # The send in flight at 10.5 s does not count: the first ok op invoked after is the poll.
    assert row["first_ok_s"] == 7.5
    assert row["in_fault_s"] == 7.5
    assert row["first_ok_by_client"] == {"1": 7.5, "7": 8.2}
    assert row["after_heal_s"] == 0.7
    assert (row["failed"], row["timed_out"]) == (1, 1)
    assert found["summary"]["pause-leader"]["first_ok_s"] == {
        "median": 7.5,
        "worst": 7.5,
        "never": 0,
    }


def test_a_fault_never_recovered_from_says_so() -> None:
    unhealed = PAUSE | {"stop": None}
    spans = op_spans(events()[:6], queue_partitions)  # nothing after the failures
    (row,) = recovery_times([unhealed], spans, [])["partitions"]
    assert row["new_leader_s"] is None and row["first_ok_s"] is None
    assert row["after_heal_s"] is None


def test_an_op_invoked_in_the_fault_that_completes_after_the_heal_did_not_serve_in_it() -> None:
    # The shape of a leader partition seen on 3.9.1: every op waits out the fault.
    waited = [
        op(1, 11.0, 20.9, "ok", f="send", key=0, value=[3, 1]),  # back 0.9 s after the heal
        op(2, 21.0, 21.1, "ok", f="send", key=0, value=[4, 2]),
    ]
    flat = sorted((e for pair in waited for e in pair), key=lambda e: e["time"])
    spans = op_spans([e | {"index": i} for i, e in enumerate(flat)], queue_partitions)
    found = recovery_times([PAUSE], spans, [])
    (row,) = found["partitions"]
    assert (row["first_ok_s"], row["in_fault_s"], row["after_heal_s"]) == (10.9, None, 1.1)
    assert found["summary"]["pause-leader"]["in_fault_s"]["never"] == 1


def test_a_fault_of_no_one_broker_takes_every_partition() -> None:
    halves = {
        "fault": "partition-random-halves",
        "start": 1.0,
        "stop": 2.0,
        "detail": PAUSE["detail"] | {"paused": None},
    }
    assert taken(halves) == (None, [0, 1])
    assert taken(PAUSE) == ("n2", [0])


def test_a_transaction_uses_the_partitions_it_sent_to_and_read_from() -> None:
    invoke = {"f": "txn", "value": [["send", 2, 7], ["poll"]]}
    done = {"f": "txn", "value": [["send", 2, [0, 7]], ["poll", {"5": [[1, 9]], "6": []}]]}
    assert queue_partitions(invoke, done) == {2, 5}
    assert queue_partitions({"f": "drain", "key": 3}, {"f": "drain", "value": []}) == {3}


def test_times_count_from_when_the_fault_was_in_place_not_from_its_invoke() -> None:
    # The cut took a second to install: the times are the same as with start at 10 s.
    late = PAUSE | {"start": 9.0, "in_force": 10.0}
    spans = op_spans(events(), queue_partitions)
    (row,) = recovery_times([late], spans, leader_samples(samples()))["partitions"]
    assert (row["start"], row["new_leader_s"], row["first_ok_s"]) == (10.0, 7.0, 7.5)


def test_the_report_the_terminal_and_the_rate_plot_show_each_faults_recovery(
    tmp_path: Path,
) -> None:
    found = recovery_times([PAUSE], op_spans(events(), queue_partitions), leader_samples(samples()))
    said = (
        "pause-leader, 1 partitions taken: new leader 7 s (worst 7 s); first ok op 7.5 s "
        "(worst 7.5 s); served in the fault 7.5 s (worst 7.5 s); after the heal 0.7 s "
        "(worst 0.7 s)"
    )
    assert recovery_lines(found) == [said]
    results = {"valid": True, "recovery": found}
    text = html.unescape(write_report(tmp_path, {}, results, {}).read_text())
    assert "<h2>Recovery</h2>" in text and said in text and "1: 7.5 s, 7: 8.2 s" in text
    assert f"  recovery, {said}" in summary_lines(results, tmp_path / "report.html")
    plotted = rate_plot(perf.samples(events()), [PAUSE], tmp_path / RATE_FILE, found["partitions"])
    assert plotted.stat().st_size > 0
