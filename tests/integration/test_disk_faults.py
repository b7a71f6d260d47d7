"""The faults that reach the disks, on real clusters: a file corruption changes exactly
the bytes it records on one stopped broker and the harness records what Kafka did; a
composed scenario (partition-power-loss) cuts a minority out of the ISR while writes go
on, cuts the power of the rest, which lose unsynced writes, and brings every node back;
the replicas are then compared from their disks; a pause on faultfs stops the JVM and
leaves the layer serving. All share one cluster on faultfs (the
corruption reaches a layered node's files through the layer's backing directory), removed
even when a test fails."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator

import docker
import pytest

from checkers import check_replicas
from harness.cluster.docker_cluster import ClusterSpec, DockerCluster
from harness.run.recount import read_replicas
from nemesis import composed
from nemesis import file_faults as ff
from nemesis.composed import PartitionPowerLoss
from nemesis.corrupt import FileCorruption
from tests.integration.conftest import PREFIX
from tests.integration.kafka_io import produce_all, read_all

FLIPPED = "flipped"
COMPOSED = "composed"


@pytest.fixture(scope="module")
def layered_cluster(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A running 3-broker safe ZooKeeper cluster on faultfs, removed even when a test
    fails."""
    cluster = DockerCluster(ClusterSpec(name=f"{PREFIX}-disk", faultfs=True), engine)
    try:
        cluster.up(timeout=180)
        yield cluster
    finally:
        cluster.down()


def _topic(cluster: DockerCluster, topic: str) -> list[str]:
    admin = cluster.admin()
    admin.create_topic(topic, [[1, 2, 3]], {})
    admin.wait_full_isr(topic, timeout=30)
    return produce_all(cluster.bootstrap_servers, topic, [f"v{n}" for n in range(200)])


def test_a_bit_flip_changes_what_it_records_and_kafka_is_watched(
    layered_cluster: DockerCluster,
) -> None:
    cluster = layered_cluster
    topic = FLIPPED
    acked = _topic(cluster, topic)
    path = f"{ff.DATA_DIR}/{topic}-0/00000000000000000000.log"
    # Read around the layer, a running node's disk shows only what was synced.
    for broker in cluster.brokers:
        assert cluster.exec(broker, ["faultfs", "ctl", "sync"])[0] == 0
    before = {node: cluster.read_file(node, path) for node in cluster.brokers}
    nemesis = FileCorruption(("bitflip-log",), topic, random.Random(7))
    nemesis.setup(cluster)
    began = time.monotonic()
    done = nemesis.invoke("start-bitflip-log")
    node = done["node"]
    assert done["file"] == f"{topic}-0/00000000000000000000.log"
    assert [s["step"] for s in done["steps"]] == ["chosen", "stopped", "corrupted", "started"]
    for change in done["change"]:
        assert f"{before[node][change['offset']]:02x}" == change["before"]
    after = {n: cluster.read_file(n, path) for n in cluster.brokers}
    differ = [i for i, (a, b) in enumerate(zip(before[node], after[node], strict=False)) if a != b]
    assert differ == [c["offset"] for c in done["change"]]  # on 3.9.1 a clean log is trusted
    assert all(after[n] == before[n] for n in cluster.brokers if n != node)
    observed = nemesis.invoke("stop-bitflip-log")["steps"][-1]
    assert time.monotonic() - began < 90
    assert observed["step"] == "observed" and observed["running"] is True
    assert observed["on_disk"]["still_flipped"] == len(done["change"])
    assert isinstance(observed["kafka_did"], str) and isinstance(observed["kafka_said"], list)
    print(f"\n{node}: {observed['kafka_did']}; {len(observed['kafka_said'])} log lines")
    assert set(read_all(cluster.bootstrap_servers, topic, timeout=60)) >= set(acked)


def test_partition_power_loss_leaves_a_stale_minority_awake_and_comes_back(
    layered_cluster: DockerCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = layered_cluster
    monkeypatch.setattr(composed, "WRITES_S", 3.0)
    monkeypatch.setattr(composed, "WATCH_S", 3.0)
    topic = COMPOSED
    _topic(cluster, topic)
    stop = threading.Event()
    acked: list[str] = []

    def write() -> None:  # acks=all sends all along, as a workload's would be
        n = 0
        while not stop.is_set():
            acked.extend(
                produce_all(cluster.bootstrap_servers, topic, [f"w{n}-{i}" for i in range(20)], 5)
            )
            n += 1

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    nemesis = PartitionPowerLoss(topic, random.Random(3))
    nemesis.setup(cluster)
    try:
        started = nemesis.invoke("start-partition-power-loss")
        states = {n: cluster.state(n) for n in cluster.brokers}
    finally:
        stop.set()
        writer.join(timeout=30)
    steps = {s["step"]: s for s in started["steps"]}
    assert list(steps) == [
        "cut-off",
        "left-isr",
        "wrote-without",
        "powered-off",
        "healed",
        "watched",
    ]
    [stale], majority = started["stale"], started["majority"]
    assert steps["cut-off"]["verified"]["cut"] is True
    stale_id = cluster.broker_id(stale)
    assert stale not in steps["left-isr"]["state"]["0"]["isr"], stale_id
    assert states == {stale: "running", **dict.fromkeys(majority, "exited")}
    lost = steps["powered-off"]["lost"]
    assert all("error" not in lost[n] for n in majority), lost
    assert sum(lost[n]["unsynced_bytes"] for n in majority) > 0  # unsynced writes were lost
    # Safe: the stale minority, out of the ISR, is not elected alone.
    assert steps["watched"]["state"]["0"]["leader"] != stale
    stopped = nemesis.invoke("stop-partition-power-loss")
    assert [s["step"] for s in stopped["steps"]] == ["powered-on", "rejoined"]
    assert all(cluster.state(n) == "running" for n in cluster.nodes)
    on_disk = read_replicas(cluster, topic)
    assert on_disk["errors"] == {}
    high = len(read_all(cluster.bootstrap_servers, topic, timeout=60))
    compared = check_replicas(on_disk["replicas"], on_disk["assignment"], {0: high}, [])
    assert compared["valid"] in (True, False) and compared["partitions_checked"] == 1
    print(f"\n{len(acked)} acknowledged; replicas: {compared['nodes']}")


def _jvm_states(cluster: DockerCluster, node: str) -> set[str]:
    script = "for p in $(pgrep -u kafka); do cut -d' ' -f3 /proc/$p/stat; done"
    code, out = cluster.exec(node, ["sh", "-c", script])
    assert code == 0, out
    return set(out.split())


def test_a_pause_on_faultfs_stops_the_jvm_and_not_the_layer(layered_cluster: DockerCluster) -> None:
    cluster = layered_cluster
    node = cluster.brokers[0]
    cluster.pause(node)  # the cgroup freezer refuses a container with its own FUSE daemon
    try:
        assert cluster.state(node) == "paused"
        assert cluster.node_states()[node] == "paused"
        assert _jvm_states(cluster, node) == {"T"}  # stopped, while faultfs still answers
        assert cluster.exec(node, ["faultfs", "ctl", "status"])[0] == 0
    finally:
        cluster.resume(node)
    assert cluster.state(node) == "running"
    assert "T" not in _jvm_states(cluster, node)
