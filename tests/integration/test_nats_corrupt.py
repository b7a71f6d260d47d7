"""`harness run --db nats` with bitflip-blocks on three real nats-server 2.12.1: the
nemesis stopped one server of the R3 stream, flipped two bits of one of its stream's
message blocks on its disk (read back from the stopped container's disk, before the
server started, as the run's nemesis story records it), started it again, and at the
stop op recorded what NATS did; the run ends with the queue checker's verdict, the
struck server's store copied into its node folder, and the cluster gone."""

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


def test_a_flip_in_a_minoritys_block_is_on_its_disk_and_the_run_gets_a_verdict(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    name = f"{PREFIX}-natscorrupt"
    argv = [sys.executable, "-m", "harness", "run", "--db", "nats", "--workload", "queue"]
    argv += ["--nemesis", "bitflip-blocks", "--time-limit", "20", "--nemesis-interval", "6"]
    argv += ["--results", str(tmp_path), "--cluster-name", name, "--seed", "7549"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    out = done.stdout + done.stderr
    assert name not in cluster_names(engine), f"cluster {name} left behind"
    folder = (tmp_path / "latest").resolve()
    results = json.loads((folder / "results.json").read_text())
    assert done.returncode in (0, 1), out  # a verdict, valid or not: never unknown or a crash
    assert results["valid"] is (done.returncode == 0)

    ops = results["nemesis"]["ops"]
    [start] = [op["value"] for op in ops if op["f"] == "start-bitflip-blocks"]
    node, file = start["node"], start["file"]
    assert file.startswith("jetstream/$G/streams/store-7549/msgs/") and file.endswith(".blk")
    steps = {s["step"]: s for s in start["steps"]}
    assert list(steps) == ["chosen", "stopped", "chosen-file", "corrupted", "started"]
    flips = steps["corrupted"]["change"]
    assert len(flips) == 2 and all(f["before"] != f["after"] for f in flips)
    # Read from the stopped server's disk after the write, before its start.
    assert steps["corrupted"]["read_back"]["still_flipped"] == 2
    assert len(steps["corrupted"]["records"]) == 2

    # What NATS did, at the stop op or (the run over first) at the heal.
    stops = [
        op["value"] for op in ops if op["f"] == "stop-bitflip-blocks" and "steps" in op["value"]
    ]
    healed = next(op["value"] for op in ops if op["f"] == "heal")
    late = healed.get("corrupt", {}).get("observed", {}).get("bitflip-blocks", {})
    [observed] = [s for v in [*stops, late] for s in v.get("steps", []) if s["step"] == "observed"]
    assert observed["node"] == node and observed["system"] == "NATS" and observed["did"]
    assert "explanation" not in results or "bitflip-blocks" in json.dumps(results)

    # The struck server's store as the run left it: the block is there, changed or rewritten.
    with tarfile.open(
        fileobj=io.BytesIO((folder / "nodes" / node / "data.tar").read_bytes())
    ) as tar:
        names = {m.name.partition("/")[2] for m in tar.getmembers()}
    assert file in names
    assert results["split-brain"]["servers"], results["split-brain"]
