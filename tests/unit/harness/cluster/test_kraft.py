"""KRaft clusters without Docker: the config each role renders, the node plan, which
releases and profiles go together, the options of `cluster up` and `run`, what a node's
container is made with, when `cluster status` calls a quorum unhealthy, and that
partition-zookeeper refuses a cluster without ZooKeeper."""

from __future__ import annotations

import ipaddress
import random
from typing import Any

import pytest

from harness.cli import build_parser
from harness.cluster import config
from harness.cluster.layout import ClusterSpec, SpecError, plan_nodes
from harness.cluster.node_setup import new_cluster_id, node_command, node_env, node_files
from harness.cluster.resources import Machine, fit_problem
from harness.cluster.status import problems, quorum_problems
from harness.commands.cluster import cluster_spec, shape
from harness.commands.run import spec_from_args
from nemesis.core import Skipped
from nemesis.partition import NetworkFault
from tests.support.fake_cluster import FakeCluster

SUBNET = ipaddress.ip_network("172.30.5.0/24")


def props(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {k: v for k, v in pairs}


def files_of(spec: ClusterSpec, name: str) -> dict[str, str]:
    nodes = plan_nodes(spec, SUBNET)
    node = next(n for n in nodes if n.name == name)
    return props(node_files(spec, node, nodes)["/etc/kafka/server.properties"])


KRAFT = ClusterSpec(kafka_version="4.4.0", metadata="kraft")


def test_dedicated_kraft_plans_brokers_then_three_controllers_apart_from_them() -> None:
    nodes = plan_nodes(KRAFT, SUBNET)
    assert [(n.name, n.role, n.id, n.address) for n in nodes] == [
        ("n1", "kafka", 1, "172.30.5.101"),
        ("n2", "kafka", 2, "172.30.5.102"),
        ("n3", "kafka", 3, "172.30.5.103"),
        ("c1", "controller", 101, "172.30.5.11"),
        ("c2", "controller", 102, "172.30.5.12"),
        ("c3", "controller", 103, "172.30.5.13"),
    ]
    combined = plan_nodes(ClusterSpec(metadata="kraft", kraft_roles="combined"), SUBNET)
    assert [(n.name, n.role) for n in combined] == [(f"n{i}", "combined") for i in (1, 2, 3)]


def test_each_kraft_role_gets_its_listeners_and_every_node_the_same_voters() -> None:
    voters = "101@172.30.5.11:9093,102@172.30.5.12:9093,103@172.30.5.13:9093"
    broker, controller = files_of(KRAFT, "n2"), files_of(KRAFT, "c3")
    assert broker["process.roles"] == "broker" and broker["node.id"] == "2"
    assert broker["listeners"] == "PLAINTEXT://0.0.0.0:9092"
    assert broker["advertised.listeners"] == "PLAINTEXT://172.30.5.102:9092"
    assert controller["process.roles"] == "controller" and controller["node.id"] == "103"
    assert controller["listeners"] == "CONTROLLER://0.0.0.0:9093"
    assert "advertised.listeners" not in controller
    assert broker["controller.quorum.voters"] == controller["controller.quorum.voters"] == voters
    both = files_of(ClusterSpec(metadata="kraft", kraft_roles="combined"), "n1")
    assert both["process.roles"] == "broker,controller"
    assert both["listeners"] == "PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093"
    assert both["controller.quorum.voters"].startswith("1@172.30.5.101:9093,2@")
    for p in (broker, controller, both):
        assert "zookeeper.connect" not in p and "broker.id" not in p
        assert "$" not in "".join(p.values())


@pytest.mark.parametrize("profile", ["safe", "unsafe-no-elr"])
def test_both_modes_share_the_durability_settings_and_timers(profile: str) -> None:
    zk = files_of(ClusterSpec(kafka_config=profile.split("-")[0]), "n1")
    kraft = files_of(
        ClusterSpec(kafka_version="4.4.0", metadata="kraft", kafka_config=profile), "c1"
    )
    shared = ("min.insync.replicas", "unclean.leader.election.enable", "replica.lag.time.max.ms")
    assert {k: zk[k] for k in shared} == {k: kraft[k] for k in shared}
    assert int(kraft["broker.session.timeout.ms"]) <= 6000
    assert int(kraft["unclean.leader.election.interval.ms"]) <= 1000
    assert zk["zookeeper.connect"] == "172.30.5.11:2181"


def test_elr_profiles_set_the_feature_at_format_and_only_where_it_exists() -> None:
    profiles = config.PROFILES
    assert config.storage_format_args(profiles["safe"], "4.4.0") == []
    assert config.storage_format_args(profiles["safe-no-elr"], "4.4.0") == [
        "--feature",
        "eligible.leader.replicas.version=0",
    ]
    assert config.storage_format_args(profiles["unsafe-elr"], "4.4.0")[1].endswith("=1")
    assert profiles["unsafe-no-elr"].safety == "unsafe" and profiles["safe-elr"].safety == "safe"
    for version, metadata in (("3.9.1", "kraft"), ("3.9.1", "zookeeper")):
        with pytest.raises(SpecError, match="eligible leader replicas"):
            ClusterSpec(kafka_config="safe-elr", kafka_version=version, metadata=metadata)  # type: ignore[arg-type]


def test_kafka_4_has_no_zookeeper_mode() -> None:
    with pytest.raises(SpecError, match="no ZooKeeper mode"):
        ClusterSpec(kafka_version="4.4.0", metadata="zookeeper")
    with pytest.raises(SpecError, match=r"kafka version '2\.8\.0'"):
        ClusterSpec(kafka_version="2.8.0")
    with pytest.raises(SpecError, match="controllers 10"):
        ClusterSpec(metadata="kraft", controllers=10)


def test_options_default_the_metadata_mode_from_the_version() -> None:
    parser = build_parser()
    up = parser.parse_args(["cluster", "up", "--kafka-version", "4.4.0"])
    assert cluster_spec(up, "kr").metadata == "kraft"
    assert cluster_spec(parser.parse_args(["cluster", "up"]), "kr").metadata == "zookeeper"
    old_kraft = parser.parse_args(
        ["cluster", "up", "--metadata", "kraft", "--kraft-roles", "combined"]
    )
    spec = cluster_spec(old_kraft, "kr")
    assert (spec.kafka_version, spec.metadata, spec.kraft_roles) == ("3.9.1", "kraft", "combined")
    assert shape(spec) == "Kafka 3.9.1 on KRaft, 3 brokers that are also the controllers (safe)"
    bad = parser.parse_args(
        ["cluster", "up", "--kafka-version", "4.4.0", "--metadata", "zookeeper"]
    )
    with pytest.raises(SpecError):
        cluster_spec(bad, "kr")


def test_run_records_the_release_and_mode_and_refuses_what_cannot_run() -> None:
    parser = build_parser()
    args = parser.parse_args(["run", "--kafka-version", "4.4.0", "--kafka-config", "unsafe-no-elr"])
    spec = spec_from_args(args, seed=7)
    cluster = spec.cluster
    assert (cluster.kafka_version, cluster.metadata, cluster.controllers) == ("4.4.0", "kraft", 3)
    assert spec.to_json()["metadata"] == "kraft"
    assert cluster.role_counts() == {"kafka": 3, "controller": 3}
    with pytest.raises(ValueError, match="eligible leader replicas"):
        spec_from_args(parser.parse_args(["run", "--kafka-config", "safe-elr"]), seed=7)


def test_a_kraft_node_formats_with_one_cluster_id_and_its_profile() -> None:
    nodes = plan_nodes(
        ClusterSpec(kafka_version="4.4.0", metadata="kraft", kafka_config="safe-no-elr"), SUBNET
    )
    spec = ClusterSpec(kafka_version="4.4.0", metadata="kraft", kafka_config="safe-no-elr")
    cluster_id = new_cluster_id()
    assert len(cluster_id) == 22 and cluster_id != new_cluster_id()
    envs = [node_env(spec, n, cluster_id) for n in nodes]
    assert {e["KRAFT_CLUSTER_ID"] for e in envs} == {cluster_id}
    assert {e["KRAFT_FORMAT_ARGS"] for e in envs} == {
        "--feature eligible.leader.replicas.version=0"
    }
    assert {tuple(node_command(spec, n)) for n in nodes} == {("kraft",)}
    zk_nodes = plan_nodes(ClusterSpec(), SUBNET)
    assert [node_command(ClusterSpec(), n) for n in zk_nodes][-1] == ["zookeeper"]
    assert "KRAFT_CLUSTER_ID" not in node_env(ClusterSpec(), zk_nodes[0], cluster_id)


def test_a_kraft_cluster_that_does_not_fit_names_its_controllers() -> None:
    problem = fit_problem(ClusterSpec(brokers=30, metadata="kraft"), Machine(8 * 1024, 2))
    assert problem is not None
    assert problem.startswith("30 brokers and 3 controllers need 31.5 GiB")
    assert problem.endswith("at most 6 brokers with 3 controllers")


def quorum(**changes: Any) -> dict[str, Any]:
    voters = [
        {"id": 100 + i, "node": f"c{i}", "state": "running", "lag": 0, "last_fetch_ago_ms": 200}
        for i in (1, 2, 3)
    ]
    voters[0]["last_fetch_ago_ms"] = None
    return {"leader": 101, "leader_node": "c1", "epoch": 3, "voters": voters} | changes


def test_a_led_quorum_whose_voters_fetch_is_healthy() -> None:
    assert quorum_problems(quorum()) == []
    info = {"brokers": [], "controller": 1, "zookeeper": [], "topics": {}, "quorum": quorum()}
    assert problems(info) == []


def test_no_leader_a_stopped_controller_and_a_cut_off_voter_are_each_named() -> None:
    q = quorum()
    q["voters"][1] |= {"state": "exited"}
    q["voters"][2] |= {"last_fetch_ago_ms": 7400, "lag": 12}
    assert quorum_problems(q) == [
        "c2: container exited",
        "c3: voter 103 last fetched 7.4 s ago (lag 12)",
    ]
    assert quorum_problems(quorum(leader=None))[0] == "no quorum leader"


def test_partition_zookeeper_says_it_does_not_apply_on_kraft_and_cuts_nothing() -> None:
    cluster = FakeCluster(kraft=True)
    fault = NetworkFault("partition-zookeeper", "t", random.Random(1))
    fault.setup(cluster)
    with pytest.raises(Skipped, match="does not apply on KRaft"):
        fault.invoke("start-partition-zookeeper")
    assert cluster.execs == []


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-storage format would read `-t -xyz...` as an option (a CI run hit it)."""
    import uuid

    draws = iter([uuid.UUID(bytes=b"\xf8" + bytes(15)), uuid.UUID(int=7)])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(draws))
    assert new_cluster_id() == "AAAAAAAAAAAAAAAAAAAABw"
