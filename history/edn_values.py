"""EDN's own kinds of value, as a history holds them: keywords, symbols, characters,
decimals and tagged literals.

Each equals only a value of its own kind, as in Clojure, where `(= :a "a")`, `(= 'a "a")`,
`(= \\a "a")`, `(= 1M 1.0)` and `(= #inst "x" "x")` are all false: a history that writes
`:a` and reads `"a"` is not linearizable. Each is immutable and hashable, and prints as EDN
spells it (`:a`, `a`, `\\a`, `1M`, `#inst "x"`), so a counterexample shows what the history
held. `Spelled` is that spelling as a string, for reports that must be JSON.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from typing import Any, Final

CHAR_NAMES: Final = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r"}
_NAMED_CHARS: Final = {char: name for name, char in CHAR_NAMES.items()}


@dataclass(frozen=True, slots=True, repr=False)
class Keyword:
    """An EDN keyword (`:timed-out`), held without its colon."""

    name: str

    def __repr__(self) -> str:
        return ":" + self.name


@dataclass(frozen=True, slots=True, repr=False)
class Symbol:
    """An EDN symbol (`foo/bar`)."""

    name: str

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, repr=False)
class Char:
    """An EDN character (`\\a`, `\\newline`)."""

    char: str

    def __repr__(self) -> str:
        return "\\" + _NAMED_CHARS.get(self.char, self.char)


@dataclass(frozen=True, slots=True, repr=False)
class BigDecimal:
    """An EDN decimal (`1.5M`): equal to a decimal of the same value however many zeros it
    is written with (Clojure finds 1.0M and 1.00M equal), never to a float or an integer."""

    value: decimal.Decimal

    def __repr__(self) -> str:
        return f"{self.value}M"


@dataclass(frozen=True, slots=True, repr=False)
class Tagged:
    """A tagged literal such as `#inst "2024-01-01"` or `#jepsen.independent/tuple [k v]`;
    hashable once its value is frozen."""

    tag: str
    value: Any

    def __repr__(self) -> str:
        return f"#{self.tag} {self.value!r}"


EDN_ATOMS: Final = (Keyword, Symbol, Char, BigDecimal)


class Spelled(str):
    """An EDN value's spelling, for a report: JSON writes it as a string, and its repr is
    the spelling itself, so `[:a, 'a']` prints a keyword beside a string."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


def name_of(value: Any) -> Any:
    """Takes a value read from EDN. Returns a keyword's or symbol's name as a plain string
    (an event's type, f, process and error are names, whatever spells them), else the value."""
    if value.__class__ is Keyword or value.__class__ is Symbol:
        return value.name
    return value
