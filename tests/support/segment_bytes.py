"""Writes Kafka record batches (format v2, magic 2) as a broker stores them in a segment
file, for the tests of harness.run.segments and harness.run.recount."""

from __future__ import annotations

import struct
from collections.abc import Sequence

TRANSACTIONAL, CONTROL = 0x10, 0x20


def varint(n: int) -> bytes:
    """Returns n as a zigzag varint."""
    raw = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        low, raw = raw & 0x7F, raw >> 7
        if not raw:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def field(data: bytes | None) -> bytes:
    """Returns a varint-length field (-1 for null)."""
    return varint(-1) if data is None else varint(len(data)) + data


def record(
    offset_delta: int,
    value: bytes | None,
    key: bytes | None = None,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> bytes:
    """Returns one record with its length prefix."""
    body = (
        b"\x00"
        + varint(1234)
        + varint(offset_delta)
        + field(key)
        + field(value)
        + varint(len(headers))
        + b"".join(field(k) + field(v) for k, v in headers)
    )
    return varint(len(body)) + body


def batch(
    base_offset: int,
    values: Sequence[bytes | None],
    *,
    attributes: int = 0,
    magic: int = 2,
    keys: Sequence[bytes | None] | None = None,
    producer: int = -1,
    epoch: int = -1,
) -> bytes:
    """Returns a batch of values at base_offset, base_offset + 1, ... (of producer id and
    epoch -1: not idempotent, unless given)."""
    records = b"".join(
        record(i, v, key=keys[i] if keys else None, headers=[(b"h", b"x")] if i % 2 else [])
        for i, v in enumerate(values)
    )
    head = struct.pack(
        ">ibIhiqqqhii",
        *(7, magic, 0, attributes, len(values) - 1, 0, 0, producer, epoch, -1, len(values)),
    )
    return struct.pack(">qi", base_offset, len(head) + len(records)) + head + records


def marker(base_offset: int, kind: int, producer: int, epoch: int) -> bytes:
    """Returns a transaction marker's control batch: kind 0 ABORT, 1 COMMIT (its record's
    key is a version and the kind; its value the coordinator's epoch, left short here)."""
    return batch(
        base_offset,
        [b"\x00\x00\x00\x00\x00\x00"],
        keys=[struct.pack(">hh", 0, kind)],
        attributes=TRANSACTIONAL | CONTROL,
        producer=producer,
        epoch=epoch,
    )
