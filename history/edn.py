"""A small EDN reader, enough for Jepsen's history.edn and the values in its text logs.

Supports nil, booleans, integers, floats, strings, characters, keywords, symbols,
vectors, lists, maps, sets, tagged literals, comments and `#_` discards. Refuses what a
history cannot hold: `##NaN` and infinities (they equal nothing, not even themselves),
integers too long for Python to convert, and forms nested deeper than MAX_NESTING.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from history.frozen import MAX_NESTING, freeze


class Keyword(str):
    """An EDN keyword, held without its colon; equal to the plain string."""

    __slots__ = ()

    def __repr__(self) -> str:
        return ":" + str.__str__(self)


class Symbol(str):
    """An EDN symbol; equal to the plain string of its name."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Tagged:
    """A tagged literal such as `#jepsen.independent/tuple [k v]`."""

    tag: str
    value: Any


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
_CHAR_NAMES = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r"}
_SYMBOLIC_VALUES = frozenset({"#NaN", "#Inf", "#-Inf"})  # ##NaN, ##Inf, ##-Inf


class _Reader:
    """A recursive-descent parser over regex tokens; positions become lines only when needed."""

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.first_line = first_line
        self.pos = 0
        # Histories repeat the same keywords and numbers on every line; atoms are
        # immutable, so each distinct one is converted once.
        self.atoms: dict[str, Any] = {}
        self.depth = 0  # collections, tags and discards being read, one inside the other

    def line_at(self, pos: int) -> int:
        return self.first_line + self.text.count("\n", 0, pos)

    def fail(self, pos: int, problem: str) -> EdnError:
        return EdnError(self.line_at(pos), problem)

    def next_token(self) -> tuple[str, str, int] | None:
        """Returns the next (kind, text, position) after any blanks, or None at the end."""
        while True:
            match = _TOKEN.match(self.text, self.pos)
            if match is None:
                self.skip_trailing_blanks()
                return None
            kind = match.lastgroup
            assert kind is not None
            self.pos = match.end()
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

    def at_end(self) -> bool:
        """Skips blanks; returns whether nothing but blanks is left."""
        pos = self.pos
        token = self.next_token()
        self.pos = pos if token is None else token[2]
        return token is None

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
                break
            else:
                items.append(self.read_token(kind, text, pos))
        if opener == "#{":
            return frozenset(freeze(v) for v in items)
        if opener != "{":
            return items
        if len(items) % 2:
            raise self.fail(start, "a map needs an even number of forms")
        return {freeze(items[i]): items[i + 1] for i in range(0, len(items), 2)}

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

    def char(self, name: str, start: int) -> str:
        if len(name) == 1:
            return name
        if name in _CHAR_NAMES:
            return _CHAR_NAMES[name]
        if re.fullmatch(r"u[0-9a-fA-F]{4}", name):
            return chr(int(name[1:], 16))
        raise self.fail(start, f"bad character literal \\{name}")

    def atom(self, token: str, start: int) -> Any:
        if token == "nil":
            return None
        if token in ("true", "false"):
            return token == "true"
        if token.startswith(":"):
            if len(token) == 1:
                raise self.fail(start, "empty keyword")
            return Keyword(token.lstrip(":"))
        if _NUMBER.match(token):
            return self.number(token, start)
        if token[:1].isdigit() or (token[:1] in "+-" and token[1:2].isdigit()):
            raise self.fail(start, f"bad number {token!r}")
        return Symbol(token)

    def number(self, token: str, start: int) -> int | float:
        if token.endswith("M") or any(c in token for c in ".eE"):
            number = float(token.rstrip("M"))
            if not math.isfinite(number):
                raise self.fail(start, f"number out of range: {token[:40]}")
            return number
        digits = token.rstrip("N")
        if len(digits.lstrip("+-")) > sys.get_int_max_str_digits():
            raise self.fail(start, f"integer with more than {sys.get_int_max_str_digits()} digits")
        return int(digits)


# Text that is one value made only of vectors, nil, booleans and integers of up to 18
# digits, each atom between separators: its JSON spelling reads the same value (lists,
# None, bools, ints), and a C parser reads JSON about ten times faster than _Reader.
_SIMPLE = re.compile(
    r"""(?:[\[\]\s,]
    |(?<![^\s,\[\]])(?:nil|true|false|-?(?:0|[1-9]\d{0,17}))(?![^\s,\[\]]))*""",
    re.VERBOSE,
)
_SEPARATORS = re.compile(r"[\s,]+")
_JSON = json.JSONDecoder()
NOT_SIMPLE: Final = object()


def read_simple(texts: list[str]) -> list[Any]:
    """Takes EDN texts. Returns for each its one value when it is made only of vectors, nil,
    booleans and small integers (as a Jepsen log's values mostly are), as read_forms would
    read it; else NOT_SIMPLE: read that one with read_forms. All are read in one go."""
    simple = [_SIMPLE.fullmatch(text) is not None for text in texts]
    chosen = [text for text, ok in zip(texts, simple, strict=True) if ok]
    spelled = _SEPARATORS.sub(",", "[[" + "],[".join(chosen) + "]]").replace("nil", "null")
    try:
        values = iter(_JSON.decode(spelled.replace("[,", "[").replace(",]", "]")))
    except ValueError:  # some text is two vectors unseparated ([1][2]): one at a time
        if len(texts) == 1:
            return [NOT_SIMPLE]
        return [read_simple([text])[0] for text in texts]
    # A text holding no value or two ([] or [1, 2] here) is left to read_forms too.
    singles = (next(values) if ok else [] for ok in simple)
    return [value[0] if len(value) == 1 else NOT_SIMPLE for value in singles]


def read_forms(text: str, first_line: int = 1) -> list[tuple[int, Any]]:
    """Takes EDN text; returns every top-level form with the line it starts on.

    Raises EdnError naming the line of the first malformed form.
    """
    reader = _Reader(text, first_line)
    forms: list[tuple[int, Any]] = []
    line, counted_to = first_line, 0
    while not reader.at_end():
        # Lines are counted incrementally: one pass over the text in all.
        line += text.count("\n", counted_to, reader.pos)
        counted_to = reader.pos
        forms.append((line, reader.read()))
    return forms
