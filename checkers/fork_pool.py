"""Work spread over forked processes, for checks that split into independent parts (the
keys of one history, the histories of one command, the stages of one check), deaf to ^C
in the workers.

Forked workers inherit the task and its data, so only the part numbers and the results
cross between processes: pickling 100,000 ops costs about as much as checking them, and a
task may be a closure over anything. A ^C reaches every process of the terminal's group;
the parent alone answers it, stopping the workers at once.

forked_map and forked_beside trust their task; supervised_map does not (a user's model):
each part has a deadline, past which its process is killed, and a process that exits,
raises anything or never returns costs only its part. Its results cross as JSON, which the
parent reads without running any of the task's code, and its processes die with the parent.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection, Pipe, wait
from typing import IO, Any, Literal, TypeVar, cast

from checkers.result import error_line

__all__ = ["Stopped", "can_fork", "forked_beside", "forked_map", "supervised_map"]

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


@contextmanager
def forked_beside(task: Callable[[], R], *, fork: bool = True) -> Iterator[Callable[[], R]]:
    """Takes a task and whether it may run in a forked process. Starts it there, to run
    while the block runs here, and yields a function that returns its result (waiting for
    it), or raises what it raised. The task runs here, when that function is called, when
    fork is False or can_fork() says no, or when no process can be had or it was lost."""
    child = _start_beside(task) if fork and can_fork() else None
    if child is None:
        yield task
        return
    try:
        yield partial(child.result, task)
    finally:
        child.end()


class _Beside:
    """A forked process that runs one task, writes its pickled result (or what it raised) to
    an unlinked file and exits: its memory (with the pages it shares with this process that
    either has written since, copied) is freed as soon as its task is done, not when this
    process comes for the result, as it would be if it had to wait for a pipe to be read."""

    def __init__(self, pid: int, file: IO[bytes]) -> None:
        self.pid = pid
        self.file = file

    def result(self, task: Callable[[], R]) -> R:
        """Waits for the process. Returns the task's result, or raises what it raised; runs
        the task here when the process ended without writing its result whole."""
        if not self._reap():  # it died (killed for memory, say): work here
            return task()
        self.file.seek(0)
        try:  # read by the unpickler: no copy of the whole file first
            kind, value = pickle.load(self.file)
        except Exception:  # what it raised does not unpickle: raise it from here instead
            return task()
        if kind == "raised":
            raise value
        return cast(R, value)

    def _reap(self) -> bool:
        """Waits for the process to end. Returns whether it ended having written its
        result."""
        pid, self.pid = self.pid, 0
        try:
            return bool(pid) and os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        except ChildProcessError:  # reaped elsewhere: its file says whether it finished
            return True

    def end(self) -> None:
        """Kills the process if it still runs (its result no longer wanted), reaps it and
        drops its file."""
        if self.pid:
            with suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()
        self.file.close()


def _start_beside(task: Callable[[], Any]) -> _Beside | None:
    """Forks a process that runs task. Returns it, or None when none can be had."""
    parent = os.getpid()
    try:
        file = tempfile.TemporaryFile()  # noqa: SIM115 - the _Beside closes it, in end()
    except OSError:
        return None
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED_WHILE_FORKING)
    try:
        pid = os.fork()
        if pid == 0:  # the task's process: never returns
            code = 1
            try:
                _ignore_interrupts()
                _die_with(parent)
                _send(file, task)
                code = 0
            finally:
                os._exit(code)
    except OSError:
        file.close()
        return None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return _Beside(pid, file)


def _send(file: IO[bytes], task: Callable[[], Any]) -> None:
    """In the task's process: runs it and writes its pickled result (or what it raised,
    whatever it was) to file."""
    try:  # pickled into the file: no copy of the whole result in memory first
        pickle.dump(("done", task()), file, pickle.HIGHEST_PROTOCOL)
    except BaseException as err:  # whatever the task raised is the caller's to see
        file.seek(0)  # what part of the result was written goes
        file.truncate()
        try:
            message = pickle.dumps(("raised", err), pickle.HIGHEST_PROTOCOL)
        except Exception:  # an error that does not pickle crosses as its text
            message = pickle.dumps(("raised", RuntimeError(error_line(err))))
        file.write(message)
    file.flush()


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


Extend = Callable[[float], None]
"""What a supervised task calls to have `seconds` more from now before it is stopped."""


@dataclass(frozen=True, slots=True)
class Stopped:
    """A supervised part that gave no result. cause: `timeout` (killed at its deadline),
    `died` (its process ended; detail says how) or `raised` (the task raised anything;
    detail is the error on one line)."""

    cause: Literal["timeout", "died", "raised"]
    detail: str = ""


@dataclass(slots=True)
class _Worker:
    """A supervised process: its pid, the parent's end of its pipe, its part and deadline."""

    pid: int
    conn: Connection
    part: int | None = None
    deadline: float | None = None


