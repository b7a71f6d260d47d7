"""The cluster's bridge network: a free /24 of our pool, found and taken even when
other clusters are being made on the same engine at the same time.
"""

from __future__ import annotations

import ipaddress
import random
import time
from collections.abc import Iterable

import docker
from docker.errors import APIError

from harness.cluster.errors import ClusterError

# How often a network is tried again when another `cluster up` took its subnet first.
_SUBNET_TRIES = 20
# Our networks take /24s from here, skipping any Docker or the host already use.
_SUBNET_POOL = ipaddress.ip_network("172.30.0.0/16")
# Pause between tries, with jitter, so that clusters made at once stop colliding.
_BACKOFF_S = (0.05, 0.25)


def _used_subnets(client: docker.DockerClient) -> list[ipaddress.IPv4Network]:
    used = []
    for net in client.networks.list():
        for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
            if "Subnet" in cfg and ":" not in cfg["Subnet"]:
                used.append(ipaddress.IPv4Network(cfg["Subnet"]))
    return used


def free_subnet(
    used: Iterable[ipaddress.IPv4Network], refused: Iterable[ipaddress.IPv4Network] = ()
) -> ipaddress.IPv4Network:
    """Takes the subnets Docker lists and those it refused us. Returns the first /24 of
    the pool that overlaps neither; raises ClusterError when there is none. A refused one
    is skipped even though unlisted: Docker reserves a subnet before the network that
    holds it shows in its list."""
    taken = [*used, *refused]
    for candidate in _SUBNET_POOL.subnets(new_prefix=24):
        if not any(candidate.overlaps(t) for t in taken):
            return ipaddress.IPv4Network(candidate)
    raise ClusterError(f"no free /24 left in {_SUBNET_POOL} for the cluster network")


def create_network(
    client: docker.DockerClient, name: str, labels: dict[str, str]
) -> ipaddress.IPv4Network:
    """Creates the bridge network name with labels on a free /24; returns its subnet.
    Raises ClusterError when Docker refuses or no subnet stays free."""
    refused: list[ipaddress.IPv4Network] = []
    for _ in range(_SUBNET_TRIES):
        subnet = free_subnet(_used_subnets(client), refused)
        pool = docker.types.IPAMPool(subnet=str(subnet), gateway=str(next(subnet.hosts())))
        try:
            client.networks.create(
                name,
                driver="bridge",
                ipam=docker.types.IPAMConfig(pool_configs=[pool]),
                labels=labels,
                check_duplicate=True,
            )
        except APIError as err:
            # Another cluster's network took this subnet since we looked: look again.
            if "overlap" in str(err).lower():
                refused.append(subnet)
                time.sleep(random.uniform(*_BACKOFF_S))
                continue
            raise ClusterError(f"docker refused network {name}: {err}") from err
        return subnet
    raise ClusterError(f"other clusters kept taking the free subnets ({_SUBNET_TRIES} tries)")
