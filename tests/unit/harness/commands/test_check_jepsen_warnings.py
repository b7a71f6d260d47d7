"""`harness check` reads a Jepsen history.edn as Jepsen's analysis reads it and says what
was odd, a line each on stderr and under `warnings` in --json; the same history written
as our history.jsonl is refused (exit 254), for there each oddity is our bug.

The history has the two oddities of kafka_test.clj (jepsen-io/jepsen): a process that
goes on after its info (poll-skip-test, "txn abort"), and an ok send that names another
message than its invoke sent (nonmonotonic-send-test: invoked 1, completed `[1 :a]`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

EDN = """\
{:index 0, :time 0, :process 0, :type :invoke, :f :send, :value [[:send :x 1]]}
{:index 1, :time 1, :process 0, :type :ok, :f :send, :value [[:send :x [0 :a]]]}
{:index 2, :time 2, :process 1, :type :invoke, :f :poll, :value [[:poll]]}
{:index 3, :time 3, :process 1, :type :info, :f :poll, :value [[:poll]]}
{:index 4, :time 4, :process 1, :type :invoke, :f :poll, :value [[:poll]]}
{:index 5, :time 5, :process 1, :type :ok, :f :poll, :value [[:poll {:x [[0 :a]]}]]}
"""
JSONL = [
    {"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send", "value": [["send", 0, 1]]},
    {
        "index": 1,
        "time": 1,
        "process": 0,
        "type": "ok",
        "f": "send",
        "value": [["send", 0, [0, 2]]],
    },
]


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_each_oddity_is_a_line_on_stderr_and_the_history_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.edn"
    path.write_text(EDN)
    code, out, err = _check(capsys, str(path))
    assert (code, out.split()[0]) == (0, "VALID")
    lines = err.splitlines()
    assert lines == [
        f"harness check: {path}: line 5: process 1 goes on after its info on line 4: read as "
        "Jepsen's analysis reads it (ours retire such a process)",
        f"harness check: {path}: line 2: index 1: send acknowledges :a, not the sent 1: the "
        "sends acknowledge another message than their invokes sent, and count as the "
        "message acknowledged, as Jepsen's analysis reads a completion",
    ]


def test_the_warnings_are_in_the_json_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.edn"
    path.write_text(EDN)
    code, out, _ = _check(capsys, "--json", str(path))
    outcome = json.loads(out)
    assert (code, outcome["valid"], len(outcome["warnings"])) == (0, True, 2)
    assert "goes on after its info" in outcome["warnings"][0]
    assert "acknowledges :a, not the sent 1" in outcome["warnings"][1]


def test_our_jsonl_refuses_the_same_oddity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in JSONL))
    code, out, err = _check(capsys, "--model", "queue", str(path))
    assert (code, out) == (254, "")
    assert err.strip() == f"{path}:2: index 1: send acknowledges 2, not the sent 1"
