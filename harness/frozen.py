"""Hashable forms of decoded JSON and EDN values, so they can be keys, set members and
parts of a model state; equal values freeze to equal (and equally hashed) forms."""

from __future__ import annotations

from typing import Any, Final

_SCALARS: Final = frozenset({int, str, bool, float, type(None)})


def freeze(value: Any) -> Any:
    """Takes a decoded value. Returns an equal hashable one: lists become tuples, dicts
    frozensets of (key, value) pairs (their order never matters), sets frozensets."""
    if value.__class__ in _SCALARS:
        return value  # the common case, on the checker's hot path
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return frozenset((freeze(k), freeze(v)) for k, v in value.items())
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value
