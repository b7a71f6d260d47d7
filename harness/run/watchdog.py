"""Every thread's stack when a run seems hung, in the run folder's threads.txt: at once on
SIGUSR1 (`kill -USR1 <pid>`), and by itself each time the run outlasts its bound again.

A run once stopped making progress with every thread waiting, and answered neither
SIGINT nor SIGTERM (a thread stuck in C while holding the GIL lets no Python handler
run). faulthandler writes the stacks from C, without the GIL, so it tells such a hang
too; a file nothing was written to is removed when the run ends.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
from collections.abc import Iterator
from pathlib import Path

THREADS_FILE = "threads.txt"
HANG_AFTER_S = 600.0
"""How long past its workload's time limit a run may go before its stacks are written:
set-up and the final phase take a few minutes at most on a loaded machine."""


@contextlib.contextmanager
def watched(folder: Path, bound_s: float) -> Iterator[Path]:
    """Takes a run folder and the seconds after which the run counts as hung. While the
    block runs, SIGUSR1 writes every thread's stack to the folder's threads.txt, and so
    does each bound_s that passes. Yields that file's path."""
    path = folder / THREADS_FILE
    with open(path, "w") as out:
        faulthandler.register(signal.SIGUSR1, file=out, all_threads=True)
        faulthandler.dump_traceback_later(bound_s, repeat=True, file=out)
        try:
            yield path
        finally:
            faulthandler.cancel_dump_traceback_later()
            faulthandler.unregister(signal.SIGUSR1)
    if path.stat().st_size == 0:
        path.unlink()
