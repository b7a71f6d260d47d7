"""Clock faults move the wall clocks of the nodes a target names, each by its own bump of
5 to 262 s ahead or behind, strobe them between wrong and right, and set every clock
they moved right at stop and teardown, even one that could not be set at first. A run
asking for one makes its cluster with libfaketime; a NATS run refuses them."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.commands.run import spec_from_args
from harness.spec import TestSpec
from nemesis.clock import LARGEST_BUMP_S, SMALLEST_BUMP_S, ClockFault, bump_seconds
from nemesis.cluster import Cluster
from nemesis.core import Skipped
from tests.support.fake_cluster import FakeCluster


class ClockedCluster(FakeCluster):
    """A FakeCluster whose nodes' clocks can be set; `down` nodes refuse."""

    def __init__(self, leader: int = 1, kraft: bool = False) -> None:
        super().__init__(leader=leader, kraft=kraft)
        self.offsets: dict[str, int] = {}
        self.settings: list[tuple[str, int]] = []
        self.down: set[str] = set()

    def set_clock_offset(self, node: str, seconds: int) -> None:
        if node in self.down:
            raise RuntimeError(f"{node} is not running")
        self.offsets[node] = seconds
        self.settings.append((node, seconds))


def _fault(name: str, cluster: FakeCluster, seed: int = 1) -> ClockFault:
    fault = ClockFault(name, "t", random.Random(seed))
    c: Cluster = cluster
    fault.setup(c)
    return fault


def test_a_bump_is_between_the_smallest_and_the_largest_either_way() -> None:
    rng = random.Random(7)
    bumps = [bump_seconds(rng) for _ in range(400)]
    assert all(SMALLEST_BUMP_S <= abs(b) <= LARGEST_BUMP_S for b in bumps)
    assert min(bumps) < 0 < max(bumps)


def test_the_leaders_clock_is_bumped_and_set_right_at_stop() -> None:
    cluster = ClockedCluster(leader=2)
    fault = _fault("bump-clock-leader", cluster)
    done = fault.invoke("start-bump-clock-leader")
    assert list(done["offsets_s"]) == ["n2"] and done["partition"] == 0
    assert cluster.offsets["n2"] == done["offsets_s"]["n2"] != 0
    assert fault.invoke("stop-bump-clock-leader") == {"reset": {"nodes": ["n2"]}}
    assert cluster.offsets == {"n2": 0}
    with pytest.raises(Skipped):
        fault.invoke("stop-bump-clock-leader")


def test_each_node_of_a_majority_gets_its_own_bump() -> None:
    cluster = ClockedCluster()
    done = _fault("bump-clock-majority", cluster, seed=3).invoke("start-bump-clock-majority")
    assert len(done["offsets_s"]) == 2 and len(set(done["offsets_s"].values())) == 2


def test_a_node_whose_clock_cannot_be_set_is_reported_and_set_right_at_teardown() -> None:
    cluster = ClockedCluster(leader=1)
    cluster.down.add("n1")
    fault = _fault("bump-clock-leader", cluster)
    done = fault.invoke("start-bump-clock-leader")
    assert "n1" in done["errors"]
    assert fault.invoke("stop-bump-clock-leader")["reset"]["errors"].keys() == {"n1"}
    cluster.down.clear()
    assert fault.teardown() == {"bump-clock-leader": {"reset": {"nodes": ["n1"]}}}
    assert cluster.offsets == {"n1": 0}


def test_a_strobe_flips_the_clock_between_right_and_wrong_until_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("nemesis.clock.STROBE_PERIOD_S", 0.01)
    cluster = ClockedCluster(leader=3)
    fault = _fault("strobe-clock-leader", cluster)
    offset = fault.invoke("start-strobe-clock-leader")["offsets_s"]["n3"]
    deadline = time.monotonic() + 5
    while len(cluster.settings) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    fault.invoke("stop-strobe-clock-leader")
    settings = [s for _, s in cluster.settings]
    assert settings[:5] == [offset, 0, offset, 0, offset]
    assert settings[-1] == 0
    count = len(cluster.settings)
    time.sleep(0.05)
    assert len(cluster.settings) == count, "the strobe went on after stop"


def test_a_cluster_whose_clocks_cannot_move_is_refused() -> None:
    c: Cluster = FakeCluster()
    with pytest.raises(TypeError, match="clocks cannot move"):
        ClockFault("bump-clock-one", "t", random.Random(1)).setup(c)


def test_a_run_with_a_clock_fault_makes_its_cluster_with_libfaketime() -> None:
    def spec(*argv: str) -> TestSpec:
        return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)

    assert spec("--nemesis", "bump-clock-one").cluster.faketime
    assert not spec("--nemesis", "kill-one").cluster.faketime
    with pytest.raises(ValueError, match="--db nats does not take the faults bump-clock-one"):
        spec("--db", "nats", "--nemesis", "bump-clock-one")


def test_the_clients_clocks_are_every_drivers_file_bumped_and_set_right(tmp_path: Path) -> None:
    for driver in ("t-txn-1#1", "t-txn-2#1"):
        (tmp_path / driver).write_text("+0\n")
    fault = ClockFault("bump-clock-clients", "t", random.Random(3), client_clocks=tmp_path)
    fault.setup(FakeCluster())  # the brokers' clocks need no libfaketime for this one
    done = fault.invoke("start-bump-clock-clients")
    assert sorted(done["offsets_s"]) == ["t-txn-1#1", "t-txn-2#1"] and done["clients"] == 2
    for driver, seconds in done["offsets_s"].items():
        assert (tmp_path / driver).read_text() == f"{seconds:+d}\n" and seconds != 0
    assert fault.invoke("stop-bump-clock-clients") == {
        "reset": {"nodes": ["t-txn-1#1", "t-txn-2#1"]}
    }
    assert {p.read_text() for p in tmp_path.iterdir()} == {"+0\n"}  # no temporary left


def test_a_client_clock_fault_with_no_driver_running_is_skipped(tmp_path: Path) -> None:
    fault = ClockFault("strobe-clock-clients", "t", random.Random(3), client_clocks=tmp_path)
    fault.setup(FakeCluster())
    with pytest.raises(Skipped):
        fault.invoke("start-strobe-clock-clients")
    with pytest.raises(TypeError):  # a run made without the clients' clock files
        ClockFault("bump-clock-clients", "t", random.Random(3)).setup(FakeCluster())


def test_a_client_clock_fault_needs_the_java_client() -> None:
    parser = build_parser()
    java = ["run", "--workload", "queue", "--txn", "--client", "java"]
    spec = spec_from_args(parser.parse_args([*java, "--nemesis", "bump-clock-clients"]), seed=1)
    assert spec.nemesis == ("bump-clock-clients",) and not spec.cluster.faketime
    for argv in (["run", "--workload", "queue", "--txn"], ["run", "--workload", "kv"]):
        with pytest.raises(ValueError, match="needs --workload queue --txn --client java"):
            spec_from_args(parser.parse_args([*argv, "--nemesis", "strobe-clock-clients"]), seed=1)
