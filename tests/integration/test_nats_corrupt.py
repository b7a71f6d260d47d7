"""`harness run --db nats` with truncate-blocks on three real nats-server 2.12.1: the
nemesis stopped one server of the R3 stream, cut one of its stream's message blocks
short on its disk (read back from the stopped container's disk, before the server
started, as the run's nemesis story records it), started it again, and at the stop op
recorded what NATS did; the run ends with the queue checker's verdict, the struck
server's store copied into its node folder, and the cluster gone.

A cut, not a flip: NATS rebuilds a cut block and catches up within seconds, while a flip
in a record's sequence can keep the server from starting (FINDINGS.md), which makes the
run wait out its heal; this test is about the harness, and must stay short."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import docker
import pytest

from harness.cluster.docker_cluster import cluster_names
from tests.integration.conftest import PREFIX

pytestmark = pytest.mark.integration


def test_a_cut_of_a_minoritys_block_is_on_its_disk_and_the_run_gets_a_verdict(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    name = f"{PREFIX}-natscorrupt"
    argv = [sys.executable, "-m", "harness", "run", "--db", "nats", "--workload", "queue"]
    argv += ["--nemesis", "truncate-blocks", "--time-limit", "20", "--nemesis-interval", "6"]
    argv += ["--results", str(tmp_path), "--cluster-name", name, "--seed", "7549"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    out = done.stdout + done.stderr
    assert name not in cluster_names(engine), f"cluster {name} left behind"
    folder = (tmp_path / "latest").resolve()
    results = json.loads((folder / "results.json").read_text())
    assert done.returncode in (0, 1), out  # a verdict, valid or not: never unknown or a crash
    assert results["valid"] is (done.returncode == 0)

    ops = results["nemesis"]["ops"]
    # A second start (at 18 s) may strike again, only ever the same server: one of three.
    changed = [op["value"] for op in ops if op["f"] == "start-truncate-blocks" and op["value"]]
    assert changed and {v["node"] for v in changed} == {changed[0]["node"]}, changed
    start = changed[0]
    node, file = start["node"], start["file"]
    assert file.startswith("jetstream/$G/streams/store-7549/msgs/") and file.endswith(".blk")
    steps = {s["step"]: s for s in start["steps"]}
    assert list(steps) == ["chosen", "stopped", "chosen-file", "corrupted", "started"]
    cut = steps["corrupted"]["change"]
    assert cut["size_after"] < cut["size_before"] == steps["chosen-file"]["size"]
    # Read from the stopped server's disk after the write, before its start.
    assert steps["corrupted"]["read_back"] == {"size": cut["size_after"], "still_cut": True}

    # What NATS did, at the stop op or (the run over first) at the heal.
    stops = [
        op["value"] for op in ops if op["f"] == "stop-truncate-blocks" and "steps" in op["value"]
    ]
    healed = next(op["value"] for op in ops if op["f"] == "heal")
    late = healed.get("corrupt", {}).get("observed", {}).get("truncate-blocks", {})
    observed = [s for v in [*stops, late] for s in v.get("steps", []) if s["step"] == "observed"]
    assert len(observed) == len(changed), observed  # one observation per corruption
    assert all(o["node"] == node and o["system"] == "NATS" and o["did"] for o in observed)

    # The struck server's store as the run left it: the block is there, cut or rebuilt.
    with tarfile.open(
        fileobj=io.BytesIO((folder / "nodes" / node / "data.tar").read_bytes())
    ) as tar:
        names = {m.name.partition("/")[2] for m in tar.getmembers()}
    assert file in names
    assert results["split-brain"]["servers"], results["split-brain"]
