"""The queue check in two processes (the lost-acks view made in a forked one while the scan
runs here) gives exactly the one-process result; fork_pool.forked_beside's process ends with
its task, and the task runs here when told not to fork, when it cannot, or the process is lost.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers import fork_pool
from checkers.queue import checker as queue
from checkers.queue.reader import read_queue_history
from history import collector_paused
from tests.support.queue_sim import SimConfig, simulate, untimed

configs = st.builds(
    SimConfig,
    partitions=st.integers(1, 4),
    workers=st.integers(1, 6),
    ops=st.integers(0, 300),
    group=st.booleans(),
    mixed=st.booleans(),
    microops=st.booleans(),
    drains=st.booleans(),
    info_rate=st.sampled_from([0.0, 0.1]),
    losses=st.integers(0, 2),
    vanish=st.integers(0, 2),
    conflicts=st.integers(0, 2),
    duplicates=st.integers(0, 2),
    rewinds=st.integers(0, 2),
    skips=st.integers(0, 2),
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16), config=configs)
def test_forked_check_is_the_one_process_check(
    seed: int, config: SimConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue, "FORK_AT", 0)  # every history forks, however small
    forks: list[bool] = []
    real = fork_pool._start_beside

    def counted(task: Any) -> Any:
        forks.append(True)
        return real(task)

    monkeypatch.setattr(fork_pool, "_start_beside", counted)
    events, _ = simulate(seed, config)
    alone = queue.check(events, jobs=1)
    assert forks == []
    both = queue.check(events, jobs=2)
    # A test process with other threads (a Spark session's) must not fork, and does not:
    # the check then runs here. The forked path itself is tested in a fresh process below.
    assert forks == ([True] if fork_pool.can_fork() else [])
    assert untimed(both) == untimed(alone)


def forked_equals_alone(seeds: list[int]) -> list[int]:
    """Run in a fresh process (no other threads, so forking is safe): checks each seed's
    simulated history in one process and forked. Returns the seeds that differ, or that
    did not fork."""
    queue.FORK_AT = 0
    wrong = []
    for seed in seeds:
        config = SimConfig(
            ops=300,
            partitions=3,
            workers=4,
            group=seed % 2 == 0,
            losses=1,
            duplicates=1,
            skips=1,
            rewinds=1,
            info_rate=0.1,
            drains=True,
        )
        events, _ = simulate(seed, config)
        alone = queue.check(events, jobs=1)
        if not fork_pool.can_fork() or untimed(queue.check(events, jobs=2)) != untimed(alone):
            wrong.append(seed)
    return wrong


def in_fresh_process(task: Any, *args: Any) -> Any:
    """Runs task(*args) in a newly spawned interpreter (not a daemon: the task may fork)
    and returns its result."""
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=send_result, args=(sending, task, args))
    child.start()
    sending.close()
    try:
        return receiving.recv()
    finally:
        child.join(timeout=60)


def send_result(sending: Any, task: Any, args: tuple[Any, ...]) -> None:
    """In the fresh process: sends back what task(*args) returned."""
    sending.send(task(*args))


def test_forked_check_is_the_one_process_check_in_a_fresh_process() -> None:
    assert in_fresh_process(forked_equals_alone, list(range(6))) == []


def test_a_small_history_stays_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(task: Any) -> Any:
        raise AssertionError("forked for a small history")

    monkeypatch.setattr(fork_pool, "_start_beside", refused)
    events, _ = simulate(1, SimConfig(ops=200, losses=1))
    assert untimed(queue.check(events, jobs=2)) == untimed(queue.check(events, jobs=1))


def test_evidence_is_the_same_either_way() -> None:
    events, _ = simulate(3, SimConfig(ops=300, partitions=3, losses=2, duplicates=1))
    history = read_queue_history(events)
    with collector_paused():
        alone = queue.gather_evidence(history, fork=False)
        both = queue.gather_evidence(history, fork=True)
    assert untimed(both.lost_view) == untimed(alone.lost_view)
    assert both.index == alone.index and both.across == alone.across


def beside_pid_differs() -> bool:
    """Run in a fresh process: whether forked_beside's task ran in another process."""
    with fork_pool.forked_beside(os.getpid) as pid:
        return pid() != os.getpid()


def test_beside_runs_in_another_process() -> None:
    assert in_fresh_process(beside_pid_differs) is True


def beside_ends_before_asked() -> bool:
    """Run in a fresh process: whether forked_beside's process ends as soon as its task is
    done (its memory freed), before the block asks for the result, and the result is its."""
    with fork_pool.forked_beside(os.getpid) as pid:
        # Looks for a child that ended, leaving it to be reaped (WNOWAIT): forked_beside's.
        deadline = time.monotonic() + 30
        ended = None
        while ended is None and time.monotonic() < deadline:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            time.sleep(0.01)
        return ended is not None and ended.si_pid == pid()


def test_beside_ends_as_soon_as_its_task_is_done() -> None:
    assert in_fresh_process(beside_ends_before_asked) is True


def test_beside_without_fork_runs_here_when_asked() -> None:
    calls: list[int] = []

    def task() -> int:
        calls.append(os.getpid())
        return 7

    with fork_pool.forked_beside(task, fork=False) as result:
        assert calls == []
        assert result() == 7
    assert calls == [os.getpid()]


def test_beside_runs_here_when_forking_is_unsafe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_pool, "can_fork", lambda: False)
    with fork_pool.forked_beside(os.getpid) as pid:
        assert pid() == os.getpid()


def test_beside_raises_what_the_task_raised() -> None:
    def broken() -> int:
        raise KeyError("part")

    with pytest.raises(KeyError, match="part"), fork_pool.forked_beside(broken) as result:
        result()
    assert fork_pool._TASK == []


def test_beside_works_here_when_its_process_is_lost() -> None:
    here = os.getpid()

    def dies_there() -> int:
        if os.getpid() != here:
            os.kill(os.getpid(), signal.SIGKILL)
        return 5

    with fork_pool.forked_beside(dies_there) as result:
        assert result() == 5
    assert fork_pool._TASK == []
