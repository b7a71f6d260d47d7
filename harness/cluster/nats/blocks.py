"""One server's copy of a JetStream stream, read from its own disk: the message blocks
(`<store>/jetstream/$G/streams/<stream>/msgs/<n>.blk`) as that server's file store wrote
them, parsed into sequence -> message, so that the servers' copies can be compared
sequence by sequence (a split brain, nats-server#7567, keeps counts and sequences alike).

Why the disk: nothing a client can ask is served by a server it chooses. A stream's
messages come from its leader ($JS.API.STREAM.MSG.GET), a consumer's from wherever the
meta leader placed it (an R1 consumer on a random current peer: nats-server
jetstream_cluster.go, createGroupForConsumer), and a Direct Get from whichever member of
the stream's `_zz_` queue group the client's server picks at random, a routed one as
readily as its own (client.go, processMsgResults). The blocks are read by `tar` inside
the server's container, from the directory nats-server writes (the faultfs mount where
there is one: what the server sees, synced or not), never through nats-server.

The record format is nats-server's (server/filestore.go, writeMsgRecordLocked and
indexCacheBuf, alike in 2.12.1 and 2.15.3), little-endian: total length (4 bytes, its high
bit set when headers follow the subject), sequence (8; bit 63: erased, bit 62: a
tombstone), timestamp (8), subject length (2), subject, [headers length (4), headers],
payload, hash (8). As indexCacheBuf reads them: a tombstone is skipped, an erased
message is deleted, and a sequence at or below one already read in the block is ignored.
Messages removed without a record of it (the block's delete map, kept in index.db) are
not seen: the workloads' streams remove nothing, and a KV bucket's older revisions only
make a copy hold more, never another payload at a sequence. Compressed or encrypted
blocks are not read (the harness configures neither).
"""

from __future__ import annotations

import base64
import io
import re
import shlex
import struct
import tarfile
from collections.abc import Callable

from harness.cluster.nats.config import STORE_DIR

RECORD = struct.Struct("<IQQH")
"""A record's fixed head: total length, sequence, timestamp, subject length."""
HAS_HEADERS = 1 << 31
ERASED = 1 << 63
TOMBSTONE = 1 << 62
HASH_SIZE = 8
ACCOUNT = "$G"
"""The account the harness's streams live in: the global one (no accounts configured)."""
BLOCK = re.compile(r"(?:^|/)(\d+)\.blk$")

Copy = dict[int, bytes]
"""One server's copy of a stream: sequence -> payload."""


def stream_dir(stream: str) -> str:
    """Returns the directory of stream's message blocks inside a server's container."""
    return f"{STORE_DIR}/jetstream/{ACCOUNT}/streams/{stream}/msgs"


def read_command(stream: str) -> list[str]:
    """Returns the command that prints stream's message blocks, as a base64 tar, from
    inside a server's container (exec output is text); nothing when it has none."""
    folder = stream_dir(stream)
    return [
        "sh",
        "-c",
        f"cd {shlex.quote(folder)} 2>/dev/null || exit 3; ls *.blk >/dev/null 2>&1 || exit 4; "
        "tar cf - *.blk | base64 -w0",
    ]


def parse_block(data: bytes) -> tuple[Copy, list[str]]:
    """Takes one block file's bytes. Returns its messages (sequence -> payload) and what
    could not be read (a record cut short or of an impossible length: the rest of the
    block is left out, as nats-server rebuilds a block only up to such a record)."""
    found: Copy = {}
    problems: list[str] = []
    index, last = 0, 0
    while index < len(data):
        if index + RECORD.size > len(data):
            problems.append(f"a record head cut short at byte {index}")
            break
        length, raw_seq, _, subject_len = RECORD.unpack_from(data, index)
        has_headers = bool(length & HAS_HEADERS)
        length &= ~HAS_HEADERS
        head = RECORD.size + subject_len + (4 if has_headers else 0)
        if length < head + HASH_SIZE or index + length > len(data):
            problems.append(f"a record of impossible length {length} at byte {index}")
            break
        record, index = data[index : index + length], index + length
        if raw_seq & TOMBSTONE:
            continue
        seq = raw_seq & ~ERASED
        if seq <= last:
            continue
        last = seq
        if raw_seq & ERASED:
            continue
        body = record[RECORD.size + subject_len : length - HASH_SIZE]
        if has_headers:
            headers_len = int.from_bytes(body[:4], "little")
            body = body[4 + headers_len :]
        found[seq] = bytes(body)
    return found, problems


def parse_blocks(archive: bytes) -> tuple[Copy, list[str]]:
    """Takes a tar of a stream's block files. Returns the messages of every block, in
    block order (a later block's record of a sequence an earlier one holds is left out),
    and what could not be read, each naming its block."""
    copy: Copy = {}
    problems: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        numbered = {}
        for member in tar.getmembers():
            if member.isfile() and (number := BLOCK.search(member.name)):
                numbered[int(number.group(1))] = member
        for _, member in sorted(numbered.items()):
            handle = tar.extractfile(member)
            assert handle is not None  # a regular file
            messages, said = parse_block(handle.read())
            problems += [f"{member.name}: {p}" for p in said]
            for seq, payload in messages.items():
                copy.setdefault(seq, payload)
    return copy, problems


def read_copy(
    exec_in: Callable[[list[str]], tuple[int, str]], stream: str
) -> tuple[Copy, list[str]]:
    """Takes a way to run a command in one server's container and a stream. Returns that
    server's copy of the stream as its disk holds it ({} when it holds no block of it)
    and what of it could not be read. Raises ValueError when the blocks cannot be
    fetched at all."""
    code, out = exec_in(read_command(stream))
    if code in (3, 4):  # no such directory, or no block in it: it holds nothing
        return {}, []
    if code != 0:
        raise ValueError(f"reading the blocks exited {code}: {out.strip()[-300:]}")
    return parse_blocks(base64.b64decode(out.strip()))
