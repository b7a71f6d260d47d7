"""Where a history is read from: a regular file, a results folder's history, or standard
input ("-"), read line by line with a bound on each line, so that no input (a device, an
endless stream) can exhaust the machine's memory or ignore ^C.

`read_events` then streams history.jsonl event by event; the EDN and log readers need the
whole text, which is bounded too.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import BinaryIO, Final

from history.formats import (
    JSONL,
    Event,
    HistoryError,
    parse_history,
    read_jsonl_lines,
    starts_jsonl,
)

STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
HISTORY_FILES: Final = ("history.jsonl", "history.edn")
MAX_LINE_BYTES: Final = 64 * 2**20
MAX_TEXT_BYTES: Final = 2**30  # an EDN history or a log, read whole
_BOM: Final = "\ufeff"

NumberedLines = Iterator[tuple[int, str]]


def find_history_file(path: str | os.PathLike[str]) -> Path:
    """Takes a history file or a results folder; returns the history file to read."""
    p = Path(path)
    if not p.is_dir():
        return p
    for name in HISTORY_FILES:
        if (p / name).is_file():
            return p / name
    raise HistoryError(str(p), 0, f"no {' or '.join(HISTORY_FILES)} in this folder")


@contextmanager
def open_history(path: str | os.PathLike[str]) -> Iterator[tuple[str, BinaryIO]]:
    """Takes a history file, a results folder or "-" (standard input). Yields (name for
    messages, binary stream). Refuses anything but a regular file or standard input."""
    if str(path) == STDIN:
        yield STDIN_NAME, sys.stdin.buffer
        return
    try:
        file = find_history_file(path)
        mode = os.stat(file).st_mode
        if not stat.S_ISREG(mode):
            raise HistoryError(
                str(file), 0, "not a regular file (a device, FIFO or socket): use - for stdin"
            )
        stream = file.open("rb")
    except OSError as e:
        raise HistoryError(str(path), 0, f"cannot read: {e.strerror or e}") from None
    with stream:
        yield str(file), stream


def numbered_lines(stream: BinaryIO, name: str) -> NumberedLines:
    """Takes a binary stream. Yields (line number, text without its line end); a leading
    UTF-8 byte order mark is dropped. Raises HistoryError for a line over MAX_LINE_BYTES
    or one that is not UTF-8."""
    line_no = 0
    while True:
        try:
            raw = stream.readline(MAX_LINE_BYTES + 1)
        except OSError as e:
            raise HistoryError(name, line_no + 1, f"cannot read: {e.strerror or e}") from None
        if not raw:
            return
        line_no += 1
        if len(raw) > MAX_LINE_BYTES:
            raise HistoryError(name, line_no, f"line longer than {MAX_LINE_BYTES // 2**20} MiB")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise HistoryError(name, line_no, f"not UTF-8 text (byte {e.start + 1})") from None
        if line_no == 1 and text.startswith(_BOM):
            text = text[1:]
        yield line_no, text.rstrip("\r\n")


def read_events(lines: NumberedLines, name: str) -> tuple[str, Iterable[tuple[int, Event]]]:
    """Takes a history's numbered lines. Returns (format, its (line, event) pairs): lazily
    for history.jsonl, read whole (within MAX_TEXT_BYTES) for the other formats."""
    blank: list[tuple[int, str]] = []
    for line_no, text in lines:
        if not text.strip():
            blank.append((line_no, text))
            continue
        first = [*blank, (line_no, text)]
        if starts_jsonl(text):
            return JSONL, read_jsonl_lines(chain(first, lines), name)
        return parse_history(_whole_text(chain(first, lines), name), name)
    return JSONL, []


def _whole_text(lines: Iterable[tuple[int, str]], name: str) -> str:
    parts: list[str] = []
    size = 0
    for line_no, text in lines:
        size += len(text) + 1
        if size > MAX_TEXT_BYTES:
            limit = MAX_TEXT_BYTES // 2**20
            raise HistoryError(name, line_no, f"over {limit} MiB: too large for an EDN or log")
        parts.append(text)
    return "\n".join(parts)
