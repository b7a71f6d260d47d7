"""Which record batch of a Kafka log segment a changed byte lies in, which field of it,
and whether the batch still passes its CRC-32C: what a broker or a consumer with
check.crcs would find on reading it.

The batch layout (magic 2) is Kafka's DefaultRecordBatch: baseOffset (8 bytes),
batchLength (4), partitionLeaderEpoch (4), magic (1), crc (4), then the attributes and
everything after them, which is what the CRC-32C (Castagnoli) covers. So a flip in the
first 17 bytes of a batch is not caught by its CRC, a flip anywhere after them is.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

_HEAD = struct.Struct(">qiibI")  # baseOffset, batchLength, partitionLeaderEpoch, magic, crc
_LOG_OVERHEAD = 12  # baseOffset and batchLength precede the length they count
_CRC_FROM = 21  # the attributes: the first byte the CRC covers
_LAST_DELTA = struct.Struct(">i")  # lastOffsetDelta, just after the attributes
_HEAD_FIELDS = (
    (8, "baseOffset"),
    (12, "batchLength"),
    (16, "partitionLeaderEpoch"),
    (17, "magic"),
    (21, "crc"),
)
"""Each field before the CRC's reach, by the batch position it ends at."""
_MIN_LENGTH = 49  # batchLength of a batch with no record (61 bytes of header - 12)


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """Returns the CRC-32C (Castagnoli) of data, as Kafka's Crc32C computes it."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _field(at: int) -> str:
    """Names the header field at a position inside a batch, or the CRC-covered part."""
    for end, name in _HEAD_FIELDS:
        if at < end:
            return name
    return "the part the CRC covers"


def batches_at(data: bytes, positions: Sequence[int]) -> list[dict[str, Any]]:
    """Takes a .log file's bytes (as they are now) and positions in it. Returns for each
    position the batch it lies in: {"position", "batch_position", "offsets": [first,
    last], "field", "crc_ok"}; or {"position", "unread": why} when no batch can be read
    there (past the end, or after a batch whose length is broken)."""
    found: dict[int, dict[str, Any]] = {}
    wanted = sorted(set(positions))
    pos, why = 0, "past the end of the file"
    while pos + _HEAD.size <= len(data) and len(found) < len(wanted):
        base, length, _, _, crc = _HEAD.unpack_from(data, pos)
        end = pos + _LOG_OVERHEAD + length
        if length == 0:
            why = f"in the zero tail after file position {pos}"
            break
        if length < _MIN_LENGTH or end > len(data):
            why = f"after file position {pos}, where a batch claims {length} bytes"
            break
        last = base + _LAST_DELTA.unpack_from(data, pos + _CRC_FROM + 2)[0]
        ok = crc32c(data[pos + _CRC_FROM : end]) == crc
        for p in wanted:
            if pos <= p < end:
                found[p] = {
                    "position": p,
                    "batch_position": pos,
                    "offsets": [base, last],
                    "field": _field(p - pos),
                    "crc_ok": ok,
                }
        pos = end
    return [found.get(p, {"position": p, "unread": why}) for p in wanted]
