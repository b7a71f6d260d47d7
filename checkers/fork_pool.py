"""Work spread over forked processes, for checks that split into independent parts (the
keys of one history, the histories of one command), deaf to ^C in the workers.

Forked workers inherit the task and its data, so only the part numbers and the results
cross between processes: pickling 100,000 ops costs about as much as checking them, and a
task may be a closure over anything. A ^C reaches every process of the terminal's group;
the parent alone answers it, stopping the workers at once.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["can_fork", "forked_map"]

R = TypeVar("R")

# The task of the running pool, inherited by its workers when they are forked.
_TASK: list[Callable[[int], Any]] = []


def can_fork() -> bool:
    """Whether worker processes may be forked. Forking a process that runs other threads can
    deadlock a child on a lock some thread held, and spawn re-imports the caller's main
    module (which breaks scripts without a main guard): then work stays in this process."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


# ^C and a hang-up reach the whole process group: the parent alone answers them. SIGTERM
# is how the parent stops a worker: it must end the worker at once and quietly, whatever
# handler the parent had installed (harness.signals turns it into KeyboardInterrupt).
_IGNORED = (signal.SIGINT, signal.SIGHUP)
_BLOCKED_WHILE_FORKING = {*_IGNORED, signal.SIGTERM}


def _ignore_interrupts() -> None:
    # These were blocked when this worker was forked (see forked_map): set, then unblock.
    for sig in _IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _BLOCKED_WHILE_FORKING)


def _run_part(i: int) -> Any:
    return _TASK[-1](i)


def forked_map(task: Callable[[int], R], parts: int, jobs: int) -> Iterator[R]:
    """Takes task(i) -> result for the parts 0 to parts-1 and a number of processes. Yields
    the results in order of i, as they come, from `jobs` forked workers. On an interrupt (or
    any error) the workers are stopped at once, not waited for. Raises OSError or
    BrokenProcessPool when no process can be had; callers then do the work themselves."""
    _TASK.append(task)
    try:
        pool = ProcessPoolExecutor(
            max_workers=max(1, min(jobs, parts)),
            mp_context=multiprocessing.get_context("fork"),
            initializer=_ignore_interrupts,
        )
        try:
            # The workers are forked while map submits: a ^C then stays pending in this
            # process (raised here once unblocked) and never reaches a worker before it
            # ignores SIGINT.
            before = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED_WHILE_FORKING)
            try:
                done = pool.map(_run_part, range(parts))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, before)
            yield from done
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown()
    finally:
        _TASK.pop()


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancels the pool's pending work, terminates its workers, and waits (boundedly) for
    its manager thread: one left running at exit meets its own closed pipe there, and
    Python prints that error on the way out."""
    workers = list((pool._processes or {}).values())
    manager: threading.Thread | None = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)
