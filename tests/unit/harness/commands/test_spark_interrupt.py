"""^C in the middle of a Spark job, as a terminal sends it (to the whole process group):
`analyze` and `check --spark` end with 130 and `interrupted`, no py4j traceback on the
terminal, and no JVM or worker left behind."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support import DATA, ROOT
from tests.support.run_folders import build_results


def _interrupted(args: list[str], busy: str, after: float = 1.0) -> tuple[int, str]:
    """Runs `harness ARGS` on a terminal, sends ^C `after` seconds after the status line
    says `busy`, and returns the exit code and everything shown on the terminal."""
    master, terminal = pty.openpty()
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness", *args],
        cwd=ROOT,
        env=os.environ | {"HARNESS_SPARK_MASTER": "local[2]"},
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    shown: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, shown), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    while busy.encode() not in b"".join(shown) and time.monotonic() < deadline:
        assert harness.poll() is None, b"".join(shown).decode()
        time.sleep(0.1)
    time.sleep(after)
    os.killpg(harness.pid, signal.SIGINT)
    code = harness.wait(120)
    reader.join(30)
    os.close(master)
    _assert_nothing_left(harness.pid)
    return code, b"".join(shown).decode(errors="replace")


def _read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal's last writer is gone
            return
        if not chunk:
            return
        into.append(chunk)


def _assert_nothing_left(group: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    raise AssertionError("a process of the command (the JVM, a worker) outlived it")


def _assert_clean(code: int, shown: str) -> None:
    assert code == 130, shown
    assert "Traceback" not in shown and "py4j" not in shown and "ERROR" not in shown, shown
    last = shown.rstrip().splitlines()[-1].split("\r")[-1]
    assert re.fullmatch(r"(harness \w+: )?interrupted.*", last.strip()), shown  # a line of its own


@pytest.mark.timeout(900)
def test_analyze(tmp_path: Path) -> None:
    build_results(tmp_path / "results")
    code, shown = _interrupted(
        ["analyze", str(tmp_path / "results"), "--spark-master", "local[2]"], "reading"
    )
    _assert_clean(code, shown)


@pytest.mark.timeout(900)
def test_check_spark(tmp_path: Path) -> None:
    # Enough ops that the job still runs a second after it starts.
    history = tmp_path / "history.jsonl"
    with open(history, "w") as f:
        for i in range(100_000):
            for n, kind in enumerate(("invoke", "ok")):
                event = {"index": 2 * i + n, "time": 2 * i + n, "process": i % 50, "type": kind}
                f.write(json.dumps(event | {"f": "write", "key": i % 500, "value": i}) + "\n")
    code, shown = _interrupted(["check", "--spark", str(history)], "checking")
    _assert_clean(code, shown)


@pytest.mark.timeout(900)
def test_while_the_jvm_starts(tmp_path: Path) -> None:
    # PySpark removes the file a JVM still starting would write its address to: that JVM
    # would wait forever, unless the launch runs to its end first.
    history = tmp_path / "history.jsonl"
    history.write_text((DATA / "register.jsonl").read_text())
    code, shown = _interrupted(["check", "--spark", str(history)], "starting", after=0.3)
    _assert_clean(code, shown)
