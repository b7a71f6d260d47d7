"""Tests that reading a history costs memory in proportion to what a check keeps, whatever
the input: leading blank lines are not kept, a line whose value would take more memory
than a budget is refused before it is parsed, EDN and Jepsen logs are never held as one
text, and running out of memory anyway ends the command as a crash (255, one line, the
traceback in a file), never as exit 1, which means invalid."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import cli
from harness.commands import check as cli_check
from history import HistoryError, load
from history import source as history_source
from tests.support import ROOT
from tests.unit.harness.commands.test_check import run

INVOKE = {"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "write", "value": 1}
OK = {**INVOKE, "index": 1, "time": 2, "type": "ok"}


def peak_bytes(read: Callable[[], object]) -> int:
    """Returns the most memory Python held at once while `read` ran."""
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_leading_blank_lines_are_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("\n" * 200_000 + json.dumps(INVOKE) + "\n" + json.dumps(OK) + "\n")
    assert peak_bytes(lambda: load(path, keep_events=False)) < 2_000_000
    assert [op.value for op in load(path).ops] == [1]


def test_a_line_whose_value_would_take_too_much_memory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(history_source, "VALUE_BUDGET", 100_000)
    path = tmp_path / "history.jsonl"
    heavy = json.dumps({**OK, "value": [{}] * 10_000})
    path.write_text(json.dumps(INVOKE) + "\n" + heavy + "\n")
    code, out, err = run(capsys, str(path))
    assert (code, out) == (254, "")
    assert re.fullmatch(rf"{re.escape(str(path))}:2: [^\n]*too much memory[^\n]*\n", err), err
    light = [{**event, "value": list(range(1_000))} for event in (INVOKE, OK)]
    path.write_text("".join(json.dumps(event) + "\n" for event in light))
    assert run(capsys, str(path), "--model", "register")[0] == 0


@pytest.mark.parametrize("name", ["history.edn", "jepsen.log"])
def test_edn_and_logs_are_refused_a_value_over_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setattr(history_source, "VALUE_BUDGET", 100_000)
    path = tmp_path / name
    heavy = "[" + "{} " * 10_000 + "]"
    if name == "history.edn":  # the event starts on line 2, its value on line 3
        text = "{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0,\n :value HEAVY}\n"
    else:
        text = "INFO jepsen.util - 0 :invoke :write 1\nINFO jepsen.util - 0 :ok :write HEAVY\n"
    path.write_text(text.replace("HEAVY", heavy))
    with pytest.raises(HistoryError, match="too much memory") as info:
        load(path)
    assert info.value.line == 2


def jepsen_twins(tmp_path: Path, events: int) -> dict[str, Path]:
    """Writes one keyed register history as history.jsonl, history.edn and a Jepsen log.
    Returns the three files by format."""
    lines: dict[str, list[str]] = {"jsonl": [], "edn": [], "log": []}
    for i in range(events):
        kind, process, key = ("invoke", "ok")[i % 2], i // 2 % 50, i // 2 % 100
        event = {"index": i, "time": i, "type": kind, "f": "write", "process": process}
        lines["jsonl"].append(json.dumps({**event, "key": key, "value": i}))
        lines["edn"].append(
            f"{{:index {i}, :time {i}, :type :{kind}, :f :write, :process {process}, "
            f":value [{key} {i}]}}"
        )
        lines["log"].append(f"INFO  jepsen.util - {process}\t:{kind}\t:write\t[{key} {i}]")
    files = {fmt: tmp_path / f"history.{fmt}" for fmt in lines}
    for fmt, path in files.items():
        path.write_text("\n".join(lines[fmt]) + "\n")
    return files


@pytest.mark.parametrize("fmt", ["edn", "log"])
def test_edn_and_logs_cost_their_ops_as_history_jsonl_does(tmp_path: Path, fmt: str) -> None:
    files = jepsen_twins(tmp_path, 40_000)
    twin = load(files["jsonl"], keep_events=False)
    assert load(files[fmt], keep_events=False).ops == twin.ops
    streamed = peak_bytes(lambda: load(files["jsonl"], keep_events=False))
    # Each event is parsed and its op kept: never the text, nor every event at once.
    assert peak_bytes(lambda: load(files[fmt], keep_events=False)) < 1.5 * streamed


DRIVER = textwrap.dedent(
    """
    import resource, runpy, sys
    import harness.cli, history.core
    size = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read())[1]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + 300 * 2**20, resource.RLIM_INFINITY))

    def add(self, line, event):
        kept = []  # held by this frame, as a parse's values are, while the error unwinds
        while True:
            kept.append({})

    history.core._HistoryBuilder.add = add
    sys.argv = ["harness", "check", sys.argv[1]]
    runpy.run_module("harness", run_name="__main__")
    """
)


def test_running_out_of_memory_is_a_one_line_crash(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(INVOKE) + "\n" + json.dumps(OK) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    driver = "import re\n" + DRIVER
    done = subprocess.run(
        [sys.executable, "-c", driver, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 255, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert "MemoryError" in done.stderr
    log = re.search(r"traceback in (\S+)\)", done.stderr)
    assert log is not None and "MemoryError" in Path(log.group(1)).read_text()


def test_a_crash_whose_log_cannot_be_written_is_still_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_room(*_: object, **__: object) -> None:
        raise MemoryError

    def no_file(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_check, "run", no_room)
    monkeypatch.setattr(tempfile, "mkstemp", no_file)  # imported by the crash alone
    assert cli.main(["check", "x"]) == 255
    err = capsys.readouterr().err
    assert err == "harness: internal error: MemoryError() (no log could be written)\n"


def test_a_crash_that_cannot_even_be_reported_is_still_one_line_and_255(tmp_path: Path) -> None:
    driver = (
        "import runpy, harness.cli\n"
        "def main(argv=None):\n"
        "    raise MemoryError\n"
        "harness.cli.main = main\n"
        "runpy.run_module('harness', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", driver], env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr.count("\n")) == (255, 1), done.stderr
    assert done.stderr.startswith("harness: internal error: MemoryError")
