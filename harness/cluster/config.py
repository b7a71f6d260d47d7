"""Renders Kafka and ZooKeeper configuration from the templates in compose/, by profile
and release (what each release can do: harness/cluster/releases.py).

The templates hold every setting: compose/server.properties.tmpl what every Kafka node
shares, zookeeper.properties.tmpl and kraft.properties.tmpl what one metadata mode
adds. A profile fills only the few values that differ, so no setting is written in two
places. Its name says them in one order: safe or unsafe, then -fsync when every write is
fsynced before it is acknowledged, then -elr or -no-elr when it sets eligible leader
replicas (safe, safe-fsync, safe-elr, safe-fsync-no-elr, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template

from harness.cluster.releases import RELEASES, Metadata

COMPOSE_DIR = Path(__file__).resolve().parents[2] / "compose"
BROKER_PORT = 9092
"""Where every broker is advertised and reached, by clients and by other brokers."""
CONTROLLER_PORT = 9093
PROXIED_PORT = 19092
"""With faultproxy in front (--faultproxy), the broker's own listener, on loopback only:
the proxy listens on BROKER_PORT and forwards here, so nothing reaches the broker but
through it."""
PROXY_CONTROL_PORT = 9095
"""faultproxy's control API (faultproxy/control.go), on the node's address."""
ZOOKEEPER_SESSION_TIMEOUT_S = 6.0
"""A ZooKeeper-mode broker's session timeout: a crashed broker's registration
(/brokers/ids/<id>, an ephemeral node) outlives it by this long, and until it goes the
broker cannot start again (Kafka refuses with NodeExists: DockerCluster.start waits)."""
ELR_FEATURE = "eligible.leader.replicas.version"
"""KIP-966's feature flag (Kafka 4.x): level 1 turns eligible leader replicas on."""
KAFKA_FLUSH_DEFAULT = 2**63 - 1
"""log.flush.interval.messages as Kafka ships it (Long.MAX_VALUE): no fsync of its own
in the append path; the OS writes the page cache back when it will."""


@dataclass(frozen=True, slots=True)
class Profile:
    """The durability settings that distinguish one Kafka configuration from another."""

    name: str
    min_insync_replicas: int
    unclean_leader_election: bool
    eligible_leader_replicas: bool | None = None
    """KIP-966 on a KRaft cluster of a release that has it, set when its storage is
    formatted; None leaves the release's default (on in a new cluster from 4.1)."""
    fsync_every_write: bool = False
    """log.flush.interval.messages=1 on every broker, the server default of every topic's
    flush.messages (Kafka's TopicConfig: "if this was set to 1 we would fsync after every
    message"). UnifiedLog.append, which the leader's produce path (appendAsLeader) and
    the replica fetcher's (appendAsFollower) both call, fsyncs the partition's segments
    once the unflushed count reaches it, before it returns; a follower reports its new
    log end only in its next fetch, so a write under acks=all is on the disk of every ISR
    replica before the high watermark passes it. The time-based settings
    (log.flush.interval.ms, flush.ms) would add nothing, and the metadata log (KRaft's
    Raft client) and ZooKeeper (forceSync) fsync before acknowledging in every profile."""

    @property
    def flush_interval_messages(self) -> int:
        """Returns log.flush.interval.messages: 1 when every write is fsynced, else
        Kafka's default."""
        return 1 if self.fsync_every_write else KAFKA_FLUSH_DEFAULT

    @property
    def safety(self) -> str:
        """Returns "unsafe" when unclean election is allowed, else "safe": the topic
        settings the workloads create their topics with."""
        return "unsafe" if self.unclean_leader_election else "safe"


def _profiles() -> dict[str, Profile]:
    base = {"safe": (2, False), "unsafe": (1, True)}
    flushes = {"": False, "-fsync": True}
    elrs: dict[str, bool | None] = {"": None, "-elr": True, "-no-elr": False}
    found: dict[str, Profile] = {}
    for name, (min_isr, unclean) in base.items():
        for flush, fsync in flushes.items():
            for suffix, elr in elrs.items():
                full = f"{name}{flush}{suffix}"
                found[full] = Profile(full, min_isr, unclean, elr, fsync)
    return found


PROFILES: dict[str, Profile] = _profiles()


def profile_problem(profile: Profile, version: str, metadata: Metadata) -> str | None:
    """Returns why a profile cannot run on a release in a metadata mode, or None."""
    if profile.eligible_leader_replicas is None:
        return None
    if metadata != "kraft" or not RELEASES[version].elr_feature:
        return (
            f"kafka config {profile.name!r} sets eligible leader replicas, which only "
            f"KRaft on Kafka {next(v for v, r in RELEASES.items() if r.elr_feature)} and later has"
        )
    return None


def _render(template_names: Sequence[str], values: dict[str, object]) -> str:
    text = "\n".join((COMPOSE_DIR / name).read_text() for name in template_names)
    # substitute() rather than safe_substitute(): a missing value is a bug here.
    return Template(text).substitute({k: str(v) for k, v in values.items()})


def _shared_values(brokers: int, profile: Profile) -> dict[str, object]:
    replication_factor = min(3, brokers)
    return {
        "replication_factor": replication_factor,
        # min.insync.replicas above the replication factor would refuse every write.
        "min_insync_replicas": min(profile.min_insync_replicas, replication_factor),
        "unclean_leader_election": str(profile.unclean_leader_election).lower(),
        "flush_interval_messages": profile.flush_interval_messages,
    }


