"""A history and its type-confused twin, through `harness check` in every format: a correct
register history (simulated, so correct by construction) must be VALID, and the same
history with one read answering a value of another type that Python finds equal (`:a`
for "a", `true` for 1, `[1 2]` for `#{1 2}`, `1.0` for 1) or nil must be INVALID.

Jepsen compares values with Clojure's `=`, which keeps those types apart; a reader or a
model that lets Python's equality merge them hides a stale read (a false VALID).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main

TWINS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# (a value as written, a value of another type that Python's == would take for it), as
# each format spells them. Every written value is distinct from every other.
EDN_TWINS = [
    ("1", "1.0"),
    ("3.0", "3M"),
    (":a", '"a"'),
    ("#{1 2}", "[1 2]"),
    ("\\b", '"b"'),
    ('#inst "2020-01-01T00:00:00.000-00:00"', '"2020-01-01T00:00:00.000-00:00"'),
    ("sym", '"sym"'),
    ("{:d 1}", '{"d" 1}'),
    ("7", "nil"),
]
JSON_TWINS = [("1", "true"), ("0", "false"), ("2", "2.0"), ("5", "null")]


@dataclass(frozen=True, slots=True)
class Step:
    """One op of a sequential history: a write of a value, or a read of the register."""

    f: str
    value: str
    """The value as the format spells it (for a read: what it returned)."""


@st.composite
def register_runs(draw: st.DrawFn, twins: list[tuple[str, str]]) -> tuple[list[Step], int]:
    """Draws a sequential register history from a simulated register (every read returns
    the last write) and the position of a read after some write, to be made stale."""
    steps: list[Step] = []
    current: str | None = None
    for _ in range(draw(st.integers(1, 6))):
        steps.append(Step("write", current := draw(st.sampled_from(twins))[0]))
        steps.extend(Step("read", current) for _ in range(draw(st.integers(0, 2))))
    steps.append(Step("read", current))
    reads = [i for i, step in enumerate(steps) if step.f == "read"]
    return steps, draw(st.sampled_from(reads))


def planted(steps: list[Step], at: int, twins: list[tuple[str, str]]) -> list[Step]:
    """Returns steps with the read at `at` answering its value's twin instead."""
    twin = dict(twins)[steps[at].value]
    return [Step("read", twin) if i == at else step for i, step in enumerate(steps)]


def events(steps: list[Step], nil: str) -> list[tuple[int, str, str, str]]:
    """Returns each step's invoke and ok completion as (index, type, f, value); a read's
    invoke carries `nil`, the format's spelling of no value."""
    found: list[tuple[int, str, str, str]] = []
    for n, step in enumerate(steps):
        invoke = nil if step.f == "read" else step.value
        found += [(2 * n, "invoke", step.f, invoke), (2 * n + 1, "ok", step.f, step.value)]
    return found


def jsonl(steps: list[Step]) -> str:
    return "".join(
        f'{{"index": {i}, "time": {i}, "process": 0, "type": "{kind}", "f": "{f}", '
        f'"value": {value}}}\n'
        for i, kind, f, value in events(steps, "null")
    )


def edn(steps: list[Step]) -> str:
    return "".join(
        f"{{:index {i}, :time {i}, :process 0, :type :{kind}, :f :{f}, :value {value}}}\n"
        for i, kind, f, value in events(steps, "nil")
    )


def jepsen_log(steps: list[Step]) -> str:
    return "".join(
        f"INFO  jepsen.util - 0\t:{kind}\t:{f}\t{value}\n"
        for _, kind, f, value in events(steps, "nil")
    )


def check(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str]) -> int:
    path = tmp_path / name
    path.write_text(text)
    code = main(["check", str(path), "--model", "cas-register", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code


FORMATS = [("history.jsonl", jsonl, JSON_TWINS)] + [
    (name, render, EDN_TWINS) for name, render in (("history.edn", edn), ("jepsen.log", jepsen_log))
]


@pytest.mark.parametrize(("name", "render", "twins"), FORMATS, ids=[f[0] for f in FORMATS])
@TWINS
@given(data=st.data())
def test_a_history_is_valid_and_its_type_confused_twin_is_not(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    render: Callable[[list[Step]], str],
    twins: list[tuple[str, str]],
    data: st.DataObject,
) -> None:
    steps, at = data.draw(register_runs(twins))
    correct, stale = render(steps), render(planted(steps, at, twins))
    assert check(tmp_path, name, correct, capsys) == 0, correct
    assert check(tmp_path, name, stale, capsys) == 1, stale


def test_the_twins_are_equal_in_python_where_they_are_json() -> None:
    # The point of the pairs: Python's == merges them, Clojure's = does not.
    merged = [json.loads(a) == json.loads(b) for a, b in JSON_TWINS if b != "null"]
    assert all(merged)
