"""Reads the records of a Kafka log segment file (record batch format v2, magic 2) the
way the broker wrote them to disk: offset and value of every data record.

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
_CONTROL_BIT = 0x20


class SegmentError(ValueError):
    """A segment holds something this reader cannot read as records."""


@dataclass(slots=True)
class Segment:
    """What one segment file holds: data records by offset, and what could not be read."""

    records: dict[int, bytes | None] = field(default_factory=dict)
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


def _records(body: bytes, base_offset: int, count: int) -> dict[int, bytes | None]:
    """Reads count uncompressed records from body; returns value by absolute offset."""
    records: dict[int, bytes | None] = {}
    pos = 0
    for _ in range(count):
        length, pos = _varint(body, pos)
        end = pos + length
        if length < 0 or end > len(body):
            raise SegmentError("a record runs past the end of its batch")
        pos += 1  # attributes (unused)
        _, pos = _varint(body, pos)  # timestampDelta
        offset_delta, pos = _varint(body, pos)
        _, pos = _bytes(body, pos)  # key
        value, pos = _bytes(body, pos)
        records[base_offset + offset_delta] = value
        pos = end  # headers are not needed
    return records


def read_segment(data: bytes) -> Segment:
    """Takes a .log file's bytes. Returns its data records (control batches left out)
    and a problem for each batch it could not read. A zero-length tail (preallocated
    space) ends the file."""
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
        (*_, magic, _crc, attributes, _, _, _, _, _, _, count) = _BATCH_HEAD.unpack_from(data, pos)
        if magic != 2:
            segment.problems.append(f"batch at offset {base_offset} has magic {magic}, not 2")
        elif attributes & _COMPRESSION_MASK:
            codec = attributes & _COMPRESSION_MASK
            segment.problems.append(f"batch at offset {base_offset} is compressed (codec {codec})")
        elif not attributes & _CONTROL_BIT:
            try:
                body = data[pos + _BATCH_HEAD.size : end]
                segment.records.update(_records(body, base_offset, count))
            except SegmentError as err:
                segment.problems.append(f"batch at offset {base_offset}: {err}")
        pos = end
    return segment
