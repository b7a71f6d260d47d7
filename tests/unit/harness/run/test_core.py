"""How a run ends when something other than a checker goes wrong: never exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import signals
from harness.progress import StatusLine
from harness.run import core
from harness.run.runner import Recorder
from harness.spec import TestSpec


class Lines:
    def __init__(self) -> None:
        self.said: list[str] = []

    def write(self, text: str) -> None:
        self.said.append(text)

    def flush(self) -> None: ...

    def isatty(self) -> bool:
        return False


def _run(tmp_path: Path) -> tuple[core.RunOutcome, str]:
    out = Lines()
    outcome = core.run_test(TestSpec(name="t", seed=1), tmp_path, StatusLine(out))  # type: ignore[arg-type]
    return outcome, "".join(out.said)


def test_a_broken_set_up_exits_255_and_still_tears_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torn: list[bool] = []

    def broken(self: core.TestRun) -> None:
        raise RuntimeError("no broker came up")

    monkeypatch.setattr(core.TestRun, "set_up", broken)
    monkeypatch.setattr(core.TestRun, "tear_down", lambda self: torn.append(True))
    outcome, said = _run(tmp_path)
    assert outcome.exit_code == 255 and outcome.valid is None
    assert torn == [True]
    assert "the run broke: RuntimeError: no broker came up" in said
    assert "no broker came up" in (outcome.folder / "run.log").read_text()
    assert (outcome.folder / "test.json").exists()
    assert (tmp_path / "latest").resolve() == outcome.folder.resolve()


def test_an_internal_error_is_255_with_the_traceback_in_the_run_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bug(run: core.TestRun) -> core.RunOutcome:
        raise KeyError("oops")

    monkeypatch.setattr(core, "_run", bug)
    outcome, said = _run(tmp_path)
    assert outcome.exit_code == 255
    assert "internal error" in said and "Traceback" in (outcome.folder / "run.log").read_text()


def test_interrupted_during_set_up_is_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: core.TestRun) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(core.TestRun, "set_up", interrupted)
    monkeypatch.setattr(core.TestRun, "tear_down", lambda self: None)
    outcome, said = _run(tmp_path)
    assert outcome.exit_code == 130
    assert "interrupted before the workload started" in said


def test_interrupted_while_checking_is_130_and_keeps_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def one_op(self: core.TestRun, recorder: Recorder) -> None:
        recorder.invoke(0, {"f": "get", "key": 1})
        recorder.complete(0, {"f": "get", "key": 1}, {"type": "ok", "value": None})

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(signals.install(), "count", 0)  # no earlier test's interrupt
    monkeypatch.setattr(core.TestRun, "set_up", lambda self: None)
    monkeypatch.setattr(core.TestRun, "run_workload", one_op)
    monkeypatch.setattr(core.TestRun, "finish", lambda self, recorder: None)
    monkeypatch.setattr(core.TestRun, "tear_down", lambda self: None)
    monkeypatch.setattr(core, "check_run", interrupted)
    outcome, said = _run(tmp_path)
    assert outcome.exit_code == 130 and outcome.valid is None
    assert "interrupted while checking" in said
    results = (outcome.folder / "results.json").read_text()
    assert '"valid": "unknown"' in results and "not checked" in results
    assert len((outcome.folder / "history.jsonl").read_text().splitlines()) == 2
