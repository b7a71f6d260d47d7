"""What `cluster up` refuses before it makes anything: names Docker refuses, counts the
/24 layout cannot hold, time bounds that are not positive finite numbers, clusters
that do not fit the machine; and the per-node limits it sets (no Docker)."""

from __future__ import annotations

import ipaddress

import pytest

from harness.cli import build_parser
from harness.cluster.layout import MAX_BROKERS, MAX_ZOOKEEPERS, ClusterSpec, SpecError, plan_nodes
from harness.cluster.resources import (
    ROLE_LIMITS,
    Machine,
    cluster_memory_mib,
    fit_problem,
    host_limits,
    node_environment,
)

GIB = 1024


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        ({"name": "bad/name"}, "cluster name 'bad/name'"),
        ({"name": ""}, "cluster name ''"),
        ({"name": "-x"}, "cluster name '-x'"),
        ({"name": "a+b"}, "cluster name 'a+b'"),
        ({"name": "x" * 101}, "cluster name"),
        ({"brokers": 0}, "brokers 0"),
        ({"brokers": 156}, "brokers 156: 1 to 89"),
        ({"zookeepers": 90}, "zookeepers 90: 1 to 89"),
        ({"kafka_config": "reckless"}, "kafka config 'reckless'"),
    ],
)
def test_specs_no_cluster_can_have_are_refused(shape: dict[str, object], problem: str) -> None:
    with pytest.raises(SpecError) as exc:
        ClusterSpec(**shape)  # type: ignore[arg-type]
    assert problem in str(exc.value)


def test_the_largest_layout_fits_one_slash_24_without_overlap() -> None:
    subnet = ipaddress.ip_network("172.30.9.0/24")
    nodes = plan_nodes(ClusterSpec("x" * 100, MAX_BROKERS, MAX_ZOOKEEPERS), subnet)
    addresses = [ipaddress.ip_address(n.address) for n in nodes]
    assert len(set(addresses)) == MAX_BROKERS + MAX_ZOOKEEPERS
    usable = set(subnet.hosts()) - {next(subnet.hosts())}  # .1 is the gateway
    assert set(addresses) <= usable
    assert str(nodes[MAX_BROKERS - 1].address) == "172.30.9.189"
    assert str(nodes[-1].address) == "172.30.9.99"


@pytest.mark.parametrize(
    "argv",
    [
        ["--timeout", "0"],
        ["--timeout", "-5"],
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--timeout", "soon"],
        ["--name", "bad/name"],
        ["--brokers", "156"],
        ["--brokers", "90"],
        ["--zookeepers", "90"],
    ],
)
def test_cluster_up_refuses_bad_options_with_254(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["cluster", "up", *argv])
    assert exc.value.code == 254


def test_cluster_up_and_down_options() -> None:
    parser = build_parser()
    up = parser.parse_args(["cluster", "up", "--timeout", "2.5", "--replace", "--brokers", "89"])
    assert (up.timeout, up.replace, up.brokers) == (2.5, True, 89)
    assert parser.parse_args(["cluster", "up"]).replace is False
    assert parser.parse_args(["cluster", "down", "--checkout"]).checkout is True
    with pytest.raises(SystemExit):
        parser.parse_args(["cluster", "down", "--checkout", "--all"])


def test_a_cluster_that_does_not_fit_is_refused_with_one_line() -> None:
    machine = Machine(memory_mib=24 * GIB, cpus=2)
    problem = fit_problem(ClusterSpec(brokers=89), machine)
    assert problem is not None and "\n" not in problem
    assert "89 brokers and 1 ZooKeeper need 89.5 GiB" in problem
    most = int(problem.rsplit("at most ", 1)[1].split()[0])
    assert fit_problem(ClusterSpec(brokers=most), machine) is None
    assert fit_problem(ClusterSpec(brokers=most + 1), machine) is not None


def test_the_default_cluster_fits_a_4_gib_machine() -> None:
    assert fit_problem(ClusterSpec(), Machine(memory_mib=4 * GIB, cpus=2)) is None
    assert fit_problem(ClusterSpec(), Machine(memory_mib=3 * GIB, cpus=2)) is not None
    assert cluster_memory_mib({"kafka": 3, "zookeeper": 1}) == 3 * 1024 + 512
    assert cluster_memory_mib(ClusterSpec(metadata="kraft").role_counts()) == 3 * 1024 + 3 * 512


def test_every_node_is_bounded_and_its_heap_is_within_its_memory() -> None:
    for role, limits in ROLE_LIMITS.items():
        bounds = host_limits(role, Machine(memory_mib=24 * GIB, cpus=8))
        assert bounds["mem_limit"] == bounds["memswap_limit"] == limits.memory_mib * 2**20
        assert bounds["nano_cpus"] == 7 * 10**9
        assert bounds["pids_limit"] == limits.pids > 0
        heap = int(node_environment(role)["HEAP_MIB"])
        assert heap * 2 <= limits.memory_mib
    assert host_limits("kafka", Machine(memory_mib=GIB, cpus=1))["nano_cpus"] == 10**9
