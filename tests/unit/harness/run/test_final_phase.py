"""The final phase: the topic is whole when the controller's committed state says so
(not a possibly stale broker); each final read runs until it comes back ok, a failed try
recorded and retried after a pause (not in a hot loop); one that never succeeds is
missing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import harness.run.final_phase as final_phase
from harness.run.final_phase import final_reads, wait_healthy
from harness.run.runner import Recorder
from history.writer import HistoryWriter
from nemesis.cluster import PartitionState
from tests.support.fake_cluster import FakeCluster
from workloads.core import OpDict


class Refusing:
    """A client whose reads fail `refusals` times, then succeed."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.failure: str | None = None

    def invoke(self, op: OpDict) -> OpDict:
        if self.refusals > 0:
            self.refusals -= 1
            return {"type": "fail", "error": "OFFSET_NOT_AVAILABLE"}
        return {"type": "ok", "value": []}

    def close(self) -> None:
        pass


def test_a_refused_read_is_retried_after_a_pause_until_ok(tmp_path: Path) -> None:
    client = Refusing(refusals=3)
    with HistoryWriter(tmp_path / "h.jsonl") as writer:
        started = time.monotonic()
        done = final_reads(
            [{"f": "drain", "key": 0, "value": None}],
            lambda _: client,
            Recorder(writer),
            lambda: False,
        )
        took = time.monotonic() - started
    events = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert done == {"read": 1, "missing": []}
    assert [e["type"] for e in events[1::2]] == ["fail", "fail", "fail", "ok"]
    assert took >= 3 * final_phase.RETRY_PAUSE_S


def test_a_read_that_never_succeeds_is_missing(tmp_path: Path) -> None:
    with HistoryWriter(tmp_path / "h.jsonl") as writer:
        done = final_reads(
            [{"f": "drain", "key": 5, "value": None}],
            lambda _: Refusing(refusals=10**6),
            Recorder(writer),
            lambda: False,
            timeout=1.0,
        )
    assert done == {"read": 0, "missing": [5]}
    tries = (tmp_path / "h.jsonl").read_text().count('"fail"')
    assert 1 <= tries <= 1.0 / final_phase.RETRY_PAUSE_S + 1


class DeadServer:
    """A client whose reads through n1 always fail (that server never came back)."""

    failure: str | None = None

    def invoke(self, op: OpDict) -> OpDict:
        if op.get("node") == "n1":
            return {"type": "fail", "error": "TimeoutError: no answer"}
        return {"type": "ok", "value": []}

    def close(self) -> None:
        pass


def test_a_read_that_keeps_failing_waits_behind_the_others(tmp_path: Path) -> None:
    reads: list[OpDict] = [
        {"f": "drain", "key": 0, "value": None, "node": f"n{i}"} for i in (1, 2, 3)
    ]
    with HistoryWriter(tmp_path / "h.jsonl") as writer:
        done = final_reads(reads, lambda _: DeadServer(), Recorder(writer), lambda: False, 1.0)
    assert done == {"read": 2, "missing": [0]}
    events = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert [(e["node"], e["type"]) for e in events[1:6:2]] == [
        ("n1", "fail"),
        ("n2", "ok"),
        ("n3", "ok"),
    ]


class StaleBroker(FakeCluster):
    """A broker's metadata names the full ISR; the controller's committed state does not
    (the just-healed old leader has not rejoined yet)."""

    def committed_partitions(self, topic: str) -> list[PartitionState]:
        return [PartitionState(0, 2, (1, 2, 3), (2, 3))]


def test_the_topic_is_whole_only_when_the_committed_state_says_so() -> None:
    waited = wait_healthy(StaleBroker(), "t", lambda: False, timeout=1.0)
    assert waited["healthy"] is False
    assert waited["partitions"] == [{"partition": 0, "leader": 2, "isr": [2, 3]}]
    assert wait_healthy(FakeCluster(), "t", lambda: False, timeout=1.0)["healthy"] is True
