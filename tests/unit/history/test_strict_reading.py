"""Tests that the three readers are equally strict and that no input hurts the machine.

Every malformed history is one HistoryError naming its line, in each format; values a
history cannot hold (NaN, infinities, integers too long, nesting too deep) are refused;
only regular files and standard input are read, line by line with a bound.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from history import HistoryError, edn, load
from history import source as history_source
from history.edn_values import Symbol
from history.frozen import MAX_NESTING, nesting

INVOKE = '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "write", "value": 1}'
OK = '{"index": 1, "time": 2, "process": 0, "type": "ok", "f": "write", "value": 1}'
EARLY_OK = OK.replace('"time": 2', '"time": 0')
REPEATED_INDEX = OK.replace('"index": 1', '"index": 0')


def write(tmp_path: Path, text: str, name: str = "h") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(tmp_path: Path, text: str) -> HistoryError:
    path = write(tmp_path, text)
    with pytest.raises(HistoryError) as info:
        load(path)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path}:{info.value.line}: ")
    return info.value


def jsonl_event(**fields: Any) -> str:
    event = {"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "write", "value": 1}
    return json.dumps({**event, **fields})


# --- values a history cannot hold -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (INVOKE.replace('"value": 1', '"value": NaN'), "NaN is not a number"),
        (INVOKE.replace('"value": 1', '"value": -Infinity'), "-Infinity is not a number"),
        (INVOKE.replace('"time": 1', '"time": 1e999'), "number out of range"),
        (INVOKE.replace('"value": 1', '"value": ' + "9" * 5000), "more than 4300 digits"),
        (INVOKE.replace('"value": 1', '"value": ' + "[" * 1000 + "]" * 1000), "nested deeper"),
        (INVOKE.replace('"value": 1', '"value": ' + "[" * 101 + "]" * 101), "nested deeper"),
        ("{:type :invoke, :f :write, :process 0, :value ##NaN}", "##NaN is not a number"),
        ("{:type :invoke, :f :write, :process 0, :value ##-Inf}", "##-Inf is not a number"),
        ("{:type :invoke, :f :write, :process 0, :time 1e999}", "number out of range"),
        ("{:type :invoke, :f :write, :process 0, :value " + "9" * 5000 + "}", "4300 digits"),
        ("{:type :invoke, :f :write, :process 0, :value " + "[" * 500 + "]" * 500, "nested"),
        ("{:type :invoke, :f :write, :process 0, :value " + "#_ " * 500 + "1}", "nested"),
        ("{:type :invoke, :f :write, :process 0, :value " + "#a " * 500 + "1}", "nested"),
        ("INFO jepsen.util - 0\t:invoke\t:write\t##Inf", "##Inf is not a number"),
        ("INFO jepsen.util - 0\t:invoke\t:write\t" + "[" * 200, "nested deeper"),
    ],
)
def test_values_a_history_cannot_hold_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    error = refused(tmp_path, text)
    assert error.line == 1 and problem in error.problem


def test_nesting_up_to_the_bound_is_read(tmp_path: Path) -> None:
    deep = "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)  # the event is one level
    path = write(tmp_path, INVOKE.replace('"value": 1', f'"value": {deep}') + "\n")
    (op,) = load(path).ops
    assert nesting(op.value) == MAX_NESTING - 1


def test_nesting_measures_any_depth_without_recursion() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    assert nesting(value) == 100_000
    assert nesting({"a": [1, {"b": ()}]}) == 4


# --- fields of the wrong type: the same refusal in every format ----------------


@pytest.mark.parametrize(
    ("field", "json_value", "edn_value", "problem"),
    [
        ("f", '{"a": 1}', "{:a 1}", "bad f"),
        ("f", "[1]", "[1]", "bad f"),
        ("f", '""', '""', "bad f"),
        ("type", '"invok"', ":invok", "unknown type"),
        ("process", "true", "true", "bad process"),
        ("process", "[1]", "[1]", "bad process"),
        ("time", '"soon"', '"soon"', "bad time"),
        ("time", "null", "nil", "bad time"),
        ("index", "1.5", "1.5", "bad index"),
    ],
)
def test_fields_of_the_wrong_type(
    tmp_path: Path, field: str, json_value: str, edn_value: str, problem: str
) -> None:
    event = json.loads(INVOKE)
    line = json.dumps({**event, field: "PLACEHOLDER"}).replace('"PLACEHOLDER"', json_value)
    assert problem in refused(tmp_path, line).problem
    # The field replaced, never named twice: a map naming a key twice is refused for that.
    fields = {"index": "0", "time": "1", "process": "0", "type": ":invoke", "f": ":write"}
    edn_fields = ", ".join(f":{k} {v}" for k, v in (fields | {field: edn_value}).items())
    assert problem in refused(tmp_path, f"{{{edn_fields}}}").problem


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (f"{INVOKE}\n{EARLY_OK}\n", 2, "precedes its invoke"),
        (f"{INVOKE}\n{REPEATED_INDEX}\n", 2, "does not follow index 0"),
        (
            "INFO jepsen.util - 0\t:invoke\t:read\tnil\nINFO jepsen.util - 0\t:done\t:read\t1\n",
            2,
            "unknown type 'done'",
        ),
        (
            "INFO jepsen.util - 0\t:invoke\t:read\tnil\nINFO jepsen.util - 0\t:ok\n",
            2,
            "truncated op line",
        ),
        ("INFO jepsen.util - 0\t:invoke\t:read\tnil\nINFO jepsen.util - 0", 2, "truncated"),
    ],
)
def test_histories_that_break_the_rules(tmp_path: Path, text: str, line: int, problem: str) -> None:
    error = refused(tmp_path, text)
    assert (error.line, problem in error.problem) == (line, True)


# --- comments, byte order marks, keys --------------------------------------------


@pytest.mark.parametrize(
    "text", ["; nothing\n", "; nothing", ";", "1 ; one", "[1 ; one\n 2] ;; two", "#_ 3 ; x"]
)
def test_edn_comments_anywhere_are_blanks(text: str) -> None:
    forms = [form for _, form in edn.read_forms(text)]
    assert all(not isinstance(f, Symbol) for f in forms)
    assert forms in ([], [1], [[1, 2]])


@pytest.mark.parametrize(
    "text",
    [
        f"{INVOKE}\n{OK}\n",
        "{:index 0, :time 1, :process 0, :type :invoke, :f :write, :value 1}\n"
        "{:index 1, :time 2, :process 0, :type :ok, :f :write, :value 1}\n",
        "INFO jepsen.util - 0\t:invoke\t:write\t1\nINFO jepsen.util - 0\t:ok\t:write\t1\n",
    ],
)
def test_a_byte_order_mark_is_harmless(tmp_path: Path, text: str) -> None:
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    plain.write_text(text)
    marked.write_text("\ufeff" + text)
    assert load(marked).ops == load(plain).ops != []


def test_a_log_of_unkeyed_cas_ops_is_not_read_as_keyed(tmp_path: Path) -> None:
    text = (
        "INFO jepsen.util - 0\t:invoke\t:cas\t[1 4]\nINFO jepsen.util - 0\t:ok\t:cas\t[1 4]\n"
        "INFO jepsen.util - 1\t:invoke\t:cas\t[4 2]\nINFO jepsen.util - 1\t:fail\t:cas\t[4 2]\n"
    )
    ops = load(write(tmp_path, text)).ops
    assert [(op.key, op.value) for op in ops] == [(None, [1, 4])]


def test_a_log_of_keyed_cas_ops_is_read_as_keyed(tmp_path: Path) -> None:
    text = "INFO jepsen.util - 0\t:invoke\t:cas\t[7 [1 4]]\n"
    text += "INFO jepsen.util - 0\t:ok\t:cas\t[7 [1 4]]\n"
    ops = load(write(tmp_path, text)).ops
    assert [(op.key, op.value) for op in ops] == [(7, [1, 4])]


# --- what is read, and how much --------------------------------------------------


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), Path("/dev/null")):
        with pytest.raises(HistoryError, match="not a regular file"):
            load(path)


def test_a_path_too_long_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="cannot read: File name too long"):
        load(tmp_path / ("x" * 300))


def test_standard_input_is_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(f"{INVOKE}\n{OK}\n".encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    history = load("-")
    assert (history.path, len(history.ops), len(history.events)) == ("<stdin>", 1, 2)


def test_lines_are_read_with_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_source, "MAX_LINE_BYTES", 100)
    path = write(tmp_path, f"{INVOKE}\n" + "x" * 500)
    with pytest.raises(HistoryError) as info:
        load(path)
    assert (info.value.line, info.value.problem) == (2, "line longer than 0 MiB")


def test_text_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h"
    path.write_bytes(INVOKE.encode() + b"\n\xff\xfe\n")
    with pytest.raises(HistoryError, match=r":2: not UTF-8 text"):
        load(path)


def piped(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Makes standard input a pipe that holds text, as `cat FILE | harness check -` does."""
    read_end, write_end = os.pipe()
    os.write(write_end, text.encode())
    os.close(write_end)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(open(read_end, "rb")))  # noqa: SIM115


