"""down lists the cluster's containers again until none is left: a node the engine
finished creating after the first listing, or whose removal it refused while starting
it (409), is removed on a later pass; a removal refused every time is raised."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from docker.errors import APIError, NotFound

from harness.cluster.docker_cluster import (
    DOWN_ATTEMPTS,
    ClusterSpec,
    DockerCluster,
    cluster_names,
)
from harness.cluster.labels import CLUSTER_LABEL


class Engine:
    """The containers a cluster's listing finds, pass by pass; `refusals` removals of
    each refused first."""

    def __init__(self, passes: list[list[str]], refusals: int = 0) -> None:
        self.passes, self.refusals = passes, refusals
        self.listed, self.asked = 0, 0
        self.removed: list[str] = []

    def containers(self) -> list[Any]:
        found = self.passes[min(self.listed, len(self.passes) - 1)]
        self.listed += 1
        return [_Container(self, name) for name in found if name not in self.removed]


class _Container:
    def __init__(self, engine: Engine, name: str) -> None:
        self.engine, self.name = engine, name

    def remove(self, force: bool, v: bool) -> None:
        self.engine.asked += 1
        if self.engine.asked <= self.engine.refusals:
            raise APIError("409 Conflict: container is starting")
        self.engine.removed.append(self.name)


def _cluster(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> DockerCluster:
    cluster = object.__new__(DockerCluster)  # no engine: only down's path is run
    cluster.spec = ClusterSpec(name="down")
    monkeypatch.setattr(cluster, "_containers", engine.containers, raising=False)
    monkeypatch.setattr(cluster, "_networks", lambda: [], raising=False)
    monkeypatch.setattr("harness.cluster.docker_cluster.time.sleep", lambda seconds: None)
    return cluster


def test_a_node_made_after_the_first_listing_is_removed_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = Engine([["n2", "n3"], ["n1", "n2", "n3"], []])
    assert _cluster(engine, monkeypatch).down() == 3
    assert sorted(engine.removed) == ["n1", "n2", "n3"]


def test_a_refused_removal_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine([["n1"]], refusals=2)
    assert _cluster(engine, monkeypatch).down() == 1
    assert engine.removed == ["n1"] and engine.asked == 3


def test_a_removal_refused_every_time_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine([["n1"]], refusals=DOWN_ATTEMPTS)
    with pytest.raises(APIError, match="409"):
        _cluster(engine, monkeypatch).down()
    assert engine.asked == DOWN_ATTEMPTS


def test_nothing_there_is_nothing_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine([[]])
    assert _cluster(engine, monkeypatch).down() == 0
    assert engine.listed == 1


class _Listing:
    """An engine whose one other container was removed between its listing and its
    inspection: a full listing inspects each container and meets NotFound."""

    def __init__(self) -> None:
        self.containers = self
        self.networks = SimpleNamespace(list=lambda filters: [])

    def list(self, all: bool, filters: dict[str, str], sparse: bool = False) -> list[Any]:
        if not sparse:
            raise NotFound("No such container: removed meanwhile")
        return [SimpleNamespace(attrs={"Labels": {CLUSTER_LABEL: "other"}})]


def test_clusters_are_listed_without_inspecting_containers_that_may_be_going() -> None:
    assert cluster_names(_Listing()) == ["other"]
