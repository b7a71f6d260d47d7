"""add-partitions on a real cluster: the topic really grows (the count the brokers report
to a client of their own), the workload is told the new count, and a client whose
producer knew only the old partitions sends to a new one at once."""

from __future__ import annotations

import random
import time

from harness.cluster.admin import Admin
from harness.cluster.docker_cluster import DockerCluster
from kvstore import DEFAULT_TIMEOUTS
from kvstore.topic import create_store_topic
from nemesis.cluster import PartitionState
from nemesis.expand import ADDED, AddPartitions
from workloads.queue_client import QueueClient, QueueSettings

GROWN_WITHIN_S = 15.0
"""How long every broker may take to report the grown topic."""


def partitions_once_grown(cluster: DockerCluster, topic: str, count: int) -> list[PartitionState]:
    """Returns topic's partitions as a new client is told them, once it is told count of
    them or GROWN_WITHIN_S passed: each broker's metadata cache learns of new partitions
    on its own time, and a client may ask one that has not yet (the nemesis saw their
    leaders through another; failed once in a parallel make test)."""
    deadline = time.monotonic() + GROWN_WITHIN_S
    while True:
        reported = list(Admin(cluster.bootstrap_servers).partitions(topic))
        if len(reported) >= count or time.monotonic() >= deadline:
            return reported
        time.sleep(0.5)


def test_add_partitions_grows_the_topic_and_a_client_sends_there_at_once(
    cluster: DockerCluster,
) -> None:
    topic = "q-grow"
    create_store_topic(cluster.admin(), topic, partitions=2)
    settings = QueueSettings(
        bootstrap=cluster.bootstrap_servers,
        topic=topic,
        partitions=2,
        acks="all",
        idempotence=False,
        consumer_group=False,
        timeouts=DEFAULT_TIMEOUTS,
        watch_partitions=True,
    )
    client = QueueClient(settings, "p0")
    told: list[int] = []
    nemesis = AddPartitions(topic, random.Random(1), told.append)
    try:
        # The producer learns the topic's two partitions before it grows.
        assert client.invoke({"f": "send", "key": 1, "value": 1})["type"] == "ok"
        nemesis.setup(cluster)
        grown = nemesis.invoke("start-add-partitions")
        assert grown["partitions"] == {"from": 2, "to": 2 + ADDED}
        assert grown["added"] == [2, 3] and grown["led_after_s"] is not None
        assert told == [2 + ADDED]
        reported = partitions_once_grown(cluster, topic, 2 + ADDED)
        assert [p.partition for p in reported] == [0, 1, 2, 3]
        assert all(p.leader >= 0 for p in reported)
        sent = client.invoke({"f": "send", "key": 3, "value": 2})
        assert sent["type"] == "ok", sent
        drained = client.invoke({"f": "drain", "key": 3, "value": None})
        assert drained["type"] == "ok" and drained["value"] == [[sent["value"][0], 2]]
        assert nemesis.invoke("stop-add-partitions")["unchanged"]
        assert nemesis.teardown() == {}
        assert len(partitions_once_grown(cluster, topic, 2 + ADDED)) == 2 + ADDED
    finally:
        client.close()
