"""The queue workload in a consumer group on real clusters, 20 s with one fault on the
group's coordinator (found with FindCoordinator) from 10 s: the classic protocol on 3.9.1
ZooKeeper with the coordinator cut off, KIP-848's consumer protocol on 4.4.0 KRaft with it
paused. Commits and assignments are recorded, and the group checks find nothing."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from tests.integration.test_run import _run

pytestmark = pytest.mark.integration
FAULTS = ("partition-coordinator", "pause-coordinator")


@pytest.mark.parametrize(
    "release",
    [
        ["--kafka-version", "3.9.1", "--group-protocol", "classic", "--nemesis", FAULTS[0]],
        ["--kafka-version", "4.4.0", "--group-protocol", "consumer", "--nemesis", FAULTS[1]],
    ],
    ids=["classic-3.9.1", "consumer-4.4.0"],
)
def test_a_group_records_its_commits_and_assignments_and_breaks_no_group_rule(
    engine: docker.DockerClient, tmp_path: Path, release: list[str]
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        "--workload",
        "queue",
        "--sub-via",
        "subscribe",
        "--time-limit",
        "20",
        *release,
    )
    assert code == 0, out
    groups = results["groups"]
    assert groups["valid"] is True, groups
    assert all(kind["count"] == 0 for kind in groups["kinds"].values()), groups["kinds"]
    assert groups["commits"]["ok"] > 10, groups["commits"]
    assert groups["callbacks"].get("assigned", 0) >= 1, groups["callbacks"]
    assert groups["committed"], groups
    assert "error" not in results["queue"], results["queue"]
    (window,) = results["nemesis"]["windows"]
    assert window["fault"] in FAULTS and window["detail"]["coordinates"].endswith("-group")
    assert window["detail"].get("isolated") or window["detail"].get("paused"), window
