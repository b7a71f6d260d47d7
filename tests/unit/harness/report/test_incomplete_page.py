"""A run's page says why it was interrupted once: in the explanation (its INCOMPLETE
line, or a sentence when the workload had run its time), not again in a summary row of
its own (issue 39)."""

from __future__ import annotations

from pathlib import Path

from harness.report.page import write_report

REASON = "interrupted by SIGINT"


def _page(tmp_path: Path, results: dict[str, object]) -> str:
    write_report(tmp_path, {"spec": {"name": "kv"}}, results, {})
    return (tmp_path / "report.html").read_text()


def test_an_incomplete_runs_reason_is_said_once(tmp_path: Path) -> None:
    results = {
        "valid": True,
        "interrupted": REASON,
        "duration": {"complete": False, "reason": REASON, "ran_s": 20.4, "asked_s": 60},
    }
    page = _page(tmp_path, results)
    assert "INCOMPLETE" in page and page.count(REASON) == 1


def test_an_interruption_after_the_workload_ran_its_time_is_said_once(tmp_path: Path) -> None:
    page = _page(tmp_path, {"valid": True, "interrupted": REASON})
    assert page.count(f"The run was interrupted: {REASON}.") == 1 and page.count(REASON) == 1
