"""Tests that nothing a user's model does ends `harness check` or outlasts --time-limit:
an exit or a BaseException while loading is one line and 254 (a real ^C stays 130); from
step or another hook it makes the key (or the check) unknown with the error; a step that
never returns is stopped at the time limit, and a ^C or a killed command leaves no
process behind. Built-in models never leave the command's process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from checkers import fork_pool
from checkers.linearizable import checker as linearizable
from checkers.linearizable.model_loader import load_model
from checkers.linearizable.models import MODELS, Model
from history import Op
from tests.support import ROOT
from tests.unit.harness.commands.test_check import run

# Two keys: "a" is valid whatever the model; a read on "b" runs the body under test.
EVENTS: list[dict[str, Any]] = [
    {"process": 0, "type": "invoke", "f": "add", "key": "a", "value": 1},
    {"process": 0, "type": "ok", "f": "add", "key": "a", "value": 1},
    {"process": 1, "type": "invoke", "f": "read", "key": "b", "value": None},
    {"process": 1, "type": "ok", "f": "read", "key": "b", "value": 0},
]

MODEL = """
import os, signal, sys
from checkers.linearizable.models import Model, Inconsistent

class Boom(BaseException):
    pass

def step(count, op):
    if op.f == "read" and op.key == "b":
{body}
    if op.f == "add":
        return count + op.value
    if op.value != count:
        return Inconsistent("read {{}} but the count is {{}}", op.value, count)
    return count

M = Model(name="counter", init=0, step=step, fs=frozenset({{"add", "read"}}))
"""


def model_file(folder: Path, body: str, template: str = MODEL) -> str:
    """Writes a model whose step runs `body` on key b's read. Returns its reference."""
    path = folder / "model.py"
    path.write_text(template.format(body="\n".join(f"        {line}" for line in body.split(";"))))
    return f"{path}:M"


