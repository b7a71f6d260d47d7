"""The queue workload in a consumer group, with no cluster: commit ops in the generator,
each protocol's settings, the group log's completion fields, crashes between ops, and
the run's `groups` section beside a queue section that never sees the commits."""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, TopicPartition

from checkers.registry import CheckOptions
from harness.cli import main
from harness.run.verdict import check_run
from history import load
from kvstore import DEFAULT_TIMEOUTS
from tests.support.group_sim import GroupSimConfig, GroupSimulation
from tests.support.queue_sim import SimConfig, simulate
from workloads.group_log import GroupLog, commit_positions, commit_refused
from workloads.queue import QUEUE, queue_ops
from workloads.queue_client import CRASHED_BEFORE, QueueClient, QueueSettings, consumer_config

SETTINGS = QueueSettings(
    bootstrap="127.0.0.1:1",
    topic="t",
    partitions=2,
    acks="all",
    idempotence=False,
    consumer_group=True,
    timeouts=DEFAULT_TIMEOUTS,
)


def test_a_group_committing_by_hand_is_asked_to_commit_and_assigned_ops_are_unchanged() -> None:
    grouped = list(itertools.islice(queue_ops(random.Random(3), 4, True, commits=True), 2000))
    fs = {f: sum(op["f"] == f for op in grouped) for f in ("send", "poll", "commit", "subscribe")}
    assert 150 < fs["commit"] < 350 and fs["poll"] > fs["commit"] and fs["subscribe"] > 0
    before = list(itertools.islice(queue_ops(random.Random(3), 4, False), 500))
    assert all(op["f"] != "commit" for op in before)
    assert before == list(itertools.islice(queue_ops(random.Random(3), 4, False, False), 500))


def test_the_consumer_protocol_leaves_the_coordinators_settings_alone() -> None:
    classic = consumer_config(SETTINGS, "p0")
    assert (classic["session.timeout.ms"], classic["enable.auto.commit"]) == (6000, False)
    assert "group.protocol" not in classic
    kip848 = consumer_config(dataclasses.replace(SETTINGS, group_protocol="consumer"), "p0")
    assert kip848["group.protocol"] == "consumer"
    refused = {"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"}
    assert not refused & kip848.keys()
    auto = consumer_config(dataclasses.replace(SETTINGS, auto_commit=True), "p0")
    assert auto["enable.auto.commit"] is True
    in_txn = consumer_config(dataclasses.replace(SETTINGS, auto_commit=True, txn=True), "p0")
    assert in_txn["enable.auto.commit"] is False  # the transactions commit
    alone = consumer_config(dataclasses.replace(SETTINGS, consumer_group=False), "p0")
    assert alone["group.id"] == "t-p0" and alone["enable.auto.commit"] is False


def test_the_group_log_hands_its_callbacks_to_the_next_completion_once() -> None:
    log = GroupLog()
    log.on_assign(None, [TopicPartition("t", 1), TopicPartition("t", 0)])  # type: ignore[arg-type]
    log.on_revoke(None, [])  # type: ignore[arg-type]
    log.on_lost(None, [TopicPartition("t", 1)])  # type: ignore[arg-type]
    log.on_commit(None, [TopicPartition("t", 0, 7)])
    fields = log.take()
    assert fields["rebalanced"] == {"assigned": [1, 0], "revoked": [1]}
    assert [(e["type"], e["partitions"]) for e in fields["group-log"]] == [
        ("assigned", [0, 1]),
        ("lost", [1]),
    ]
    assert fields["auto-commits"][0]["offsets"] == {"0": 7}
    assert fields["mono-ns"] >= fields["group-log"][-1]["mono-ns"]
    assert log.take() == {}


def test_a_commit_the_coordinator_refused_is_fail_and_one_that_timed_out_is_info() -> None:
    fenced = commit_refused(KafkaError(KafkaError.ILLEGAL_GENERATION), {"0": 3})
    assert (fenced["type"], fenced["value"]) == ("fail", {"0": 3})
    timed_out = commit_refused(KafkaError(KafkaError._TIMED_OUT), {"0": 3})
    assert timed_out["type"] == "info" and timed_out["error"].startswith("indeterminate: ")


def test_a_member_that_read_nothing_commits_nothing_under_either_protocol() -> None:
    for protocol in ("classic", "consumer"):
        s = dataclasses.replace(SETTINGS, group_protocol=protocol, auto_commit=True)
        client = QueueClient(s, "p0")  # librdkafka takes on_commit and the protocol
        try:
            assert client.invoke({"f": "commit", "value": None}) == {
                "type": "ok",
                "value": {},
                "member": "p0",
            }
        finally:
            client.close()


