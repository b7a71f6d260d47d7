"""The queue workload on a real cluster: the client's outcomes, and a short isr-shrink run
whose steps really happened (the ISR was the leader alone, a different leader was
elected, the old leader truncated), with nothing left running afterwards."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import docker
import pytest

from harness.cluster.docker_cluster import DockerCluster
from harness.run.recount import read_replicas, recount
from kvstore import DEFAULT_TIMEOUTS
from kvstore.topic import create_store_topic
from tests.integration.test_run import _run
from workloads.queue_client import QueueClient, QueueSettings


def _settings(cluster: DockerCluster, topic: str, **changes: object) -> QueueSettings:
    fields: dict[str, object] = {
        "bootstrap": cluster.bootstrap_servers,
        "topic": topic,
        "partitions": 2,
        "acks": "all",
        "idempotence": False,
        "consumer_group": False,
        "timeouts": DEFAULT_TIMEOUTS,
    }
    return QueueSettings(**(fields | changes))  # type: ignore[arg-type]


def test_sends_are_acknowledged_with_offsets_that_polls_and_drains_see(
    cluster: DockerCluster,
) -> None:
    create_store_topic(cluster.admin(), "q-client", partitions=2)
    client = QueueClient(_settings(cluster, "q-client"), "p0")
    try:
        sent = [client.invoke({"f": "send", "key": i % 2, "value": i}) for i in range(1, 11)]
        assert all(c["type"] == "ok" for c in sent), sent
        acked = {(i % 2, c["value"][0]): c["value"][1] for i, c in enumerate(sent, start=1)}
        seen: dict[tuple[int, int], int] = {}
        polls = [client.invoke({"f": "poll", "value": None})]
        assert polls[0]["rebalanced"] == {"assigned": [0, 1], "revoked": []}
        # A poll waits POLL_S at most: bound the loop by time, not by a count of polls.
        deadline = time.monotonic() + 30
        while len(seen) < 10 and time.monotonic() < deadline:
            for p, records in polls[-1]["value"].items():
                seen.update({(int(p), o): m for o, m in records})
            polls.append(client.invoke({"f": "poll", "value": None}))
        assert seen == acked
        moved = client.invoke({"f": "assign", "value": [1]})
        assert moved == {"type": "ok", "value": [1]}
        drained = client.invoke({"f": "drain", "key": 0, "value": None})
        assert drained["type"] == "ok"
        assert {(0, o): m for o, m in drained["value"]} == {
            k: v for k, v in acked.items() if k[0] == 0
        }
    finally:
        client.close()


def test_a_consumer_group_member_records_its_assignment(cluster: DockerCluster) -> None:
    create_store_topic(cluster.admin(), "q-group", partitions=2)
    client = QueueClient(_settings(cluster, "q-group", consumer_group=True), "p0")
    try:
        assert client.invoke({"f": "send", "key": 1, "value": 7})["type"] == "ok"
        assigned: list[int] = []
        values: list[int] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            polled = client.invoke({"f": "poll", "value": None})
            assigned += polled.get("rebalanced", {}).get("assigned", [])
            values += [m for records in polled["value"].values() for _, m in records]
            if values:
                break
        assert sorted(assigned) == [0, 1] and values == [7]
    finally:
        client.close()


_DUMPED_RECORD = re.compile(r"^\| offset: (\d+) .*? payload: (.*)$", re.M)


def test_the_segment_reader_reads_what_kafkas_dump_log_segments_reads(
    cluster: DockerCluster,
) -> None:
    """harness.run.segments reads the broker's files itself (4.4 has no DumpLogSegments): on
    3.9.1 both must find the same records, and every acknowledged send among them."""
    create_store_topic(cluster.admin(), "q-disk", partitions=2)
    client = QueueClient(_settings(cluster, "q-disk"), "p0")
    try:
        sent = [client.invoke({"f": "send", "key": i % 2, "value": i}) for i in range(1, 31)]
    finally:
        client.close()
    assert all(c["type"] == "ok" for c in sent), sent
    on_disk = read_replicas(cluster, "q-disk")
    assert on_disk["errors"] == {}
    for node in cluster.brokers:
        dumped: dict[int, dict[int, str]] = {}
        for p in (0, 1):
            code, out = cluster.exec(
                node,
                [
                    "sh",
                    "-c",
                    "java -cp '/opt/kafka/libs/*' kafka.tools.DumpLogSegments "
                    f"--print-data-log --files /var/lib/kafka/data/q-disk-{p}/*.log",
                ],
            )
            assert code == 0, out
            dumped[p] = {int(o): v for o, v in _DUMPED_RECORD.findall(out)}
        assert on_disk["replicas"][node] == dumped
    acked = [(i % 2, c["value"][0], c["value"][1]) for i, c in enumerate(sent, start=1)]
    counted = recount(acked, on_disk)
    assert (counted["acknowledged"], counted["lost"]) == (30, 0)
    assert counted["replicas_agree"] and counted["overwritten"] == 0


@pytest.mark.parametrize(
    "cluster_args",
    [
        pytest.param(("--kafka-config", "unsafe"), id="3.9.1-zookeeper"),
        pytest.param(
            ("--kafka-config", "unsafe-no-elr", "--kafka-version", "4.4.0"), id="4.4.0-kraft"
        ),
    ],
)
def test_isr_shrink_steps_happen_and_the_old_leader_truncates(
    engine: docker.DockerClient, tmp_path: Path, cluster_args: tuple[str, ...]
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        "--workload",
        "queue",
        "--nemesis",
        "isr-shrink",
        *cluster_args,
        "--keys",
        "3",
        # The start (steps 1-3) takes about 20 s; the stop then runs before the end.
        "--time-limit",
        "36",
        "--nemesis-interval",
        "4",
    )
    assert code in (0, 1), out
    start = next(op for op in results["nemesis"]["ops"] if op["f"] == "start-isr-shrink")
    stop = next(op for op in results["nemesis"]["ops"] if op["f"] == "stop-isr-shrink")
    steps = {s["step"]: s for s in start["value"]["steps"]}
    leader = start["value"]["leader"]
    [target, *_] = [str(p) for p in start["value"]["partitions"]]
    assert steps["cut-from-followers"]["verified"]["cut"] is True
    shrunk = steps["isr-shrunk"]["state"][target]
    assert (shrunk["leader"], shrunk["isr"]) == (leader, [leader])
    elected = steps["follower-elected"]["state"][target]
    assert elected["leader"] not in (None, leader) and elected["epoch"] > shrunk["epoch"]
    rejoined = {s["step"]: s for s in stop["value"]["steps"]}["rejoined"]
    assert rejoined["truncation"], "the old leader logged no truncation"
    assert "queue" in results and "lost-acks" in results
    # The lost sends counted again from every broker's segment files, apart from the drain.
    recount = results["final"]["recount"]
    assert recount["complete"] and recount["replicas_agree"], recount
    assert recount["agrees"] and recount["lost"] == results["lost-acks"]["lost_count"], recount
    history = (tmp_path / "latest" / "history.jsonl").read_text().splitlines()
    drains = [json.loads(x) for x in history if '"drain"' in x and '"ok"' in x]
    assert len(drains) == 3
