"""Tests of what `harness check` leaves and prints about files: a crash's log goes to --out
when given and is never read back as a history, drawings carry the history's name so two
histories in one folder never draw over each other, and a path with control characters
still prints as one line per history."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.commands import check_file, check_output
from harness.report.counterexamples.timeline import file_stem
from history.paths import find_histories
from tests.unit.harness.commands.test_check import history_file, run
from tests.unit.harness.commands.test_check_hardening import STALE_READ
from tests.unit.harness.commands.test_check_many import JEPSEN_LOG, VALID

JEPSEN_STALE = JEPSEN_LOG + (
    "INFO  jepsen.util - 0\t:invoke\t:write\t2\nINFO  jepsen.util - 0\t:ok\t:write\t2\n"
    "INFO  jepsen.util - 1\t:invoke\t:read\tnil\nINFO  jepsen.util - 1\t:ok\t:read\t1\n"
)


def _log_of(err: str) -> Path:
    return Path(err.split("traceback in ")[1].split(")")[0])


# --- the crash log ---------------------------------------------------------------------


def test_a_crash_on_a_history_logs_into_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(history: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(check_file, "run_spec", broken)
    out = tmp_path / "out" / "not yet made"
    code, _, err = run(capsys, str(history_file(tmp_path, VALID)), "--out", str(out))
    assert code == 255
    assert _log_of(err).parent == out
    assert not list(tmp_path.glob("harness-check-crash-*"))


def test_a_crash_of_the_command_logs_into_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> list[str]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(check_output, "render", broken)
    out = tmp_path / "out"
    code, _, err = run(capsys, str(history_file(tmp_path, VALID)), "--out", str(out))
    assert code == 255
    assert _log_of(err).parent == out
    assert not list(tmp_path.glob("harness-check-crash-*"))


def test_a_folder_search_never_takes_a_crash_log_for_a_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = history_file(tmp_path, VALID, "a.jsonl")  # not a results folder: searched
    (tmp_path / "harness-check-crash-x1y2z3.log").write_text("Traceback (most recent call last):\n")
    (tmp_path / "harness-crash-a1b2c3.log").write_text("Traceback (most recent call last):\n")
    assert find_histories([str(tmp_path)]) == ([str(history)], [])
    code, out, err = run(capsys, str(tmp_path))
    assert (code, err) == (0, "") and out.startswith("VALID ")


# --- drawings named after their history --------------------------------------------------


def test_two_histories_checked_in_turn_in_one_folder_keep_their_drawings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.log").write_text(JEPSEN_STALE)
    history_file(tmp_path, STALE_READ, "b.jsonl")
    drawn = []
    for name in ("a.log", "b.jsonl"):
        code, out, _ = run(capsys, str(tmp_path / name), "--json", "--still")
        assert code == 1
        drawn += json.loads(out)["counterexamples"]
    assert len(set(drawn)) == 4 and all(Path(p).exists() for p in drawn)
    # each history's still and its viewer
    named = [re.split("-counterexamples?-", Path(p).name)[0] for p in drawn]
    assert named == ["a.log"] * 2 + ["b.jsonl"] * 2


def test_a_drawing_stem_carries_the_history_and_stays_bounded() -> None:
    assert file_stem(None).startswith("counterexample-null-")
    assert file_stem(None, "a.log").startswith("a.log-counterexample-null-")
    stems = {file_stem(None, name) for name in ("a.log", "a.jsonl", "a b.log", "a_b.log")}
    assert len(stems) == 4
    long = file_stem("k" * 300, "h\n" * 300 + ".jsonl")
    assert len(long) <= 120 and "\n" not in long


# --- one line per history ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["a\nb.jsonl", "a\rb.jsonl", "a\x1b[2Jb.jsonl", "a\u2028b.jsonl"])
def test_a_path_with_control_characters_is_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = history_file(tmp_path, VALID, name)
    history_file(tmp_path, STALE_READ, "z.jsonl")
    code, out, err = run(capsys, str(path), str(tmp_path / "z.jsonl"), "--jobs", "1")
    assert (code, err) == (1, "")
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert len(heads) == 3, out  # two histories and the summary
    escaped = name.encode("unicode_escape").decode()
    assert heads[0].startswith(f"VALID   {tmp_path}/{escaped}: cas-register model")


def test_a_malformed_history_with_a_newline_in_its_path_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a\nb.jsonl"
    path.write_text("not json\n")
    code, out, err = run(capsys, str(path))
    assert (code, out) == (254, "")
    assert err.count("\n") == 1 and err.startswith(f"{tmp_path}/a\\nb.jsonl:1: ")


def test_json_output_escapes_every_line_break(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = history_file(tmp_path, VALID, "a\u2028\x85b.jsonl")
    code, out, _ = run(capsys, str(path), "--json")
    assert code == 0 and len(out.splitlines()) == 1
    assert json.loads(out)["path"] == str(path)
