"""`harness check --model FILE.py:NAME | package.module:NAME`: verdicts with the counter of
docs/CHECKERS.md, loading errors as one line and exit 254, ops the model does not know,
models that raise (unknown, never a crash), and a model file that --help never runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support import ROOT
from tests.unit.harness.commands.test_check import run

COUNTER = f"{ROOT / 'examples' / 'counter_model.py'}:COUNTER"

# Two processes add 2 and 3 (the second crashes), then reads see 2 and then 5.
VALID = [
    (0, "invoke", "add", 2),
    (1, "invoke", "add", 3),
    (0, "ok", "add", 2),
    (1, "info", "add", 3),
    (2, "invoke", "read", None),
    (2, "ok", "read", 2),
    (2, "invoke", "read", None),
    (2, "ok", "read", 5),
]
STALE = [(0, "invoke", "add", 2), (0, "ok", "add", 2), (1, "invoke", "read", None)]
STALE += [(1, "ok", "read", 0)]

RAISING = """
from checkers.linearizable.models import Model

def step(state, op):
    return state // 0

def malformed(op):
    raise RuntimeError("malformed broke")

def key_of(op):
    raise KeyError("no key")

STEP = Model(name="boom", init=0, step=step, fs=frozenset({"add", "read"}))
MALFORMED = STEP.with_(malformed=malformed)
KEY = STEP.with_(key_of=key_of)
NAMED_MAP = STEP.with_(name="map")
SET_FS = STEP.with_(fs={"add"})
LIST_INIT = STEP.with_(init=[])
NOT_A_MODEL = 3
"""


def history(folder: Path, events: list[tuple[Any, ...]], name: str = "history.jsonl") -> Path:
    """Writes (process, type, f, value) tuples as history.jsonl, all on key "k"."""
    path = folder / name
    path.write_text(
        "".join(
            json.dumps({"index": i, "time": i, "process": p, "type": t, "f": f, "value": v}) + "\n"
            for i, (p, t, f, v) in enumerate(events)
        )
    )
    return path


@pytest.fixture
def raising(tmp_path: Path) -> Path:
    path = tmp_path / "raising.py"
    path.write_text(RAISING)
    return path


@pytest.mark.parametrize("model", [COUNTER, "examples.counter_model:COUNTER"])
def test_a_valid_history(
    model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    code, out, err = run(capsys, str(history(tmp_path, VALID)), "--model", model)
    assert (code, err) == (0, "")
    assert out.startswith("VALID   ") and ": counter model, jsonl, 4 ops over 1 key, " in out


def test_an_invalid_history_among_others_in_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history(tmp_path, VALID, "a.jsonl")
    history(tmp_path, STALE, "b.jsonl")
    argv = [str(tmp_path), "--model", COUNTER, "--jobs", "2", "--out", str(tmp_path / "out")]
    code, out, _ = run(capsys, *argv)
    assert code == 1
    assert "read 0 but the count is 2" in out
    assert out.splitlines()[-1].endswith("1 valid, 1 invalid, 0 unknown, 0 malformed")


def test_jepsen_edn_histories_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 0, :type :invoke, :f :add, :value 2}\n"
        "{:process 0, :type :ok, :f :add, :value 2}\n"
        "{:process 1, :type :invoke, :f :read, :value nil}\n"
        "{:process 1, :type :ok, :f :read, :value 2}\n"
    )
    code, out, _ = run(capsys, str(path), "--model", COUNTER)
    assert code == 0 and "counter model, edn" in out


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        (
            [(0, "invoke", "add", 1), (0, "ok", "add", 1), (1, "invoke", "write", 3)],
            "history.jsonl:3: 'write' is not an operation of the counter model (it has add, read)",
        ),
        (
            [(0, "invoke", "add", True), (0, "ok", "add", True)],
            "history.jsonl:2: a counter add value must be an integer, not True",
        ),
    ],
)
def test_ops_the_model_cannot_read_are_bad_input(
    events: list[tuple[Any, ...]], problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(history(tmp_path, events)), "--model", COUNTER)
    assert (code, out) == (254, "")
    assert err.strip().endswith(problem) and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("STEP", "the history: unknown (error): the check failed: ZeroDivisionError: "),
        ("MALFORMED", "the checker failed: RuntimeError: malformed broke"),
        ("KEY", "the checker failed: KeyError: 'no key'"),
    ],
)
def test_a_model_that_raises_gives_unknown_with_its_error(
    name: str, problem: str, raising: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(history(tmp_path, VALID))
    code, out, err = run(capsys, path, "--model", f"{raising}:{name}")
    assert (code, err) == (2, "")
    assert out.startswith("UNKNOWN ") and problem in out
    if name == "STEP":
        assert "(at raising.py:5)" in out
    code, out, _ = run(capsys, path, "--model", f"{raising}:{name}", "--json")
    result = json.loads(out)
    assert (code, result["valid"], result["model"]) == (2, "unknown", "boom")
    assert problem.rsplit(": ", 2)[-2] in out  # the error's type, in the JSON


def test_unknown_ops_are_refused_before_a_raising_hook_answers(
    raising: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [(0, "invoke", "add", 1), (0, "ok", "add", 1), (1, "invoke", "cas", [1, 2])]
    code, _, err = run(capsys, str(history(tmp_path, events)), "--model", f"{raising}:MALFORMED")
    assert code == 254 and "'cas' is not an operation of the boom model" in err


@pytest.mark.parametrize(
    ("reference", "problem"),
    [
        ("missing.py:M", "missing.py: no such file"),
        (
            "raising.py:NOPE",
            "raising.py has no NOPE (its models: KEY, LIST_INIT, MALFORMED, NAMED_MAP, ",
        ),
        (
            "raising.py:NOT_A_MODEL",
            "NOT_A_MODEL is not a checkers.linearizable.models.Model (its type: int)",
        ),
        ("raising.py:NAMED_MAP", "its name 'map' is a built-in model's; name it otherwise"),
        ("raising.py:SET_FS", "SET_FS.fs must be a frozenset of operation names"),
        ("raising.py:LIST_INIT", "LIST_INIT.init must be hashable"),
        ("broken.py:M", "importing broken.py failed: SyntaxError: "),
        ("no_such_package.models:M", "no module named no_such_package (is it on PYTHONPATH?)"),
    ],
)
def test_a_model_that_cannot_be_loaded_is_one_line(
    reference: str,
    problem: str,
    raising: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "broken.py").write_text("def (:\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, str(history(tmp_path, VALID)), "--model", reference)
    assert (code, out) == (254, "")
    assert err.startswith(f"harness check: error: --model {reference}: {problem}")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("model", ["counter", "a.py", "a.py:", "a.py:1x"])
def test_a_model_argument_of_no_known_shape_is_a_usage_error(
    model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, str(history(tmp_path, VALID)), "--model", model)
    assert code == 254 and f"argument --model: {model!r} is not a model" in err


def test_spark_refuses_a_users_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(history(tmp_path, VALID)), "--model", COUNTER, "--spark")
    assert code == 254 and "--spark checks built-in models" in err


def test_help_never_runs_the_model_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "imported"
    model = tmp_path / "marking.py"
    model.write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).touch()\n"
        "from checkers.linearizable.models import Model\n"
        "M = Model(name='m', init=0, step=lambda s, op: s, fs=frozenset({'add'}))\n"
    )
    with pytest.raises(SystemExit) as done:
        main(["check", "--model", f"{model}:M", "--help"])
    assert done.value.code == 0 and not marker.exists()
    run(capsys, str(history(tmp_path, VALID)), "--model", f"{model}:M")
    assert marker.exists()  # the same file, when checking, is run
