"""The share workload on a real 4.4.0 cluster, 20 s without faults: ShareConsumers in one
share group are handed records, accept, release and reject them, the final drain ends, and
the share checks find nothing."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from tests.integration.test_run import _run

pytestmark = pytest.mark.integration


def test_a_share_group_delivers_and_accepts_and_breaks_no_share_rule(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        "--workload",
        "share",
        "--kafka-version",
        "4.4.0",
        "--nemesis",
        "none",
        "--time-limit",
        "20",
    )
    assert code == 0, out
    share = results["share"]
    assert share["valid"] is True, share
    assert all(kind["count"] == 0 for kind in share["kinds"].values()), share["kinds"]
    assert share["drained"], share
    assert share["deliveries"]["total"] > 50, share["deliveries"]
    assert share["deliveries"]["redeliveries"] > 0, share["deliveries"]
    assert share["acks"]["accept"]["ok"] > 50, share["acks"]
    assert share["outcomes"]["never-delivered"] == 0, share["outcomes"]
    assert "share: " in out
