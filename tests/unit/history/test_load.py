"""Tests for history.jsonl writing, validation and Knossos-style pairing into Ops.

Covers the writer's crash safety, each validation rule's one-line error, and pairing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from history import (
    Event,
    HistoryError,
    HistoryWriter,
    Op,
    load,
    pair,
    pair_invocations,
    split_by_key,
)
from tests.support import ROOT


def ev(process: Any, type_: str, f: str, value: Any = None, **extra: Any) -> Event:
    return {"process": process, "type": type_, "f": f, "value": value, **extra}


def numbered(events: list[Event]) -> list[Event]:
    """Gives events the index and time a recorder would (time = 10 x position)."""
    return [{"index": i, "time": 10 * i, **e} for i, e in enumerate(events)]


def write_jsonl(path: Path, events: list[Event]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in numbered(events)))
    return path


# --- the writer ---------------------------------------------------------------


def test_writer_assigns_indices_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    clock = iter(range(100, 10_000, 100))
    with HistoryWriter(path, clock=lambda: next(clock)) as writer:
        first = writer.append(ev(0, "invoke", "cas", [1, 4], key="k3"))
        writer.append(ev(0, "ok", "cas", [1, 4], key="k3"))
        writer.append(ev("nemesis", "info", "start-partition", {"n1": ["n2"]}, time=5))
    assert (first["index"], first["time"]) == (0, 100)
    history = load(path)
    assert [e["index"] for e in history.events] == [0, 1, 2]
    assert history.events[2]["time"] == 5
    assert history.ops == [Op(0, 0, "cas", "k3", [1, 4], "ok", 100, 200)]
    assert [e["f"] for e in history.nemesis] == ["start-partition"]


def test_writer_flushes_each_event_before_close(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    writer = HistoryWriter(path)
    writer.append(ev(0, "invoke", "read"))
    assert json.loads(path.read_text())["f"] == "read"
    writer.close()
    with pytest.raises(ValueError):
        writer.append(ev(0, "ok", "read"))


def test_writer_writes_sets_as_sorted_lists(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path, fsync=True) as writer:
        writer.append(ev(0, "invoke", "read", {3, 1, 2}))
    assert json.loads(path.read_text())["value"] == [1, 2, 3]


def test_writer_is_safe_across_threads(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path) as writer:

        def worker(process: int) -> None:
            for i in range(200):
                writer.append(ev(process, "invoke", "add", i))
                writer.append(ev(process, "ok", "add", i))

        threads = [threading.Thread(target=worker, args=(p,)) for p in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    history = load(path)
    assert [e["index"] for e in history.events] == list(range(1600))
    assert len(history.ops) == 800


_KILLED_WRITER = """
import sys, threading
from history import HistoryWriter
writer = HistoryWriter(sys.argv[1])
def work(process):
    i = 0
    while True:
        writer.append({"process": process, "type": "invoke", "f": "add", "value": "x" * 5000})
        writer.append({"process": process, "type": "ok", "f": "add", "value": "x" * 5000})
        i += 1
for p in range(3):
    threading.Thread(target=work, args=(p,), daemon=True).start()
