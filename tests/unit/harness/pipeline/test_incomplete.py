"""`analyze` and INCOMPLETE runs: in the runs table with their verdict, counted apart per
configuration (`incomplete`), and left out of the runs, rates and means of the aggregates;
a configuration whose every run is incomplete has no rate, and no division by zero."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.pipeline.analyze import analyze_with
from harness.progress import StatusLine
from harness.spec import TestSpec
from tests.support.run_folders import STALE_READ_OPS, T0, VALID_OPS, events, write_run

CUT = {
    "planned_s": 60.0,
    "ran_s": 3.0,
    "complete": False,
    "reason": "interrupted by SIGINT during the workload; the workload ran 3.0 s of 60 s",
}


def _cut_short(folder: Path) -> None:
    path = folder / "results.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {"duration": CUT}))


@pytest.fixture(scope="module")
def analysed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("results")
    local = TestSpec(name="kv-local", store="local-read", nemesis=(), seed=1)
    seen = write_run(root, local, events(VALID_OPS), T0)
    write_run(root, local, events(STALE_READ_OPS), T0 + 60)
    _cut_short(write_run(root, local, events(VALID_OPS), T0 + 120))
    # An INVALID history stays INVALID though cut short: and counts in the rates.
    _cut_short(write_run(root, local, events(STALE_READ_OPS), T0 + 180))
    alone = TestSpec(name="kv-alone", nemesis=("kill-leader",), seed=2)
    _cut_short(write_run(root, alone, events(VALID_OPS), T0 + 240))
    # An earlier analysis of the same output folder saw the first run only.
    out = root / "analysis"
    out.mkdir()
    earlier = {"at": "2026-09-20T00:00:00Z", "runs": [f"{seen.parent.name}/{seen.name}"]}
    (out / "last-analysis.json").write_text(json.dumps(earlier))
    analyze_with(spark, root, out, StatusLine())
    return out


def _csv(path: Path) -> list[dict[str, Any]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_incomplete_runs_are_counted_apart_and_left_out_of_the_rates(analysed: Path) -> None:
    verdicts = sorted(r["verdict"] for r in _csv(analysed / "runs.csv"))
    assert verdicts == ["INCOMPLETE", "INCOMPLETE", "INVALID", "INVALID", "VALID"]
    by_nemesis = {r["nemesis"]: r for r in _csv(analysed / "aggregates.csv")}
    local = by_nemesis["none"]
    assert (local["runs"], local["invalid"], local["incomplete"]) == ("3", "2", "1")
    assert float(local["invalid_rate"]) == pytest.approx(2 / 3, abs=1e-4)
    alone = by_nemesis["kill-leader"]
    assert (alone["runs"], alone["incomplete"], alone["invalid_rate"]) == ("0", "1", "")
    summary = (analysed / "summary.md").read_text()
    assert "5 runs analysed in 2 configurations; 2 invalid; 2 incomplete" in summary
    assert "| n/a |" in summary


def test_new_runs_since_the_last_analysis_and_no_trend_of_one_day(analysed: Path) -> None:
    summary = (analysed / "summary.md").read_text()
    new = summary.split("## New since the last analysis")[1].split("\n## ")[0]
    assert "4 new runs since the last analysis (2026-09-20T00:00:00Z, 1 runs), 2 of them" in new
    tests = re.findall(r"^- \[([^/]+)/", new, re.MULTILINE)
    # The two INVALID, then all four newest first (folders are named by their start).
    assert tests == ["kv-local", "kv-local", "kv-alone", "kv-local", "kv-local", "kv-local"]
    assert "INCOMPLETE: 3.9.1-zookeeper/kv/linearizable/kill-leader/safe" in new
    assert len(json.loads((analysed / "last-analysis.json").read_text())["runs"]) == 5
    # Every run started on T0's day: no trend plot, and the summary says why.
    assert "No trend plot: the runs that count in the rates all started on 2026-09-21" in summary
    assert not list(analysed.glob("*.svg")) and not list(analysed.glob("*.png"))
    assert "No trend plot (summary.md says why)" in (analysed.parent / "index.html").read_text()
