"""faultfs, the power-loss layer, proven in a node container before Kafka runs on it: a
JVM (faultfs_probe/FsProbe.java) writes files as Kafka does, some synced and some not;
the node loses power and restarts; it reads exactly what was synced. Every file is read
through the layer just before the cut, so the kernel caches what is about to be lost,
and the disk is shown never to have held it: no page cache decides the outcome. A crash
and a stop, which the OS outlives, keep everything. Then Kafka itself: every broker of
a 3-broker cluster loses power after acks=all writes, and the test reports how many
acknowledged writes survived with Kafka's default flush settings and with an fsync per
message (it asserts only that the cut happened and the cluster came back).
"""

from __future__ import annotations

import io
import itertools
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker.models.containers import Container

from harness.cluster import faultfs
from harness.cluster.docker_cluster import ClusterSpec, DockerCluster
from harness.cluster.images import node_image
from harness.cluster.labels import CHECKOUT, CHECKOUT_LABEL, CLUSTER_LABEL, HARNESS_LABEL
from nemesis.power import power_off_all
from tests.integration.conftest import PREFIX
from tests.integration.kafka_io import produce_all, read_all

PROBE = Path(__file__).parent / "faultfs_probe" / "FsProbe.java"
DATA = "/data"
_serial = itertools.count(1)


