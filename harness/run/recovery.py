"""The run's recovery section (checkers/recovery.py): from its history, its fault windows
and its partition leaders' samples (leaders.jsonl), how long each fault stalled clients.

Which partitions an op used depends on the workload: the queue's name them in their keys
and records; the store's ops map their key to a partition of the store's topic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checkers import Touched, leader_samples, op_spans, queue_partitions, recovery_times
from harness.run.metadata_watch import LEADERS_FILE, read_samples
from harness.spec import TestSpec
from history import Event, History
from kvstore.records import partition_for


def recovery_section(
    history: History, windows: list[dict[str, Any]], folder: Path, spec: TestSpec
) -> dict[str, Any]:
    """Takes a run's history, fault windows, folder and spec. Returns its recovery times
    per fault window and partition, and their summary per fault."""
    touched = queue_partitions if spec.workload == "queue" else store_partitions(spec.partitions)
    spans = op_spans(history.events, touched)
    leaders = leader_samples(read_samples(folder, LEADERS_FILE))
    return recovery_times(windows, spans, leaders)


def store_partitions(partitions: int) -> Touched:
    """Takes the store topic's partition count. Returns how to tell the partition a kv or
    register op used: its key's, as the store partitions keys (kvstore.records)."""

    def touched(invoke: Event, _: Event) -> frozenset[int]:
        key = invoke.get("key")
        return frozenset() if key is None else frozenset({partition_for(key, partitions)})

    return touched
