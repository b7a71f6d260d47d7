"""A small EDN reader, enough for Jepsen's history.edn and the values in its text logs.

Supports nil, booleans, integers, floats, decimals, strings, characters, keywords,
symbols, vectors, lists, maps, sets, tagged literals, comments and `#_` discards; EDN's
own kinds of value stay distinct (history.edn_values). Refuses what a history cannot hold:
`##NaN` and infinities (they equal nothing, not even themselves), integers too long for
Python to convert, forms nested deeper than MAX_NESTING, and a map naming a key twice or a
set an element twice (Clojure's reader refuses both: "Duplicate key"; read last-wins, a
poll's `{0 [[0 2]], 0 [[0 1]]}` would hide the record it names first).

It reads lines as it needs them: `history_forms` yields a history's events one at a time
(each top-level form, or each element of a history printed as one vector), keeping only
the text of the event being read, and refuses an event whose value would take more memory
than a budget before it is all read.
"""

from __future__ import annotations

import decimal
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from history.edn_values import CHAR_NAMES, BigDecimal, Char, Keyword, Symbol, Tagged
from history.events import TOKEN_BYTES, over_budget, short
from history.frozen import MAX_NESTING, freeze

NumberedLines = Iterable[tuple[int, str]]


class EdnError(ValueError):
    """Malformed EDN; `line` is the 1-based line where the problem was found."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


_ATOM_CHARS = r"[^\s,()\[\]{}\";]"
# Possessive: a comment is never given back, or a comment at the end of the text would
# match as blanks that stop short, and its last letters as an atom.
_BLANKS = re.compile(r"(?:[\s,]|;[^\n]*+)*+")
# One token per match, blanks before it (whitespace, commas, comments) included.
_TOKEN = re.compile(
    rf"""(?:[\s,]|;[^\n]*+)*+
    (?:(?P<atom>[^\s,()\[\]{{}}\";\#\\]{_ATOM_CHARS}*)
    |(?P<open>\#\{{|[(\[{{])
    |(?P<close>[)\]}}])
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<discard>\#_)
    |(?P<tag>\#{_ATOM_CHARS}*)
    |(?P<char>\\(?:{_ATOM_CHARS}+|.)))""",
    re.VERBOSE | re.DOTALL,
)
_NUMBER = re.compile(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?[NM]?$")
_STRING_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_CLOSERS = {"(": ")", "[": "]", "{": "}", "#{": "}"}
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
_SYMBOLIC_VALUES = frozenset({"#NaN", "#Inf", "#-Inf"})  # ##NaN, ##Inf, ##-Inf
_CHUNK_CHARS = 1 << 16  # lines are taken this many characters at a time


class _Reader:
    """A recursive-descent parser over regex tokens of a window of lines: lines are added
    when a token needs them, and those read are dropped between events once they make a
    chunk (`trim`). Positions become lines only when needed, counted on from the
    last position asked about."""

    def __init__(self, lines: NumberedLines, budget: int | None) -> None:
        self.lines = iter(lines)
        self.text = ""
        self.line = 1  # the line text[0] is on
        self.pos = 0
        self.counted = (0, 1)  # a position of the text and its line
        # An event's budget, in tokens of TOKEN_BYTES each; the text being read is held to
        # it too (a string never closed would read the rest of the input).
        self.budget = budget
        self.most_tokens = sys.maxsize if budget is None else budget // TOKEN_BYTES
        self.tokens = 0  # read in the event being read
        self.event_line = 1
        # Histories repeat the same keywords and numbers on every line; atoms are
        # immutable, so each distinct one is converted once.
        self.atoms: dict[str, Any] = {}
        self.depth = 0  # collections, tags and discards being read, one inside the other

    def line_at(self, pos: int) -> int:
        counted_pos, counted_line = self.counted
        if pos < counted_pos:  # behind: an error's, counted once from the window's start
            return self.line + self.text.count("\n", 0, pos)
        line = counted_line + self.text.count("\n", counted_pos, pos)
        self.counted = (pos, line)
        return line

    def fail(self, pos: int, problem: str) -> EdnError:
        return EdnError(self.line_at(pos), problem)

    def more(self) -> bool:
        """Adds the next lines to the window. Returns False at the end of the input."""
        added: list[str] = []
        size = 0
        for line_no, text in self.lines:
            if not added and not self.text:
                self.line = line_no
                self.counted = (0, line_no)
            added.append(text)
            size += len(text) + 1
            if size >= _CHUNK_CHARS:
                break
        if not added:
            return False
        self.text += "\n".join(added) + "\n"
        if self.budget is not None and len(self.text) - self.pos > self.budget:
            raise EdnError(self.event_line, over_budget(self.budget))  # a string never closed
        return True

    def trim(self) -> None:
        """Between events: drops the text read once it makes a chunk and half the window,
        so that the window never grows with the history, and each character is copied
        about once, however long its line."""
        if self.pos >= max(_CHUNK_CHARS, len(self.text) // 2):
            self.line = self.line_at(self.pos)
            self.text, self.pos = self.text[self.pos :], 0
            self.counted = (0, self.line)

    def start_event(self, line: int) -> None:
        """Marks the start of an event on `line`: its budget starts afresh."""
        self.tokens = 0
        self.event_line = line

    def next_token(self) -> tuple[str, str, int] | None:
        """Returns the next (kind, text, position) after any blanks, or None at the end."""
        while True:
            match = _TOKEN.match(self.text, self.pos)
            if match is None:
                if self.more():
                    continue
                self.skip_trailing_blanks()
                return None
            kind = match.lastgroup
            assert kind is not None
            self.pos = match.end()
            self.tokens += 1
            if self.tokens > self.most_tokens:
                raise EdnError(self.event_line, over_budget(self.budget or 0))
            if kind != "discard":
                return kind, match.group(kind), match.start(kind)
            self.nested(match.start(kind), self.read)

    def skip_trailing_blanks(self) -> None:
        """Skips blanks to the end; raises EdnError if anything else is left."""
        blanks = _BLANKS.match(self.text, self.pos)
        assert blanks is not None  # it matches the empty string
        pos = blanks.end()
        if pos < len(self.text):
            if self.text[pos] == '"':
                raise self.fail(pos, "string is never closed")
            raise self.fail(pos, f"unexpected {self.text[pos]!r}")
        self.pos = pos

    def read(self) -> Any:
        token = self.next_token()
        if token is None:
            raise self.fail(self.pos, "unexpected end of input")
        return self.read_token(*token)

    def read_token(self, kind: str, text: str, start: int) -> Any:
        if kind == "atom":
            if text not in self.atoms:
                self.atoms[text] = self.atom(text, start)
            return self.atoms[text]
        if kind == "open":
            return self.nested(start, lambda: self.collection(text, start))
        if kind == "string":
            return _STRING_ESCAPE.sub(lambda m: self.escape(m, start), text[1:-1])
        if kind == "tag":
            return self.nested(start, lambda: self.tagged(text[1:], start))
        if kind == "char":
            return self.char(text[1:], start)
        raise self.fail(start, f"unexpected {text!r}")

    def nested(self, start: int, read: Callable[[], Any]) -> Any:
        """Reads one level deeper with `read`; refuses to go deeper than MAX_NESTING."""
        if self.depth >= MAX_NESTING:
            raise self.fail(start, f"nested deeper than {MAX_NESTING} levels")
        self.depth += 1
        try:
            return read()
        finally:
            self.depth -= 1

    def collection(self, opener: str, start: int) -> Any:
        items = self.items(opener, start)
        if opener == "#{":
            members = frozenset(freeze(v) for v in items)
            if len(members) != len(items):
                raise self.fail(start, f"duplicate set element {short(_repeated(items))}")
            return members
        if opener != "{":
            return items
        if len(items) % 2:
            raise self.fail(start, "a map needs an even number of forms")
        read = {freeze(items[i]): items[i + 1] for i in range(0, len(items), 2)}
        if 2 * len(read) != len(items):  # Clojure's reader refuses it; read last-wins, one hid
            raise self.fail(start, f"duplicate key {short(_repeated(items[::2]))}")
        return read

    def items(self, opener: str, start: int) -> list[Any]:
        """Reads forms up to the closer of `opener` (at `start`). Returns them."""
        closer = _CLOSERS[opener]
        items: list[Any] = []
        while True:
            token = self.next_token()
            if token is None:
                raise self.fail(start, f"{opener!r} is never closed")
            kind, text, pos = token
            if kind == "atom" and text in self.atoms:  # the common case, kept short
                items.append(self.atoms[text])
            elif kind == "close" and text == closer:
                return items
            else:
                items.append(self.read_token(kind, text, pos))

    def escape(self, match: re.Match[str], start: int) -> str:
        code = match.group(1)
        if len(code) == 5:
            return chr(int(code[1:], 16))
        if code not in _ESCAPES:
            raise self.fail(start, f"bad string escape \\{code}")
        return _ESCAPES[code]

    def tagged(self, tag: str, start: int) -> Tagged:
        if tag in _SYMBOLIC_VALUES:
            raise self.fail(start, f"#{tag} is not a number a history can hold")
        if not tag[:1].isalpha():
            raise self.fail(start, f"unsupported dispatch #{tag}")
        return Tagged(tag, self.read())

    def char(self, name: str, start: int) -> Char:
        if len(name) == 1:
            return Char(name)
        if name in CHAR_NAMES:
            return Char(CHAR_NAMES[name])
        if re.fullmatch(r"u[0-9a-fA-F]{4}", name):
            return Char(chr(int(name[1:], 16)))
        raise self.fail(start, f"bad character literal \\{name}")

    def atom(self, token: str, start: int) -> Any:
        if token == "nil":
            return None
        if token in ("true", "false"):
            return token == "true"
        if token.startswith(":"):
            if len(token) == 1:
                raise self.fail(start, "empty keyword")
            return Keyword(token[1:])
        if _NUMBER.match(token):
            return self.number(token, start)
        if token[:1].isdigit() or (token[:1] in "+-" and token[1:2].isdigit()):
            raise self.fail(start, f"bad number {token!r}")
        return Symbol(token)

    def number(self, token: str, start: int) -> int | float | BigDecimal:
        if token.endswith("M"):
            return BigDecimal(decimal.Decimal(token[:-1]))
        if any(c in token for c in ".eE"):
            if token.endswith("N"):
                raise self.fail(start, f"bad number {token!r}")
            number = float(token)
            if not math.isfinite(number):
                raise self.fail(start, f"number out of range: {token[:40]}")
            return number
        digits = token.rstrip("N")
        if len(digits.lstrip("+-")) > sys.get_int_max_str_digits():
            raise self.fail(start, f"integer with more than {sys.get_int_max_str_digits()} digits")
        return int(digits)

    def forms(self) -> Iterator[tuple[int, Any]]:
        """Yields each top-level form with the line it starts on."""
        while True:
            self.trim()
            token = self.next_token()
            if token is None:
                return
            kind, text, start = token
            line = self.line_at(start)
            self.start_event(line)
            yield line, self.read_token(kind, text, start)


def _repeated(forms: list[Any]) -> Any:
    """Takes forms of which two are equal as EDN values. Returns the first repeated."""
    seen: set[Any] = set()
    for form in forms:
        frozen = freeze(form)
        if frozen in seen:
            return form
        seen.add(frozen)
    raise AssertionError("no form repeats")


def read_forms(text: str, first_line: int = 1, budget: int | None = None) -> list[tuple[int, Any]]:
    """Takes EDN text, the line it starts on and maybe a budget in bytes for each form;
    returns every top-level form with the line it starts on.

    Raises EdnError naming the line of the first malformed form, or of one over the budget.
    """
    return list(_Reader([(first_line, text)], budget).forms())


def history_forms(lines: NumberedLines, budget: int) -> Iterator[tuple[int, Any]]:
    """Takes a history.edn's numbered lines and a budget in bytes. Yields (line, form) for
    each event, read one at a time: each top-level form, or each element of a history
    printed as one vector (or list). Raises EdnError for malformed EDN, for a form after
    such a vector, and for an event whose value would take more than the budget."""
    reader = _Reader(lines, budget)
    first = reader.next_token()
    if first is None:
        return
    kind, text, start = first
    line = reader.line_at(start)
    if not (kind == "open" and text in ("[", "(")):
        reader.start_event(line)
        yield line, reader.read_token(kind, text, start)
        yield from reader.forms()
        return
    yield from _elements(reader, text, line)
    after = reader.next_token()
    if after is not None:
        raise reader.fail(after[2], "a history printed as one vector must be alone")


def top_level_forms(lines: NumberedLines, budget: int) -> Iterator[tuple[int, Any]]:
    """Takes numbered lines and a budget in bytes. Yields (line, form) for each top-level
    form, as history_forms reads those after a history's first (a vector among them is
    one form, never a history printed as one vector)."""
    return _Reader(lines, budget).forms()


def _elements(reader: _Reader, opener: str, opened_on: int) -> Iterator[tuple[int, Any]]:
    """Yields each element of the vector or list `opener` opened on line opened_on."""
    closer = _CLOSERS[opener]
    while True:
        reader.trim()
        token = reader.next_token()
        if token is None:
            raise EdnError(opened_on, f"{opener!r} is never closed")
        kind, text, start = token
        if kind == "close" and text == closer:
            return
        line = reader.line_at(start)
        reader.start_event(line)
        yield line, reader.nested(start, partial(reader.read_token, kind, text, start))
