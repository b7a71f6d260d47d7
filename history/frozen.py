"""Decoded JSON and EDN values: their hashable forms, and how deeply they may nest.

Equal values freeze to equal (and equally hashed) forms, so they can be keys, set members
and parts of a model state; values of different types never freeze to equal forms, though
Python holds 1 == 1.0 == True: a history that writes 1 and reads true is not
linearizable, and map keys 1 and true are two keys. So too for EDN's kinds
(history.edn_values): a keyword is not a string, a set not a vector, a map not a set of
pairs. thaw turns a frozen value back into JSON's shapes, EDN's kinds as their spelling.
Readers refuse values nested deeper than MAX_NESTING, so that no recursive walk over a
value (freeze, thaw, printing) can exhaust the stack.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Final

from history.edn_values import EDN_ATOMS, Spelled, Tagged

_SCALARS: Final = frozenset({int, str, type(None)})
_FROZEN_LEAVES: Final = _SCALARS | frozenset(EDN_ATOMS)
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
        # By the type's name, not the type: a type hashes by its address, which differs
        # between processes, and Spark's workers must hash a key alike.
        return hash((self.value.__class__.__name__, self.value))

    def __bool__(self) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


class FrozenMap(frozenset[Any]):
    """A frozen map: its (key, value) pairs, equal only to another map's, never to a set
    that holds the same pairs (EDN has both: {:a 1} is not #{[:a 1]})."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return other.__class__ is FrozenMap and frozenset.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("FrozenMap", frozenset.__hash__(self)))  # alike in every process


MAX_NESTING: Final = 100  # Jepsen's deepest values (maps of vectors of pairs) nest 4 levels


def freeze(value: Any) -> Any:
    """Takes a decoded value. Returns an equal hashable one: lists become tuples, dicts
    FrozenMaps of (key, value) pairs (their order never matters), sets frozensets, booleans
    and floats Exact, a tagged literal's value frozen. Frozen values come back unchanged."""
    if value.__class__ in _FROZEN_LEAVES:
        return value  # the common case, on the checker's hot path
    if value.__class__ is bool or value.__class__ is float:
        return Exact(value)
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return FrozenMap((freeze(k), freeze(v)) for k, v in value.items())
    if value.__class__ is FrozenMap:
        return value
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    if value.__class__ is Tagged:
        return Tagged(value.tag, freeze(value.value))
    return value


def thaw(value: Any) -> Any:
    """Takes a frozen value. Returns it in JSON's shapes: tuples and frozensets as lists
    (a set's elements, or a map's [key, value] pairs, in a fixed order), Exact as its
    boolean or float, an EDN keyword, symbol, character, decimal or tagged literal as its
    spelling (a Spelled string)."""
    if value.__class__ in _SCALARS:
        return value
    if value.__class__ is Exact:
        return value.value
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted((thaw(v) for v in value), key=repr)
    if value.__class__ is Tagged:
        return Spelled(f"#{value.tag} {thaw(value.value)!r}")
    if isinstance(value, EDN_ATOMS):
        return Spelled(repr(value))
    return value


def nesting(value: Any) -> int:
    """Takes a decoded JSON value. Returns how many containers deep it nests (0 for a
    scalar), without recursion, so any depth can be measured."""
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
