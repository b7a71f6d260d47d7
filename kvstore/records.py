"""The records of a store topic and their encoding as Kafka message key and value.

Every record carries a unique attempt id, which is also the Kafka message key.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any, Literal

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


def encode(record: Record) -> tuple[bytes, bytes]:
    """Takes a record. Returns its Kafka message (key, value).

    The key is the attempt id: unique per record, so compaction removes a
    record only once a tombstone for its attempt id is written.
    """
    body: dict[str, Any]
    match record:
        case Write(key, version, value, attempt):
            body = {"t": "w", "k": key, "v": version, "x": value, "a": attempt}
        case Command(key, name, old, new, attempt):
            body = {"t": "c", "k": key, "f": name, "o": old, "n": new, "a": attempt}
        case Barrier(attempt):
            body = {"t": "b", "a": attempt}
    return record.attempt.encode(), json.dumps(body, separators=(",", ":")).encode()


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


def _key(raw: object) -> Key:
    if isinstance(raw, str | int) and not isinstance(raw, bool):
        return raw
    raise TypeError(f"bad key {raw!r}")


def _value(raw: object) -> Value | None:
    if raw is None or (isinstance(raw, str | int) and not isinstance(raw, bool)):
        return raw
    raise TypeError(f"bad value {raw!r}")


def _version(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0:
        return raw
    raise TypeError(f"bad version {raw!r}")


def partition_for(key: Key, partitions: int) -> int:
    """Returns the partition of a key: a hash that every instance and run agrees on."""
    return zlib.crc32(json.dumps(key).encode()) % partitions
