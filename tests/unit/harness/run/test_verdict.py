"""From a recorded history to the results folder: results.json, plots, counterexamples,
report.html and the terminal summary; plus the folder naming and the latest link."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from checkers import faults, perf, stats
from harness.report.counterexamples.timeline import file_stem
from harness.report.plots.images import LATENCY_FILE, RATE_FILE
from harness.report.zip_link import zip_url
from harness.results import new_run_folder, point_latest, write_json
from harness.run.verdict import check_run, summary_lines, write_outputs
from history import HistoryWriter, load
from tests.unit.harness.run.test_runner import CHECKING
from workloads.registry import WORKLOADS


def _history(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path, clock=iter(range(0, 10**12, 10**8)).__next__) as writer:
        for e in events:
            writer.append(e)
    return path


STALE_READ = [
    {"process": 0, "type": "invoke", "f": "put", "key": 1, "value": 1},
    {"process": 0, "type": "ok", "f": "put", "key": 1, "value": 1},
    {"process": "nemesis", "type": "invoke", "f": "start-partition-leader"},
    {
        "process": "nemesis",
        "type": "info",
        "f": "start-partition-leader",
        "value": {"isolated": "n1"},
    },
    {"process": 1, "type": "invoke", "f": "put", "key": 1, "value": 2},
    {"process": 1, "type": "ok", "f": "put", "key": 1, "value": 2},
    {"process": 2, "type": "invoke", "f": "get", "key": 1},
    {"process": 2, "type": "ok", "f": "get", "key": 1, "value": 1},
    {"process": 3, "type": "invoke", "f": "put", "key": 2, "value": 1},
    {"process": 3, "type": "info", "f": "put", "key": 2, "value": 1, "error": "indeterminate: x"},
    {"process": "nemesis", "type": "invoke", "f": "stop-partition-leader"},
    {"process": "nemesis", "type": "info", "f": "stop-partition-leader", "value": {}},
    {"process": 4, "type": "invoke", "f": "get", "key": 2},
    {"process": 4, "type": "fail", "f": "get", "key": 2, "error": "barrier not back"},
]


def test_a_stale_read_gives_invalid_results_and_a_complete_report(tmp_path: Path) -> None:
    history = load(_history(tmp_path, STALE_READ))
    checked = check_run(history, WORKLOADS["kv"], CHECKING)
    results = checked.results
    assert results["valid"] is False
    assert results["linearizable"]["by_key"] == {"1": False, "2": True}
    assert results["stats"]["by_f"]["put"] == {"ok": 2, "fail": 0, "info": 1}
    [window] = results["nemesis"]["windows"]
    assert window["fault"] == "partition-leader" and window["start"] < window["stop"]
    test = {"spec": {"name": "t", "workload": "kv"}, "versions": {"kafka": "3.9.1"}}
    report = write_outputs(tmp_path, history, test, checked)
    for name in ("results.json", LATENCY_FILE, RATE_FILE, f"{file_stem(1)}.svg"):
        assert (tmp_path / name).stat().st_size > 0, name
    page = report.read_text()
    assert "INVALID" in page and "get 1 but value is 2" in page.replace("&#x27;", "'")
    served_only = zip_url(tmp_path)  # the run as a zip: harness serve makes it, no file is
    for ref in re.findall(r'(?:href|src)="([^"]+)"', page):
        target = tmp_path / unquote(ref.split("#")[0])
        assert ref == served_only or target.exists(), f"report links to missing {ref}"
    assert json.loads((tmp_path / "results.json").read_text())["valid"] is False
    lines = summary_lines(results, report)
    assert lines[0] == "verdict: INVALID"
    assert any("key 1:" in line for line in lines) and lines[-1].endswith("report.html")


def test_a_run_without_ok_ops_is_unknown_not_valid(tmp_path: Path) -> None:
    events = [
        {"process": 0, "type": "invoke", "f": "put", "key": 1, "value": 1},
        {"process": 0, "type": "info", "f": "put", "key": 1, "value": 1, "error": "x"},
    ]
    results = check_run(load(_history(tmp_path, events)), WORKLOADS["kv"], CHECKING).results
    assert results["valid"] == "unknown"


def test_a_drawing_that_fails_keeps_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = load(_history(tmp_path, STALE_READ))
    checked = check_run(history, WORKLOADS["kv"], CHECKING)

    def broken(*_: Any) -> None:
        raise ValueError("cannot draw")

    monkeypatch.setattr("harness.report.plots.perf.latency_plot", broken)
    report = write_outputs(tmp_path, history, {}, checked)
    assert "INVALID" in report.read_text()
    assert json.loads((tmp_path / "results.json").read_text())["valid"] is False


def test_perf_quantiles_and_fault_windows_from_events() -> None:
    assert perf.quantiles([]) == {}
    assert perf.quantiles([float(i) for i in range(1, 101)]) == {
        "p50": 51.0,
        "p95": 95.0,
        "p99": 99.0,
        "max": 100.0,
    }
    events = [
        {"index": 0, "time": 1e9, "process": "nemesis", "type": "invoke", "f": "start-kill-leader"},
        {
            "index": 1,
            "time": 2e9,
            "process": "nemesis",
            "type": "info",
            "f": "start-kill-leader",
            "value": {"killed": "n1"},
        },
        {"index": 2, "time": 5e9, "process": "nemesis", "type": "invoke", "f": "heal"},
        {"index": 3, "time": 6e9, "process": "nemesis", "type": "info", "f": "heal", "value": {}},
    ]
    [w] = faults.windows(events)
    assert (w["fault"], w["start"], w["stop"]) == ("kill-leader", 1.0, 6.0)
    assert stats.check([])["valid"] == "unknown"


def test_run_folders_are_unique_and_latest_follows_the_newest(tmp_path: Path) -> None:
    a = new_run_folder(tmp_path, "t", now=0)
    b = new_run_folder(tmp_path, "t", now=0)
    assert a != b and a.parent == b.parent == tmp_path / "t"
    point_latest(tmp_path, a)
    point_latest(tmp_path, b)
    assert (tmp_path / "latest").resolve() == b.resolve()
    assert not (tmp_path / "latest").readlink().is_absolute()
    write_json(b / "x.json", {"nan": float("nan"), "s": {1, 2}})
    assert json.loads((b / "x.json").read_text()) == {"nan": None, "s": [1, 2]}
