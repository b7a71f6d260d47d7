"""Fixtures for tests on the real cluster: every cluster made here is removed at
the end of its test (or session), even when the test fails."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import docker
import pytest

from harness.cluster.docker_cluster import ClusterSpec, DockerCluster, cluster_names
from harness.cluster.engine import docker_client
from harness.cluster.images import ensure_node_image

# HARNESS_IT_PREFIX lets a run share an engine with others' test clusters under a
# prefix of its own (the default it<pid> is what check-no-leftovers.sh counts).
PREFIX = f"{os.environ.get('HARNESS_IT_PREFIX', 'it')}{os.getpid()}"
_serial = itertools.count(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.path):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def engine() -> Iterator[docker.DockerClient]:
    """The Docker engine, with the node image built; removes leftovers at the end."""
    client = docker_client()
    ensure_node_image(client, print)
    yield client
    for name in cluster_names(client):
        if name.startswith(PREFIX):
            DockerCluster(ClusterSpec(name=name), client).down()


def _started(client: docker.DockerClient, **shape: object) -> Iterator[DockerCluster]:
    cluster = DockerCluster(ClusterSpec(name=f"{PREFIX}-{next(_serial)}", **shape), client)  # type: ignore[arg-type]
    try:
        cluster.up(timeout=120)
        yield cluster
    finally:
        cluster.down()


@pytest.fixture(scope="session")
def cluster(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A running 3-broker safe cluster shared by tests that do not break it."""
    yield from _started(engine)


@pytest.fixture
def fresh_cluster(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A running 3-broker safe cluster of this test's own, for tests that break nodes."""
    yield from _started(engine)
