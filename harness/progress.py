"""A live status line for long work (cluster start, test time left, checking keys).

On a terminal the line is redrawn in place; elsewhere (CI logs) each new
message is printed once, at most every few seconds, so logs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class StatusLine:
    """Shows one line of progress on a stream, redrawn as the work goes on."""

    def __init__(self, stream: TextIO | None = None, min_interval: float = 5.0) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._min_interval = min_interval
        self._last_text = ""
        self._last_print = 0.0
        self._width = 0

    @property
    def is_terminal(self) -> bool:
        """Whether the lines go to a terminal (where colour can be used)."""
        return self._tty

    def update(self, text: str) -> None:
        """Shows text as the current status."""
        if self._tty:
            pad = max(0, self._width - len(text))
            self._stream.write("\r" + text + " " * pad)
            self._stream.flush()
            self._width = len(text)
            return
        now = time.monotonic()
        # Without a terminal, repeat a message only when it changed and not too often.
        if text != self._last_text and now - self._last_print >= self._min_interval:
            self._stream.write(text + "\n")
            self._stream.flush()
            self._last_print = now
        self._last_text = text

    def say(self, text: str) -> None:
        """Prints text as a line of its own, clearing the status first."""
        self.clear()
        self._stream.write(text + "\n")
        self._stream.flush()

    def clear(self) -> None:
        """Removes the status line (on a terminal)."""
        if self._tty and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
        self._width = 0
