"""`harness check --model queue` on queue values the checker cannot read: each is refused
as `FILE:LINE: problem` on stderr with exit 254, never a verdict and never a crash, from a
file and from standard input alike; the valid history it is made from is VALID, and
readable histories (the recorded fixture, simulated ones) keep their verdicts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support import ROOT
from tests.support.queue_builder import Event, QueueHistoryBuilder
from tests.support.queue_sim import FIXTURE, SimConfig, simulate, write_jsonl

EXIT_VALID, EXIT_INVALID, EXIT_UNKNOWN, EXIT_MALFORMED = 0, 1, 2, 254
# The lines of the base history's events (1-based): the send's invoke and ok, the assign's
# ok, the seek's ok, the poll's ok, the drain's invoke and ok.
SEND, SEND_OK, ASSIGN_OK, SEEK_OK, POLL_OK, DRAIN, DRAIN_OK = 1, 2, 4, 6, 8, 9, 10

Change = Callable[[list[Event]], None]


def base_events() -> list[Event]:
    """Returns a valid queue history using every queue value: a send to partition 0, an
    assign, a seek, a poll with a rebalance, and the final drain."""
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.consumer_op(1, "assign", [0])
    b.consumer_op(1, "seek", {"0": 0})
    b.poll(1, {0: [(0, 10)]}, rebalanced={"assigned": [0], "revoked": []})
    b.drain(2, 0, [(0, 10)])
    return b.events


def setting(line: int, field: str, value: Any) -> Change:
    """Returns a change that sets one field of the event on `line` (both events of a send's
    or drain's key, so that the op stays one op)."""

    def change(events: list[Event]) -> None:
        events[line - 1][field] = value
        if field == "key":
            events[line]["key"] = value

    return change


def poll_value(value: Any) -> Change:
    return setting(POLL_OK, "value", value)


def rebalanced(value: Any) -> Change:
    return setting(POLL_OK, "rebalanced", value)


SHAPES: dict[str, tuple[Change, int]] = {
    "poll value a list": (poll_value([[0, 10]]), POLL_OK),
    "poll value a string": (poll_value("0:10"), POLL_OK),
    "poll value 0": (poll_value(0), POLL_OK),
    "poll value false": (poll_value(False), POLL_OK),
    "poll value null": (poll_value(None), POLL_OK),
    "poll records not a list": (poll_value({"0": 10}), POLL_OK),
    "poll record of three elements": (poll_value({"0": [[0, 10, 3]]}), POLL_OK),
    "poll float offset": (poll_value({"0": [[0.0, 10]]}), POLL_OK),
    "poll negative offset": (poll_value({"0": [[-1, 10]]}), POLL_OK),
    "poll partition ²": (poll_value({"²": [[0, 10]]}), POLL_OK),
    "poll partition in Arabic-Indic digits": (poll_value({"\u0660": [[0, 10]]}), POLL_OK),
    "poll partition of 5,000 digits": (poll_value({"9" * 5000: [[0, 10]]}), POLL_OK),
    "poll partition -1": (poll_value({"-1": [[0, 10]]}), POLL_OK),
    "poll partition named twice": (poll_value({"0": [[0, 10]], "00": []}), POLL_OK),
    "send float offset": (setting(SEND_OK, "value", [0.0, 10]), SEND_OK),
    "send negative offset": (setting(SEND_OK, "value", [-1, 10]), SEND_OK),
    "send record of three elements": (setting(SEND_OK, "value", [0, 10, 3]), SEND_OK),
    "send partition true": (setting(SEND, "key", True), SEND),
    "send partition 1.5": (setting(SEND, "key", 1.5), SEND),
    "send partition 0.0": (setting(SEND, "key", 0.0), SEND),
    "send partition -1": (setting(SEND, "key", -1), SEND),
    "send partition ²": (setting(SEND, "key", "²"), SEND),
    "send partition of 5,000 digits": (setting(SEND, "key", "9" * 5000), SEND),
    "send partition 2**31": (setting(SEND, "key", 2**31), SEND),
    "drain partition false": (setting(DRAIN, "key", False), DRAIN),
    "drain record of three elements": (setting(DRAIN_OK, "value", [[0, 10, 3]]), DRAIN_OK),
    "drain negative offset": (setting(DRAIN_OK, "value", [[-1, 10]]), DRAIN_OK),
    "assign value 5": (setting(ASSIGN_OK, "value", 5), ASSIGN_OK),
    "assign partition false": (setting(ASSIGN_OK, "value", [False]), ASSIGN_OK),
    "assign partition -1": (setting(ASSIGN_OK, "value", [-1]), ASSIGN_OK),
    "assign partition x": (setting(ASSIGN_OK, "value", ["x"]), ASSIGN_OK),
    "seek value a list": (setting(SEEK_OK, "value", [0]), SEEK_OK),
    "seek negative offset": (setting(SEEK_OK, "value", {"0": -1}), SEEK_OK),
    "seek float offset": (setting(SEEK_OK, "value", {"0": 1.5}), SEEK_OK),
    "seek partition x": (setting(SEEK_OK, "value", {"x": 0}), SEEK_OK),
    "seek partition named twice": (setting(SEEK_OK, "value", {"0": 0, "00": 1}), SEEK_OK),
    "rebalanced 5": (rebalanced(5), POLL_OK),
    "rebalanced.assigned 5": (rebalanced({"assigned": 5, "revoked": []}), POLL_OK),
    "rebalanced.revoked a string": (rebalanced({"assigned": [], "revoked": "0"}), POLL_OK),
    "rebalanced.assigned true": (rebalanced({"assigned": [True], "revoked": []}), POLL_OK),
    "rebalanced with another field": (rebalanced({"assigned": [0], "revokd": [0]}), POLL_OK),
}


def write(events: list[Event], path: Path) -> Path:
    write_jsonl(events, path)
    return path


def changed(change: Change) -> list[Event]:
    events = base_events()
    change(events)
    return events


def check(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    """Runs `harness check PATH --model queue`. Returns the exit code, stdout and stderr."""
    try:
        code = main(["check", str(path), "--model", "queue"])
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code: int, out: str, err: str, where: str) -> None:
    assert code == EXIT_MALFORMED, (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{where}: index "), err
    assert "Traceback" not in err
    assert not any(out.startswith(v) for v in ("VALID", "INVALID", "UNKNOWN")), out


def test_the_base_history_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, write(base_events(), tmp_path / "history.jsonl"))
    assert (code, err) == (EXIT_VALID, ""), out
    assert out.startswith("VALID ")


@pytest.mark.parametrize(
    ("config", "verdict"),
    [
        (SimConfig(ops=300), EXIT_VALID),
        (SimConfig(ops=300, group=True, marker_rate=0.3), EXIT_VALID),
        (SimConfig(ops=300, losses=2), EXIT_INVALID),
        (SimConfig(ops=300, conflicts=1), EXIT_INVALID),
        # No drain: the sends no consumer read by the end are unseen.
        (SimConfig(ops=300, drains=False), EXIT_INVALID),
    ],
)
def test_readable_histories_keep_their_verdicts(
    config: SimConfig, verdict: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for seed in range(3):
        code, out, err = check(capsys, write(simulate(seed, config)[0], tmp_path / "h.jsonl"))
        assert (code, err) == (verdict, ""), out


def test_the_fixture_with_a_loss_stays_invalid(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, FIXTURE)
    assert (code, err) == (EXIT_INVALID, ""), out
    assert "3 lost" in out


@pytest.mark.parametrize("shape", SHAPES)
def test_an_unreadable_queue_value_is_refused_with_its_line(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, line = SHAPES[shape]
    path = write(changed(change), tmp_path / "history.jsonl")
    assert_refused(*check(capsys, path), where=f"{path}:{line}")


@pytest.mark.parametrize(
    "shape", ["poll value a list", "send partition true", "rebalanced.assigned 5"]
)
def test_an_unreadable_queue_value_on_stdin_is_refused_with_its_line(shape: str) -> None:
    change, line = SHAPES[shape]
    # A blank line first: the line is the file's, not the event's position.
    text = "\n" + "".join(json.dumps(e) + "\n" for e in changed(change))
    done = subprocess.run(
        [sys.executable, "-m", "harness", "check", "-", "--model", "queue"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=60,
    )
    assert_refused(done.returncode, done.stdout, done.stderr, where=f"<stdin>:{line + 1}")


@pytest.mark.parametrize(
    "shape", ["poll partition ²", "send partition of 5,000 digits", "rebalanced.assigned 5"]
)
def test_what_crashed_the_check_is_refused_in_a_fresh_process(shape: str, tmp_path: Path) -> None:
    change, line = SHAPES[shape]
    path = write(changed(change), tmp_path / "history.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "check", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=60,
    )
    assert_refused(done.returncode, done.stdout, done.stderr, where=f"{path}:{line}")
    assert not list(tmp_path.glob("*crash*"))
