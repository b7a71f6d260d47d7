"""The recount from the brokers' disks: reading the segment files a node prints, counting lost and
overwritten sends against the leader's log, and comparing with the lost-acks checker,
also on a real recorded history."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from checkers.queue.checker import check as check_queue
from harness.report.summary_table import recount_line
from harness.run.recount import (
    DATA_DIR,
    acked_sends,
    compare_with_checker,
    parse_segments,
    read_replicas,
    recount,
    segments_command,
    segments_listing,
    write_recount,
)
from history import load
from tests.support import DATA
from tests.support.fake_cluster import FakeCluster
from tests.support.segment_bytes import batch

RECORDED = DATA / "queue_isr_unsafe.jsonl"


def segments_output(files: dict[str, bytes]) -> str:
    """Returns what segments_command prints for these segment files."""
    return "".join(f"{path}\n{base64.b64encode(data).decode()}\n" for path, data in files.items())


def test_records_are_read_per_partition_across_segments_and_other_topics_ignored() -> None:
    d = "/var/lib/kafka/data"
    text = segments_output(
        {
            f"{d}/store-1-0/00000000000000000000.log": batch(0, [b"5", b"7"]),
            f"{d}/store-1-1/00000000000000000002.log": batch(2, [b"9"]),
            f"{d}/store-1-1/00000000000000000000.log": batch(0, [b"6", None]),
            f"{d}/store-1-1-0/00000000000000000000.log": batch(0, [b"66"]),
            f"{d}/store-10-0/00000000000000000000.log": batch(0, [b"99"]),
        }
    )
    partitions, problems = parse_segments(text, "store-1")
    assert partitions == {0: {0: "5", 1: "7"}, 1: {0: "6", 1: "", 2: "9"}}
    assert problems == []
    assert parse_segments("", "store-1") == ({}, [])


def test_a_segment_that_cannot_be_read_is_a_problem_named_by_its_file() -> None:
    text = segments_output(
        {"/d/store-1-0/00000000000000000000.log": batch(0, [b"5"], attributes=2)}
    )
    partitions, problems = parse_segments(text, "store-1")
    assert partitions == {0: {}}
    assert problems == [
        "store-1-0/00000000000000000000.log: batch at offset 0 is compressed (codec 2)"
    ]


def test_the_command_prints_only_the_topics_segment_files() -> None:
    [shell, flag, script] = segments_command("store-7")
    assert (shell, flag) == ("sh", "-c")
    assert "/var/lib/kafka/data/store-7-*/*.log" in script and "base64 -w0" in script


def on_disk(replicas: dict[str, dict[int, dict[int, str]]], leaders: dict[int, str | None]) -> Any:
    return {"leaders": leaders, "replicas": replicas, "errors": {}}


def test_lost_overwritten_and_diverging_replicas_are_counted_against_the_leader() -> None:
    sends = [(0, 0, 1), (0, 1, 2), (0, 2, 3), (1, 0, 4)]
    leader_log = {0: "1", 1: "5"}  # 2 was truncated and offset 1 written over; 3 is gone
    # n2 still holds 2 at offset 1, where the leader now holds 5.
    n2 = {0: {0: "1", 1: "2"}}
    disk = on_disk({"n1": {0: leader_log, 1: {0: "4"}}, "n2": n2}, {0: "n1", 1: "n1"})
    counted = recount(sends, disk)
    assert counted["partitions"]["0"]["lost"] == [2, 3]
    assert counted["partitions"]["0"]["overwritten"] == 1
    assert counted["partitions"]["1"]["lost"] == []
    assert (counted["acknowledged"], counted["lost"], counted["overwritten"]) == (4, 2, 1)
    assert counted["partitions"]["0"]["replicas_agree"] is False
    assert counted["replicas_agree"] is False and counted["complete"] is True


def test_a_follower_a_fetch_behind_agrees_one_holding_other_records_does_not() -> None:
    leader = {0: "1", 1: "2", 2: "3"}
    behind = on_disk({"n1": {0: leader}, "n2": {0: {0: "1", 1: "2"}}}, {0: "n1"})
    assert recount([(0, 0, 1)], behind)["replicas_agree"] is True
    ahead = on_disk({"n1": {0: leader}, "n2": {0: leader | {3: "4"}}}, {0: "n1"})
    assert recount([(0, 0, 1)], ahead)["replicas_agree"] is False
    other = on_disk({"n1": {0: leader}, "n2": {0: {0: "1", 1: "9"}}}, {0: "n1"})
    counted = recount([(0, 0, 1)], other)
    assert counted["replicas_agree"] is False
    assert "a replica holds records the leader does not" in recount_line(counted)


def test_an_unreadable_leader_makes_the_recount_incomplete_not_lossless() -> None:
    disk = on_disk({"n2": {0: {0: "1"}}}, {0: "n1"}) | {"errors": {"n1": "exited 137"}}
    counted = recount([(0, 0, 1)], disk)
    assert counted["complete"] is False
    assert "lost" not in counted["partitions"]["0"]
    assert counted["partitions"]["0"]["replicas_agree"] is None
    checked = compare_with_checker(counted, {"lost_count": 0, "by_key": []})
    assert checked["agrees"] is False
    assert "incomplete" in recount_line(checked)
    leaderless = recount([(0, 0, 1)], on_disk({"n1": {0: {0: "1"}}}, {0: None}))
    assert leaderless["complete"] is False
    assert leaderless["partitions"]["0"]["error"] == "the partition had no leader after healing"


def test_the_comparison_is_by_lost_sets_not_counts() -> None:
    disk = on_disk({"n1": {0: {0: "1"}, 1: {}}}, {0: "n1", 1: "n1"})
    counted = recount([(0, 0, 1), (0, 1, 2), (1, 0, 3)], disk)  # lost: 2 on 0, 3 on 1
    same = {"lost_count": 2, "by_key": [{"key": 0, "lost": [2]}, {"key": 1, "lost": [3]}]}
    swapped = {"lost_count": 2, "by_key": [{"key": 0, "lost": [3]}, {"key": 1, "lost": [2]}]}
    assert compare_with_checker(counted, same)["agrees"] is True
    differs = compare_with_checker(counted, swapped)
    assert differs["agrees"] is False and differs["partitions_that_differ"] == ["0", "1"]
    assert "DISAGREE" in recount_line(differs)


@given(
    st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=40),
    st.sampled_from(["n1", "n2"]),
)
def test_lost_is_exactly_the_acknowledged_sends_the_leader_does_not_hold(
    sends: list[tuple[int, bool]], leader: str
) -> None:
    acked: list[tuple[int, int, int]] = []
    logs: dict[int, dict[int, str]] = {p: {} for p in range(4)}
    offsets = dict.fromkeys(range(4), 0)
    expected: set[int] = set()
    for message, (partition, kept) in enumerate(sends, start=1):
        acked.append((partition, offsets[partition], message))
        if kept:
            logs[partition][offsets[partition]] = str(message)
        else:
            expected.add(message)
        offsets[partition] += 1
    counted = recount(acked, on_disk({leader: logs}, dict.fromkeys(range(4), leader)))
    lost = {m for e in counted["partitions"].values() for m in e["lost"]}
    assert lost == expected and counted["overwritten"] == 0


def test_a_recorded_run_recounted_from_its_drain_agrees_with_the_checker(tmp_path: Path) -> None:
    """The real isr-shrink history: a disk holding exactly what the final drain read must
    give the checker's lost sets, send by send (845 acknowledged, 21 lost)."""
    lines = RECORDED.read_text().splitlines()
    drained: dict[int, dict[int, str]] = {}
    for line in lines:
        event = json.loads(line)
        if event.get("f") == "drain" and event.get("type") == "ok":
            drained[event["key"]] = {o: str(m) for o, m in event["value"]}
    (tmp_path / "history.jsonl").write_text(RECORDED.read_text())
    lost_acks = check_queue(load(RECORDED).events)["lost_acks"]
    counted = write_recount(
        tmp_path, on_disk({"n1": drained}, dict.fromkeys(drained, "n1")), lost_acks
    )
    assert (counted["acknowledged"], counted["lost"], counted["checker_lost"]) == (845, 21, 21)
    assert counted["agrees"] is True
    assert json.loads((tmp_path / "recount.json").read_text())["lost"] == 21
    assert sum(1 for _ in acked_sends(lines)) == 845