def test_a_due_crash_comes_instead_of_the_op_and_the_client_is_to_be_replaced() -> None:
    client = QueueClient(SETTINGS, "p0", crash_every_s=1e-9)
    try:
        done = client.invoke({"f": "send", "key": 0, "value": 1})
        assert (done["type"], done["error"]) == ("fail", CRASHED_BEFORE)
        assert client.failure is not None and "crashed" in client.failure
    finally:
        client.close()


def test_a_group_run_has_a_groups_section_and_the_queue_checker_never_sees_a_commit(
    tmp_path: Path,
) -> None:
    events = GroupSimulation(random.Random(5), GroupSimConfig(partitions=3)).run()
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    sections = check_run(load(path), QUEUE, CheckOptions(consumer_group=True)).results
    assert "error" not in sections["queue"], sections["queue"]
    groups = sections["groups"]
    assert groups["valid"] is True and groups["commits"]["ok"] > 10
    assert groups["callbacks"]["assigned"] >= 3
    plain, _ = simulate(5, SimConfig(partitions=3, ops=200))
    path.write_text("".join(json.dumps(e) + "\n" for e in plain))
    assert "groups" not in check_run(load(path), QUEUE, CheckOptions()).results


def test_harness_check_reads_a_group_history_past_its_commits(tmp_path: Path) -> None:
    events = GroupSimulation(random.Random(6), GroupSimConfig(partitions=2)).run()
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert any(e["f"] == "commit" for e in events)
    for argv in (["check", str(path)], ["check", "--model", "queue", str(path)]):
        assert main(argv) in (0, 1, 2)  # a verdict, not 254 (malformed) or 255


def test_harness_check_runs_the_group_checks_and_finds_a_planted_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = GroupSimulation(random.Random(6), GroupSimConfig(partitions=2)).run()
    seed, planted = next(
        (seed, sim)
        for seed in itertools.count(1)
        if (
            sim := GroupSimulation(random.Random(seed), GroupSimConfig(plant="commit-regression"))
        ).run()
        and sim.planted
    )
    found: dict[str, Any] = {}
    for name, sim_events in (("clean", clean), ("planted", _events(seed))):
        path = tmp_path / name / "history.jsonl"
        path.parent.mkdir()
        path.write_text("".join(json.dumps(e) + "\n" for e in sim_events))
        code = main(["check", "--json", str(path)])
        found[name] = (code, json.loads(capsys.readouterr().out)["groups"])
    # (The simulator writes no drains, so the queue checker finds these runs' last sends
    # unseen whatever the group did: the groups sections are what is compared here.)
    assert planted.planted == {"commit-regression"}
    assert found["clean"][1]["valid"] is True
    assert not any(k["count"] for k in found["clean"][1]["kinds"].values())
    code, groups = found["planted"]
    assert code == 1 and groups["valid"] is False
    assert groups["kinds"]["commit-regression"]["count"] >= 1


def test_harness_check_of_a_group_history_on_stdin_judges_the_group_from_its_one_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    events = GroupSimulation(random.Random(6), GroupSimConfig(partitions=2)).run()
    text = "".join(json.dumps(e) + "\n" for e in events)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    main(["check", "--json", "--model", "queue", "-"])
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert groups["valid"] is True and groups["commits"]["ok"] > 0, groups


def _events(seed: int) -> list[dict[str, Any]]:
    """The history of the seed's simulated group with a commit regression planted."""
    return GroupSimulation(random.Random(seed), GroupSimConfig(plant="commit-regression")).run()


class _StuckConsumer:
    """A consumer holding partition 0 at offset 5 whose synchronous commit never returns,
    as librdkafka's does while the group coordinator is cut off."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def assignment(self) -> list[TopicPartition]:
        return [TopicPartition("t", 0)]

    def position(self, held: list[TopicPartition]) -> list[TopicPartition]:
        return [TopicPartition("t", 0, 5)]

    def commit(self, offsets: list[TopicPartition], asynchronous: bool) -> None:
        self.release.wait(30)


def test_a_commit_that_does_not_return_in_time_is_given_up() -> None:
    # Waited out, the commit would return and the op be ok: None says it was given up.
    stuck = _StuckConsumer()
    assert commit_positions(stuck, 0.2) is None  # type: ignore[arg-type]
    stuck.release.set()
