"""Renders broker and ZooKeeper configuration from the templates in compose/.

The templates hold every setting; a profile (safe or unsafe) fills only the
few values that differ, so no setting is written in two places.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from string import Template

COMPOSE_DIR = Path(__file__).resolve().parents[2] / "compose"


@dataclass(frozen=True, slots=True)
class Profile:
    """The durability settings that distinguish one Kafka configuration from another."""

    name: str
    min_insync_replicas: int
    unclean_leader_election: bool


PROFILES: dict[str, Profile] = {
    "safe": Profile("safe", min_insync_replicas=2, unclean_leader_election=False),
    "unsafe": Profile("unsafe", min_insync_replicas=1, unclean_leader_election=True),
}


def _render(template_name: str, values: dict[str, object]) -> str:
    text = (COMPOSE_DIR / template_name).read_text()
    # substitute() rather than safe_substitute(): a missing value is a bug here.
    return Template(text).substitute({k: str(v) for k, v in values.items()})


def server_properties(
    *, broker_id: int, address: str, zookeeper_connect: str, brokers: int, profile: Profile
) -> str:
    """Takes one broker's identity and the cluster's shape; returns its server.properties."""
    replication_factor = min(3, brokers)
    return _render(
        "server.properties.tmpl",
        {
            "broker_id": broker_id,
            "address": address,
            "zookeeper_connect": zookeeper_connect,
            "replication_factor": replication_factor,
            # min.insync.replicas above the replication factor would refuse every write.
            "min_insync_replicas": min(profile.min_insync_replicas, replication_factor),
            "unclean_leader_election": str(profile.unclean_leader_election).lower(),
        },
    )


def zoo_cfg(addresses: list[str]) -> str:
    """Takes the ZooKeeper servers' addresses in id order; returns zoo.cfg for any of them."""
    servers = ""
    if len(addresses) > 1:
        servers = "\n".join(
            f"server.{i}={addr}:2888:3888" for i, addr in enumerate(addresses, start=1)
        )
    return _render("zoo.cfg.tmpl", {"servers": servers})


def zookeeper_connect(addresses: list[str]) -> str:
    """Returns Kafka's zookeeper.connect string for the given ZooKeeper addresses."""
    return ",".join(f"{addr}:2181" for addr in addresses)