def test_a_committed_transactions_sends_are_acknowledged_sends() -> None:
    lines = [
        '{"index": 0, "process": 0, "type": "invoke", "f": "txn", "value": [["send", 1, 5]]}',
        '{"index": 1, "process": 0, "type": "ok", "f": "txn", "value": [["send", 1, [3, 5]],'
        ' ["poll", {"0": [[0, 2]]}], ["send", 0, [4, 6]]]}',
        '{"index": 2, "process": 1, "type": "fail", "f": "txn", "value": [["send", 2, 7]]}',
    ]
    assert list(acked_sends(lines)) == [(1, 3, 5), (0, 4, 6)]


class StoppedN2(FakeCluster):
    """n2 refused to start: exec on it fails as Docker's does (409), its disk is read
    through the archive API instead."""

    def __init__(self, tree: dict[str, bytes]) -> None:
        super().__init__()
        self.tree = tree

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        if node == "n2":
            raise RuntimeError("409 Client Error: Conflict (container is not running)")
        return 0, segments_output(
            {f"{DATA_DIR}/store-1-0/00000000000000000000.log": batch(0, [b"5"])}
        )

    def read_tree(self, node: str, path: str) -> dict[str, bytes]:
        assert node == "n2" and path == DATA_DIR
        return self.tree


