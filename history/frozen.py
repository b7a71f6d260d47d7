"""Decoded JSON and EDN values: their hashable forms, and how deeply they may nest.

Equal values freeze to equal (and equally hashed) forms, so they can be keys, set members
and parts of a model state; values of different types never freeze to equal forms, though
Python holds 1 == 1.0 == True: a history that writes 1 and reads true is not
linearizable, and map keys 1 and true are two keys. thaw turns a frozen value back into
JSON's shapes. Readers refuse values nested deeper than MAX_NESTING, so that no recursive
walk over a value (freeze, thaw, printing) can exhaust the stack.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Final

_SCALARS: Final = frozenset({int, str, type(None)})
_LEAVES: Final = frozenset({int, str, float, bool, type(None)})


class Exact:
    """A frozen boolean or float: equal only to the same value of the same type, so never
    to the int that Python finds equal to it (True == 1, 1.0 == 1)."""

    __slots__ = ("value",)

    def __init__(self, value: bool | float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Exact)
            and other.value.__class__ is self.value.__class__
            and other.value == self.value
        )

    def __hash__(self) -> int:
        return hash((self.value.__class__, self.value))

    def __bool__(self) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


MAX_NESTING: Final = 100  # Jepsen's deepest values (maps of vectors of pairs) nest 4 levels


def freeze(value: Any) -> Any:
    """Takes a decoded value. Returns an equal hashable one: lists become tuples, dicts
    frozensets of (key, value) pairs (their order never matters), sets frozensets, booleans
    and floats Exact. Frozen values come back unchanged."""
    if value.__class__ in _SCALARS:
        return value  # the common case, on the checker's hot path
    if value.__class__ is bool or value.__class__ is float:
        return Exact(value)
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return frozenset((freeze(k), freeze(v)) for k, v in value.items())
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Takes a frozen value. Returns it in JSON's shapes: tuples and frozensets as lists
    (a set's elements in a fixed order), Exact as its boolean or float."""
    if value.__class__ in _SCALARS:
        return value
    if value.__class__ is Exact:
        return value.value
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted((thaw(v) for v in value), key=repr)
    return value


def nesting(value: Any) -> int:
    """Takes a decoded value. Returns how many containers deep it nests (0 for a scalar),
    without recursion, so any depth can be measured."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        # Containers of scalars only (a history's records, most of its values) end here,
        # tested in C: no scalar is pushed to be popped again.
        if not set(map(type, children)) <= _LEAVES:
            stack.extend(zip(children, repeat(depth + 1)))
    return deepest
