"""A long history.jsonl read in two halves at once: this process reads up to a seam (a line
end near the middle), another process reads on from it, and the halves are stitched.

The later half is read knowing nothing of the earlier: no invoke in flight, no process
crashed, no index before its first. What that knowledge decides is handed back and checked
at the seam, and any doubt ends the split: this process then reads on from the seam itself,
so the History, its errors and their lines are always exactly those of `load`.

- A completion whose process has nothing in flight in the later half is an orphan: its
  invoke came before the seam. It is handed back unread and paired here, where that
  invoke is in flight (a completion that is not its process's first event in the later
  half, or with no such invoke, of another f, or timed before it, ends the split).
- Each process's first event in the later half is checked against the seam: an invoke on
  a process with one in flight, or any event on one that crashed, ends the split, as does
  a first index that does not follow the last before the seam. So does a client process
  named by a string: whether its info event is a nemesis's depends on what is in flight.
- An event without an index takes its position among events, which the later half does
  not know: it is given one far below any index (SECOND_POSITION), which ends the split.
- The reader (a HalfReader) reads each half: the later half's packs what it read, this
  one joins it after the orphans, before the invokes still in flight at the end.
- Both read their lines as load does (history.source.HistorySource.events): undecoded,
  parsed as bytes, and this one through a raw stream that ends at the seam, so that its
  lines are read by the file's own buffered reader.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Protocol

from history.core import History, Reader, _HistoryBuilder, collector_paused
from history.events import JSONL, VALUE_BUDGET, Event, HistoryError
from history.formats import events_of, first_line_format
from history.jepsen import Reading
from history.jsonl import read_jsonl_lines
from history.lines import UndecodedLines
from history.pairing import Pairing, Step
from history.source import find_history_file, numbered_lines, open_history

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MIN_BYTES: Final = 16 * 2**20
"""Files from which a second process pays: below, forking and stitching cost more."""
FIRST_SHARE: Final = 0.56
"""The share of the file this process reads: the later half's reader also keeps its
records in columns (about a twentieth more work per byte) and then sends them (at
1,000,000 ops about 0.35 s), so both end at about the same time, that one a little
first."""
SECOND_POSITION: Final = -(2**62)
"""The position the later half gives its first event: an index never follows it."""
_HEAD_BYTES: Final = 2**16
_BUFFER_BYTES: Final = 2**20
_LINE_END: Final = re.compile(r"\r\n?|\n")


class HalfReader(Reader, Protocol):
    """A Reader that can read a history in halves, each in its own process."""

    def pack(self) -> object | None:
        """In the process that read the later half: returns what it read, to cross to the
        other (None: it cannot be joined, the reader refused a value)."""

    def join(self, packed: object) -> None:
        """Takes what the later half's reader packed, and takes it in as if this reader had
        read those invocations after its own."""


@dataclass(frozen=True, slots=True)
class SecondHalf:
    """What the later half's process hands back: its first and last indexes, each
    process's first event type, the orphans (completion, line counted from the seam's
    line as 2), the nemesis events, the ops named, the invocations and fails counted, and
    what its reader packed."""

    first_index: int
    last_index: int
    firsts: dict[Any, str]
    orphans: list[tuple[Event, int]]
    nemesis: list[Event]
    fs: frozenset[str]
    invocations: int
    fails: int
    read: object


def find_seam(path: str) -> int | None:
    """Takes a history's path. Returns the byte offset just after the first line end past
    FIRST_SHARE of it when it is a regular history.jsonl file of MIN_BYTES or more; else
    None."""
    try:
        file = find_history_file(path)
        with file.open("rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size < MIN_BYTES:
                return None
            head = stream.read(_HEAD_BYTES).decode(errors="replace").removeprefix("\ufeff")
            whole = _LINE_END.split(head)[:-1]  # the last may be cut short
            first = next((line for line in whole if line.strip()), None)
            if first is None or first_line_format(first) != JSONL:
                return None
            middle = int(info.st_size * FIRST_SHARE)
            stream.seek(middle)
            rest = stream.readline()
    except (OSError, HistoryError):
        return None
    at = middle + len(rest)
    return at if rest.endswith(b"\n") and at < info.st_size else None


class _Upto(io.RawIOBase):
    """A binary stream's bytes up to an offset, where it seems to end: raw, for a
    BufferedReader over it reads its lines at the speed of the file's own."""

    def __init__(self, stream: BinaryIO, end: int) -> None:
        super().__init__()
        self.stream = stream
        self.left = end - stream.tell()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer)
        data = self.stream.read(max(0, min(len(view), self.left)))
        view[: len(data)] = data
        self.left -= len(data)
        return len(data)


