"""The shape of a NATS JetStream cluster (NatsSpec: name, servers, release, sync profile,
the power-loss layer) and one server's configuration, rendered from
compose/nats/nats.conf.tmpl.

The template holds every setting; a sync profile fills the one that differs. NATS
writes file-store data to the page cache and fsyncs it every `sync_interval` (2 minutes
unless set); `always` syncs every write (nats-server's docs, jetstream.sync_interval;
Jepsen's NATS suite, jepsen-io/nats src/jepsen/nats/db.clj, passes the same knob as
--sync-interval). Servers get fixed addresses as Kafka brokers do (layout.py): server i
is node n<i> at .(100+i) of the cluster's /24, and its server_name is its node name;
a server that rejoins after a peer-remove does so under a new name, n<i>-<k> (NATS
refuses a removed name back; Jepsen's db.clj bumps its node names the same way).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template

from harness.cluster.config import COMPOSE_DIR
from harness.cluster.layout import SpecError, name_problem
from workloads.names import DEFAULT_NATS_VERSION as DEFAULT_NATS_VERSION
from workloads.names import NATS_VERSIONS as NATS_VERSIONS

NATS_COMPOSE_DIR = COMPOSE_DIR / "nats"
CLIENT_PORT, ROUTE_PORT, MONITOR_PORT = 4222, 6222, 8222
STORE_DIR = "/var/lib/nats"
"""JetStream keeps its files in STORE_DIR/jetstream."""
CONFIG_PATH = "/etc/nats/nats.conf"
SERVER_USER = "nats"
"""The user nats-server runs as (compose/nats/Dockerfile), beneath faultfs too."""
FAULTFS_EVENTS = "/var/log/nats/faultfs.jsonl"
"""Where a server's power-loss layer records each start, crash, exit and power cut."""
CLIENT_USER = "client"
"""The user every client without credentials is (no_auth_user), in the global account."""
SYSTEM_USER, SYSTEM_PASSWORD = "sys", "harness"
"""The system account's user: only it may ask for a server's removal. The cluster is
reachable only from this machine's Docker networks."""
SERVER_COUNTS = (3, 5)
"""JetStream replicates a stream on at most 5 servers; an odd count keeps a majority."""
_ADDRESS_BASE = 100


@dataclass(frozen=True, slots=True)
class SyncProfile:
    """How often a server fsyncs its file store: `sync_interval` (None: NATS's default)."""

    name: str
    sync_interval: str | None

    def setting(self) -> str:
        """Returns the jetstream block's line for this profile ("" for the default)."""
        return "" if self.sync_interval is None else f"sync_interval: {self.sync_interval}"


SYNC_PROFILES: dict[str, SyncProfile] = {
    "default": SyncProfile("default", None),
    "always": SyncProfile("always", "always"),
}


@dataclass(frozen=True, slots=True)
class NatsSpec:
    """The shape of a NATS cluster: its name, server count, nats-server release, sync
    profile and whether its stores sit on faultfs (the power-loss layer: a power cut
    loses every write since each file's last fsync); raises SpecError when built with
    values no cluster can have."""

    name: str = "harness-nats"
    servers: int = 3
    version: str = DEFAULT_NATS_VERSION
    sync: str = "default"
    faultfs: bool = False

    def __post_init__(self) -> None:
        problems = [
            name_problem(self.name),
            None
            if self.servers in SERVER_COUNTS
            else f"servers {self.servers}: one of {', '.join(map(str, SERVER_COUNTS))}",
            None
            if self.version in NATS_VERSIONS
            else f"nats version {self.version!r}: one of {', '.join(NATS_VERSIONS)}",
            None
            if self.sync in SYNC_PROFILES
            else f"sync profile {self.sync!r}: one of {', '.join(SYNC_PROFILES)}",
        ]
        for problem in problems:
            if problem is not None:
                raise SpecError(problem)

    @property
    def profile(self) -> SyncProfile:
        """Returns the sync profile the spec names."""
        return SYNC_PROFILES[self.sync]


@dataclass(frozen=True, slots=True)
class Server:
    """One NATS server of the cluster: its node name (also its server_name) and address."""

    name: str
    address: str


_INCARNATION = re.compile(r"(n\d+)-(\d+)")


def node_of_server(name: str) -> str:
    """Takes a server_name as /jsz tells it (n2, or n2-3 after rejoins). Returns the node
    that runs it (n2); any other name unchanged."""
    found = _INCARNATION.fullmatch(name)
    return found.group(1) if found else name


def next_server_name(name: str) -> str:
    """Takes a node's server_name now; returns the one it rejoins under: n2 -> n2-2,
    n2-2 -> n2-3."""
    found = _INCARNATION.fullmatch(name)
    if found is None:
        return f"{name}-2"
    return f"{found.group(1)}-{int(found.group(2)) + 1}"


def plan_servers(spec: NatsSpec, subnet: ipaddress.IPv4Network) -> list[Server]:
    """Takes a spec and its /24 subnet; returns the servers n1.. with fixed addresses."""
    base = subnet.network_address
    return [Server(f"n{i}", str(base + _ADDRESS_BASE + i)) for i in range(1, spec.servers + 1)]


def route_urls(server: Server, servers: Sequence[Server]) -> list[str]:
    """Returns the routes of server: every other server's route URL (as Jepsen's routes
    leave the node itself out; by address, which a rejoin under a new name keeps)."""
    return [
        f"nats-route://{s.address}:{ROUTE_PORT}" for s in servers if s.address != server.address
    ]


def server_config(
    server: Server, servers: Sequence[Server], profile: SyncProfile, cluster_name: str
) -> str:
    """Takes one server, every server of the cluster, a sync profile and the cluster's
    name; returns the server's nats.conf."""
    template = Template((NATS_COMPOSE_DIR / "nats.conf.tmpl").read_text())
    # substitute() rather than safe_substitute(): a missing value is a bug here.
    return template.substitute(
        server_name=server.name,
        client_port=CLIENT_PORT,
        monitor_port=MONITOR_PORT,
        route_port=ROUTE_PORT,
        store_dir=STORE_DIR,
        sync_interval=profile.setting(),
        cluster_name=cluster_name,
        client_user=CLIENT_USER,
        system_user=SYSTEM_USER,
        system_password=SYSTEM_PASSWORD,
        routes="\n    ".join(route_urls(server, servers)),
    )


def client_urls(servers: Sequence[Server]) -> list[str]:
    """Returns the client URLs of servers, for nats-py's `servers` option."""
    return [f"nats://{s.address}:{CLIENT_PORT}" for s in servers]
