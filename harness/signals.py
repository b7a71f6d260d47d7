"""Interrupts: SIGTERM and SIGHUP act like ^C, and teardown runs to the end once begun.

CI time-outs send SIGTERM and a closed terminal sends SIGHUP; both must heal the
network and remove containers just as ^C does, so they raise KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupts:
    """Counts interrupt signals; the first raises KeyboardInterrupt in the main thread."""

    def __init__(self) -> None:
        self.count = 0
        self.shielded = False

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        """The signal handler: counts, and raises unless teardown is shielded."""
        self.count += 1
        if not self.shielded:
            raise KeyboardInterrupt(signal.Signals(signum).name)


_interrupts = Interrupts()


def install() -> Interrupts:
    """Makes SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread.

    Returns the counter, whose `count` says how many arrived. A no-op (returning
    the counter) outside the main thread, where Python cannot set handlers.
    """
    if threading.current_thread() is threading.main_thread():
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
