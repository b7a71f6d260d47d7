"""Tests for `harness check`: exit codes, model choice, output, and bad input or arguments.

The linearizable path runs the real search.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkers import default_model, lost_acks
from harness.cli import main
from history import load
from tests.support import DATA


def history_file(
    tmp_path: Path, events: list[tuple[Any, ...]], name: str = "history.jsonl"
) -> Path:
    """Writes (process, type, f, value) tuples as history.jsonl."""
    path = tmp_path / name
    lines = [
        json.dumps({"index": i, "time": i, "process": p, "type": t, "f": f, "value": v})
        for i, (p, t, f, v) in enumerate(events)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def set_history(tmp_path: Path, read: list[int] | None) -> Path:
    events: list[tuple[Any, ...]] = [(0, "invoke", "add", 1), (0, "ok", "add", 1)]
    events += [(0, "invoke", "add", 2), (0, "ok", "add", 2)]
    if read is not None:
        events += [(1, "invoke", "read", None), (1, "ok", "read", read)]
    return history_file(tmp_path, events)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["check", *argv])
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# --- the set model (lost acknowledged writes) ------------------------------------


def test_valid_set_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(set_history(tmp_path, [1, 2])))
    assert code == 0
    path = tmp_path / "history.jsonl"
    lines = out.splitlines()
    assert lines[0].startswith(f"VALID   {path}: set model, jsonl, 3 ops over 1 key, ")


def test_invalid_set_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(set_history(tmp_path, [1])), "--model", "set")
    assert code == 1
    assert out.startswith("INVALID")
    assert "lost 1 acknowledged: 2" in out


def test_unknown_without_final_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(set_history(tmp_path, None)))
    assert code == 2
    assert out.startswith("UNKNOWN")


def test_json_output_and_results_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_history(tmp_path, [1])
    code, out, _ = run(capsys, str(tmp_path), "--json")
    assert code == 1
    result = json.loads(out)
    assert (result["valid"], result["model"], result["lost_count"]) == (False, "set", 1)


def test_a_crashing_checker_gives_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(events: Any, *, strictly: bool = True) -> dict[str, Any]:
        raise RuntimeError("bug in checker")

    monkeypatch.setattr(lost_acks, "check", boom)
    code, out, _ = run(capsys, str(set_history(tmp_path, [1, 2])))
    assert code == 2
    assert "the checker failed: RuntimeError: bug in checker" in out


def test_ctrl_c_exits_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(events: Any, *, strictly: bool = True) -> dict[str, Any]:
        raise KeyboardInterrupt

    monkeypatch.setattr(lost_acks, "check", interrupted)
    code, out, err = run(capsys, str(set_history(tmp_path, [1, 2])))
    assert code == 130
    assert err.strip() == "harness check: interrupted (Ctrl-C) before a verdict"
    assert out == ""


# --- choosing the model ----------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "model"),
    [
        ([(0, "invoke", "add", 1), (0, "ok", "add", 1)], "set"),
        ([(0, "invoke", "read", None), (0, "ok", "read", [1, 2])], "set"),
        ([(0, "invoke", "put", 1), (0, "ok", "put", 1)], "map"),
        ([(0, "invoke", "get", None), (0, "ok", "get", None)], "map"),
        ([(0, "invoke", "write", 1), (0, "ok", "write", 1)], "cas-register"),
        ([(0, "invoke", "read", None), (0, "ok", "read", 3)], "cas-register"),
        ([("nemesis", "info", "add", None)], "cas-register"),
    ],
)
def test_default_model(tmp_path: Path, events: list[tuple[Any, ...]], model: str) -> None:
    assert default_model(load(history_file(tmp_path, events))) == model


# --- the linearizable models -----------------------------------------------------


def test_valid_register_history(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(DATA / "register.log"), "--json")
    assert (code, json.loads(out)["valid"]) == (0, True)


def test_stale_read_is_invalid_and_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # write 1 completes, then write 2 completes, then a read returns 1: a stale read.
    path = history_file(
        tmp_path,
        [
            (0, "invoke", "write", 1),
            (0, "ok", "write", 1),
            (0, "invoke", "write", 2),
            (0, "ok", "write", 2),
            (1, "invoke", "read", None),
            (1, "ok", "read", 1),
        ],
    )
    code, out, _ = run(capsys, str(path), "--time-limit", "2.5", "--jobs", "1", "--still")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"INVALID {path}: cas-register model, jsonl, 3 ops over 1 key, ")
    assert any("read" in line for line in lines[1:])
    drawn = [line.split("timeline: ")[1] for line in lines if "timeline: " in line]
    assert sorted(Path(p).suffix for p in drawn) == [".html", ".svg"]
    assert all(Path(p).parent == path.parent and Path(p).stat().st_size > 0 for p in drawn)


def test_counterexamples_go_to_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = history_file(
        tmp_path,
        [
            (0, "invoke", "write", 1),
            (0, "ok", "write", 1),
            (1, "invoke", "read", None),
            (1, "ok", "read", 7),
        ],
    )
    # --png, the option's old name (the still was a PNG), is still taken: scripts run on.
    code, out, _ = run(capsys, str(path), "--json", "--out", str(tmp_path / "drawings"), "--png")
    assert code == 1
    drawn = json.loads(out)["counterexamples"]
    assert len(drawn) == 2 and sorted(Path(p).suffix for p in drawn) == [".html", ".svg"]
    assert all(Path(p).parent == tmp_path / "drawings" for p in drawn)


def test_without_still_only_the_viewer_is_drawn_and_matplotlib_is_never_loaded(
    tmp_path: Path,
) -> None:
    stale = [(0, "invoke", "write", 1), (0, "ok", "write", 1), (1, "invoke", "read", None)]
    path = history_file(tmp_path, [*stale, (1, "ok", "read", 7)])
    script = (
        "import json, sys\n"
        "from harness.cli import main\n"
        f"code = main(['check', {str(path)!r}, '--json'])\n"
        "print(json.dumps([code, 'matplotlib' in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    outcome, last = done.stdout.splitlines()
    assert json.loads(last) == [1, False], done.stderr
    drawn = [Path(p) for p in json.loads(outcome)["counterexamples"]]
    assert [p.suffix for p in drawn] == [".html"] and drawn[0].stat().st_size > 0


def test_model_option_picks_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = history_file(tmp_path, [(0, "invoke", "write", 1), (0, "ok", "write", 1)])
    code, out, _ = run(capsys, str(path), "--model", "register", "--json")
    assert (code, json.loads(out)["model"]) == (0, "register")


def test_an_op_the_model_does_not_have_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    # The history has a cas (on line 6), which the plain register model cannot apply.
    path = DATA / "register.jsonl"
    code, out, err = run(capsys, str(path), "--model", "register")
    assert (code, out) == (254, "")
    assert (
        err == f"{path}:6: 'cas' is not an operation of the register model (it has read, write)\n"
    )


# --- bad arguments and bad input: 254 --------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["h.jsonl", "--model", "fifo"],
        ["h.jsonl", "--time-limit", "0"],
        ["h.jsonl", "--time-limit", "soon"],
        ["h.jsonl", "--jobs", "-1"],
        ["h.jsonl", "--jobs", "1.5"],
        ["h.jsonl", "--frobnicate"],
        ["h.jsonl", "--time-limit", "nan"],
        ["h.jsonl", "--time-limit", "inf"],
        ["h.jsonl", "--time-limit", "-inf"],
        ["h.jsonl", "--jobs", "0"],
    ],
)
def test_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 254
    assert "error:" in err


def test_malformed_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = history_file(tmp_path, [(0, "invoke", "read", None), (1, "ok", "read", 1)])
    code, out, err = run(capsys, str(path))
    assert code == 254
    assert out == ""
    assert err == f"{path}:2: ok completion without an invoke on 1\n"


def test_unreadable_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(tmp_path / "missing.jsonl"))
    assert code == 254
    assert err.startswith(f"{tmp_path / 'missing.jsonl'}:0: cannot read")