print("started", flush=True)
threading.Event().wait()
"""


def test_a_killed_writer_leaves_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_KILLED_WRITER), str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 10
        while path.stat().st_size < 2_000_000 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    data = path.read_bytes()
    # SIGKILL may cut the line being written at a page boundary (see HistoryWriter):
    # only that last line may be partial.
    whole = data[: data.rfind(b"\n") + 1]
    assert len(data) - len(whole) < 10_100
    lines = whole.decode().splitlines()
    assert len(lines) > 100
    assert [json.loads(line)["index"] for line in lines] == list(range(len(lines)))


# --- pairing --------------------------------------------------------------------


def test_pair_follows_knossos() -> None:
    ops = pair(
        numbered(
            [
                ev(0, "invoke", "read", key="a"),
                ev(1, "invoke", "write", 3, key="a"),
                ev(0, "ok", "read", 3, key="a"),
                ev(1, "fail", "write", 3, key="a"),
                ev(2, "invoke", "cas", [3, 4], key="b"),
                ev(2, "info", "cas", None, key="b", error="indeterminate: timeout"),
                ev(3, "invoke", "write", 5, key="b"),
                {"process": 3, "type": "ok", "f": "write", "key": "b"},  # no value at all
                ev(4, "invoke", "read", key="c"),
                ev(4, "ok", "read", None, key="c"),
                ev(5, "invoke", "write", 9, key="c"),
            ]
        )
    )
    assert ops == [
        Op(0, 0, "read", "a", 3, "ok", 0, 20),  # the read's value comes from its completion
        Op(4, 2, "cas", "b", [3, 4], "info", 40, None, "indeterminate: timeout"),
        Op(6, 3, "write", "b", 5, "ok", 60, 70),  # no completion value: the invoke's
        Op(8, 4, "read", "c", None, "ok", 80, 90),  # a read of null read null
        Op(10, 5, "write", "c", 9, "info", 100, None),  # still in flight at the end
    ]


def test_nemesis_and_named_info_events_are_kept_aside() -> None:
    events = numbered(
        [
            ev("nemesis", "info", "start"),
            ev(0, "invoke", "read"),
            ev("clock", "info", "bump", 3),
            ev("nemesis", "info", "start", "cut"),
            ev(0, "ok", "read", 1),
        ]
    )
    invocations, nemesis = pair_invocations(events)
    assert [e["index"] for e in nemesis] == [0, 2, 3]
    assert len(invocations) == 1


def test_split_by_key_makes_list_keys_hashable() -> None:
    ops = pair(
        numbered(
            [
                ev(0, "invoke", "write", 1, key=["t", 0]),
                ev(0, "ok", "write", 1, key=["t", 0]),
                ev(1, "invoke", "write", 2, key="k"),
                ev(1, "ok", "write", 2, key="k"),
                ev(0, "invoke", "read", key=["t", 0]),
            ]
        )
    )
    groups = split_by_key(ops)
    assert list(groups) == [("t", 0), "k"]
    assert [o.index for o in groups[("t", 0)]] == [0, 4]
    assert ops[0].key == ("t", 0)


# --- validation: one line naming the file, line and problem ---------------------


@pytest.mark.parametrize(
    ("events", "line", "problem"),
    [
        ([ev(0, "ok", "read", 1)], 1, "ok completion without an invoke on 0"),
        (
            [ev(0, "invoke", "read"), ev(1, "invoke", "read"), ev(0, "invoke", "read")],
            3,
            "process 0 invokes while its invoke on line 1 is in flight",
        ),
        (
            [ev(0, "invoke", "read"), ev(0, "info", "read"), ev(0, "invoke", "read")],
            3,
            "process 0 reused after its info on line 2",
        ),
        ([ev(0, "invoke", "read"), ev(0, "done", "read")], 2, "unknown type 'done'"),
        (
            [ev(0, "invoke", "read"), ev(0, "ok", "write", 1)],
            2,
            "completion f 'write' does not match the invoke's 'read' on line 1",
        ),
        ([ev(7, "fail", "read")], 1, "fail completion without an invoke on 7"),
        ([ev(7, "info", "read")], 1, "info completion without an invoke on 7"),
    ],
)
def test_validation_errors(tmp_path: Path, events: list[Event], line: int, problem: str) -> None:
    path = write_jsonl(tmp_path / "history.jsonl", events)
    with pytest.raises(HistoryError) as info:
        load(path)
    assert str(info.value) == f"{path}:{line}: {problem}"


def test_validation_counts_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    good = json.dumps({"index": 0, "time": 0, **ev(0, "invoke", "read")})
    bad = json.dumps({"index": 1, "time": 1, **ev(0, "invoke", "read")})
    path.write_text(f"\n{good}\n\n{bad}\n")
    with pytest.raises(HistoryError, match=r":4: process 0 invokes while its invoke on line 2"):
        load(path)


def test_pair_reports_positions_without_a_file() -> None:
    with pytest.raises(HistoryError, match=r"^<events>:2: ok completion without an invoke"):
        pair(numbered([ev(0, "invoke", "read"), ev(1, "ok", "read")]))


# --- load -------------------------------------------------------------------------


def test_load_accepts_a_results_folder(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "history.jsonl", [ev(0, "invoke", "read"), ev(0, "ok", "read", 2)])
    history = load(tmp_path)
    assert history.path == str(tmp_path / "history.jsonl")
    assert [o.value for o in history.ops] == [2]


def test_load_folder_without_history(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=r"no history\.jsonl or history\.edn"):
        load(tmp_path)


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=r"nope.jsonl:0: cannot read: No such file"):
        load(tmp_path / "nope.jsonl")


def test_load_empty_history(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text("")
    history = load(tmp_path)
    assert (history.events, history.ops) == ([], [])
