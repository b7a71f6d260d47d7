"""The run's watchdog: every thread's stack in threads.txt on SIGUSR1 and after the bound,
and no file when nothing was written."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from harness.run.watchdog import THREADS_FILE, watched


def test_sigusr1_writes_every_threads_stack(tmp_path: Path) -> None:
    release = threading.Event()
    waiter = threading.Thread(target=release.wait, name="waiter")
    waiter.start()
    try:
        with watched(tmp_path, 3600) as path:
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.2)
            written = path.read_text()
    finally:
        release.set()
        waiter.join()
    assert written.count("hread 0x") >= 2  # "Current thread 0x..." and the waiter's
    assert "test_sigusr1_writes_every_threads_stack" in written
    assert (tmp_path / THREADS_FILE).is_file()


def test_a_run_past_its_bound_writes_the_stacks_by_itself(tmp_path: Path) -> None:
    with watched(tmp_path, 0.2) as path:
        time.sleep(0.6)
    assert "test_a_run_past_its_bound_writes_the_stacks_by_itself" in path.read_text()


def test_a_run_that_ends_in_time_leaves_no_file(tmp_path: Path) -> None:
    with watched(tmp_path, 3600):
        pass
    assert not (tmp_path / THREADS_FILE).exists()
    assert signal.getsignal(signal.SIGUSR1) in (signal.SIG_DFL, None)  # the handler is gone
