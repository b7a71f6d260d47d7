"""The membership faults on a real KRaft cluster formatted for a dynamic quorum: a voter
removed and added back, the quorum's leader reporting each voter set (kafka-metadata-quorum
describe), and a broker decommissioned with no partition left on it, then brought back
with its partitions. One cluster for both: each test leaves it as it found it."""

from __future__ import annotations

import random
from collections.abc import Iterator

import docker
import pytest

from harness.cluster.docker_cluster import ClusterSpec, DockerCluster
from harness.cluster.images import ensure_node_image
from kvstore.topic import create_store_topic
from nemesis.controllers import ControllerRemoval
from nemesis.decommission import Decommission, held_by
from tests.integration.conftest import PREFIX


@pytest.fixture(scope="module")
def dynamic(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A 4.4.0 cluster of 3 brokers and 3 controllers formatted as a dynamic quorum."""
    spec = ClusterSpec(
        f"{PREFIX}-member", kafka_version="4.4.0", metadata="kraft", dynamic_quorum=True
    )
    ensure_node_image(engine, print, spec.kafka_version)
    cluster = DockerCluster(spec, engine)
    try:
        cluster.up(timeout=240)
        yield cluster
    finally:
        cluster.down()
        assert cluster.exists() == 0


def test_a_controller_is_removed_and_added_back_as_the_quorum_reports(
    dynamic: DockerCluster,
) -> None:
    before = dynamic.quorum_members()
    assert before.voter_ids == [101, 102, 103]
    assert all(v.directory_id for v in before.voters)
    nemesis = ControllerRemoval("t-none", random.Random(3))
    nemesis.setup(dynamic)
    removed = nemesis.invoke("start-remove-controller")
    gone = dynamic.broker_id(removed["removed"])
    during = dynamic.quorum_members()
    assert gone not in during.voter_ids and len(during.voter_ids) == 2, removed
    # The removed controller runs on, fetching the log as an observer: the spare added back.
    assert dynamic.quorum_replication()[gone] == "Observer"
    assert [s["step"] for s in removed["steps"]][-1] == "removed"
    added = nemesis.invoke("stop-remove-controller")
    assert added["added"] == removed["removed"], added
    assert dynamic.quorum_members().voter_ids == [101, 102, 103]
    assert dynamic.quorum_replication()[gone] in ("Leader", "Follower")
    assert nemesis.teardown() == {}


def test_a_broker_is_decommissioned_with_nothing_left_on_it_and_brought_back(
    dynamic: DockerCluster,
) -> None:
    topic = "q-decommission"
    create_store_topic(dynamic.admin(), topic, partitions=2)
    before = dynamic.replica_assignment()
    nemesis = Decommission(topic, random.Random(5))
    nemesis.setup(dynamic)
    gone = nemesis.invoke("start-decommission-broker")
    node = gone["decommissioned"]
    assert node is not None, gone
    node_id = dynamic.broker_id(node)
    steps = {s["step"]: s for s in gone["steps"]}
    assert steps["left-on-it"]["partitions"] == []
    assert "unregistered" in steps and dynamic.state(node) != "running"
    assert held_by(dynamic.replica_assignment(), node_id) == []
    # Every partition it held moved, the probe topic's (and any internal topic's) too.
    assert gone["moved"] == len(held_by(before, node_id)) > 2
    back = nemesis.invoke("stop-decommission-broker")
    assert back["recommissioned"] == node and back["set_up"], back
    after = dynamic.replica_assignment()
    assert {t: [set(p.replicas) for p in parts] for t, parts in after.items() if t in before} == {
        t: [set(p.replicas) for p in parts] for t, parts in before.items()
    }
    assert nemesis.teardown() == {}
