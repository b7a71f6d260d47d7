"""Tests of checkers.fork_pool.supervised_map, the process pool that runs untrusted parts:
results in order and as JSON reads them, a part stopped at its deadline (and one given
more time) while the others finish, a process that ends or a task that raises anything
costing its part only, and no process left when the caller is interrupted."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from checkers.fork_pool import Extend, Stopped, supervised_map


def _children() -> list[int]:
    # Compared before and after: an earlier test in this worker may have left a child of
    # its own (the session's Spark JVM), which is no process of the pool's.
    pid = os.getpid()
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def test_results_come_in_order_as_json_reads_them() -> None:
    def task(i: int, extend: Extend) -> Any:
        return {"part": i, "pair": (i, i), "object": object} if i % 2 else i * 10

    before = _children()
    results = supervised_map(task, 5, 2, None)
    assert results[::2] == [0, 20, 40]
    assert results[1] == {"part": 1, "pair": [1, 1], "object": repr(object)}
    assert _children() == before


def test_no_part_no_process() -> None:
    assert supervised_map(lambda i, extend: i, 0, 4, 1.0) == []


def test_a_part_past_its_deadline_is_stopped_and_the_others_finish() -> None:
    def task(i: int, extend: Extend) -> int:
        while i == 1:
            pass
        return i

    before = _children()
    started = time.monotonic()
    results = supervised_map(task, 4, 1, 0.5)
    assert results == [0, Stopped("timeout"), 2, 3]
    assert time.monotonic() - started < 5
    assert _children() == before


def test_extend_gives_a_part_more_time() -> None:
    def task(i: int, extend: Extend) -> str:
        extend(3.0)
        time.sleep(1.0)
        return "slow but done"

    assert supervised_map(task, 1, 1, 0.3) == ["slow but done"]


@pytest.mark.parametrize(
    ("body", "stopped"),
    [
        (lambda: sys.exit(0), Stopped("raised", "SystemExit: 0")),
        (lambda: sys.exit("bye"), Stopped("raised", "SystemExit: bye")),
        (lambda: os._exit(3), Stopped("died", "exit code 3")),
        (lambda: os.kill(os.getpid(), signal.SIGKILL), Stopped("died", "signal SIGKILL")),
    ],
)
def test_a_part_that_exits_or_dies_costs_only_itself(body: Any, stopped: Stopped) -> None:
    def task(i: int, extend: Extend) -> int:
        if i == 1:
            body()
        return i

    assert supervised_map(task, 3, 1, None) == [0, stopped, 2]


def test_an_interrupt_kills_every_process() -> None:
    def task(i: int, extend: Extend) -> None:
        while True:
            pass

    before = _children()
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        supervised_map(task, 4, 2, None)
    timer.join()
    assert _children() == before