def history(folder: Path, events: list[dict[str, Any]] | None = None) -> str:
    """Writes the events as history.jsonl; returns its path."""
    path = folder / "history.jsonl"
    lines = [json.dumps({"index": i, "time": i, **e}) for i, e in enumerate(events or EVENTS)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def harness(*argv: str, **popen: Any) -> subprocess.Popen[str]:
    """Starts `python -m harness check ARGV` in a session of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "check", *argv],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **popen,
    )


# --- from step: the key is unknown, with the error ------------------------------------


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("sys.exit(0)", "SystemExit: 0"),
        ("sys.exit(1)", "SystemExit: 1"),
        ("raise Boom('no')", "Boom: no"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise GeneratorExit", "GeneratorExit"),
    ],
)
def test_an_exit_or_base_exception_from_step_makes_its_key_unknown(
    body: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, history(tmp_path), "--model", model_file(tmp_path, body))
    assert (code, err) == (2, "")
    assert out.startswith("UNKNOWN ") and "counter model, jsonl, 2 ops over 2 keys" in out
    assert f'key "b": unknown (error): the check failed: {error}' in out
    assert "(at model.py:10)" in out


def test_a_process_that_ends_under_step_makes_its_key_unknown(tmp_path: Path) -> None:
    proc = harness(history(tmp_path), "--model", model_file(tmp_path, "os._exit(0)"))
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (2, "")
    assert 'key "b": unknown (error): the process checking it ended (exit code 0)' in out


@pytest.mark.timeout(60)
def test_a_step_that_never_returns_is_unknown_at_the_time_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = model_file(tmp_path, "while True: pass")
    started = time.monotonic()
    code, out, err = run(capsys, history(tmp_path), "--model", reference, "--time-limit", "1")
    assert time.monotonic() - started < 6
    assert (code, err) == (2, "")
    assert 'key "b": unknown (timeout): gave up at the time limit of 1.0 s' in out
    assert "the model did not return" in out


@pytest.mark.timeout(60)
def test_other_keys_are_still_checked_when_one_never_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events: list[dict[str, Any]] = [
        *EVENTS,
        {"process": 2, "type": "invoke", "f": "read", "key": "c", "value": None},
        {"process": 2, "type": "ok", "f": "read", "key": "c", "value": 5},
    ]
    reference = model_file(tmp_path, "while True: pass")
    argv = [history(tmp_path, events), "--model", reference, "--time-limit", "1", "--json"]
    code, out, _ = run(capsys, *argv)
    result = json.loads(out)
    assert (code, result["valid"]) == (1, False)  # key c reads 5 of a count of 0
    by_key = {f["key"]: f for f in result["failures"]}
    assert by_key["b"]["cause"] == "timeout" and by_key["c"]["valid"] is False
    assert "read 5 but the count is 0" in by_key["c"]["message"]


# --- from the other hooks ---------------------------------------------------------------

HOOKS = """
import sys
from checkers.linearizable.models import Model

class Boom(BaseException):
    pass

def step(count, op):
    return count + op.value if op.f == "add" else count

def exits(*args):
    sys.exit(1)

def booms(*args):
    raise Boom("hook")

M = Model(name="counter", init=0, step=step, fs=frozenset({{"add", "read"}}))
MALFORMED = M.with_(malformed=exits)
KEY_OF = M.with_(key_of=booms)
EFFECT = M.with_(effect=exits)
OBSERVES = M.with_(observes=booms)
"""


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "MALFORMED",
            "the checker failed: ModelError: the model's malformed hook raised SystemExit: 1",
        ),
        ("KEY_OF", "the checker failed: ModelError: the model's key_of hook raised Boom: hook"),
        ("EFFECT", 'key "b": unknown (error): the check failed: SystemExit: 1'),
        ("OBSERVES", 'key "b": unknown (error): the check failed: Boom: hook'),
    ],
)
def test_an_exit_from_another_hook_is_unknown(
    name: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        *EVENTS,
        {"process": 3, "type": "invoke", "f": "add", "key": "b", "value": 2},
    ]  # a crashed add, whose effect and observers the search asks for
    (tmp_path / "hooks.py").write_text(HOOKS.format())
    reference = f"{tmp_path / 'hooks.py'}:{name}"
    code, out, err = run(capsys, history(tmp_path, events), "--model", reference)
    assert (code, err) == (2, "")
    assert out.startswith("UNKNOWN ") and problem in out


# --- while loading: one line, 254 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("code_at_import", "error"),
    [
        ("sys.exit(0)", "SystemExit: 0"),
        ("sys.exit(1)", "SystemExit: 1"),
        ("sys.exit('bye')", "SystemExit: bye"),
        ("raise Boom('at import')", "Boom: at import"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ],
)
def test_an_exit_or_base_exception_while_loading_is_one_line_and_254(
    code_at_import: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.py"
    path.write_text(f"import sys\nclass Boom(BaseException):\n    pass\n{code_at_import}\n")
    code, out, err = run(capsys, history(tmp_path), "--model", f"{path}:M")
    assert (code, out) == (254, "")
    assert err == f"harness check: error: --model {path}:M: importing {path} failed: {error}\n"


def test_an_exit_while_the_model_is_checked_is_one_line_and_254(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.py"
    path.write_text(
        "import sys\nfrom checkers.linearizable.models import Model\n"
        "class State:\n    def __hash__(self):\n        sys.exit(3)\n"
        "M = Model(name='m', init=State(), step=lambda s, op: s, fs=frozenset({'add'}))\n"
    )
    code, out, err = run(capsys, history(tmp_path), "--model", f"{path}:M")
    assert (code, out) == (254, "")
    problem = "loading M failed: SystemExit: 3 (at model.py:5)"
    assert err == f"harness check: error: --model {path}:M: {problem}\n"


def test_a_real_interrupt_while_loading_stays_an_interrupt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.py"
    path.write_text("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n")
    code, out, err = run(capsys, history(tmp_path), "--model", f"{path}:M")
    assert (code, out) == (130, "")
    assert err == "harness check: interrupted (Ctrl-C) before a verdict\n"


# --- no process left behind ---------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended, whoever reaps it


def _hanging(tmp_path: Path) -> subprocess.Popen[str]:
    """Starts a check whose step writes its pid to tmp_path/pid and never returns; returns
    it once the step runs."""
    marker = tmp_path / "pid"
    body = f"open({str(marker)!r}, 'w').write(str(os.getpid()));while True: pass"
    proc = harness(history(tmp_path), "--model", model_file(tmp_path, body))
    deadline = time.monotonic() + 30
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()
    return proc


def test_ctrl_c_stops_a_step_that_never_returns(tmp_path: Path) -> None:
    proc = _hanging(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (130, "harness check: interrupted (Ctrl-C) before a verdict\n")
    time.sleep(0.2)
    assert not _alive(int((tmp_path / "pid").read_text()))


def test_a_killed_check_leaves_no_step_running(tmp_path: Path) -> None:
    proc = _hanging(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    step = int((tmp_path / "pid").read_text())
    while _alive(step) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(step)


# --- who is isolated ------------------------------------------------------------------------


def test_a_loaded_model_is_isolated_and_a_built_in_one_is_not(tmp_path: Path) -> None:
    assert load_model(model_file(tmp_path, "pass")).isolated is True
    assert not any(model.isolated for model in MODELS.values())
    assert Model(name="m", init=0, step=lambda s, op: s, fs=frozenset({"x"})).isolated is False


def test_built_in_models_are_searched_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_child(*args: Any) -> Any:
        raise AssertionError("a built-in model left the process")

    monkeypatch.setattr(fork_pool, "supervised_map", no_child)
    ops = [Op(0, 0, "write", "k", 1, "ok", 0, 1), Op(1, 1, "read", "k", 1, "ok", 2, 3)]
    assert linearizable.check(ops, MODELS["register"], time_limit=1)["valid"] is True
