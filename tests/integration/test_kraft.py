"""KRaft on real Kafka and Docker: a 4.4.0 cluster with dedicated controllers comes up
formatted and led, with eligible leader replicas on; its committed partition state is
read from a broker that reaches the quorum; kill-active-controller moves it;
partition-controller-quorum shows in `cluster status`; partition-brokers-from-controllers
cuts only across; a 3.9.1 cluster of combined nodes comes up too; a run records and
draws the active controller moving; nothing is left behind."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest

from harness.cluster.docker_cluster import ClusterSpec, DockerCluster
from harness.cluster.images import ensure_node_image
from harness.cluster.status import describe
from harness.report.plots.images import METADATA_FILE
from harness.run.metadata_watch import read_samples
from nemesis import net
from nemesis.partition import NetworkFault
from nemesis.process import ProcessFault
from tests.integration.conftest import PREFIX
from tests.integration.kafka_io import check_prefer_leader, produce_all, read_all
from tests.integration.test_run import _run


def wait_for(what: str, pred: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def started(engine: docker.DockerClient, spec: ClusterSpec) -> Iterator[DockerCluster]:
    ensure_node_image(engine, print, spec.kafka_version)
    cluster = DockerCluster(spec, engine)
    try:
        cluster.up(timeout=180)
        yield cluster
    finally:
        cluster.down()
        assert cluster.exists() == 0


@pytest.fixture(scope="module")
def kraft(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A 4.4.0 cluster: 3 brokers and 3 dedicated controllers, safe."""
    spec = ClusterSpec(f"{PREFIX}-kraft", kafka_version="4.4.0", metadata="kraft")
    yield from started(engine, spec)


def healthy(cluster: DockerCluster) -> bool:
    return bool(describe(cluster)["healthy"])


def test_a_kraft_cluster_comes_up_led_with_elr_and_serves_writes(kraft: DockerCluster) -> None:
    info = describe(kraft)
    assert info["healthy"], info["problems"]
    quorum = info["quorum"]
    assert quorum["leader_node"] in ("c1", "c2", "c3")
    assert [v["node"] for v in quorum["voters"]] == ["c1", "c2", "c3"]
    assert kraft.features()["eligible.leader.replicas.version"] == 1
    admin = kraft.admin()
    admin.create_topic("t-kraft", [[1, 2, 3]])
    admin.wait_full_isr("t-kraft", timeout=30)
    values = [f"v{i}" for i in range(100)]
    assert produce_all(kraft.bootstrap_servers, "t-kraft", values) == values
    assert read_all(kraft.bootstrap_servers, "t-kraft") == values
    committed = kraft.committed_partitions("t-kraft")[0]
    assert (committed.leader, committed.isr, committed.leader_epoch) == (1, (1, 2, 3), 0)


def test_a_broker_forwards_a_reordering_of_replicas_to_the_quorum(kraft: DockerCluster) -> None:
    # On KRaft controller() names a random broker, which forwards the request.
    check_prefer_leader(kraft, "t-kraft-prefer")


def test_kill_active_controller_moves_it(kraft: DockerCluster) -> None:
    before = kraft.active_controller()
    assert before is not None
    epoch = kraft.quorum().epoch
    fault = ProcessFault("kill-active-controller", "t-kraft", random.Random(1))
    fault.setup(kraft)
    try:
        assert fault.invoke("start-kill-active-controller")["killed"] == before
        wait_for(
            "another controller to lead", lambda: kraft.active_controller() not in (None, before)
        )
        assert kraft.quorum().epoch > epoch
        assert fault.invoke("stop-kill-active-controller")["restored"] == [before]
    finally:
        fault.teardown()
    wait_for("the restarted controller to catch up", lambda: healthy(kraft), timeout=90)


def test_partition_controller_quorum_shows_in_status(kraft: DockerCluster) -> None:
    leader = kraft.active_controller()
    assert leader is not None
    fault = NetworkFault("partition-controller-quorum", "t-kraft", random.Random(1))
    fault.setup(kraft)
    try:
        done = fault.invoke("start-partition-controller-quorum")
        assert done["isolated"] == leader and done["verified"]["cut"], done

        def cut_off_named() -> bool:
            info = describe(kraft)
            return info["quorum"]["leader_node"] != leader and any(
                p.startswith(f"{leader}: voter") for p in info["problems"]
            )

        wait_for(f"status to show {leader} cut from the quorum", cut_off_named)
    finally:
        fault.teardown()
    wait_for("the quorum to be whole again", lambda: healthy(kraft), timeout=90)


def test_partition_brokers_from_controllers_cuts_only_across(kraft: DockerCluster) -> None:
    fault = NetworkFault("partition-brokers-from-controllers", "t-kraft", random.Random(1))
    fault.setup(kraft)
    try:
        done = fault.invoke("start-partition-brokers-from-controllers")
        assert done["verified"]["cut"], done
        assert set(done["grudge"]) == {*kraft.brokers, *kraft.controllers}
        # Brokers still reach each other and controllers their quorum: a leader stays known.
        assert net.reachable(kraft, "n1", ["n2", "n3"]) == {"n2": True, "n3": True}
        assert kraft.active_controller() is not None
    finally:
        fault.teardown()
    wait_for("the brokers to fetch metadata again", lambda: healthy(kraft), timeout=90)


def test_kafka_3_9_runs_kraft_on_combined_nodes(engine: docker.DockerClient) -> None:
    spec = ClusterSpec(f"{PREFIX}-combined", metadata="kraft", kraft_roles="combined")
    for cluster in started(engine, spec):
        info = describe(cluster)
        assert info["healthy"], info["problems"]
        assert cluster.controllers == cluster.brokers == ["n1", "n2", "n3"]
        assert info["quorum"]["leader_node"] in cluster.brokers
        assert "eligible.leader.replicas.version" not in cluster.features()


def test_a_run_records_and_draws_the_active_controller_moving(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        *("--kafka-version", "4.4.0", "--nemesis", "kill-active-controller"),
        *("--time-limit", "24", "--nemesis-interval", "8"),
    )
    assert code == 0, out
    [kill] = [op for op in results["nemesis"]["ops"] if op["f"] == "start-kill-active-controller"]
    killed, at = kill["value"]["killed"], kill["time"]
    samples = read_samples(tmp_path / "latest")
    before = [s for s in samples if s["time"] / 1e9 < at - 1 and s["leader"]]
    # A new leader within 8 s (the quorum needs 1-4 s here), before the stop restarts it.
    after = [s for s in samples if at + 3 < s["time"] / 1e9 < at + 8 and s["leader"]]
    assert before and after, samples
    assert {s["leader"] for s in before} == {killed}
    assert killed not in {s["leader"] for s in after}
    assert min(s["epoch"] for s in after) > max(s["epoch"] for s in before)
    assert (tmp_path / "latest" / METADATA_FILE).stat().st_size > 0
    assert f'src="{METADATA_FILE}"' in (tmp_path / "latest" / "report.html").read_text()
