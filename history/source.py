"""Where a history is read from: a regular file, a results folder's history, or standard
input ("-"), read line by line with a bound on each line, so that no input (a device, an
endless stream) can exhaust the machine's memory or ignore ^C. A line ends at LF, CRLF or
a lone CR.

Every format is read event by event from the first byte: a check costs what it keeps,
never the text. A Jepsen history that must be read twice (history.jepsen) is read again
from the file; one piped to standard input, which cannot be, is kept as lines (within
MAX_PIPED_BYTES) while it is read.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Final, Literal, Protocol, TypeVar, overload

from history.events import VALUE_BUDGET, Event, HistoryError
from history.formats import events_of
from history.jepsen import Reading
from history.lines import NumberedLines, UndecodedLines, decoded, line_text

STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
HISTORY_FILES: Final = ("history.jsonl", "history.edn")
MAX_LINE_BYTES: Final = 64 * 2**20
MAX_PIPED_BYTES: Final = 2**30  # a Jepsen history piped in, kept to be read again
_LINE_END: Final = re.compile(rb"\r\n?|\n")
_CR: Final = ord("\r")  # `int in bytes` is searched four times faster than `bytes in bytes`
_Line = TypeVar("_Line", str, str | bytes)


class LineStream(Protocol):
    """What numbered_lines reads: a binary stream's lines, each up to a size."""

    def readline(self, size: int = -1, /) -> bytes:
        """Returns the next line with its end, at most size bytes; b"" at the end."""


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


@overload
def numbered_lines(
    stream: LineStream, name: str, first_line: int = 1, *, undecoded: Literal[False] = False
) -> NumberedLines: ...


@overload
def numbered_lines(
    stream: LineStream, name: str, first_line: int = 1, *, undecoded: Literal[True]
) -> UndecodedLines: ...


def numbered_lines(
    stream: LineStream, name: str, first_line: int = 1, *, undecoded: bool = False
) -> NumberedLines | UndecodedLines:
    """Takes a binary stream, the number of its first line when it starts within a file
    (history.halves), and whether a line ended by LF alone may be left undecoded (for
    history.jsonl, which parses it as bytes). Yields (line number, text without its line
    end, as history.lines.line_text reads it; or, left undecoded, the bytes read). Raises
    HistoryError for a line over MAX_LINE_BYTES or a decoded one that is not UTF-8."""
    line_no = first_line - 1
    pending = b""  # the start of a line whose end is not read yet
    while True:
        try:
            raw = stream.readline(MAX_LINE_BYTES + 1)
        except OSError as e:
            raise HistoryError(name, line_no + 1, f"cannot read: {e.strerror or e}") from None
        if _CR not in raw and raw[-1:] == b"\n" and not pending:
            line_no += 1  # the common case, kept short: one line, ended by LF
            yield line_no, raw if undecoded else line_text(raw[:-1], name, line_no)
            continue
        ended, pending = _split(pending, raw)
        for line in ended:
            line_no += 1
            yield line_no, _text(line, name, line_no)
        if len(pending) > MAX_LINE_BYTES:
            raise HistoryError(name, line_no + 1, f"line longer than {MAX_LINE_BYTES // 2**20} MiB")
        if not raw:
            return


def _split(pending: bytes, raw: bytes) -> tuple[list[bytes], bytes]:
    """Takes the start of a line read before and what was read next (b"" at the end).
    Returns the lines ended, without their ends, and the start of the next."""
    if not raw:  # the end: what is pending is the last line, a CR last its end
        return ([pending.removesuffix(b"\r")] if pending else []), b""
    # Lines ended by a lone CR, or a line longer than one read: a CR last may be the start
    # of a CRLF, so it waits for the next read.
    data = pending + raw
    held = b"\r" if data.endswith(b"\r") else b""
    *ended, rest = _LINE_END.split(data[: len(data) - len(held)])
    return ended, rest + held


def _text(line: bytes, name: str, line_no: int) -> str:
    if len(line) > MAX_LINE_BYTES:
        raise HistoryError(name, line_no, f"line longer than {MAX_LINE_BYTES // 2**20} MiB")
    return line_text(line, name, line_no)


class HistorySource:
    """A history's numbered lines, which can be read again from the first."""

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self.stream = stream
        self.name = name
        self.start = stream.tell() if stream.seekable() else None
        self.kept: list[tuple[int, str]] | None = None  # a piped Jepsen history's lines

    def events(self, reading: Reading) -> tuple[str, Iterator[tuple[int, Event]]]:
        """Takes the facts to read a Jepsen history with. Returns (format, its (line, event)
        pairs, lazily), read from the first line."""
        if self.kept is not None:
            return events_of(iter(self.kept), self.name, reading, VALUE_BUDGET)
        if self.start is not None:
            self.stream.seek(self.start)
        lines = numbered_lines(self.stream, self.name, undecoded=True)
        return events_of(lines, self.name, reading, VALUE_BUDGET, self._replayable)

    def _replayable(self, lines: Iterable[tuple[int, _Line]]) -> Iterable[tuple[int, _Line]]:
        if self.start is not None:
            return lines
        self.kept = []
        size = 0
        for line_no, text in decoded(lines, self.name):
            size += len(text) + 1
            if size > MAX_PIPED_BYTES:
                limit = MAX_PIPED_BYTES // 2**20
                raise HistoryError(self.name, line_no, f"over {limit} MiB piped: give the file")
            self.kept.append((line_no, text))
        return iter(self.kept)
