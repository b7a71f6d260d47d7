"""`analyze` and INCOMPLETE runs: in the runs table with their verdict, counted apart per
configuration (`incomplete`), and left out of the runs, rates and means of the aggregates;
a configuration whose every run is incomplete has no rate, and no division by zero."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from harness.pipeline.analyze import analyze_with
from harness.progress import StatusLine
from harness.spec import TestSpec
from tests.unit.run_folders import STALE_READ_OPS, T0, VALID_OPS, events, write_run

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
    write_run(root, local, events(VALID_OPS), T0)
    write_run(root, local, events(STALE_READ_OPS), T0 + 60)
    _cut_short(write_run(root, local, events(VALID_OPS), T0 + 120))
    # An INVALID history stays INVALID though cut short: and counts in the rates.
    _cut_short(write_run(root, local, events(STALE_READ_OPS), T0 + 180))
    alone = TestSpec(name="kv-alone", nemesis=("kill-leader",), seed=2)
    _cut_short(write_run(root, alone, events(VALID_OPS), T0 + 240))
    analyze_with(spark, root, root / "analysis", StatusLine())
    return root / "analysis"


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
