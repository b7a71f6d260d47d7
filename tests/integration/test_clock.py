"""The clock faults' mechanism on a real cluster: a node's JVM reads its wall clock
through libfaketime, so an offset set on one broker moves the times that broker's JVM
writes in its own log, an hour ahead, while another broker's stay true; set back to 0,
the first broker's clock is right again. The cluster is removed even when the test
fails."""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Iterator

import docker
import pytest

from harness.cluster.docker_cluster import ClusterSpec, DockerCluster
from tests.integration.conftest import PREFIX

_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+\]")


@pytest.fixture
def clocked_cluster(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A running 3-broker cluster made for the clock faults (libfaketime in every JVM)."""
    cluster = DockerCluster(ClusterSpec(name=f"{PREFIX}-clock", faketime=True), engine)
    try:
        cluster.up(timeout=180)
        yield cluster
    finally:
        cluster.down()


def _skew_of_log_line(cluster: DockerCluster, node: str, topic: str) -> float:
    """Creates topic with its one replica on node, and returns how far ahead of the true
    time (s) node's JVM stamped the log line that says it created the partition."""
    broker = cluster.broker_id(node)
    before = time.time()
    cluster.admin().create_topic(topic, [[broker]])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = cluster.server_log(node, f"Created log for partition {topic}-0", lines=1)
        if lines and (stamp := _STAMP.match(lines[-1])):
            logged = datetime.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S")
            return logged.replace(tzinfo=datetime.UTC).timestamp() - before
        time.sleep(0.5)
    raise AssertionError(f"{node} logged no creation of {topic}")


def test_an_offset_moves_one_brokers_clock_and_no_other(clocked_cluster: DockerCluster) -> None:
    cluster = clocked_cluster
    cluster.set_clock_offset("n1", 3600)
    time.sleep(1.5)  # libfaketime reads the offset again each second
    assert 3590 <= _skew_of_log_line(cluster, "n1", "clock-ahead") <= 3660
    assert abs(_skew_of_log_line(cluster, "n2", "clock-true")) <= 60
    cluster.set_clock_offset("n1", 0)
    time.sleep(1.5)
    assert abs(_skew_of_log_line(cluster, "n1", "clock-back")) <= 60
