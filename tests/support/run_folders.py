"""Builds run folders for the pipeline and index tests with the harness's own writers
(results folder, test.json, HistoryWriter, the run's checks and report), plus broken ones."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkers.registry import CheckOptions
from harness.results import new_run_folder, write_test_json
from harness.run.verdict import check_run, write_outputs
from harness.spec import TestSpec
from history import HistoryWriter, load
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
    fill_run(folder, spec, history, started, check=check)
    return folder


def fill_run(
    folder: Path,
    spec: TestSpec,
    history: Sequence[dict[str, Any]],
    started: float,
    *,
    check: bool = True,
) -> None:
    """Writes a run into an existing folder as `harness run` does."""
    write_test_json(folder, spec, started)
    with HistoryWriter(folder / "history.jsonl") as writer:
        for event in history:
            writer.append({k: v for k, v in event.items() if k != "index"})  # the writer's
    if check:
        loaded = load(folder)
        options = CheckOptions.from_spec(spec.to_json(), time_limit=10.0)
        checked = check_run(loaded, WORKLOADS[spec.workload], options)
        test = {"spec": spec.to_json(), "versions": {"kafka": "3.9.1"}}
        write_outputs(folder, loaded, test, checked)


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


NOT_UTF8 = "the folder name is not UTF-8"
MALFORMED: dict[str, tuple[str, Any, str]] = {
    # stamp: (file, its new body or fields merged into it, the reason listed)
    "20270101T000001": ("test.json", [1, 2], "test.json is not a JSON object"),
    "20270101T000002": ("test.json", {"spec": 5}, "test.json: spec is not a JSON object"),
    "20270101T000003": ("test.json", {"spec": {"workload": "kv", "nemesis": 5}}, "spec.nemesis"),
    "20270101T000004": ("test.json", {"spec": {"nemesis": []}}, "test.json: spec.workload"),
    "20270101T000005": ("results.json", {"valid": {}}, "results.json: valid is not"),
    "20270101T000006": ("results.json", {"nemesis": 5}, "results.json: nemesis is not"),
    "20270101T000007": ("results.json", [], "results.json is not a JSON object"),
    "20270101T000008": ("results.json", {"stats": 5}, "results.json: stats is not"),
    "20270101T000009": ("results.json", {"linearizable": {"failures": [5]}}, "failures[0]"),
    "20270101T000010": ("results.json", "[" * 100_000 + "]" * 100_000, "results.json is not JSON"),
    "20270101T000011": ("test.json", {"spec": {"workload": "kv", "seed": "x"}}, "spec.seed"),
}
"""Run folders of the wrong shape, each a copy of a good run with one file changed."""


def build_malformed(root: Path) -> dict[str, str]:
    """Writes a good run and MALFORMED's folders under root/kv, and two whose names are
    not UTF-8. Returns each folder's reason by its run id as printed (`\\xff` for a byte
    that is not UTF-8); the good run is not among them."""
    spec = TestSpec(name="kv", nemesis=("partition-leader",), seed=1)
    good = write_run(root, spec, events(VALID_OPS, [WINDOW]), T0)
    reasons = {}
    for stamp, (name, body, reason) in MALFORMED.items():
        folder = root / "kv" / stamp
        shutil.copytree(good, folder)
        path = folder / name
        if isinstance(body, dict):
            body = json.loads(path.read_text()) | body
        path.write_text(body if isinstance(body, str) else json.dumps(body))
        reasons[f"kv/{stamp}"] = reason
    for raw, shown in (
        (b"kv/\xff20270101T000012", "kv/\\xff20270101T000012"),
        (b"\xfekv/20270101T000013", "\\xfekv/20270101T000013"),
    ):
        shutil.copytree(good, os.fsdecode(os.fsencode(root) + b"/" + raw))
        reasons[shown] = NOT_UTF8
    return reasons
