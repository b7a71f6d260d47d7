"""HistoryWriter: appends events to history.jsonl as they happen, one JSON object a line."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from history.events import Event


class HistoryWriter:
    """Appends events to history.jsonl, one JSON object per line, as they happen.

    Each line goes to the file in one write(2) with no user-space buffer, so lines
    never interleave and a process killed at any moment leaves whole lines behind,
    except that SIGKILL may cut the line being written where it crosses a page (the
    kernel checks for a fatal signal between pages): `load` names that last line
    as truncated, and every line before it is intact. Safe to share
    between worker threads; `append` assigns the index under a lock so indices
    follow the file's order.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = False,
        clock: Callable[[], int] = time.monotonic_ns,
        start_ns: int | None = None,
    ) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._clock = clock
        self._start = clock() if start_ns is None else start_ns
        self._lock = threading.Lock()
        self._next_index = 0
        self._fd: int | None = os.open(
            self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644
        )

    def append(self, event: Mapping[str, Any]) -> Event:
        """Takes an event; writes it with the next index (and a time if it has none).

        Returns the event as written.
        """
        with self._lock:
            if self._fd is None:
                raise ValueError(f"{self.path}: writer is closed")
            written: Event = {"index": self._next_index}
            written.update((k, v) for k, v in event.items() if k != "index")
            written.setdefault("time", self._clock() - self._start)
            data = (json.dumps(written, default=jsonable) + "\n").encode()
            _write_all(self._fd, data)
            if self._fsync:
                os.fsync(self._fd)
            self._next_index += 1
            return written

    def elapsed_ns(self) -> int:
        """Returns the history's clock now: what `time` an event appended now would get."""
        return self._clock() - self._start

    def close(self) -> None:
        """Closes the file; later appends raise ValueError."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def jsonable(value: Any) -> Any:
    """Takes a value json cannot write. Returns a set as a sorted list (by repr where its
    members do not compare); raises TypeError for anything else."""
    if isinstance(value, set | frozenset):
        try:
            return sorted(value)
        except TypeError:
            return sorted(value, key=repr)
    raise TypeError(f"cannot write {type(value).__name__} to a history: {value!r}")
