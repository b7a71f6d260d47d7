"""Interrupts: SIGTERM and SIGHUP act like ^C, and teardown runs to the end once begun.

CI time-outs send SIGTERM and a closed terminal sends SIGHUP; both must heal the
network and remove containers just as ^C does, so they raise KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupts:
    """Counts interrupt signals; the first raises KeyboardInterrupt in the main thread."""

    def __init__(self) -> None:
        self.count = 0
        self.shielded = False
        self.names: list[str] = []
        """The signals that arrived, by name (SIGINT, ...), for saying why a run stopped."""

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        """The signal handler: counts, and raises unless teardown is shielded."""
        self.count += 1
        self.names.append(signal.Signals(signum).name)
        if not self.shielded:
            raise KeyboardInterrupt(signal.Signals(signum).name)


_interrupts = Interrupts()


def install() -> Interrupts:
    """Makes SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread.

    Returns the counter, whose `count` says how many arrived since. A no-op (returning
    the counter) outside the main thread, where Python cannot set handlers.
    """
    if threading.current_thread() is threading.main_thread():
        _interrupts.count = 0
        _interrupts.names = []
        for sig in _HANDLED:
            signal.signal(sig, _interrupts.handle)
    return _interrupts


@contextlib.contextmanager
def shielded() -> Iterator[Interrupts]:
    """Runs a block (a teardown) that further interrupts are counted but cannot stop."""
    previous = _interrupts.shielded
    _interrupts.shielded = True
    try:
        yield _interrupts
    finally:
        _interrupts.shielded = previous


@contextlib.contextmanager
def undone_on_failure(undo: Callable[[], object]) -> Iterator[None]:
    """Runs a block that makes things (a cluster); when it raises anything, an interrupt
    included, runs undo shielded from further interrupts, then re-raises.

    A second signal while the first is still on its way out of the block only replaces
    it: the undo runs either way. Without install() the undo is not shielded from ^C.
    """
    try:
        yield
    except BaseException:
        with shielded():
            undo()
        raise


def interrupt_behind(err: BaseException) -> KeyboardInterrupt | None:
    """Takes an exception. Returns the KeyboardInterrupt it was raised while handling, if
    any (a cleanup that failed because ^C cut a call short), or None."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [err.__context__, err.__cause__]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        pending += [exc.__context__, exc.__cause__]
    return None
