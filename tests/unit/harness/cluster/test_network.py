"""The cluster network's subnet: chosen free of listed and refused ones, so clusters made
at the same moment on one engine each get their own (three at once once failed)."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from docker.errors import APIError

from harness.cluster import network
from harness.cluster.errors import ClusterError

Net = ipaddress.IPv4Network


class _Listed:
    def __init__(self, subnet: str) -> None:
        self.attrs = {"IPAM": {"Config": [{"Subnet": subnet}]}}


class _Networks:
    """Docker as it behaves while other clusters are being made: their subnets are
    reserved (a create on them is refused) but not yet listed."""

    def __init__(self, listed: list[str], reserved: list[str]) -> None:
        self.listed = [_Listed(s) for s in listed]
        self.reserved = [Net(s) for s in reserved]
        self.tried: list[Net] = []

    def list(self) -> list[_Listed]:
        return self.listed

    def create(self, name: str, **kw: Any) -> None:
        subnet = Net(kw["ipam"]["Config"][0]["Subnet"])
        self.tried.append(subnet)
        if any(subnet.overlaps(r) for r in self.reserved):
            raise APIError("Pool overlaps with other one on this address space")


class _Client:
    def __init__(self, networks: _Networks) -> None:
        self.networks = networks


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "_BACKOFF_S", (0.0, 0.0))


def test_free_subnet_skips_listed_and_refused() -> None:
    used = [Net("172.30.0.0/24"), Net("172.17.0.0/16")]
    assert network.free_subnet(used) == Net("172.30.1.0/24")
    assert network.free_subnet(used, [Net("172.30.1.0/24")]) == Net("172.30.2.0/24")


def test_free_subnet_skips_a_wider_network_overlapping_the_pool() -> None:
    assert network.free_subnet([Net("172.30.0.0/23")]) == Net("172.30.2.0/24")


def test_a_subnet_reserved_but_not_listed_is_not_tried_twice() -> None:
    nets = _Networks(listed=["172.30.0.0/24"], reserved=["172.30.1.0/24", "172.30.2.0/24"])
    subnet = network.create_network(_Client(nets), "n", {})  # type: ignore[arg-type]
    assert subnet == Net("172.30.3.0/24")
    assert nets.tried == [Net(f"172.30.{i}.0/24") for i in (1, 2, 3)]


def test_gives_up_with_a_clear_error_when_every_try_is_refused() -> None:
    nets = _Networks(listed=[], reserved=["172.30.0.0/16"])
    with pytest.raises(ClusterError, match="kept taking the free subnets"):
        network.create_network(_Client(nets), "n", {})  # type: ignore[arg-type]
    assert len(nets.tried) == network._SUBNET_TRIES


def test_another_refusal_is_reported_at_once() -> None:
    class _Refusing(_Networks):
        def create(self, name: str, **kw: Any) -> None:
            raise APIError("network with name n already exists")

    with pytest.raises(ClusterError, match="docker refused network n"):
        network.create_network(_Client(_Refusing([], [])), "n", {})  # type: ignore[arg-type]
