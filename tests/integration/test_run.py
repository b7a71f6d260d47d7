"""`harness run` end to end on real clusters, one short run per fault family: the fault
really happened, the verdict is right, and nothing is left running afterwards; ^C and
SIGTERM heal, stop and keep the history."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.cluster.docker_cluster import cluster_names
from harness.report.plots.images import LATENCY_FILE, RATE_FILE
from tests.integration.conftest import PREFIX

pytestmark = pytest.mark.integration
_serial = iter(range(1, 1000))


def _harness(results: Path, *args: str) -> tuple[list[str], str]:
    name = f"{PREFIX}-run{next(_serial)}"
    argv = [
        sys.executable,
        "-m",
        "harness",
        "run",
        "--results",
        str(results),
        "--cluster-name",
        name,
        "--seed",
        "11",
        *args,
    ]
    return argv, name


def _run(engine: docker.DockerClient, results: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    argv, name = _harness(results, *args)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert name not in cluster_names(engine), f"cluster {name} left behind"
    out = done.stdout + done.stderr
    folder = (results / "latest").resolve()
    assert folder.is_dir(), out
    return done.returncode, json.loads((folder / "results.json").read_text()), out


def _starts(results: dict[str, Any], fault: str) -> list[dict[str, Any]]:
    return [op["value"] for op in results["nemesis"]["ops"] if op["f"] == f"start-{fault}"]


def _stops(results: dict[str, Any], fault: str) -> list[dict[str, Any]]:
    return [op["value"] for op in results["nemesis"]["ops"] if op["f"] == f"stop-{fault}"]


def test_partition_leader_isolates_the_leader_and_the_store_stays_linearizable(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        "--nemesis",
        "partition-leader",
        "--time-limit",
        "20",
        "--nemesis-interval",
        "8",
    )
    assert code == 0, out
    [start] = _starts(results, "partition-leader")
    assert start["verified"] == {"cut": True, "leaks": []}
    assert start["before"]["0"]["leader"] == start["isolated"]
    assert set(start["grudge"][start["isolated"]]) == {"n1", "n2", "n3", "zk1"} - {
        start["isolated"]
    }
    assert results["final"]["healthy"] and results["final"]["missing"] == []
    assert results["stats"]["ok"] > 100
    folder = (tmp_path / "latest").resolve()
    for name in ("test.json", "history.jsonl", LATENCY_FILE, RATE_FILE, "report.html"):
        assert (folder / name).exists(), name
    assert {p.name for p in (folder / "nodes").iterdir()} == {"n1", "n2", "n3", "zk1"}


def test_process_faults_move_leadership(engine: docker.DockerClient, tmp_path: Path) -> None:
    # One run, both faults: each starts once (at 9 and 27 s) and stops 9 s later.
    code, results, out = _run(
        engine,
        tmp_path,
        "--nemesis",
        "kill-leader,pause-leader",
        "--time-limit",
        "38",
        "--nemesis-interval",
        "9",
    )
    assert code == 0, out
    for fault, did in (("kill-leader", "killed"), ("pause-leader", "paused")):
        [start] = _starts(results, fault)
        [stop] = _stops(results, fault)
        victim = start[did]
        assert start["before"]["0"]["leader"] == victim
        # Just before it came back, another broker led and the victim had left the ISR.
        assert stop["before"]["0"]["leader"] not in (None, victim), stop
        assert victim not in stop["before"]["0"]["isr"], stop
        assert stop["restored"] == [victim]


def test_network_faults_cut_what_they_say(engine: docker.DockerClient, tmp_path: Path) -> None:
    faults = "partition-zookeeper,partition-random-halves,partition-majorities-ring,flaky-leader"
    code, results, out = _run(
        engine,
        tmp_path,
        "--nemesis",
        faults,
        "--time-limit",
        "26",
        "--nemesis-interval",
        "3",
        "--kafka-config",
        "safe",
    )
    assert code in (0, 2), out  # no anomaly; a key may be left unknown
    for fault in ("partition-zookeeper", "partition-random-halves", "partition-majorities-ring"):
        [start, *_] = _starts(results, fault)
        assert start["verified"] == {"cut": True, "leaks": []}, (fault, start)
    zk = _starts(results, "partition-zookeeper")[0]["grudge"]
    assert zk == {"n1": ["zk1"], "n2": ["zk1"], "n3": ["zk1"], "zk1": ["n1", "n2", "n3"]}
    [flaky, *_] = _starts(results, "flaky-leader")
    assert any("statistic --mode random --probability 0.29" in r for r in flaky["rules"]), flaky
    heal = [op for op in results["nemesis"]["ops"] if op["f"] == "heal"]
    assert heal and heal[0]["error"] is None


# SIGTERM and SIGHUP take the same path (tests/unit/harness/test_signals.py; test_cluster.py sends
# each during `cluster up`): one signal here keeps the suite short.
@pytest.mark.parametrize("sig", [signal.SIGINT])
def test_interrupt_heals_stops_and_keeps_the_history(
    engine: docker.DockerClient, tmp_path: Path, sig: signal.Signals
) -> None:
    argv, name = _harness(
        tmp_path, "--nemesis", "partition-leader", "--time-limit", "120", "--nemesis-interval", "4"
    )
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        history = None
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            found = list(tmp_path.glob("*/*/history.jsonl"))
            if found and "start-partition-leader" in found[0].read_text():
                history = found[0]
                break
            time.sleep(0.5)
        assert history is not None, "the fault never started"
        time.sleep(1.0)  # inside the fault: the rules are in place now
        os.kill(proc.pid, sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out
    assert "interrupted" in out
    assert name not in cluster_names(engine)
    lines = history.read_text().splitlines()
    assert any('"f": "heal"' in line for line in lines)
    results = json.loads((history.parent / "results.json").read_text())
    assert results["interrupted"] and results["stats"]["count"] > 0
