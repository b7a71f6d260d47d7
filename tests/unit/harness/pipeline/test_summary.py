"""summary.md's side-by-side table: one row per test, one column per Kafka release and
metadata mode, with verdicts, anomalies and service inside the test's fault."""

from __future__ import annotations

from typing import Any

from harness.pipeline.summary import side_by_side


def aggregate(version: str, metadata: str, nemesis: str, **counts: Any) -> dict[str, Any]:
    row = {
        "kafka_version": version,
        "metadata": metadata,
        "workload": "queue",
        "store": "linearizable",
        "nemesis": nemesis,
        "kafka_config": "safe",
        "runs": 5,
        "invalid": 0,
        "unknown": 0,
        "lost_total": 0,
        "nonlinearizable_keys": None,
    }
    return row | counts


def window(version: str, metadata: str, nemesis: str, fault: str) -> dict[str, Any]:
    row = aggregate(version, metadata, nemesis)
    return row | {"fault": fault, "ok_per_s_inside": 3.5, "error_rate_inside": 0.25}


def test_each_test_is_a_row_and_each_cluster_a_column() -> None:
    rows = [
        aggregate("3.9.1", "zookeeper", "kill-leader", invalid=1, lost_total=7),
        aggregate("4.4.0", "kraft", "kill-leader"),
        aggregate("4.4.0", "kraft", "partition-controller-quorum"),
    ]
    figures = [
        window("3.9.1", "zookeeper", "kill-leader", "kill-leader"),
        window("4.4.0", "kraft", "all", "kill-leader"),  # another test's window
    ]
    lines = side_by_side(rows, figures)
    assert lines[2] == "| test | 3.9.1-zookeeper | 4.4.0-kraft |"
    assert lines[4] == (
        "| queue/linearizable/kill-leader/safe "
        "| 5 runs: 1 invalid, 0 unknown; 7 lost; in faults 3.5 ok/s, 25% errors "
        "| 5 runs: 0 invalid, 0 unknown; 0 lost |"
    )
    assert lines[5] == (
        "| queue/linearizable/partition-controller-quorum/safe |  "
        "| 5 runs: 0 invalid, 0 unknown; 0 lost |"
    )


def test_non_linearizable_keys_are_counted_and_one_cluster_gives_no_table() -> None:
    kv = {"workload": "kv", "lost_total": None, "nonlinearizable_keys": 3}
    rows = [aggregate("3.9.1", "zookeeper", "none", **kv), aggregate("4.4.0", "kraft", "none")]
    assert "3 non-linearizable keys" in side_by_side(rows, [])[4]
    assert side_by_side(rows[:1], []) == []
