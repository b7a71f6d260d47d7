"""pause asks runc again when it could not freeze a node (a race with a process forking
or waiting in the kernel), a bounded number of times, and raises any other error at once."""

from __future__ import annotations

import pytest
from docker.errors import APIError

from harness.cluster import docker_cluster
from harness.cluster.docker_cluster import FREEZE_ATTEMPTS, ClusterSpec, DockerCluster

FREEZE_FAILED = "Cannot pause container: OCI runtime pause failed: unable to freeze: unknown"


class Container:
    """A container whose first `failures` pauses fail with `error`."""

    def __init__(self, failures: int, error: str = FREEZE_FAILED) -> None:
        self.failures, self.error, self.asked = failures, error, 0

    def pause(self) -> None:
        self.asked += 1
        if self.asked <= self.failures:
            raise APIError(self.error)


def _cluster(container: Container, monkeypatch: pytest.MonkeyPatch) -> DockerCluster:
    cluster = object.__new__(DockerCluster)  # no engine: only pause's path is run
    cluster.spec = ClusterSpec(name="freeze")
    monkeypatch.setattr(cluster, "_container", lambda node: container, raising=False)
    monkeypatch.setattr(docker_cluster.time, "sleep", lambda seconds: None)
    return cluster


def test_a_freeze_that_failed_is_asked_again_until_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    container = Container(failures=FREEZE_ATTEMPTS - 1)
    _cluster(container, monkeypatch).pause("n1")
    assert container.asked == FREEZE_ATTEMPTS


def test_a_freeze_that_keeps_failing_raises_after_the_last_attempt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    container = Container(failures=FREEZE_ATTEMPTS)
    with pytest.raises(APIError, match="unable to freeze"):
        _cluster(container, monkeypatch).pause("n1")
    assert container.asked == FREEZE_ATTEMPTS


def test_another_error_is_raised_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    container = Container(failures=1, error="container is not running")
    with pytest.raises(APIError, match="not running"):
        _cluster(container, monkeypatch).pause("n1")
    assert container.asked == 1
