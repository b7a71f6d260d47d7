"""`harness check` of a run folder ends an invalid history's output with the report's
sentences, using the faults of its results.json and the configuration of its test.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from checkers.faults import check as faults
from harness.report.nemesis_story import invoke_times
from history import load
from tests.unit.harness.commands.test_check import DATA, run


def _run_folder(tmp_path: Path, kafka_config: str) -> Path:
    """The recorded isr-shrink history with a test.json and the results.json a run writes
    of its nemesis (the checkers' section of the faults)."""
    shutil.copy(DATA / "queue_isr_unsafe.jsonl", tmp_path / "history.jsonl")
    (tmp_path / "test.json").write_text(
        json.dumps({"spec": {"kafka_config": kafka_config, "consumer_group": False}})
    )
    events = list(load(tmp_path / "history.jsonl").events)
    (tmp_path / "results.json").write_text(json.dumps({"nemesis": faults(events)}))
    assert invoke_times(events)
    return tmp_path


def test_an_invalid_run_folder_ends_with_what_failed_where_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(_run_folder(tmp_path, "unsafe")), "--out", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    said = [line for line in lines if "acknowledged sends were lost" in line]
    assert said and lines.index(said[0]) > 1
    assert "truncated partition" in out
    assert "Expected under unsafe: min.insync.replicas=1" in out
    assert "lost-acks (Jepsen's set check" in out


def test_under_safe_the_same_loss_is_called_a_bug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, str(_run_folder(tmp_path, "safe")), "--out", str(tmp_path))
    assert "Not allowed under safe" in out


def test_each_case_and_the_transactions_are_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(DATA / "jepsen_queue_anomalies.jsonl"), "--out", str(tmp_path))
    assert code == 1
    assert out.lower().count("transactions:") == 1
    for case in ("30 seen at partition 2 offset 0", "skipping 1 offset that others saw"):
        assert out.count(case) == 1, out
