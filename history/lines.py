"""A history's line as text: its bytes read as UTF-8, without the byte order mark a file
may open with; a line that is not UTF-8 is refused, naming its first bad byte.

history.source reads lines as bytes; history.jsonl parses most of them as bytes and reads
only the others as text, which is why both decode a line the same way, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from history.events import TOKEN_BYTES, HistoryError

BOM: Final = "\ufeff"

NumberedLines = Iterator[tuple[int, str]]
"""A history's lines, numbered, as text without their ends."""
UndecodedLines = Iterator[tuple[int, str | bytes]]
"""A history's lines, numbered: text without its end, or, for a line ended by LF alone,
its bytes as read, the LF included, not yet known to be UTF-8 (line_text reads them)."""


def line_text(raw: bytes, name: str, line_no: int) -> str:
    """Takes a line's bytes without its end, the history's name and the line's number.
    Returns its text, less a byte order mark opening line 1. Raises HistoryError naming the
    first byte that is not UTF-8."""
    try:
        text = raw.decode()
    except UnicodeDecodeError as e:
        raise HistoryError(name, line_no, f"not UTF-8 text (byte {e.start + 1})") from None
    return text[1:] if line_no == 1 and text.startswith(BOM) else text


def decoded(lines: Iterable[tuple[int, str | bytes]], name: str) -> NumberedLines:
    """Takes undecoded lines (UndecodedLines) and the history's name. Yields them as text,
    as line_text reads them."""
    for line_no, line in lines:
        yield line_no, line if isinstance(line, str) else line_text(line[:-1], name, line_no)


def batch_text(
    batch: Sequence[tuple[int, str | bytes]], budget: int
) -> tuple[tuple[int, ...], str, list[str]] | None:
    """Takes a batch of numbered lines (some undecoded) and the budget of one line's value.
    Returns their numbers, their text without its last LF, and its lines, decoded in one
    go; None when the batch is not UTF-8 or a line could exceed the budget (could_exceed,
    for any line), for the batch to be read line by line."""
    line_nos, lines = zip(*batch, strict=True)
    try:  # an undecoded line ends with its LF; a decoded one has none, nor a CR within
        data = b"".join(lines)
    except TypeError:  # some line decoded already (the first, or one ended by a CR)
        data = b"".join([x if isinstance(x, bytes) else x.encode() + b"\n" for x in lines])
    try:
        text = data.decode()[:-1]
    except UnicodeDecodeError:
        return None
    texts = text.split("\n")
    # A decoded line holding an LF cannot be: one more check that every line is one.
    if len(texts) != len(batch) or max(map(len, texts)) * (TOKEN_BYTES + 1) > budget:
        return None
    return line_nos, text, texts
