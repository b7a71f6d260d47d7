"""The cluster on real Kafka, ZooKeeper and Docker: produce and read back, kill and
restart a leader, pause a broker, cut and heal the network with iptables; `cluster up`
leaves nothing behind on any failure or signal, refuses what it cannot do, and bounds
its nodes; `cluster status` tells a killed broker at once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from harness.cluster.admin import Admin, AdminError
from harness.cluster.docker_cluster import ClusterError, ClusterSpec, DockerCluster, cluster_names
from harness.cluster.images import node_image
from harness.cluster.labels import CHECKOUT, CHECKOUT_LABEL, CLUSTER_LABEL, HARNESS_LABEL
from harness.cluster.resources import ROLE_LIMITS
from nemesis.cluster import PartitionState
from tests.integration.conftest import PREFIX
from tests.integration.kafka_io import check_prefer_leader, produce_all, read_all


def wait_until(what: str, pred: Callable[[], bool], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    last = "never true"
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except AdminError as err:
            # While a controller is being re-elected, brokers may report no topics.
            last = str(err)
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last})")


def make_topic(cluster: DockerCluster, name: str) -> PartitionState:
    """Creates a 3-replica topic and waits until every replica has its log.

    The ISR is full from creation, before the followers act on it; a follower paused
    in that window and resumed after its ZooKeeper session expired failed its
    LeaderAndIsr ("Log for partition ... is not available on broker 2") and stayed
    out of the ISR for good (seen 2 times in 8 runs, Kafka 3.9.1)."""
    admin = cluster.admin()
    admin.create_topic(name, [[1, 2, 3]])
    state = admin.wait_full_isr(name, timeout=30)[0]
    wait_until(
        f"every replica of {name} to create its log",
        lambda: all(cluster.has_log(b, name, 0) for b in cluster.brokers),
    )
    return state


def test_the_controller_is_made_preferred_leader_without_moving_data(
    cluster: DockerCluster,
) -> None:
    check_prefer_leader(cluster, "t-prefer")


def test_acks_all_writes_read_back(cluster: DockerCluster) -> None:
    make_topic(cluster, "t-readback")
    values = [f"v{i}" for i in range(200)]
    acked = produce_all(cluster.bootstrap_servers, "t-readback", values)
    assert acked == values
    assert read_all(cluster.bootstrap_servers, "t-readback") == values


def test_killed_leader_leaves_isr_and_rejoins_after_start(fresh_cluster: DockerCluster) -> None:
    cluster = fresh_cluster
    admin = cluster.admin()
    leader = make_topic(cluster, "t-kill").leader
    node = cluster.node_of_broker(leader)
    cluster.kill(node)
    assert cluster.state(node) == "exited"

    def moved() -> bool:
        p = admin.partitions("t-kill")[0]
        return p.leader not in (leader, -1) and leader not in p.isr

    wait_until("leadership to move and the ISR to shrink", moved)
    # Writes still succeed with min.insync.replicas=2 on the two survivors.
    assert produce_all(cluster.bootstrap_servers, "t-kill", ["after-kill"]) == ["after-kill"]
    cluster.start(node)
    wait_until(
        "the killed broker to rejoin the ISR", lambda: leader in admin.partitions("t-kill")[0].isr
    )
    assert "after-kill" in read_all(cluster.bootstrap_servers, "t-kill")


def test_paused_broker_drops_out_and_returns(fresh_cluster: DockerCluster) -> None:
    cluster = fresh_cluster
    admin = cluster.admin()
    p = make_topic(cluster, "t-pause")
    follower = next(b for b in p.replicas if b != p.leader)
    node = cluster.node_of_broker(follower)
    cluster.pause(node)
    try:
        assert cluster.state(node) == "paused"
        wait_until(
            "the paused follower to leave the ISR",
            lambda: follower not in admin.partitions("t-pause")[0].isr,
        )
    finally:
        cluster.resume(node)
    assert cluster.state(node) == "running"
    try:
        wait_until(
            "the resumed follower to rejoin the ISR",
            lambda: follower in admin.partitions("t-pause")[0].isr,
        )
    except AssertionError as err:
        views = {b: Admin(f"{cluster.ip(b)}:9092").partitions("t-pause") for b in cluster.brokers}
        leader = cluster.node_of_broker(p.leader)
        raise AssertionError(
            f"{err}\nper broker: {views}\n--- {node}:\n{cluster.log_tail(node, 60)}"
            f"\n--- {leader}:\n{cluster.log_tail(leader, 60)}"
        ) from None


def _reaches(cluster: DockerCluster, src: str, dst: str) -> bool:
    code, _ = cluster.exec(src, ["nc", "-z", "-w", "2", cluster.ip(dst), "9092"])
    return code == 0


def test_iptables_cuts_traffic_between_brokers_and_heals(fresh_cluster: DockerCluster) -> None:
    cluster = fresh_cluster
    assert _reaches(cluster, "n1", "n2")
    code, out = cluster.exec(
        "n1", ["iptables", "-A", "INPUT", "-s", cluster.ip("n2"), "-j", "DROP"]
    )
    assert code == 0, out
    assert not _reaches(cluster, "n1", "n2")
    assert not _reaches(cluster, "n2", "n1")
    assert _reaches(cluster, "n1", "n3")
    code, out = cluster.exec("n1", ["iptables", "-F", "INPUT"])
    assert code == 0, out
    assert _reaches(cluster, "n1", "n2")
    assert _reaches(cluster, "n2", "n1")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], capture_output=True, text=True, check=False
    )


def test_status_json_describes_the_cluster(cluster: DockerCluster) -> None:
    proc = _cli("cluster", "status", "--json", "--name", cluster.spec.name)
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert [b["id"] for b in status["brokers"]] == [1, 2, 3]
    assert all(b["alive"] and b["state"] == "running" for b in status["brokers"])
    assert status["healthy"] is True and status["problems"] == []
    assert status["controller"] in (1, 2, 3)
    assert status["zookeeper"][0]["mode"] == "standalone"
    assert status["topics"]["harness-probe"] == [
        {"partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2, 3]}
    ]


def test_down_of_a_missing_cluster_succeeds() -> None:
    proc = _cli("cluster", "down", "--name", "it-nothing-here")
    assert proc.returncode == 0, proc.stderr
    assert "no cluster" in proc.stdout


def test_node_logs_are_copied_out(cluster: DockerCluster, tmp_path: Path) -> None:
    cluster.copy_logs(tmp_path)
    assert (
        "started (kafka.server.KafkaServer)"
        in (tmp_path / "n1" / "kafka" / "server.log").read_text()
    )
    assert "binding to port" in (tmp_path / "zk1" / "kafka" / "server.log").read_text()


def leftovers(client: docker.DockerClient, name: str) -> list[str]:
    """Returns what Docker still holds of cluster name: its containers and networks."""
    label = {"label": f"{CLUSTER_LABEL}={name}"}
    return [c.name for c in client.containers.list(all=True, filters=label)] + [
        n.name for n in client.networks.list(filters=label)
    ]


def test_up_fails_within_its_bound_and_removes_what_it_made(engine: docker.DockerClient) -> None:
    # Three JVMs cannot start, register and replicate a topic in 3 s, even on a fast
    # machine (a warm `cluster up` takes about 10 s), so the bound is what ends this.
    cluster = DockerCluster(ClusterSpec(name=f"{PREFIX}-slow"), engine)
    try:
        started = time.monotonic()
        with pytest.raises(ClusterError, match="was not up within 3 s") as exc:
            cluster.up(timeout=3.0)
        assert time.monotonic() - started < 15
        waits = ("had not registered", "ZooKeeper did not start serving")
        if any(w in str(exc.value) for w in waits):  # a node's wait says what it printed
            assert "--- last lines of" in str(exc.value)
        assert leftovers(engine, cluster.spec.name) == []
    finally:
        cluster.down()


def test_up_checks_its_deadline_while_creating_containers(engine: docker.DockerClient) -> None:
    cluster = DockerCluster(ClusterSpec(name=f"{PREFIX}-many", brokers=12), engine)
    try:
        started = time.monotonic()
        with pytest.raises(ClusterError, match="was not up within 1 s"):
            cluster.up(timeout=1.0)
        assert time.monotonic() - started < 10
        assert leftovers(engine, cluster.spec.name) == []
    finally:
        cluster.down()


@pytest.mark.parametrize(
    "argv",
    [
        ["--timeout", "0"],
        ["--timeout", "-3"],
        ["--timeout", "nan"],
        ["--brokers", "156"],
        ["--zookeepers", "90"],
        ["--brokers", "89"],  # the layout holds it; this machine does not
    ],
)
def test_up_refuses_with_254_before_making_anything(
    engine: docker.DockerClient, argv: list[str]
) -> None:
    name = f"{PREFIX}-refused"
    proc = _cli("cluster", "up", "--name", name, *argv)
    assert proc.returncode == 254, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "error: argument" in last or "refused" in last, proc.stderr
    assert "Traceback" not in proc.stderr
    assert leftovers(engine, name) == []


def test_a_name_docker_refuses_is_refused_before_anything_is_made(
    engine: docker.DockerClient,
) -> None:
    networks = {n.name for n in engine.networks.list()}
    proc = _cli("cluster", "up", "--name", "bad/name")
    assert proc.returncode == 254
    assert "cluster name 'bad/name'" in proc.stderr and "Traceback" not in proc.stderr
    assert not any(n.startswith("bad") for n in {n.name for n in engine.networks.list()} - networks)


class Streamed:
    """A subprocess whose stderr is read as it comes, to signal it at the right moment."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        assert self.proc.stderr is not None
        stream = self.proc.stderr
        self._reader = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self._reader.start()

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None, f"exited {self.proc.returncode}: {self.lines}"
            assert time.monotonic() < deadline, f"never printed {text!r}: {self.lines}"
            time.sleep(0.1)

    def finish(self) -> int:
        code = self.proc.wait(timeout=120)
        self._reader.join(timeout=5)
        return code


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_up_leaves_nothing(
    engine: docker.DockerClient, sig: signal.Signals
) -> None:
    name = f"{PREFIX}-sig{sig.value}"
    up = Streamed("cluster", "up", "--name", name)
    try:
        up.wait_for("creating")
        time.sleep(2.0)  # containers exist and are starting
        assert leftovers(engine, name), "nothing made yet: the test would prove nothing"
        up.proc.send_signal(sig)
        assert up.finish() == 130, up.lines
        assert leftovers(engine, name) == []
        assert any(f"interrupted ({sig.name})" in line for line in up.lines), up.lines
    finally:
        up.proc.kill()
        DockerCluster(ClusterSpec(name=name), engine).down()


