"""The three history formats: history.jsonl, Jepsen history.edn and Jepsen text logs.

Each reader turns numbered lines into (line, event) pairs in the history.jsonl shape, event
by event; the format is told from the first non-blank line, never from the file name. The
three are equally strict (history.events.check_event): an event they cannot read exactly
is refused with its line, never skipped or guessed at. A Jepsen history may have to be read
twice (history.jepsen); `events_of` reads it once, `parse_history` as often as it takes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Protocol, TypeVar

from history.events import (
    EDN,
    EVENT_TYPES,
    JEPSEN_LOG,
    JSONL,
    VALUE_BUDGET,
    Event,
    HistoryError,
    Located,
    short,
)
from history.jepsen import Reading, Reread
from history.jepsen_log import LOG_LINE, read_log_events
from history.jsonl import read_jsonl_lines, starts_jsonl
from history.lines import decoded

__all__ = [
    "EDN",
    "EVENT_TYPES",
    "JEPSEN_LOG",
    "JSONL",
    "Event",
    "HistoryError",
    "Located",
    "detect_format",
    "events_of",
    "first_line_format",
    "parse_history",
    "read_jsonl",
    "short",
    "starts_jsonl",
]

NumberedLines = Iterable[tuple[int, str]]
_Line = TypeVar("_Line", str, str | bytes)


class Replayable(Protocol):
    """What makes a Jepsen history's lines readable again (history.source), text or not yet
    decoded (history.lines), when they cannot be read twice from their source."""

    def __call__(self, lines: Iterable[tuple[int, _Line]], /) -> Iterable[tuple[int, _Line]]:
        """Takes numbered lines. Returns them, to be read now and kept if need be."""
        ...


# A history.edn opens with a map, a tagged record, a comment or a discard, or with a vector
# (or list) of them; a log may open with a bracketed thread name ("[main] starting").
_EDN_START = re.compile(r"\s*(?:[{#;]|[\[(]\s*(?:[{#;]|$))")
_LINE_ENDS = re.compile(r"\r\n?|\n")


def first_line_format(line: str) -> str:
    """Takes a history's first non-blank line. Returns its format: JSONL, EDN, else
    JEPSEN_LOG (a log's first lines need not be op records; one with none is refused)."""
    if starts_jsonl(line):
        return JSONL
    if LOG_LINE.search(line) or not _EDN_START.match(line):
        return JEPSEN_LOG
    return EDN


def detect_format(text: str) -> str | None:
    """Takes a history's text, or its start; returns JSONL, EDN, JEPSEN_LOG, or None when
    none fits (a text neither JSON nor EDN without a single op record)."""
    first = next((line for line in _LINE_ENDS.split(text) if line.strip()), None)
    if first is None:
        return JSONL
    fmt = first_line_format(first)
    return None if fmt == JEPSEN_LOG and not LOG_LINE.search(text) else fmt


def events_of(
    lines: Iterable[tuple[int, str | bytes]],
    path: str,
    reading: Reading,
    budget: int,
    replayable: Replayable = iter,
) -> tuple[str, Iterator[tuple[int, Event]]]:
    """Takes a history's numbered lines (some may be undecoded: history.lines), its path
    (for messages), the facts to read a Jepsen history with, a budget in bytes for each
    event's value, and what makes a Jepsen history's lines readable again if they cannot be
    read twice. Returns (format, its events, lazily); leading blank lines are skipped, never
    kept."""
    numbered = iter(lines)
    text_lines = decoded(numbered, path)
    first = next(((n, text) for n, text in text_lines if text.strip()), None)
    if first is None:
        return JSONL, iter(())
    line_no, text = first
    fmt = first_line_format(text)
    if fmt == JSONL:  # read on undecoded: history.jsonl parses them as bytes
        return fmt, read_jsonl_lines(chain([first], numbered), path, budget)
    if fmt == EDN:  # read on undecoded lines too, a batch decoded at once
        # Imported for a history.edn only: compiling its line grammar takes a tenth of a
        # small check's start-up.
        from history.jepsen_edn import read_edn_events

        rest = chain([first], numbered)
        return fmt, read_edn_events(replayable(rest), path, reading, budget)
    # A log is read on undecoded lines too: its reader decodes a batch of them at once.
    undecoded = chain([first], numbered)
    return fmt, read_log_events(replayable(undecoded), path, reading, budget, line_no)


def parse_history(text: str, path: str) -> tuple[str, Located]:
    """Takes a history's text and its path (for messages); returns (format, located events)."""
    reading = Reading()
    while True:
        try:
            lines = enumerate(_LINE_ENDS.split(text), 1)
            fmt, events = events_of(lines, path, reading, VALUE_BUDGET)
            return fmt, list(events)
        except Reread as again:
            reading = again.reading


def read_jsonl(text: str, path: str) -> Located:
    """Takes history.jsonl text; returns (line, event) for every non-blank line."""
    return list(read_jsonl_lines(enumerate(text.split("\n"), 1), path, VALUE_BUDGET))