def broker_listener(proxied: bool) -> str:
    """Returns where a broker listens: on every address at BROKER_PORT, or behind
    faultproxy on loopback only. Either way it is advertised at BROKER_PORT."""
    return (
        f"PLAINTEXT://127.0.0.1:{PROXIED_PORT}" if proxied else f"PLAINTEXT://0.0.0.0:{BROKER_PORT}"
    )


def proxy_arguments() -> str:
    """Returns faultproxy's arguments in a broker of a cluster made with --faultproxy."""
    return (
        f"-listen :{BROKER_PORT} -upstream 127.0.0.1:{PROXIED_PORT} -control :{PROXY_CONTROL_PORT}"
    )


def server_properties(
    *,
    broker_id: int,
    address: str,
    zookeeper_connect: str,
    brokers: int,
    profile: Profile,
    proxied: bool = False,
) -> str:
    """Takes one ZooKeeper-mode broker's identity, the cluster's shape and whether
    faultproxy stands in front of it; returns its server.properties."""
    return _render(
        ("zookeeper.properties.tmpl", "server.properties.tmpl"),
        {
            "broker_id": broker_id,
            "address": address,
            "broker_port": BROKER_PORT,
            "listeners": broker_listener(proxied),
            "zookeeper_connect": zookeeper_connect,
            "zookeeper_session_timeout_ms": int(ZOOKEEPER_SESSION_TIMEOUT_S * 1000),
            **_shared_values(brokers, profile),
        },
    )


def kraft_properties(
    *,
    node_id: int,
    address: str,
    broker: bool,
    controller: bool,
    quorum_voters: str,
    brokers: int,
    profile: Profile,
    share_groups: bool = False,
    proxied: bool = False,
    dynamic_quorum: bool = False,
) -> str:
    """Takes one KRaft node's identity and roles (broker, controller or both), the
    quorum's voters, the cluster's shape, whether its release runs the share workload
    (then its brokers get compose/share.properties.tmpl), whether faultproxy stands
    in front of its broker and whether the quorum is dynamic (KIP-853: the voters are
    found through controller.quorum.bootstrap.servers, and a controller advertises its
    endpoint, which add-controller tells the quorum); returns its server.properties."""
    roles = [r for r, has in (("broker", broker), ("controller", controller)) if has]
    listeners = [
        listener
        for listener, has in (
            (broker_listener(proxied), broker),
            (f"CONTROLLER://0.0.0.0:{CONTROLLER_PORT}", controller),
        )
        if has
    ]
    advertised_at = [
        listener
        for listener, has in (
            (f"PLAINTEXT://{address}:{BROKER_PORT}", broker),
            (f"CONTROLLER://{address}:{CONTROLLER_PORT}", controller and dynamic_quorum),
        )
        if has
    ]
    advertised = f"advertised.listeners={','.join(advertised_at)}" if advertised_at else ""
    quorum = (
        f"controller.quorum.bootstrap.servers={bootstrap_controllers(quorum_voters)}"
        if dynamic_quorum
        else f"controller.quorum.voters={quorum_voters}"
    )
    templates = ["kraft.properties.tmpl", "server.properties.tmpl"]
    if share_groups:
        templates.append("share.properties.tmpl")
    return _render(
        templates,
        {
            "process_roles": ",".join(roles),
            "node_id": node_id,
            "quorum": quorum,
            "listeners": ",".join(listeners),
            "advertised_listeners": advertised,
            **_shared_values(brokers, profile),
        },
    )


def quorum_voters(voters: Sequence[tuple[int, str]]) -> str:
    """Takes the controllers' (node id, address). Returns controller.quorum.voters."""
    return ",".join(f"{node_id}@{address}:{CONTROLLER_PORT}" for node_id, address in voters)


def bootstrap_controllers(voters: str) -> str:
    """Takes controller.quorum.voters. Returns the same controllers as
    controller.quorum.bootstrap.servers ("address:port,..."), which a dynamic quorum
    is found through."""
    return ",".join(v.partition("@")[2] for v in voters.split(","))


def initial_controllers(voters: Sequence[tuple[int, str, str]]) -> str:
    """Takes the controllers' (node id, address, metadata directory id). Returns
    `kafka-storage format --initial-controllers`: id@address:port:directory-id,..."""
    return ",".join(
        f"{node_id}@{address}:{CONTROLLER_PORT}:{directory}"
        for node_id, address, directory in voters
    )


def storage_format_args(
    profile: Profile, version: str, dynamic_voters: str | None = None
) -> list[str]:
    """Returns the extra arguments of `kafka-storage format` for a profile on a release:
    the eligible leader replicas feature level when the profile sets it, and for a
    controller of a dynamic quorum the initial voters (dynamic_voters, as
    initial_controllers spells them), from which it takes its own directory id. A broker
    of a dynamic quorum needs none: it finds the voters through the bootstrap servers."""
    args = []
    if profile.eligible_leader_replicas is not None and RELEASES[version].elr_feature:
        args += ["--feature", f"{ELR_FEATURE}={int(profile.eligible_leader_replicas)}"]
    if dynamic_voters is not None:
        args += ["--initial-controllers", dynamic_voters]
    return args


def zoo_cfg(addresses: list[str]) -> str:
    """Takes the ZooKeeper servers' addresses in id order; returns zoo.cfg for any of them."""
    servers = ""
    if len(addresses) > 1:
        servers = "\n".join(
            f"server.{i}={addr}:2888:3888" for i, addr in enumerate(addresses, start=1)
        )
    return _render(("zoo.cfg.tmpl",), {"servers": servers})


def zookeeper_connect(addresses: list[str]) -> str:
    """Returns Kafka's zookeeper.connect string for the given ZooKeeper addresses."""
    return ",".join(f"{addr}:2181" for addr in addresses)
