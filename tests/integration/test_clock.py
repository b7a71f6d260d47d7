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


READ_BOUND_S = 6.0
"""How long a JVM may take to show a new offset before the test fails."""


def _skew_once_read(cluster: DockerCluster, node: str, topic: str, wanted: int) -> float:
    """Returns node's skew (s) once its JVM shows about `wanted`, probing with a new topic
    every half second for READ_BOUND_S: libfaketime reads the clock file again within
    about two seconds (1.7-2.1 s measured), and a loaded machine adds to that."""
    deadline = time.monotonic() + READ_BOUND_S
    probe = 0
    while True:
        probe += 1
        skew = _skew_of_log_line(cluster, node, f"{topic}-{probe}")
        if abs(skew - wanted) <= 60 or time.monotonic() > deadline:
            return skew
        time.sleep(0.5)


def test_an_offset_moves_one_brokers_clock_and_no_other(clocked_cluster: DockerCluster) -> None:
    cluster = clocked_cluster
    cluster.set_clock_offset("n1", 3600)
    assert 3590 <= _skew_once_read(cluster, "n1", "clock-ahead", 3600) <= 3660
    assert abs(_skew_of_log_line(cluster, "n2", "clock-true")) <= 60
    cluster.set_clock_offset("n1", 0)
    assert abs(_skew_once_read(cluster, "n1", "clock-back", 0)) <= 60
