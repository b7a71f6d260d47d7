"""The nemesis story of report.html: a row per op from its invoke, a row per recorded step,
faults in words, errors in their own column, truncation lines kept and parsed."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from harness.report.nemesis_story import (
    estimated_invokes,
    invoke_times,
    story,
    truncation_words,
)
from harness.report.nemesis_table import story_table, time_zero

CONFLICT = (
    "409 Client Error for http+docker://localhost/v1.41/containers/6316/exec: Conflict "
    '("Container 6316 is not running")'
)
TRUNCATING = (
    "[2026-11-25 16:47:13,768] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] "
    "Truncating partition store-4-6 with TruncationState(offset=56, completed=true) due to ..."
)
KRAFT_TRUNCATING = (
    "[2026-11-25 16:50:27,646] WARN [UnifiedLog partition=store-1-1, dir=/var/lib/kafka/data] "
    "Truncating store-1-1 to offset 56 below high watermark 62 (org.apache.kafka...)"
)


def test_rows_start_at_the_invoke_and_say_what_happened() -> None:
    ops = [
        {
            "time": 10.3,
            "f": "start-partition-leader",
            "value": {
                "isolated": "n1",
                "partition": 0,
                "grudge": {"n1": ["n2", "n3", "zk1"], "n2": ["n1"]},
                "verified": {"cut": True, "leaks": []},
                "before": {"0": {"leader": "n1", "isr": ["n1", "n2", "n3"]}},
                "after": {"0": {"leader": "n2", "isr": ["n2", "n3"]}},
            },
            "error": None,
        },
        {
            "time": 20.4,
            "f": "stop-partition-leader",
            "value": {"healed": ["n1"], "unreachable": {"n1": CONFLICT}},
            "error": None,
        },
        {
            "time": 30.0,
            "f": "start-kill-leader",
            "value": {"skipped": "no leader known"},
            "error": None,
        },
    ]
    rows = story(ops, [10.0, 20.0, 29.0])
    assert [(r.start, r.stop) for r in rows] == [(10.0, 10.3), (20.0, 20.4), (29.0, 30.0)]
    assert rows[0].words == (
        "n1 (leader of partition 0) cut off from n2, n3 and zk1; when it returned: partition 0 "
        "led by n2, ISR [n2, n3]"
    )
    assert rows[1].words == "partition-leader: network healed"
    assert (
        rows[1].error == "n1: Docker 409: the container is not running (its rules were not flushed)"
    )
    assert rows[2].words == "kill-leader skipped: no leader known"


def test_what_the_next_op_found_is_told_where_it_changed_since_the_op_returned() -> None:
    state = {"0": {"leader": "n1", "isr": ["n1", "n2", "n3"]}}
    elected = {"0": {"leader": "n2", "isr": ["n2", "n3"]}}
    ops = [
        {
            "time": 10.2,
            "f": "start-kill-leader",
            "value": {"killed": "n1", "partition": 0, "before": state, "after": state},
        },
        {
            "time": 21.1,
            "f": "stop-kill-leader",
            "value": {"restored": ["n1"], "before": elected, "after": elected},
        },
    ]
    first, second = story(ops, [10.0, 20.0])
    assert first.words == (
        "n1 (leader of partition 0) killed (SIGKILL); leaders and ISRs unchanged when it "
        "returned; by 20.0 s: partition 0 led by n2, ISR [n2, n3]"
    )
    assert second.words == "n1 started again; leaders and ISRs unchanged when it returned"


def test_a_fault_with_steps_gets_a_row_per_step_with_its_truncation_lines() -> None:
    value = {
        "leader": "n1",
        "partitions": [6],
        "steps": [
            {
                "step": "healed",
                "after_s": 0.4,
                "unreachable": {"n1": CONFLICT},
                "revived": {"n1": "exited"},
            },
            {"step": "rejoined", "after_s": 3.5, "node": "n1", "truncation": [TRUNCATING]},
        ],
    }
    rows = story([{"time": 53.6, "f": "stop-isr-shrink", "value": value, "error": None}], [50.0])
    assert [r.start for r in rows] == [50.0, 50.4, 53.5]
    assert rows[1].words == "network healed, n1 (exited) started again"
    assert rows[1].error.startswith("n1: Docker 409")
    assert rows[2].words == "n1 back in the ISR; truncated partition 6 to offset 56"
    assert rows[2].log_lines == (TRUNCATING,)


def test_truncation_lines_of_both_releases_are_read() -> None:
    assert truncation_words([TRUNCATING, KRAFT_TRUNCATING]) == (
        "truncated partition 6 to offset 56 and 1 to 56"
    )
    assert truncation_words(["nothing here"]) == ""


def test_invoke_times_pair_with_results_ops_and_can_be_estimated() -> None:
    events = [
        {"process": "nemesis", "type": "invoke", "f": "start-kill-leader", "time": 10_000_000_000},
        {"process": 1, "type": "invoke", "f": "get", "time": 10_100_000_000},
        {"process": "nemesis", "type": "info", "f": "start-kill-leader", "time": 10_300_000_000},
    ]
    assert invoke_times(events) == [10.0]
    detail = {"killed": "n1", "partition": 0}
    section = {
        "windows": [{"fault": "kill-leader", "start": 10.0, "stop": 21.0, "detail": detail}],
        "ops": [
            {"time": 10.3, "f": "start-kill-leader", "value": detail},
            {"time": 21.0, "f": "stop-kill-leader", "value": {"restored": ["n1"]}},
        ],
    }
    assert estimated_invokes(section) == [10.0, 21.0]


def test_the_table_marks_log_lines_keeps_the_json_and_shows_wall_time_when_known() -> None:
    value = {
        "steps": [{"step": "rejoined", "after_s": 1.0, "node": "n1", "truncation": [TRUNCATING]}]
    }
    section = {"ops": [{"time": 2.0, "f": "stop-isr-shrink", "value": value}], "windows": []}
    t0 = time_zero({"t0": "2026-11-26T00:10:03.123Z"})
    assert t0 == datetime(2026, 11, 26, 0, 10, 3, 123000, tzinfo=UTC)
    page = story_table(section, [0.5], t0)
    assert "<mark>" in page and "<details>" in page and "wall (UTC)" in page
    assert "00:10:04.6" in page  # t0 + 1.5 s, the step
    assert "wall" not in story_table(section, [0.5], None)
    assert time_zero({}) is None and time_zero({"t0": "not a time"}) is None


def test_a_group_fault_names_the_group_its_target_coordinated() -> None:
    ops = [
        {
            "time": 10.2,
            "f": "start-kill-coordinator",
            "value": {"killed": "n3", "partition": None, "coordinates": "queue-1-group"},
            "error": None,
        },
        {
            "time": 30.1,
            "f": "start-partition-coordinator",
            "value": {"isolated": "n1", "coordinates": "t-share", "grudge": {"n1": ["n2"]}},
            "error": None,
        },
    ]
    rows = story(ops, [10.0, 30.0])
    assert rows[0].words == "n3 (coordinator of group queue-1-group) killed (SIGKILL)"
    assert rows[1].words == "n1 (coordinator of group t-share) cut off from n2"


def test_a_power_cut_says_who_lost_power_and_what_each_lost() -> None:
    lost = {"files": 5, "unsynced_bytes": 3487, "largest": [], "seconds": 0.8}
    ops = [
        {
            "time": 10.9,
            "f": "start-power-loss-leader-and-followers",
            "value": {
                "powered-off": ["n2", "n1", "n3"],
                "partition": 0,
                "lost": {"n2": lost, "n1": lost, "n3": {"error": "SIGPWR: timed out"}},
            },
            "error": None,
        },
        {
            "time": 20.5,
            "f": "stop-power-loss-leader-and-followers",
            "value": {"powered-on": ["n2", "n1", "n3"], "revived": {}},
            "error": None,
        },
    ]
    rows = story(ops, [10.0, 20.0])
    assert rows[0].words == (
        "n2, n1 and n3 (replicas of partition 0) lost power; unsynced writes lost: "
        "n2 3487 B in 5 files, n1 3487 B in 5 files, n3 uncounted"
    )
    assert rows[1].words == "n2, n1 and n3 powered on"


def test_an_expected_docker_409_is_a_note_and_another_error_is_red() -> None:
    healed = {"healed": ["n1"], "unreachable": {"n1": CONFLICT}}
    broken = {"healed": [], "unreachable": {"n1": "connection refused", "n2": CONFLICT}}
    ops = [
        {"time": 20.4, "f": "stop-partition-leader", "value": healed, "error": None},
        {"time": 30.4, "f": "stop-partition-leader", "value": broken, "error": None},
    ]
    table = story_table({"ops": ops}, [20.0, 30.0], None)
    cells = re.findall(r'<td class="(note|fail)">([^<]*)</td>', table)
    assert cells[0] == (
        "note",
        "n1: Docker 409: the container is not running (its rules were not flushed)",
    )
    assert cells[1][0] == "fail" and "connection refused" in cells[1][1]
