"""`harness matrix`'s word for a finished run: results.json's verdict when the run's log
names its report (INCOMPLETE with the reason, whatever the exit code), else the exit
code's for 0 and 1, else UNKNOWN with why; and the line a lane prints with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.commands.matrix import Job, Kafka, Matrix
from harness.commands.matrix_label import TAIL_BYTES, label, run_folder

CUT = {
    "planned_s": 40.0,
    "ran_s": 12.5,
    "complete": False,
    "reason": "the workload stopped at 12.5 s of 40 s: every client broke",
}


def _run(tmp_path: Path, results: dict[str, Any] | None, chatter: str = "") -> Path:
    """Writes a run folder (with results.json unless None) and the log `harness run` left
    for it, ending with its report line. Returns the log."""
    folder = tmp_path / "results" / "kv-kill-leader" / "20261126T030000"
    folder.mkdir(parents=True)
    if results is not None:
        (folder / "results.json").write_text(json.dumps(results))
    log = tmp_path / "run.log"
    log.write_text(f"{chatter}verdict: ...\n  4122 ops\n  report: {folder / 'report.html'}\n")
    return log


@pytest.mark.parametrize(
    ("results", "code", "word"),
    [
        ({"valid": True}, 0, "VALID"),
        ({"valid": False}, 1, "INVALID"),
        ({"valid": "unknown"}, 2, "UNKNOWN"),
        # Stopped early without a signal: exit 2, once labelled UNKNOWN.
        ({"valid": True, "duration": CUT}, 2, f"INCOMPLETE ({CUT['reason']})"),
        # Interrupted: exit 130, once labelled "no verdict".
        ({"valid": "unknown", "duration": CUT}, 130, f"INCOMPLETE ({CUT['reason']})"),
        # An anomaly in part of a run is one all the same.
        ({"valid": False, "duration": CUT}, 130, "INVALID"),
        # The report was written, then the run broke: its results still say what it found.
        ({"valid": True}, 255, "VALID"),
    ],
)
def test_the_verdict_is_results_jsons(
    tmp_path: Path, results: dict[str, Any], code: int, word: str
) -> None:
    assert label(code, _run(tmp_path, results)) == word


@pytest.mark.parametrize(
    ("code", "word"),
    [
        (0, "VALID"),
        (1, "INVALID"),
        (2, "UNKNOWN (no results.json, see {log})"),
        (130, "UNKNOWN (interrupted before its results were written, see {log})"),
        (255, "UNKNOWN (ended without a verdict, exit 255, see {log})"),
        (254, "UNKNOWN (ended without a verdict, exit 254, see {log})"),
        (-9, "UNKNOWN (killed by SIGKILL, no results.json, see {log})"),
        (-99, "UNKNOWN (killed by signal 99, no results.json, see {log})"),
    ],
)
def test_without_results_the_exit_code_says_only_what_it_can(
    tmp_path: Path, code: int, word: str
) -> None:
    log = tmp_path / "run.log"
    log.write_text("Traceback (most recent call last):\n  ...\nRuntimeError: broker n2\n")
    assert label(code, log) == word.format(log=log)
    # A report named but never written, or a log that is not there, are the same.
    assert label(code, _run(tmp_path / "x", None)) == word.format(log=tmp_path / "x" / "run.log")
    assert label(code, tmp_path / "none.log") == word.format(log=tmp_path / "none.log")


def test_the_last_report_line_of_a_long_log_is_the_one(tmp_path: Path) -> None:
    chatter = "  report: /elsewhere/old/report.html\n" + "x" * TAIL_BYTES + "\n"
    log = _run(tmp_path, {"valid": True}, chatter)
    assert run_folder(log) == tmp_path / "results" / "kv-kill-leader" / "20261126T030000"


def test_a_lane_prints_the_runs_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Each child does what `harness run` does when its workload stops short: writes
    # results.json, prints its report line, exits 2.
    script = (
        "import json, pathlib, sys\n"
        "folder = pathlib.Path(sys.argv[1]) / sys.argv[2]\n"
        "folder.mkdir(parents=True)\n"
        "(folder / 'results.json').write_text(sys.argv[3])\n"
        "print('  report: ' + str(folder / 'report.html'))\n"
        "sys.exit(2)\n"
    )
    body = json.dumps({"valid": True, "duration": CUT})

    def command(job: Job, lane: str) -> list[str]:
        return [sys.executable, "-c", script, str(tmp_path), str(job.round), body]

    jobs = [Job(Kafka("3.9.1", "zookeeper"), "kv", "linearizable", "kill-leader", "safe", r, r, 1.0)
            for r in range(2)]  # fmt: skip
    assert Matrix(jobs, 1, tmp_path / "logs", command).run() == 2
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert all(f": INCOMPLETE ({CUT['reason']}) in " in line for line in lines), lines