def test_a_broker_that_refused_to_start_is_read_from_its_disk_through_the_archive() -> None:
    tree = {
        "data/store-1-0/00000000000000000000.log": batch(0, [b"5", b"6"]),
        "data/store-1-0/00000000000000000000.index": b"\0" * 8,
        "data/store-10-0/00000000000000000000.log": batch(0, [b"99"]),
        "data/recovery-point-offset-checkpoint": b"0\n",
    }
    assert parse_segments(segments_listing(tree, "store-1"), "store-1") == (
        {0: {0: "5", 1: "6"}},
        [],
    )
    on_disk = read_replicas(StoppedN2(tree), "store-1")
    assert on_disk["errors"] == {}
    assert on_disk["replicas"]["n2"] == {0: {0: "5", 1: "6"}}
    assert on_disk["replicas"]["n1"] == {0: {0: "5"}}
    assert on_disk["in_sync"] == {0: ["n1", "n2", "n3"]}


def test_a_broker_whose_disk_cannot_be_read_either_is_named_and_the_others_still_count() -> None:
    cluster = StoppedN2({})
    cluster.read_tree = None  # type: ignore[assignment,method-assign]
    on_disk = read_replicas(cluster, "store-1")
    assert "exec failed: 409" in on_disk["errors"]["n2"]
    assert set(on_disk["replicas"]) == {"n1", "n3"}


class EmptyAnswers(FakeCluster):
    """Every broker answers the segments command; n1 with nothing, `empties` times
    (seen once at load 50: n1 and n2 answered nothing, exit 0, though they led)."""

    def __init__(self, empties: int) -> None:
        super().__init__()
        self.empties = empties

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        if node == "n1" and self.empties > 0:
            self.empties -= 1
            return 0, ""
        return 0, segments_output(
            {f"{DATA_DIR}/store-1-0/00000000000000000000.log": batch(0, [b"5"])}
        )


def test_a_broker_that_answers_no_segment_file_is_asked_again_then_named_unread() -> None:
    once = read_replicas(EmptyAnswers(1), "store-1")
    assert once["errors"] == {} and once["replicas"]["n1"] == {0: {0: "5"}}
    twice = read_replicas(EmptyAnswers(2), "store-1")
    assert twice["errors"] == {"n1": "no segment file read for partitions [0], asked twice"}
    assert set(twice["replicas"]) == {"n2", "n3"}