def test_a_piped_jepsen_history_is_kept_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_source, "MAX_PIPED_BYTES", 50)
    piped(monkeypatch, "{:type :invoke, :f :read, :process 0}\n" * 3)
    with pytest.raises(HistoryError, match=r"<stdin>:2: over 0 MiB piped"):
        load("-")


def test_a_piped_jepsen_history_is_read_again_when_it_must_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (
        "{:type :invoke, :f :write, :value 1, :process 0, :time 5000}\n"
        "{:type :ok, :f :write, :value 1, :process 0}\n"  # no :time: all by position
    )
    piped(monkeypatch, text)
    assert load("-").ops == load(write(tmp_path, text)).ops
    assert [(op.call, op.ret) for op in load(write(tmp_path, text)).ops] == [(0, 1)]


def test_loading_without_events_gives_the_same_ops(tmp_path: Path) -> None:
    lines = [INVOKE, jsonl_event(index=1, process=1, f="read", value=None)]
    lines.append(OK.replace('"index": 1', '"index": 2'))
    lines.append(jsonl_event(index=3, time=3, process=1, type="fail", f="read", value=None))
    path = write(tmp_path, "\n".join(lines) + "\n")
    full, light = load(path), load(path, keep_events=False)
    assert (light.ops, light.events, len(full.events)) == (full.ops, [], 4)
    assert (light.fs, light.invocations) == (frozenset({"write", "read"}), 2)
    assert (list(light.invoke_lines), list(light.value_lines)) == ([1], [3])
