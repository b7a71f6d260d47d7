"""Every check is linear, or n log n, in its history's size: `harness check` of each
adversarial shape (tests/support/adversarial_histories.py) at 10x and 100x a base size ends
with its verdict in a subprocess capped at 1 GiB of address space and a generous CPU
time (resource.setrlimit: a hang or a quadratic blow-up is killed, never waited for), and
its peak RSS stays under a bound; and the work of each check that compared items two by two
(lines of checkers/ run, counted by sys.settrace) grows no faster than n log n from n to
10n. No timed assertion: the caps are guards, the bounds are memory and counted work. At
100x, each shape took the checks before issue 35 past 1 GB, or quadratic work."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from checkers.groups.consumer import check_groups
from checkers.groups.share import ShareRules, check_share
from checkers.txn.checker import check_txns
from checkers.txn.reader import read_txn_history
from tests.support import ROOT
from tests.support.adversarial_histories import (
    SHAPES,
    Event,
    group_overlaps,
    group_takeovers,
    share_redeliveries,
    txn_realtime,
    write,
)

ADDRESS_SPACE = 1 << 30
CPU_SECONDS = 600
PEAK_RSS_MIB = 640
BASE = {
    "group_overlaps": 30,
    "group_takeovers": 100,
    "share_redeliveries": 30,
    "txn_realtime": 30,
    "queue_unexpected": 12_000,
    "queue_inconsistent": 6_000,
}
VERDICT = {
    "group_overlaps": False,
    "group_takeovers": True,
    "share_redeliveries": False,
    "txn_realtime": True,
    "queue_unexpected": False,
    "queue_inconsistent": False,
}


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def check_capped(path: Path) -> tuple[int, str, str, float]:
    """Runs `harness check PATH --json --jobs 1` under the caps. Returns its exit code (a
    signal as its negative), output, errors and peak RSS in MiB (wait4's, its own and its
    children's)."""
    out, err = path.with_suffix(".out"), path.with_suffix(".err")
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "harness", "check", str(path), "--json", "--jobs", "1"],
            cwd=ROOT,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=_capped,
        )
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return child.returncode, out.read_text(), err.read_text(), usage.ru_maxrss / 1024


@pytest.mark.parametrize("scale", [10, 100])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_shape_at_scale_is_checked_within_bounds(tmp_path: Path, shape: str, scale: int) -> None:
    make, spec = SHAPES[shape]
    path = write(tmp_path / "run", make(BASE[shape] * scale), spec)
    code, out, err, peak = check_capped(path)
    size = path.stat().st_size / 2**20
    print(f"{shape} x{scale}: {size:.1f} MiB history, peak RSS {peak:.0f} MiB, exit {code}")
    assert code == (0 if VERDICT[shape] else 1), (code, err[-2000:])
    assert json.loads(out)["valid"] is VERDICT[shape]
    assert peak < PEAK_RSS_MIB, (shape, scale, peak)


CHECKERS = str(ROOT / "checkers")


def lines_run(check: Callable[[], object]) -> int:
    """Runs check. Returns how many lines of the project's checkers it ran (sys.settrace's
    line events, each turn of a loop included): its work, counted, never timed."""
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        count += event == "line"
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename.startswith(CHECKERS) else None

    sys.settrace(calls)
    try:
        check()
    finally:
        sys.settrace(None)
    return count


WORK: dict[str, tuple[Callable[[int], list[Event]], Callable[[list[Event]], object], int]] = {
    # the takeover check rescanned a member's polls for every assignment: a 13.5 MB
    # history ran past 120 s
    "takeovers": (group_takeovers, lambda events: check_groups(events, [], False), 60),
    "overlaps": (group_overlaps, lambda events: check_groups(events, [], False), 30),
    "share pairs": (
        share_redeliveries,
        lambda events: check_share(events, ShareRules(delivery_limit=5)),
        30,
    ),
    "real-time edges": (
        txn_realtime,
        lambda events: check_txns(read_txn_history(events)),
        30,
    ),
}


@pytest.mark.parametrize("check", sorted(WORK))
def test_a_checks_work_grows_no_faster_than_n_log_n(check: str) -> None:
    make, run, n = WORK[check]
    small, large = (lines_run(partial(run, _indexed(make(size)))) for size in (n, 10 * n))
    # Linear work grows 10x, n log n a little more; quadratic work 100x.
    assert large < 15 * small, (check, small, large)


def _indexed(events: list[Event]) -> list[Event]:
    return [{"index": i, "time": e.pop("time", i), **e} for i, e in enumerate(events)]