@pytest.fixture(scope="module")
def probe_class(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """FsProbe compiled for the node image's Java 17."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.fail("javac is missing: `make` installs the JDK (compose/ensure-debs.sh)")
    out = tmp_path_factory.mktemp("probe")
    subprocess.run([javac, "--release", "17", "-d", str(out), str(PROBE)], check=True)
    return (out / "FsProbe.class").read_bytes()


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def node(engine: docker.DockerClient, probe_class: bytes) -> Iterator[Container]:
    """A node container whose /data is on faultfs, its command a sleep standing in for
    the JVM, holding a file of the layer open as the JVM does (the probe runs beside
    it, as kafka); removed even when the test fails."""
    container = engine.containers.create(
        node_image(),
        entrypoint=["/usr/local/bin/faultfs", "run", "-user", "kafka", "-events", faultfs.EVENTS],
        command=["-mount", DATA, "--", "sh", "-c", f"exec 3>>{DATA}/open; exec sleep infinity"],
        name=f"{PREFIX}-faultfs-{next(_serial)}",
        labels={HARNESS_LABEL: "1", CLUSTER_LABEL: f"{PREFIX}-faultfs", CHECKOUT_LABEL: CHECKOUT},
        user=faultfs.USER,
        cap_add=faultfs.CAPABILITIES,
        devices=faultfs.DEVICES,
        init=True,
        network_mode="none",
        mem_limit="512m",
    )
    try:
        container.put_archive("/", _tar({"probe/FsProbe.class": probe_class}))
        container.start()
        _await_mount(container)
        yield container
    finally:
        container.remove(force=True)


def _await_mount(container: Container, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        code, _ = container.exec_run(["faultfs", "ctl", "status"], user="root")
        if code == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"faultfs did not come up: {container.logs(tail=20)!r}")
        time.sleep(0.2)


def _probe(container: Container, *args: str) -> None:
    code, out = container.exec_run(["java", "-cp", "/probe", "FsProbe", DATA, *args], user="kafka")
    assert code == 0, out.decode(errors="replace")


def _files(container: Container, folder: str) -> dict[str, bytes | None]:
    """Returns every file under folder (None for a directory), read by tar inside the
    node: through the layer for DATA, around it for its backing directory."""
    code, (out, err) = container.exec_run(["tar", "-C", folder, "-cf", "-", "."], demux=True)
    assert code == 0, err
    found: dict[str, bytes | None] = {}
    with tarfile.open(fileobj=io.BytesIO(out)) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./")
            reader = tar.extractfile(member) if member.isfile() else None
            if name != ".":
                found[name] = reader.read() if reader else None
    return found


def test_a_power_cut_keeps_what_was_synced_and_loses_the_rest(node: Container) -> None:
    _probe(node, "cases")
    before = _files(node, DATA)  # read through the layer: the kernel caches all of it
    assert before["log"] == b"AB" and before["trunc"] == b"012" and before["otrunc"] == b"z"
    assert before["00.index"] is not None and before["00.index"][4096:4104] == b"unsynced"
    assert before["topic-0/careless"] == b"offsets 9" and before["topic-0/new.log"] == b"data"
    disk = _files(node, DATA + faultfs.BACKING_SUFFIX)
    assert disk["log"] == b"A", "B reached the disk before any sync"

    lost = faultfs.cut(node)
    assert lost.get("event") == "power-cut", lost
    (mount,) = lost["mounts"]
    assert mount["files"] >= 7 and mount["unsynced_bytes"] > 0
    assert "log" in {f["path"] for f in mount["listed"]}
    node.start()
    _await_mount(node)
    after = _files(node, DATA)

    assert after["log"] == b"A"
    assert after["seg"] == b"x" * 10000
    assert after["trunc"] == b"0123456789"
    assert after["otrunc"] == b"abc"
    index = after["00.index"]
    assert index is not None and len(index) == 8192
    assert index[:6] == b"synced" and index[4096:4104] == bytes(8)
    assert after["topic-0/cp"] == b"offsets 7"
    assert after["topic-0/careless"] == b"" and after["topic-0/new.log"] == b""
    assert "gone" not in after and after["topic-0"] is None


def test_a_crash_and_a_stop_keep_every_write(node: Container) -> None:
    _probe(node, "unsynced", "crashed", "kept through a crash")
    assert faultfs.end(node, faultfs.CRASH_SIGNAL) is None
    crash = faultfs.last_event(node)
    assert crash.get("event") == "crash" and crash["mounts"][0]["files"] == 1, crash
    node.start()
    _await_mount(node)
    _probe(node, "unsynced", "stopped", "kept through a stop")
    node.stop(timeout=10)
    assert faultfs.last_event(node).get("event") == "exit"
    node.start()
    _await_mount(node)
    after = _files(node, DATA)
    assert after["crashed"] == b"kept through a crash"
    assert after["stopped"] == b"kept through a stop"


def test_a_node_killed_whole_stops_and_loses_what_was_not_synced(node: Container) -> None:
    """What a power cut falls back to when faultfs cannot record it: SIGKILL to every
    process of the node, the daemon too. What it held dies with it, and the command's
    last FLUSH on the dead connection fails instead of hanging the node for ever."""
    _probe(node, "unsynced", "held", "lost with the daemon")
    node.kill()
    node.wait(timeout=faultfs.END_TIMEOUT_S)
    node.start()
    _await_mount(node)
    assert _files(node, DATA)["held"] == b""


@pytest.fixture
def layered_cluster(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A running 3-broker safe cluster on faultfs, removed even when the test fails."""
    cluster = DockerCluster(ClusterSpec(name=f"{PREFIX}-power", faultfs=True), engine)
    try:
        cluster.up(timeout=180)
        yield cluster
    finally:
        cluster.down()


def test_every_broker_loses_power_after_acknowledged_writes(
    layered_cluster: DockerCluster,
) -> None:
    cluster = layered_cluster
    admin = cluster.admin()
    topics = {"default flush": {}, "flush.messages=1": {"flush.messages": "1"}}
    acked: dict[str, list[str]] = {}
    for i, (label, config) in enumerate(topics.items()):
        topic = f"power-{i}"
        admin.create_topic(topic, [[1, 2, 3]], config)
        admin.wait_full_isr(topic, timeout=30)
        acked[label] = produce_all(cluster.bootstrap_servers, topic, [f"v{n}" for n in range(300)])

    lost = power_off_all(cluster, cluster.brokers)
    for node, loss in lost.items():
        assert "error" not in loss and loss["files"] >= 1, (node, loss)
    for node in cluster.brokers:
        cluster.start(node)
    cluster.admin().wait_full_isr("power-0", timeout=120)
    cluster.admin().wait_full_isr("power-1", timeout=120)

    for i, (label, sent) in enumerate(acked.items()):
        survived = set(read_all(cluster.bootstrap_servers, f"power-{i}", timeout=60)) & set(sent)
        print(f"\n{label}: {len(survived)} of {len(sent)} acknowledged writes survived")
    print("layer's count:", {n: (v["files"], v["unsynced_bytes"]) for n, v in lost.items()})