def supervised_map(
    task: Callable[[int, Extend], Any], parts: int, jobs: int, limit: float | None
) -> list[Any]:
    """Takes task(i, extend) for the parts 0 to parts-1, a number of processes and seconds
    per part (None: no limit). Runs the parts in up to `jobs` forked processes, each part
    killed with its process `limit` seconds after that process took it (or as many as its
    last extend asked for). Returns, in order of i, each result as JSON reads it back (a
    value JSON has no word for arrives as its repr), or a Stopped. Processes are replaced
    as they are lost, and all are killed before this returns or raises (an interrupt
    included). Raises OSError when no process can be forked."""
    results: list[Any] = [None] * parts
    todo = deque(range(parts))
    workers: list[_Worker] = []
    try:
        while todo or any(w.part is not None for w in workers):
            while todo and len(workers) < min(jobs, parts):
                workers.append(_fork(task, workers))
            for worker in workers:
                if worker.part is None and todo:
                    _give(worker, todo.popleft(), limit)
            for lost in _answer(workers, results):
                workers.remove(lost)
                _end(lost)
    finally:
        for worker in workers:
            _end(worker)
    return results


def _give(worker: _Worker, part: int, limit: float | None) -> None:
    worker.part = part
    worker.deadline = None if limit is None else time.monotonic() + limit
    worker.conn.send_bytes(json.dumps(part).encode())


def _answer(workers: list[_Worker], results: list[Any]) -> list[_Worker]:
    """Waits for the busy workers' next messages or the nearest deadline, and records what
    came. Returns the workers lost: those that ended, and those past their deadline."""
    busy = [w for w in workers if w.part is not None]
    deadlines = [w.deadline for w in busy if w.deadline is not None]
    timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
    ready = wait([w.conn for w in busy], timeout)
    lost = []
    for worker, part in [(w, w.part) for w in busy if w.part is not None]:
        if worker.conn in ready and not _read(worker, part, results):
            lost.append(worker)
        elif worker.deadline is not None and time.monotonic() >= worker.deadline:
            results[part] = Stopped("timeout")
            lost.append(worker)
    return lost


def _read(worker: _Worker, part: int, results: list[Any]) -> bool:
    """Reads one message of a worker busy with part into results. Returns False when the
    worker ended."""
    try:
        kind, value = json.loads(worker.conn.recv_bytes())
    except (EOFError, OSError, ValueError):  # ended, or wrote what we never sent
        results[part] = Stopped("died", _how_it_ended(worker))
        return False
    if kind == "extend" and worker.deadline is not None:
        worker.deadline = time.monotonic() + value
    elif kind in ("done", "raised"):
        results[part] = value if kind == "done" else Stopped("raised", value)
        worker.part = None
    return True


def _how_it_ended(worker: _Worker) -> str:
    """Reaps an ended worker. Returns how it ended: `exit code N` or `signal NAME`."""
    _, status = os.waitpid(worker.pid, 0)
    worker.pid = 0
    code = os.waitstatus_to_exitcode(status)
    return f"exit code {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"


def _end(worker: _Worker) -> None:
    """Kills a worker (it may be in a loop that never ends) and reaps it."""
    if worker.pid:
        os.kill(worker.pid, signal.SIGKILL)
        os.waitpid(worker.pid, 0)
    worker.conn.close()


def _fork(task: Callable[[int, Extend], Any], others: list[_Worker]) -> _Worker:
    """Forks a worker that runs task on the parts it is sent; returns it."""
    ours, theirs = Pipe()
    parent = os.getpid()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED_WHILE_FORKING)
    try:
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            try:
                ours.close()
                for other in others:
                    other.conn.close()
                _ignore_interrupts()
                _die_with(parent)
                _serve(theirs, task)
            finally:
                os._exit(1)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    theirs.close()
    return _Worker(pid, ours)


def _die_with(parent: int) -> None:
    """Makes this process be killed when its parent dies, however it dies (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes  # only a worker needs it

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before that took effect
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _serve(conn: Connection, task: Callable[[int, Extend], Any]) -> None:
    """The worker's loop: runs task on each part number received, sends the result (or
    what the task raised, whatever it was) back as JSON; ends when the parent closes."""

    def extend(seconds: float) -> None:
        conn.send_bytes(json.dumps(["extend", seconds]).encode())

    while True:
        try:
            part = json.loads(conn.recv_bytes())
        except EOFError:
            os._exit(0)
        try:
            message = json.dumps(["done", task(part, extend)], default=repr)
        except BaseException as err:  # the task's code, whatever it did, costs its part only
            message = json.dumps(["raised", error_line(err)])
        conn.send_bytes(message.encode())
