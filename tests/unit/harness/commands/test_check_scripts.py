"""`harness check` in scripts (issue 34, item 5): an INCOMPLETE run folder exits 2, the
worst verdict of a batch wins over a malformed file or a crash on another (1 first), a
reader that leaves the pipe gives 141 with no crash log, standard input draws nowhere
without --out, Jepsen's queue histories are guessed as queue (and a failed guess says
so), and `check` counts a run's ops as the report does."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkers import RUN_CHECKERS, CheckOptions, run_checker
from harness.cli import main
from harness.report.explain import explain
from history import load
from tests.unit.harness.commands.test_check import DATA, history_file, run
from tests.unit.harness.commands.test_check_hardening import STALE_READ

VALID = [(0, "invoke", "write", 1), (0, "ok", "write", 1)]
VALID += [(1, "invoke", "read", None), (1, "ok", "read", 1)]
UNKNOWN = [(0, "invoke", "add", 1), (0, "ok", "add", 1)]  # a set with no final read
MALFORMED = [(0, "invoke", "read", None), (1, "ok", "read", 1)]
STOPPED = {"complete": False, "reason": "the workload ran 7.7 s of 20 s"}


def run_folder(tmp_path: Path, events: list[tuple[Any, ...]], duration: dict[str, Any]) -> Path:
    """A results folder: its history and the results.json with its duration section."""
    folder = tmp_path / "results" / "kv" / "20261201T101010"
    folder.mkdir(parents=True)
    history_file(folder, events)
    (folder / "results.json").write_text(json.dumps({"valid": True, "duration": duration}))
    return folder


# --- INCOMPLETE ----------------------------------------------------------------------


def test_an_incomplete_run_folder_is_incomplete_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = run_folder(tmp_path, VALID, STOPPED)
    code, out, err = run(capsys, str(folder))
    assert (code, err) == (2, "")
    assert out.startswith(f"INCOMPLETE {folder / 'history.jsonl'}: cas-register model")
    assert "INCOMPLETE: the workload ran 7.7 s of 20 s; what ran is checked" in out
    code, out, _ = run(capsys, str(folder), "--json")
    assert code == 2 and json.loads(out)["duration"] == STOPPED


def test_an_incomplete_run_that_is_invalid_stays_invalid_and_a_complete_one_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    invalid = run_folder(tmp_path / "a", STALE_READ, STOPPED)
    complete = run_folder(tmp_path / "b", VALID, {"complete": True})
    code, out, _ = run(capsys, str(invalid), "--out", str(tmp_path / "drawings"))
    assert code == 1 and out.startswith("INVALID")
    code, out, _ = run(capsys, str(complete))
    assert code == 0 and out.startswith("VALID")
    code, out, _ = run(capsys, str(complete), str(run_folder(tmp_path / "c", VALID, STOPPED)))
    assert code == 2
    assert out.splitlines()[-1].endswith(
        ": 1 valid, 0 invalid, 0 unknown, 1 incomplete, 0 malformed"
    )


# --- a batch's exit code: the worst verdict, 1 first -----------------------------------


@pytest.mark.parametrize(
    ("histories", "empty_folder", "code"),
    [
        ({"a": STALE_READ, "b": MALFORMED, "c": UNKNOWN}, True, 1),
        ({"a": STALE_READ, "b": MALFORMED}, False, 1),
        ({"a": VALID, "b": MALFORMED, "c": UNKNOWN}, False, 254),
        ({"a": VALID, "c": UNKNOWN}, True, 254),
        ({"a": VALID, "c": UNKNOWN}, False, 2),
        ({"a": VALID}, False, 0),
    ],
)
def test_a_folder_without_a_history_or_a_malformed_file_never_hides_an_invalid(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    histories: dict[str, list[tuple[Any, ...]]],
    empty_folder: bool,
    code: int,
) -> None:
    folder = tmp_path / "histories"
    folder.mkdir()
    for name, events in histories.items():
        history_file(folder, events, f"{name}.jsonl")
    empty = tmp_path / "empty"
    empty.mkdir()
    paths = [str(empty)] if empty_folder else []
    exit_code, out, err = run(capsys, *paths, str(folder), "--out", str(tmp_path / "d"))
    assert exit_code == code
    # Every file that could not be checked is listed, one line each: FILE:LINE: problem.
    listed = [f"{empty}:0: no history files in this folder"] if empty_folder else []
    if "b" in histories:
        listed.append(f"{folder / 'b.jsonl'}:2: ok completion without an invoke on 1")
    assert err.splitlines() == listed
    if len(histories) + empty_folder > 1:  # one line per history, then the summary
        assert out.splitlines()[-1].endswith(f" {len(listed)} malformed")


# --- a reader that leaves: 141, no crash log --------------------------------------------


def test_a_reader_that_leaves_before_the_output_is_written_gives_141_and_no_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `harness check FILE | head -1` once head has gone: the pipe has no reader left.
    path = history_file(tmp_path, STALE_READ)
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "w") as closed_pipe:
        monkeypatch.setattr(sys, "stdout", closed_pipe)
        assert main(["check", str(path), "--out", str(tmp_path / "drawings")]) == 141
    assert not list(tmp_path.glob("harness-*crash-*.log"))


def test_a_reader_that_leaves_a_batch_early_gives_141_and_no_log(tmp_path: Path) -> None:
    # About 100 bytes a line: 1000 lines are more than the pipe's 64 KiB and Python's
    # buffer, so the checker must block until the reader leaves (with 300 a checker
    # quicker than the reader wrote them all and exited 0).
    for n in range(1000):
        history_file(tmp_path, VALID, f"h{n:03}.jsonl")
    checker = subprocess.Popen(
        [sys.executable, "-m", "harness", "check", str(tmp_path), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert checker.stdout is not None and checker.stderr is not None
    first = checker.stdout.readline()
    checker.stdout.close()  # head -1 leaves
    err = checker.stderr.read().decode()
    assert checker.wait(timeout=120) == 141
    assert first.startswith(b"VALID") and err == ""
    assert not list(tmp_path.glob("harness-*crash-*.log"))


# --- standard input: nothing written outside --out ---------------------------------------


def test_stdin_draws_nothing_without_out_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = history_file(tmp_path, STALE_READ, "in.jsonl").read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, out, err = run(capsys, "-")
    assert code == 1 and out.startswith("INVALID <stdin>")
    assert "no counterexample drawings were made (give --out DIR for them)" in err
    assert "timeline: " not in out
    assert list(work.iterdir()) == []
    drawings = tmp_path / "drawings"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    code, out, _ = run(capsys, "-", "--out", str(drawings), "--still")
    assert code == 1 and len(list(drawings.iterdir())) == 2
    assert list(work.iterdir()) == []


# --- the model guessed from Jepsen's queue ops -------------------------------------------


JEPSEN_QUEUE = {
    # As jepsen.tests.kafka-test writes its histories: sends only (no poll) ...
    "sends.edn": [
        "{:index 0, :time 0, :type :invoke, :process 0, :f :send, :value [[:send :x 1]]}",
        "{:index 1, :time 1, :type :ok, :process 0, :f :send, :value [[:send :x [0 1]]]}",
    ],
    # ... a subscribe and a crash with no poll ...
    "subscribe.edn": [
        "{:index 0, :time 0, :type :invoke, :process 0, :f :subscribe, :value [:x :y]}",
        "{:index 1, :time 1, :type :ok, :process 0, :f :subscribe, :value [:x :y]}",
        "{:index 2, :time 2, :type :invoke, :process 1, :f :crash, :value nil}",
        "{:index 3, :time 3, :type :info, :process 1, :f :crash, :value nil}",
    ],
    # ... an assign and an admin query ...
    "assign.edn": [
        "{:index 0, :time 0, :type :invoke, :process 0, :f :assign, :value [:x]}",
        "{:index 1, :time 1, :type :ok, :process 0, :f :assign, :value [:x]}",
        "{:index 2, :time 2, :type :invoke, :process 0, :f :debug-topic-partitions, :value [:x]}",
        "{:index 3, :time 3, :type :ok, :process 0, :f :debug-topic-partitions, :value nil}",
        "{:index 4, :time 4, :type :invoke, :process 1, :f :send, :value [[:send :x 1]]}",
        "{:index 5, :time 5, :type :ok, :process 1, :f :send, :value [[:send :x [0 1]]]}",
    ],
}


@pytest.mark.parametrize("name", list(JEPSEN_QUEUE))
def test_jepsen_s_queue_ops_make_a_queue_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / name
    path.write_text("\n".join(JEPSEN_QUEUE[name]) + "\n")
    code, out, err = run(capsys, str(path), "--json")
    assert code != 254, err
    assert json.loads(out)["model"] == "queue"


def test_a_guess_that_fails_says_it_was_guessed_and_how_to_name_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "odd.edn"
    odd.write_text("{:index 0, :time 0, :type :invoke, :process 0, :f :frob, :value 1}\n")
    code, out, err = run(capsys, str(odd))
    assert (code, out) == (254, "")
    assert err == (
        f"{odd}:1: 'frob' is not an operation of the cas-register model (it has cas, read, "
        "write): the cas-register model was guessed from the history's operations; name the "
        "model with --model (queue for Jepsen's Kafka histories)\n"
    )
    code, out, _ = run(capsys, str(history_file(tmp_path, UNKNOWN)))
    assert code == 2
    assert out.startswith(f"UNKNOWN {tmp_path / 'history.jsonl'}: set model (guessed), jsonl")
    assert "name the model with --model (queue for Jepsen's Kafka histories)" in out
    # Asked for, the model is not said to be guessed.
    _, out, _ = run(capsys, str(tmp_path / "history.jsonl"), "--model", "set")
    assert "guessed" not in out


# --- one op count for check and the report ---------------------------------------------


@pytest.mark.parametrize("history", ["register.jsonl", "queue_loss.jsonl", "register.edn"])
def test_check_counts_ops_as_the_report_does(
    capsys: pytest.CaptureFixture[str], history: str
) -> None:
    events = load(DATA / history).events
    stats = run_checker(RUN_CHECKERS["stats"], load(DATA / history), CheckOptions()).result
    assert stats["fail"] or stats["info"]  # a count with and without them would differ
    _, out, _ = run(capsys, str(DATA / history), "--json")
    assert json.loads(out)["ops"] == stats["count"] == len([e for e in events if _client(e)])
    said = explain({"valid": True, "stats": stats}, {})[0]
    assert said.startswith(f"Checked {stats['count']} ops")


def _client(event: dict[str, Any]) -> bool:
    return event["type"] == "invoke" and event["process"] != "nemesis"  # EDN's :nemesis too
