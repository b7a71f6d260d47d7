"""Broker and ZooKeeper config rendering, node planning and CLI parsing (no Docker)."""

from __future__ import annotations

import ipaddress
from typing import Protocol

import pytest

from harness.cli import build_parser
from harness.cluster import config
from harness.cluster.docker_cluster import DockerCluster
from harness.cluster.layout import ClusterSpec, plan_nodes
from nemesis.cluster import Cluster


def props(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {k: v for k, v in pairs}


def render(profile: str, brokers: int = 3) -> dict[str, str]:
    return props(
        config.server_properties(
            broker_id=2,
            address="172.30.0.102",
            zookeeper_connect="172.30.0.11:2181",
            brokers=brokers,
            profile=config.PROFILES[profile],
        )
    )


def test_safe_profile_requires_two_in_sync_replicas_and_no_unclean_election() -> None:
    p = render("safe")
    assert p["min.insync.replicas"] == "2"
    assert p["unclean.leader.election.enable"] == "false"
    assert p["default.replication.factor"] == "3"


def test_unsafe_profile_allows_one_replica_and_unclean_election() -> None:
    p = render("unsafe")
    assert p["min.insync.replicas"] == "1"
    assert p["unclean.leader.election.enable"] == "true"


@pytest.mark.parametrize("profile", ["safe", "unsafe"])
def test_both_profiles_carry_the_fast_test_timers(profile: str) -> None:
    p = render(profile)
    assert p["broker.id"] == "2"
    assert p["advertised.listeners"] == "PLAINTEXT://172.30.0.102:9092"
    assert p["zookeeper.connect"] == "172.30.0.11:2181"
    assert int(p["replica.lag.time.max.ms"]) <= 5000
    assert int(p["zookeeper.session.timeout.ms"]) <= 6000
    assert p["auto.leader.rebalance.enable"] == "false"
    assert p["auto.create.topics.enable"] == "false"
    assert p["offsets.topic.num.partitions"] == "1"
    assert "$" not in "".join(p.values())


def test_small_clusters_cap_replication_and_min_isr() -> None:
    p = render("safe", brokers=1)
    assert p["default.replication.factor"] == "1"
    assert p["min.insync.replicas"] == "1"


def test_zoo_cfg_lists_an_ensemble_but_not_a_single_server() -> None:
    single = props(config.zoo_cfg(["172.30.0.11"]))
    assert "server.1" not in single
    assert int(single["tickTime"]) * 2 <= 6000  # Kafka's session timeout must be allowed
    ensemble = props(config.zoo_cfg(["a", "b", "c"]))
    assert ensemble["server.3"] == "c:2888:3888"
    assert config.zookeeper_connect(["a", "b"]) == "a:2181,b:2181"


def test_nodes_get_fixed_distinct_addresses_in_the_subnet() -> None:
    subnet = ipaddress.ip_network("172.30.7.0/24")
    nodes = plan_nodes(ClusterSpec(brokers=5, zookeepers=3), subnet)
    assert [n.name for n in nodes] == ["n1", "n2", "n3", "n4", "n5", "zk1", "zk2", "zk3"]
    assert len({n.address for n in nodes}) == 8
    assert all(ipaddress.ip_address(n.address) in subnet for n in nodes)
    assert nodes[0].address == "172.30.7.101"


def test_cluster_up_parses_shape_options() -> None:
    args = build_parser().parse_args(
        ["cluster", "up", "--brokers", "5", "--zookeepers", "3", "--kafka-config", "unsafe"]
    )
    assert (args.brokers, args.zookeepers, args.kafka_config, args.name) == (
        5,
        3,
        "unsafe",
        "harness",
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["cluster", "up", "--brokers", "0"],
        ["cluster", "up", "--brokers", "three"],
        ["cluster", "up", "--kafka-config", "reckless"],
        ["cluster", "explode"],
        [],
    ],
)
def test_bad_arguments_exit_254(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 254


def test_status_and_down_options() -> None:
    parser = build_parser()
    assert parser.parse_args(["cluster", "status", "--json"]).json is True
    assert parser.parse_args(["cluster", "down", "--all"]).all is True


def test_docker_cluster_has_every_member_of_the_cluster_protocol() -> None:
    members = {
        name
        for part in Cluster.__mro__[1:]
        if part is not Protocol and part is not object
        for name in vars(part)
        if not name.startswith("_")
    }
    assert members >= {"nodes", "exec", "kill", "start", "pause", "resume", "ip", "partitions"}
    assert all(hasattr(DockerCluster, name) for name in members)
