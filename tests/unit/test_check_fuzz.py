"""Fuzz tests of `harness check` over the three readers: whatever the input (any bytes, any
JSON or EDN structure, any Jepsen log line), the exit code is 0, 1, 2 or 254, never a
traceback, and never 1 (invalid) for input the checker could not parse.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from history import load

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5)
    | st.sampled_from(["\ud800", "x" * 300, "a/b", ""])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=6,
)
SMALL = st.none() | st.integers(0, 3)
# Each family's operations, with the values they take; a history mostly keeps to one.
FAMILIES: list[dict[str, st.SearchStrategy[Any]]] = [
    {"read": SMALL, "write": SMALL, "cas": st.lists(SMALL, min_size=2, max_size=2)},
    {
        "get": SMALL,
        "put": SMALL,
        "remove": st.booleans(),
        "put-if-absent": st.tuples(SMALL, st.booleans()).map(list),
    },
    {"add": st.integers(0, 3), "read": st.lists(st.integers(0, 3), max_size=4)},
    {"append": st.text("xy ", max_size=3), "get": st.none() | st.text("xy ", max_size=4)},
]
OTHER_FS = st.sampled_from(["read", "write", "cas", "add", "get", "append", "dequeue"])
COMPLETIONS = st.sampled_from(["ok", "ok", "fail", "info"])


def mostly(draw: st.DrawFn, good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> Any:
    """Draws from `good` 39 times in 40, else from `bad`."""
    return draw(bad) if draw(st.integers(0, 39)) == 0 else draw(good)


@st.composite
def events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Histories that are mostly well formed (each op's invoke, then its completion, in
    time order; small values) with values, fields and orders that sometimes are not."""
    timed: list[tuple[Any, int, dict[str, Any]]] = []
    family = draw(st.sampled_from(FAMILIES))
    for process in range(draw(st.integers(0, 8))):
        f = mostly(draw, st.sampled_from(sorted(family)), OTHER_FS | VALUES)
        small = family.get(f, SMALL) if isinstance(f, str) else SMALL
        key = mostly(draw, st.none() | st.integers(0, 1), VALUES)
        start = draw(st.integers(0, 20))
        times = (start, start + draw(st.integers(0, 5)))
        for n, kind in enumerate(("invoke", mostly(draw, COMPLETIONS, VALUES | st.just("invoke")))):
            event = {"process": mostly(draw, st.just(process), VALUES), "type": kind, "f": f}
            event["value"] = mostly(draw, small, VALUES)
            event["time"] = mostly(draw, st.just(times[n]), VALUES)
            if key is not None:
                event["key"] = key
            if draw(st.integers(0, 39)) == 0:
                event.pop(draw(st.sampled_from(sorted(event))))
            timed.append((times[n], n, event))
    timed.sort(key=lambda t: t[:2])
    return [event for _, _, event in timed]


def to_edn(value: Any) -> str:
    """EDN text for any decoded value, NaN and infinities included."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "##NaN" if math.isnan(value) else ("##Inf" if value > 0 else "##-Inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + " ".join(to_edn(v) for v in value) + "]"
    return "{" + ", ".join(f"{to_edn(k)} {to_edn(v)}" for k, v in value.items()) + "}"


def edn_event(event: dict[str, Any]) -> str:
    fields = []
    for name, value in event.items():
        keyword = name in ("type", "f") and isinstance(value, str) and re.fullmatch(r"\w+", value)
        fields.append(f":{name} {':' + value if keyword else to_edn(value)}")
    return "{" + ", ".join(fields) + "}"


def log_line(event: dict[str, Any]) -> str:
    parts = [str(event.get(k, "")) for k in ("process", "type", "f")]
    return f"INFO  jepsen.util - {parts[0]}\t:{parts[1]}\t:{parts[2]}\t{to_edn(event.get('value'))}"


def check_exits_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes) -> None:
    path = tmp_path / "history"
    path.write_bytes(data)
    argv = ["check", str(path), "--time-limit", "5", "--jobs", "1", "--out", str(tmp_path)]
    try:
        code = main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2, 254), (code, err)
    assert "Traceback" not in err + out
    if code == 254:
        assert re.fullmatch(rf"{re.escape(str(path))}:\d+: [^\n]+\n", err), err
        assert out == ""
    if code == 1:
        assert out.startswith("INVALID")
        load(path)  # it was parsed: an invalid verdict stands on a readable history


@FUZZ
@given(data=st.binary(max_size=400))
def test_any_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes) -> None:
    check_exits_cleanly(tmp_path, capsys, data)


@FUZZ
@given(
    history=events(), noise=st.integers(0, 9).flatmap(lambda n: VALUES if n == 0 else st.just(None))
)
def test_any_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], history: list[Any], noise: Any
) -> None:
    lines = [json.dumps(x) for x in history] + ([] if noise is None else [json.dumps(noise)])
    check_exits_cleanly(tmp_path, capsys, "\n".join(lines).encode())


@FUZZ
@given(history=events(), as_vector=st.booleans(), comment=st.booleans())
def test_any_edn(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    history: list[Any],
    as_vector: bool,
    comment: bool,
) -> None:
    text = "\n".join(edn_event(e) for e in history)
    text = f"[{text}]" if as_vector else text
    text = text + "\n; the end" if comment else text
    check_exits_cleanly(tmp_path, capsys, text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(history=events(), tail=st.none() | st.text(max_size=20))
def test_any_jepsen_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], history: list[Any], tail: str | None
) -> None:
    text = "\n".join(log_line(e) for e in history)
    text += "" if tail is None else "\nINFO  jepsen.util - 0 " + tail
    check_exits_cleanly(tmp_path, capsys, text.encode("utf-8", "surrogatepass"))