class _Tally:
    """Numbered lines (some may be undecoded), passed on, keeping the last number."""

    def __init__(self, lines: UndecodedLines) -> None:
        self.lines = lines
        self.last = 0

    def __iter__(self) -> Iterator[tuple[int, str | bytes]]:
        for line_no, text in self.lines:
            self.last = line_no
            yield line_no, text


class _SeamPairing(Pairing):
    """The later half's pairing: a completion with nothing in flight is kept as an orphan."""

    def __init__(self, path: str) -> None:
        super().__init__(path, checked=True)
        self.orphans: list[tuple[Event, int]] = []

    def orphan(self, event: Event, line: int) -> Step | None:
        self.orphans.append((event, line))
        if event["type"] == "info":  # its process is done: a later event on it is refused
            self.crashed[event["process"]] = line
        return None


def read_second_half(path: str, at: int, reader: HalfReader) -> SecondHalf | None:
    """Takes a history.jsonl's path, its seam and a fresh reader. Reads the history from the
    seam on, as the module docstring says. Returns what the other process needs, or None
    when this half cannot be read on its own (malformed, or a value refused)."""
    try:
        with collector_paused(), open_history(path) as (name, stream):
            stream.seek(at)
            builder = _HistoryBuilder(name, False, reader, frozenset())
            pairing = builder.pairing = _SeamPairing(name)
            firsts: dict[Any, str] = {}
            lines = numbered_lines(stream, name, first_line=2, undecoded=True)  # as load's
            located = read_jsonl_lines(lines, name, VALUE_BUDGET, SECOND_POSITION)
            first = next(located, None)
            if first is None:
                return None
            first_index = first[1]["index"]
            for line, event in chain([first], located):
                process = event["process"]
                if process not in firsts:
                    firsts[process] = event["type"]
                builder.add(line, event)
            for _, invoke, line, _ in pairing.unfinished():
                reader.add(invoke, line, None, line)
            packed = reader.pack()  # the collector still paused: packing makes many lists
    except HistoryError:
        return None
    if packed is None or pairing.last_index is None:
        return None
    return SecondHalf(
        first_index=first_index,
        last_index=pairing.last_index,
        firsts=firsts,
        orphans=pairing.orphans,
        nemesis=pairing.nemesis,
        fs=frozenset(builder.fs),
        invocations=builder.invocations,
        fails=builder.fails,
        read=packed,
    )


def load_halves(
    path: str, at: int, reader: HalfReader, second: Callable[[], SecondHalf | None]
) -> History:
    """Takes a history.jsonl's path, its seam (find_seam), a reader, and what returns the
    later half as read by read_second_half in another process. Returns the History as
    load(path, keep_events=False, reader=reader) does, and raises what it raises."""
    with collector_paused(), open_history(path) as (name, stream):
        builder = _HistoryBuilder(name, False, reader, frozenset())
        upto = io.BufferedReader(_Upto(stream, at), _BUFFER_BYTES)
        tally = _Tally(numbered_lines(upto, name, undecoded=True))
        fmt, located = events_of(tally, name, Reading(), VALUE_BUDGET)  # as load reads it
        assert fmt == JSONL  # find_seam read the same first line
        position = 0
        for line, event in located:
            builder.add(line, event)
            position += 1
        if not _joined(builder, reader, second(), tally.last):
            lines = numbered_lines(stream, name, first_line=tally.last + 1, undecoded=True)
            for line, event in read_jsonl_lines(lines, name, VALUE_BUDGET, position):
                builder.add(line, event)
        return builder.history(name, JSONL)


def _joined(
    builder: _HistoryBuilder, reader: HalfReader, half: SecondHalf | None, lines: int
) -> bool:
    """Stitches the later half to the earlier (read into builder, `lines` lines) when the
    seam allows, as the module docstring says. Returns whether it did; if not, nothing
    was changed."""
    pairing = builder.pairing
    before = pairing.last_index
    if half is None or before is None or not before < half.first_index:
        return False
    if half.first_index <= SECOND_POSITION // 2:  # an index the later half made up
        return False
    in_flight, crashed = pairing.in_flight, pairing.crashed
    for process, kind in half.firsts.items():
        if process == "nemesis":
            continue
        if process.__class__ is not int or process in crashed:
            return False
        if (kind == "invoke") == (process in in_flight):
            return False
    orphaned = {event["process"] for event, _ in half.orphans}
    if len(orphaned) != len(half.orphans):
        return False
    for event, _ in half.orphans:
        process = event["process"]
        if process not in in_flight or half.firsts[process] == "invoke":
            return False
        invoke = in_flight[process][2]
        if event["f"] != invoke["f"] or event["time"] < invoke["time"]:
            return False
    for event, line in half.orphans:
        builder.add(lines + line - 1, event)
    reader.join(half.read)
    pairing.last_index = half.last_index
    pairing.nemesis += half.nemesis
    builder.fs |= half.fs
    builder.invocations += half.invocations
    builder.fails += half.fails
    return True