def test_further_signals_during_the_teardown_are_ignored(engine: docker.DockerClient) -> None:
    name = f"{PREFIX}-twice"
    up = Streamed("cluster", "up", "--name", name)
    try:
        up.wait_for("creating")
        time.sleep(4.0)
        made = leftovers(engine, name)
        assert len(made) >= 3, made
        up.proc.send_signal(signal.SIGINT)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            time.sleep(0.05)
            up.proc.send_signal(sig)
        code = up.finish()
        assert leftovers(engine, name) == [], up.lines
        # The last signals may land after the teardown, as the interpreter exits.
        assert code in (130, 128 + signal.SIGTERM, 128 + signal.SIGHUP), (code, up.lines)
    finally:
        up.proc.kill()
        DockerCluster(ClusterSpec(name=name), engine).down()


def test_run_interrupted_while_its_cluster_starts_leaves_nothing(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    # --leave-cluster-running: even then a cluster that never came up is removed.
    name = f"{PREFIX}-runup"
    run = Streamed(
        "run",
        "--cluster-name",
        name,
        "--results",
        str(tmp_path),
        "--leave-cluster-running",
        "--time-limit",
        "5",
        "--nemesis",
        "none",
    )
    try:
        run.wait_for("creating")
        time.sleep(2.0)
        run.proc.send_signal(signal.SIGTERM)
        assert run.finish() == 130, run.lines
        assert leftovers(engine, name) == []
    finally:
        run.proc.kill()
        DockerCluster(ClusterSpec(name=name), engine).down()


def test_up_refuses_a_running_cluster_and_leaves_it_alone(cluster: DockerCluster) -> None:
    before = {c: cluster.state(c) for c in cluster.nodes}
    proc = _cli("cluster", "up", "--name", cluster.spec.name)
    assert proc.returncode == 254
    assert "already exists" in proc.stderr and "--replace" in proc.stderr
    assert {c: cluster.state(c) for c in cluster.nodes} == before


def test_up_with_replace_builds_a_new_cluster(fresh_cluster: DockerCluster) -> None:
    engine = docker.from_env()
    name = fresh_cluster.spec.name
    old = {c.id for c in engine.containers.list(filters={"label": f"{CLUSTER_LABEL}={name}"})}
    proc = _cli("cluster", "up", "--name", name, "--replace")
    assert proc.returncode == 0, proc.stderr
    new = {c.id for c in engine.containers.list(filters={"label": f"{CLUSTER_LABEL}={name}"})}
    assert len(new) == 4 and not old & new


def test_status_shows_a_killed_broker_down_at_once_and_exits_3(
    fresh_cluster: DockerCluster,
) -> None:
    name = fresh_cluster.spec.name
    assert _cli("cluster", "status", "--name", name).returncode == 0
    fresh_cluster.kill("n2")
    proc = _cli("cluster", "status", "--json", "--name", name)
    assert proc.returncode == 3
    status = json.loads(proc.stdout)
    n2 = next(b for b in status["brokers"] if b["node"] == "n2")
    assert (n2["state"], n2["alive"]) == ("exited", False)
    assert "n2: container exited" in status["problems"]
    assert _cli("cluster", "status", "--name", f"{PREFIX}-nothing").returncode == 3


def test_nodes_run_unprivileged_within_limits_and_exec_as_root(
    cluster: DockerCluster, engine: docker.DockerClient
) -> None:
    assert engine.images.get(node_image()).attrs["Config"]["User"] == "kafka"
    for node in ("n1", "zk1"):
        code, users = cluster.exec(node, ["ps", "-o", "user=", "-C", "java"])
        assert code == 0 and users.split() == ["kafka"], users
        assert cluster.exec(node, ["id", "-u"]) == (0, "0\n")
        host = engine.containers.get(cluster.container_name(node)).attrs["HostConfig"]
        role = "kafka" if node == "n1" else "zookeeper"
        assert host["Memory"] == ROLE_LIMITS[role].memory_mib * 2**20
        assert host["PidsLimit"] == ROLE_LIMITS[role].pids
        assert host["NanoCpus"] >= 10**9


def test_clusters_are_told_apart_by_checkout(engine: docker.DockerClient) -> None:
    # `make clean` runs `cluster down --checkout`: it must select this checkout's only.
    made = []
    try:
        for name, checkout in ((f"{PREFIX}-mine", CHECKOUT), (f"{PREFIX}-theirs", "/elsewhere")):
            labels = {HARNESS_LABEL: "1", CLUSTER_LABEL: name, CHECKOUT_LABEL: checkout}
            made.append(engine.networks.create(f"{name}-net", labels=labels))
        mine = cluster_names(engine, checkout=CHECKOUT)
        assert f"{PREFIX}-mine" in mine and f"{PREFIX}-theirs" not in mine
        assert {f"{PREFIX}-mine", f"{PREFIX}-theirs"} <= set(cluster_names(engine))
    finally:
        for net in made:
            net.remove()
