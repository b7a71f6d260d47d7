"""Builds run folders for the pipeline and index tests with the harness's own writers
(results folder, test.json, HistoryWriter, the run's checks and report), plus broken ones."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.results import new_run_folder, write_test_json
from harness.run.verdict import check_run, write_outputs
from harness.spec import TestSpec
from history import HistoryWriter, load
from kvstore import DEFAULT_TIMEOUTS
from workloads.core import Context
from workloads.registry import WORKLOADS

MS = 1_000_000
# (process, f, key, invoke value, outcome, completion value, invoked at ms, completed at ms)
Op = tuple[int, str, int, Any, str, Any, int, int | None]


def events(ops: Sequence[Op], faults: Sequence[tuple[str, int, int]] = ()) -> list[dict[str, Any]]:
    """Takes client ops and faults (name, start ms, stop ms). Returns the history's events
    in time order (an op completed at None never completes)."""
    timed: list[tuple[int, dict[str, Any]]] = []
    for process, f, key, value, outcome, result, call, ret in ops:
        timed.append(
            (call, {"process": process, "type": "invoke", "f": f, "key": key, "value": value})
        )
        if ret is not None:
            done = {"process": process, "type": outcome, "f": f, "key": key, "value": result}
            timed.append((ret, done))
    for fault, start, stop in faults:
        for f, at in ((f"start-{fault}", start), (f"stop-{fault}", stop)):
            timed.append((at, {"process": "nemesis", "type": "invoke", "f": f, "value": None}))
            timed.append((at + 1, {"process": "nemesis", "type": "info", "f": f, "value": {}}))
    timed.sort(key=lambda t: t[0])
    return [{**e, "time": at * MS} for at, e in timed]


def write_run(
    root: Path,
    spec: TestSpec,
    history: Sequence[dict[str, Any]],
    started: float,
    *,
    check: bool = True,
) -> Path:
    """Writes one run folder under root as `harness run` does (test.json, history.jsonl,
    and when check is set results.json, plots and report.html). Returns the folder."""
    folder = new_run_folder(root, spec.name, started)
    write_test_json(folder, spec, started)
    with HistoryWriter(folder / "history.jsonl") as writer:
        for event in history:
            writer.append(event)
    if check:
        loaded = load(folder)
        ctx = Context(
            bootstrap="",
            topic=spec.topic,
            kafka_config=spec.kafka_config,
            store=spec.store,
            keys=spec.keys,
            partitions=1,
            replication_factor=3,
            timeouts=DEFAULT_TIMEOUTS,
            check_time_limit=10.0,
        )
        results = check_run(loaded, WORKLOADS[spec.workload], ctx)
        test = {"spec": spec.to_json(), "versions": {"kafka": "3.9.1"}}
        write_outputs(folder, loaded, test, results)
    return folder


def age(folder: Path, seconds: float) -> None:
    """Makes every file of folder look last written `seconds` ago."""
    then = time.time() - seconds
    for path in folder.iterdir():
        os.utime(path, (then, then))


VALID_OPS: list[Op] = [
    (0, "put", 0, 1, "ok", 1, 0, 10),
    (1, "get", 0, None, "ok", 1, 20, 35),
    (1, "get", 0, None, "fail", None, 60, 80),
    (0, "put", 0, 2, "info", None, 50, 150),
    (1, "get", 0, None, "ok", 2, 210, 230),
    (2, "put", 1, 5, "ok", 5, 230, 270),
]
"""Ok latencies 10, 15, 20 and 40 ms; a fail and an info inside the fault window."""
WINDOW = ("partition-leader", 40, 200)
STALE_READ_OPS: list[Op] = [
    (0, "put", 0, 1, "ok", 1, 0, 10),
    (0, "put", 0, 2, "ok", 2, 20, 30),
    (1, "get", 0, None, "ok", 1, 40, 50),
]
DAY = 86400.0
T0 = 1_790_000_000.0  # a fixed start, so folder names and days are known


def build_results(root: Path) -> dict[str, Path]:
    """Writes the test results directory: two valid runs with a fault window (a day
    apart), one invalid run, and four broken folders. Returns the folders by name."""
    safe = TestSpec(name="kv-fault", nemesis=("partition-leader",), seed=1)
    stale = TestSpec(name="kv-stale", store="local-read", nemesis=(), seed=2)
    folders = {
        "valid1": write_run(root, safe, events(VALID_OPS, [WINDOW]), T0),
        "valid2": write_run(root, safe, events(VALID_OPS, [WINDOW]), T0 + DAY),
        "invalid": write_run(root, stale, events(STALE_READ_OPS), T0 + 60),
    }
    truncated = write_run(root, safe, events(VALID_OPS, [WINDOW]), T0 + 120)
    with open(truncated / "history.jsonl", "a") as f:
        f.write('{"index": 99, "time": 3')
    folders["truncated"] = truncated
    folders["unchecked"] = write_run(root, safe, events(VALID_OPS), T0 + 180, check=False)
    age(folders["unchecked"], 3600)
    folders["running"] = write_run(root, safe, events(VALID_OPS), T0 + 240, check=False)
    not_started = new_run_folder(root, "kv-fault", T0 + 300)
    write_test_json(not_started, safe, T0 + 300)
    folders["not_started"] = not_started
    return folders
