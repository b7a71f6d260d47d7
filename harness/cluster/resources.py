"""Memory, CPU and process limits of the nodes, and whether a cluster fits the machine.

Each container gets a hard memory ceiling twice its JVM heap (the heap is passed to
the JVM from here, so the two cannot drift apart). A cluster is refused when the sum
of its ceilings exceeds the engine's memory less a reserve for the harness itself:
then no node, however busy, can run the machine out of memory. A node may use all
cores but one, so the control node's clients and timers always keep a core.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import docker

from harness.cluster.layout import ClusterSpec, Role

MIB = 2**20
# The harness's clients, checker and the Docker engine itself.
CONTROL_NODE_RESERVE_MIB = 512


@dataclass(frozen=True, slots=True)
class RoleLimits:
    """What one node of a role may use."""

    heap_mib: int
    memory_mib: int
    # A thread bomb guard: an idle broker runs about 80 threads, ZooKeeper about 35.
    pids: int


ROLE_LIMITS: dict[Role, RoleLimits] = {
    "kafka": RoleLimits(heap_mib=512, memory_mib=1024, pids=2048),
    "combined": RoleLimits(heap_mib=512, memory_mib=1024, pids=2048),
    "controller": RoleLimits(heap_mib=256, memory_mib=512, pids=1024),
    "zookeeper": RoleLimits(heap_mib=256, memory_mib=512, pids=512),
}
# How a message names one node of a role, and several.
_ROLE_NOUNS: dict[Role, tuple[str, str]] = {
    "kafka": ("broker", "brokers"),
    "combined": ("broker-controller", "broker-controllers"),
    "controller": ("controller", "controllers"),
    "zookeeper": ("ZooKeeper", "ZooKeeper"),
}


@dataclass(frozen=True, slots=True)
class Machine:
    """What the Docker engine's machine has."""

    memory_mib: int
    cpus: int


def engine_machine(client: docker.DockerClient) -> Machine:
    """Returns the memory and cores of the machine the engine runs on."""
    info = client.info()
    return Machine(memory_mib=int(info["MemTotal"]) // MIB, cpus=int(info["NCPU"]))


def cluster_memory_mib(counts: Mapping[Role, int]) -> int:
    """Takes how many nodes of each role. Returns the sum of their memory ceilings."""
    return sum(count * ROLE_LIMITS[role].memory_mib for role, count in counts.items())


def fit_problem(spec: ClusterSpec, machine: Machine) -> str | None:
    """Returns one line saying why spec does not fit machine, or None when it fits."""
    counts = spec.role_counts()
    need = cluster_memory_mib(counts)
    usable = machine.memory_mib - CONTROL_NODE_RESERVE_MIB
    if need <= usable:
        return None
    broker_role: Role = "combined" if "combined" in counts else "kafka"
    others = {role: n for role, n in counts.items() if role != broker_role}
    most = max(0, (usable - cluster_memory_mib(others)) // ROLE_LIMITS[broker_role].memory_mib)
    shape = " and ".join(f"{n} {_ROLE_NOUNS[role][1]}" for role, n in counts.items())
    ceilings = ", ".join(
        f"{ROLE_LIMITS[role].memory_mib} MiB a {_ROLE_NOUNS[role][0]}" for role in counts
    )
    rest = "".join(f" with {n} {_ROLE_NOUNS[role][1]}" for role, n in others.items())
    return (
        f"{shape} need {need / 1024:.1f} GiB of memory ({ceilings}); this machine has "
        f"{machine.memory_mib / 1024:.1f} GiB, {usable / 1024:.1f} GiB for nodes: "
        f"at most {most} {_ROLE_NOUNS[broker_role][1]}{rest}"
    )


def cpus_per_node(machine: Machine) -> int:
    """Returns how many cores one node may use: all but one, at least one."""
    return max(1, machine.cpus - 1)


def host_limits(role: Role, machine: Machine) -> dict[str, Any]:
    """Returns the docker create_host_config arguments that bound one node of role."""
    limits = ROLE_LIMITS[role]
    return {
        "mem_limit": limits.memory_mib * MIB,
        # Equal to the memory limit: no swap, so a node over its ceiling fails visibly.
        "memswap_limit": limits.memory_mib * MIB,
        "nano_cpus": cpus_per_node(machine) * 10**9,
        "pids_limit": limits.pids,
    }


def node_environment(role: Role) -> dict[str, str]:
    """Returns the environment the entrypoint reads: the JVM heap of role."""
    return {"HEAP_MIB": str(ROLE_LIMITS[role].heap_mib)}
