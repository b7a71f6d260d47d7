"""summary.md's side-by-side table: one row per test, one column per release, metadata
mode (or NATS) and config, with verdicts, writes lost of those acknowledged, anomalies,
service inside the test's fault, recovery after its heal and throughput outside it."""

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
    assert lines[2] == "| test | 3.9.1-zookeeper safe | 4.4.0-kraft safe |"
    assert lines[4] == (
        "| queue/linearizable/kill-leader "
        "| 5 runs: 1 invalid, 0 unknown; 7 lost; in faults 3.5 ok/s, 25% errors "
        "| 5 runs: 0 invalid, 0 unknown; 0 lost |"
    )
    assert lines[5] == (
        "| queue/linearizable/partition-controller-quorum |  "
        "| 5 runs: 0 invalid, 0 unknown; 0 lost |"
    )


def test_kafka_and_nats_profiles_share_a_row_with_losses_recovery_and_throughput() -> None:
    kafka = aggregate("4.4.0", "kraft", "power-loss-all", acknowledged_total=500, lost_total=500)
    default = aggregate("2.12.1", "nats", "power-loss-all", kafka_config="default")
    always = aggregate("2.12.1", "nats", "power-loss-all", kafka_config="always")
    default |= {"invalid": 5, "lost_total": 900, "acknowledged_total": 900}
    always |= {"acknowledged_total": 1200}
    figures = [
        window("2.12.1", "nats", "power-loss-all", "power-loss-all")
        | {"kafka_config": "always", "ok_per_s_outside": 40.5}
    ]
    recovery = [
        aggregate("2.12.1", "nats", "power-loss-all", kafka_config="always")
        | {"fault": "power-loss-all", "after_heal_s_median": 4.2, "after_heal_s_worst": 9.0}
        | {"after_heal_s_never": 1},
        aggregate("2.12.1", "nats", "power-loss-all", kafka_config="default")
        | {"fault": "power-loss-all", "after_heal_s_median": None, "after_heal_s_never": 5},
    ]
    lines = side_by_side([kafka, default, always], figures, recovery)
    assert lines[2] == "| test | 2.12.1-nats always | 2.12.1-nats default | 4.4.0-kraft safe |"
    assert lines[4] == (
        "| queue/linearizable/power-loss-all "
        "| 5 runs: 0 invalid, 0 unknown; 0/1200 lost; in faults 3.5 ok/s, 25% errors; "
        "first ok op 4.2 s after the heal (worst 9 s, none after 1); outside faults 40.5 ok/s "
        "| 5 runs: 5 invalid, 0 unknown; 900/900 lost; no ok op after any of 5 heals "
        "| 5 runs: 0 invalid, 0 unknown; 500/500 lost |"
    )


def test_non_linearizable_keys_are_counted_and_one_cluster_gives_no_table() -> None:
    kv = {"workload": "kv", "lost_total": None, "nonlinearizable_keys": 3}
    rows = [aggregate("3.9.1", "zookeeper", "none", **kv), aggregate("4.4.0", "kraft", "none")]
    assert "3 non-linearizable keys" in side_by_side(rows, [])[4]
    assert side_by_side(rows[:1], []) == []
