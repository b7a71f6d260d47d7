"""Reads a Kafka log segment file (record batch format v2, magic 2) the way the broker
wrote it to disk: every batch's producer, epoch and control marker, every record by offset.

Kafka 4.x no longer ships DumpLogSegments in the broker's jars, so the harness reads the
format itself; tests hold it equal to DumpLogSegments on 3.9.1. A batch this reader
cannot read (compressed, another magic, cut short) is reported, never skipped silently.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# baseOffset, batchLength, then from partitionLeaderEpoch to recordsCount: 61 bytes.
_BATCH_HEAD = struct.Struct(">qiibIhiqqqhii")
_LOG_OVERHEAD = 12  # baseOffset (8) and batchLength (4) precede the length they count
_COMPRESSION_MASK = 0x07
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_MARKERS = {0: "ABORT", 1: "COMMIT"}
"""A control record's type, from its key (version, type: kafka-clients' ControlRecordType)."""


class SegmentError(ValueError):
    """A segment holds something this reader cannot read as records."""


Record = tuple[bytes | None, bytes | None]
"""A record's key and value (None: null)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One record batch as stored: its first and last offsets, producer id and epoch
    (-1 when not idempotent), whether it is transactional, its marker (ABORT, COMMIT, or
    UNKNOWN) if it is a control batch, and its records by offset (none when compressed)."""

    first: int
    last: int
    producer: int
    epoch: int
    transactional: bool
    marker: str | None
    records: dict[int, Record]


@dataclass(slots=True)
class Segment:
    """What one segment file holds: data records' values by offset, every batch whose
    header was read, and what could not be read."""

    records: dict[int, bytes | None] = field(default_factory=dict)
    batches: list[Batch] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """Reads a zigzag varint (Kafka's signed varint and varlong) at pos; returns it and
    the position after it."""
    shift = raw = 0
    while True:
        if pos >= len(data):
            raise SegmentError("a varint runs past the end of its batch")
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise SegmentError("a varint longer than 10 bytes")


def _bytes(data: bytes, pos: int) -> tuple[bytes | None, int]:
    length, pos = _varint(data, pos)
    if length < 0:
        return None, pos
    if pos + length > len(data):
        raise SegmentError("a field runs past the end of its batch")
    return data[pos : pos + length], pos + length


def _records(body: bytes, base_offset: int, count: int) -> dict[int, Record]:
    """Reads count uncompressed records from body; returns key and value by absolute
    offset."""
    records: dict[int, Record] = {}
    pos = 0
    for _ in range(count):
        length, pos = _varint(body, pos)
        end = pos + length
        if length < 0 or end > len(body):
            raise SegmentError("a record runs past the end of its batch")
        pos += 1  # attributes (unused)
        _, pos = _varint(body, pos)  # timestampDelta
        offset_delta, pos = _varint(body, pos)
        key, pos = _bytes(body, pos)
        value, pos = _bytes(body, pos)
        records[base_offset + offset_delta] = (key, value)
        pos = end  # headers are not needed
    return records


def read_segment(data: bytes) -> Segment:
    """Takes a .log file's bytes. Returns its batches, its data records (control batches
    left out) and a problem for each batch it could not read. A zero-length tail
    (preallocated space) ends the file."""
    segment = Segment()
    pos = 0
    while pos + _LOG_OVERHEAD <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        if length == 0:
            break
        end = pos + _LOG_OVERHEAD + length
        if length < _BATCH_HEAD.size - _LOG_OVERHEAD or end > len(data):
            segment.problems.append(
                f"batch at offset {base_offset} cut short (file position {pos})"
            )
            break
        read = _batch(data, pos, end, segment.problems)
        if read is not None:
            segment.batches.append(read)
            if read.marker is None:
                segment.records.update((o, value) for o, (_, value) in read.records.items())
        pos = end
    return segment


def _batch(data: bytes, pos: int, end: int, problems: list[str]) -> Batch | None:
    """Reads the batch at data[pos:end]; returns it, with no records if they cannot be
    read (each problem appended), or None if it is not of format v2."""
    head = _BATCH_HEAD.unpack_from(data, pos)
    base_offset, _, _, magic, _, attributes, last_delta, _, _, producer, epoch, _, count = head
    if magic != 2:
        problems.append(f"batch at offset {base_offset} has magic {magic}, not 2")
        return None
    records: dict[int, Record] = {}
    if attributes & _COMPRESSION_MASK:
        codec = attributes & _COMPRESSION_MASK
        problems.append(f"batch at offset {base_offset} is compressed (codec {codec})")
    else:
        try:
            records = _records(data[pos + _BATCH_HEAD.size : end], base_offset, count)
        except SegmentError as err:
            problems.append(f"batch at offset {base_offset}: {err}")
    marker = None
    if attributes & _CONTROL_BIT:
        key = next(iter(records.values()), (None, None))[0] or b""
        kind = struct.unpack_from(">hh", key)[1] if len(key) >= 4 else -1
        marker = _MARKERS.get(kind, "UNKNOWN")
    transactional = bool(attributes & _TRANSACTIONAL_BIT)
    last = base_offset + last_delta
    return Batch(base_offset, last, producer, epoch, transactional, marker, records)
