"""The records of a store topic and their encoding as Kafka message key and value.

Every record carries a unique attempt id, which is also the Kafka message key.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from kvstore.errors import InvalidArgument

Key = str | int
Value = str | int
CommandName = Literal["put", "put-if-absent", "replace", "remove"]
_COMMANDS: frozenset[str] = frozenset({"put", "put-if-absent", "replace", "remove"})


@dataclass(frozen=True, slots=True)
class Write:
    """An attempt to make `value` the `version`-th value of `key`; None removes the key."""

    key: Key
    version: int
    value: Value | None
    attempt: str


@dataclass(frozen=True, slots=True)
class Command:
    """A ReplicaMap-style operation whose precondition every replica checks when applying it."""

    key: Key
    name: CommandName
    old: Value | None
    new: Value | None
    attempt: str


@dataclass(frozen=True, slots=True)
class Barrier:
    """A record with no effect: once a replica has applied it, it has seen every earlier record."""

    attempt: str


Record = Write | Command | Barrier


class MalformedRecord(ValueError):
    """A message on a store topic that is not a record of this module."""


BARRIER_KEY = b"~barrier"
"""The message key of every barrier: compaction keeps only a partition's last barrier."""


def encode(record: Record) -> tuple[bytes, bytes]:
    """Takes a record. Returns its Kafka message (key, value).

    The key of a write or command is its attempt id: unique per record, so
    compaction removes it only once a tombstone for its attempt id is written.
    Barriers, which change nothing, share one key (BARRIER_KEY), so compaction
    drops all but the last without any tombstone.
    """
    body: dict[str, Any]
    match record:
        case Write(key, version, value, attempt):
            body = {"t": "w", "k": key, "v": version, "x": value, "a": attempt}
        case Command(key, name, old, new, attempt):
            body = {"t": "c", "k": key, "f": name, "o": old, "n": new, "a": attempt}
        case Barrier(attempt):
            body = {"t": "b", "a": attempt}
    message_key = BARRIER_KEY if isinstance(record, Barrier) else record.attempt.encode()
    return message_key, json.dumps(body, separators=(",", ":")).encode()


def decode(value: bytes | None) -> Record | None:
    """Takes a Kafka message value. Returns its record, or None for a tombstone.

    Raises MalformedRecord for anything else.
    """
    if value is None:
        return None
    try:
        body = json.loads(value)
        kind = body["t"]
        if kind == "w":
            return Write(_key(body["k"]), _version(body["v"]), _value(body["x"]), str(body["a"]))
        if kind == "c" and body["f"] in _COMMANDS:
            return Command(
                _key(body["k"]), body["f"], _value(body["o"]), _value(body["n"]), str(body["a"])
            )
        if kind == "b":
            return Barrier(str(body["a"]))
    except (ValueError, KeyError, TypeError) as e:
        raise MalformedRecord(f"not a store record: {value[:100]!r}") from e
    raise MalformedRecord(f"unknown record kind: {value[:100]!r}")


def is_scalar(raw: object) -> TypeGuard[str | int]:
    """Returns whether raw is a str or an int (a bool is not): what a key or value can be."""
    return isinstance(raw, str | int) and not isinstance(raw, bool)


def require_key(raw: object) -> Key:
    """Returns raw if it can be a key. Raises InvalidArgument otherwise."""
    if is_scalar(raw):
        return raw
    raise InvalidArgument(f"a key must be a str or an int, not {type(raw).__name__}: {raw!r}")


def require_value(raw: object) -> Value:
    """Returns raw if it can be a value. Raises InvalidArgument otherwise (None included:
    absence is what remove makes, never a value to write)."""
    if is_scalar(raw):
        return raw
    raise InvalidArgument(f"a value must be a str or an int, not {type(raw).__name__}: {raw!r}")


def _key(raw: object) -> Key:
    if is_scalar(raw):
        return raw
    raise TypeError(f"bad key {raw!r}")


def _value(raw: object) -> Value | None:
    if raw is None or is_scalar(raw):
        return raw
    raise TypeError(f"bad value {raw!r}")


def _version(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0:
        return raw
    raise TypeError(f"bad version {raw!r}")


def partition_for(key: Key, partitions: int) -> int:
    """Returns the partition of a key: a hash that every instance and run agrees on."""
    return zlib.crc32(json.dumps(key).encode()) % partitions
