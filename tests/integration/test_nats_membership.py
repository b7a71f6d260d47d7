"""`harness run --db nats --nemesis remove-server` on three real nats-server 2.12.1: a
server is wiped and peer-removed while the queue workload runs, and comes back as a new
peer under a new name. /jsz, as the nemesis recorded it, shows the server gone from the
meta group and the stream (which runs on two replicas meanwhile) and then the new name
current in both; the run ends with a verdict and leaves nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.cluster.docker_cluster import cluster_names
from tests.integration.conftest import PREFIX

pytestmark = pytest.mark.integration


def names(peers: list[dict[str, Any]]) -> set[str]:
    return {p["name"] for p in peers}


def test_a_removed_server_leaves_both_groups_and_rejoins_under_a_new_name(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    name = f"{PREFIX}-natsmember"
    argv = [sys.executable, "-m", "harness", "run", "--db", "nats", "--workload", "queue"]
    argv += ["--nemesis", "remove-server", "--time-limit", "20", "--nemesis-interval", "8"]
    argv += ["--results", str(tmp_path), "--cluster-name", name, "--seed", "38"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    out = done.stdout + done.stderr
    assert name not in cluster_names(engine), f"cluster {name} left behind"
    folder = (tmp_path / "latest").resolve()
    results = json.loads((folder / "results.json").read_text())
    assert done.returncode in (0, 1), out  # a verdict, valid or not

    ops = results["nemesis"]["ops"]
    [start] = [op["value"] for op in ops if op["f"] == "start-remove-server"]
    # Back at stop, or at the heal when a loaded machine made the removal outlast the
    # workload (a removed meta leader must be replaced before the removal commits).
    stops = [op["value"] for op in ops if op["f"] == "stop-remove-server"]
    heals = [op["value"].get("remove-server") for op in ops if op["f"] == "heal"]
    [stop] = stops or [h for h in heals if h]
    node = start["node"]
    steps = {s["step"]: s for s in start["steps"]}
    assert list(steps) == ["members-before", "wiped", "peer-remove", "server-left"], start
    before, after = steps["members-before"]["jsz"], steps["server-left"]["jsz"]
    assert before["cluster_size"] == 3 and node in before["answering"]
    assert steps["peer-remove"]["said"].get("success") is True, start
    # Gone from the meta group and from the stream, which the other two carry on.
    assert node not in {after["meta_leader"], *names(after["meta_peers"])}, after
    assert node not in {after["stream_leader"], *names(after["stream_peers"])}, after
    assert len(after["stream_peers"]) == 1 and node not in after["answering"]

    new = f"{node}-2"
    assert stop["rejoined"] == new, stop
    back = stop["steps"][-1]["jsz"]
    assert stop["steps"][-1]["step"] == "server-rejoined" and new in back["healthy"]
    assert new in {back["meta_leader"], *names(back["meta_peers"])}, back
    assert new in {back["stream_leader"], *names(back["stream_peers"])}, back
    assert node not in {*names(back["meta_peers"]), *names(back["stream_peers"])}, back

    assert results["stats"]["ok"] > 50
    assert "valid" in results and results["release"]["nats"] == "2.12.1"
    log = (folder / "nodes" / node / "nats.log").read_text()
    assert f"Name:     {new}" in log  # the same container, started under its new name
