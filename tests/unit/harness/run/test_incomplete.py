"""INCOMPLETE: a run whose workload did not run its planned time (Jepsen's :incomplete) is
neither VALID nor UNKNOWN, unless a checker found it INVALID; grey on a terminal; its
results.json says why, and a run cut short by a signal still exits 130."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import signals
from harness.progress import StatusLine
from harness.run import core
from harness.run.completion import duration_section
from harness.run.runner import Recorder
from harness.run.verdict import summary_lines
from harness.spec import TestSpec
from harness.verdicts import incomplete, painted, run_verdict

CUT = duration_section(60.0, 36.2, "interrupted by SIGINT during the workload")
WHOLE = duration_section(60.0, 60.4, None)


def test_the_duration_section_says_whether_and_why_the_workload_stopped_short() -> None:
    assert WHOLE == {"planned_s": 60.0, "ran_s": 60.4, "complete": True}
    assert CUT == {
        "planned_s": 60.0,
        "ran_s": 36.2,
        "complete": False,
        "reason": "interrupted by SIGINT during the workload; the workload ran 36.2 s of 60 s",
    }
    # Nothing stopped it, yet it ran 10 s short: incomplete all the same.
    short = duration_section(60.0, 50.0, None)
    assert short["complete"] is False and short["reason"].startswith("the workload stopped early")
    # A signal after the workload, before the final reads: the run is incomplete.
    late = duration_section(60.0, 60.1, "interrupted by SIGTERM after the workload")
    assert late["complete"] is False
    assert duration_section(60.0, None, "broken by RuntimeError")["ran_s"] == 0.0


@pytest.mark.parametrize(
    ("valid", "duration", "word"),
    [
        (True, WHOLE, "VALID"),
        (True, CUT, "INCOMPLETE"),
        ("unknown", CUT, "INCOMPLETE"),
        (False, CUT, "INVALID"),  # an anomaly in part of a run is an anomaly
        ("unknown", WHOLE, "UNKNOWN"),
        (True, None, "VALID"),  # a run from before the duration was recorded
    ],
)
def test_the_run_verdict(valid: Any, duration: Any, word: str) -> None:
    results = {"valid": valid} | ({"duration": duration} if duration else {})
    assert run_verdict(results) == word
    assert incomplete(results) is (duration is CUT)


def test_verdicts_are_coloured_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert painted("INCOMPLETE", True) == "\033[90mINCOMPLETE\033[0m"
    assert painted("INVALID", True) == "\033[1;31mINVALID\033[0m"
    assert painted("INCOMPLETE", False) == "INCOMPLETE"
    monkeypatch.setenv("NO_COLOR", "1")
    assert painted("VALID", True) == "VALID"


def test_the_terminal_summary_says_incomplete_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    results = {"valid": True, "stats": {"count": 80, "ok": 80}, "duration": CUT}
    first = summary_lines(results, tmp_path / "report.html", terminal=True)[0]
    assert first == (
        "verdict: \033[90mINCOMPLETE\033[0m (interrupted by SIGINT during the workload; "
        "the workload ran 36.2 s of 60 s)"
    )


class Lines:
    def __init__(self) -> None:
        self.said: list[str] = []

    def write(self, text: str) -> None:
        self.said.append(text)

    def flush(self) -> None: ...

    def isatty(self) -> bool:
        return False


def _quiet_run(monkeypatch: pytest.MonkeyPatch, workload: Any) -> None:
    monkeypatch.setattr(signals.install(), "count", 0)  # no earlier test's interrupt
    monkeypatch.setattr(core.TestRun, "set_up", lambda self: None)
    monkeypatch.setattr(core.TestRun, "run_workload", workload)
    monkeypatch.setattr(core.TestRun, "finish", lambda self, recorder: None)
    monkeypatch.setattr(core.TestRun, "tear_down", lambda self: None)


def _two_ops(recorder: Recorder) -> None:
    recorder.invoke(0, {"f": "put", "key": 1, "value": 3})
    recorder.complete(0, {"f": "put", "key": 1, "value": 3}, {"type": "ok", "value": 3})
    recorder.invoke(0, {"f": "get", "key": 1})
    recorder.complete(0, {"f": "get", "key": 1}, {"type": "ok", "value": 3})


def test_a_run_interrupted_in_its_workload_is_incomplete_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cut_short(self: core.TestRun, recorder: Recorder) -> None:
        _two_ops(recorder)
        self.ran_s = 36.2
        self.interrupts.names.append("SIGTERM")
        raise KeyboardInterrupt

    _quiet_run(monkeypatch, cut_short)
    out = Lines()
    spec = TestSpec(name="t", seed=1, nemesis=(), time_limit=60.0)
    outcome = core.run_test(spec, tmp_path, StatusLine(out))  # type: ignore[arg-type]
    assert outcome.exit_code == 130
    results = json.loads((outcome.folder / "results.json").read_text())
    assert results["valid"] is True and run_verdict(results) == "INCOMPLETE"
    assert results["duration"]["reason"] == (
        "interrupted by SIGTERM during the workload; the workload ran 36.2 s of 60 s"
    )
    said = "".join(out.said)
    assert "verdict: INCOMPLETE\n" in said
    # Said once, in the explanation at the end, not in the verdict line and twice below.
    assert said.count("interrupted by SIGTERM during the workload") == 1, said
    assert (
        'class="v" style="background:#7f7f7f">INCOMPLETE'
        in (outcome.folder / "report.html").read_text()
    )


def test_a_run_that_ran_its_time_is_judged_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def whole(self: core.TestRun, recorder: Recorder) -> None:
        _two_ops(recorder)
        self.ran_s = 60.1

    _quiet_run(monkeypatch, whole)
    spec = TestSpec(name="t", seed=1, nemesis=(), time_limit=60.0)
    outcome = core.run_test(spec, tmp_path, StatusLine(Lines()))  # type: ignore[arg-type]
    results = json.loads((outcome.folder / "results.json").read_text())
    assert outcome.exit_code == 0 and run_verdict(results) == "VALID"
    assert results["duration"] == {"planned_s": 60.0, "ran_s": 60.1, "complete": True}


def test_interrupted_twice_keeps_an_unchecked_incomplete_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def twice(self: core.TestRun, recorder: Recorder) -> None:
        _two_ops(recorder)
        self.ran_s = 5.0
        self.interrupts.count = 2
        raise KeyboardInterrupt

    _quiet_run(monkeypatch, twice)
    spec = TestSpec(name="t", seed=1, nemesis=(), time_limit=60.0)
    outcome = core.run_test(spec, tmp_path, StatusLine(Lines()))  # type: ignore[arg-type]
    results = json.loads((outcome.folder / "results.json").read_text())
    assert outcome.exit_code == 130 and run_verdict(results) == "INCOMPLETE"
    assert results["valid"] == "unknown" and "not checked" in results["interrupted"]
