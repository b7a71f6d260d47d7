"""A server's copy of a stream read from its message blocks (harness/cluster/nats/
blocks.py): records written in nats-server's format (server/filestore.go,
writeMsgRecordLocked) come back as sequence -> payload, headers skipped, tombstones and
erased messages left out as indexCacheBuf leaves them, a record cut short said."""

from __future__ import annotations

import base64
import io
import struct
import tarfile

from harness.cluster.nats.blocks import (
    ERASED,
    TOMBSTONE,
    parse_block,
    parse_blocks,
    read_command,
    read_copy,
)


def record(seq: int, payload: bytes, subject: bytes = b"store-1.0", headers: bytes = b"") -> bytes:
    """One record as nats-server writes it (its hash is not checked: zeros here)."""
    body = subject + (struct.pack("<I", len(headers)) + headers if headers else b"") + payload
    length = 22 + len(body) + 8
    flag = 1 << 31 if headers else 0
    return struct.pack("<IQQH", length | flag, seq, 1_700_000_000, len(subject)) + body + bytes(8)


def test_records_come_back_by_sequence_with_their_payloads() -> None:
    data = record(1, b"10") + record(2, b"11", headers=b"NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n")
    data += record(3, b"12")
    assert parse_block(data) == ({1: b"10", 2: b"11", 3: b"12"}, [])


def test_tombstones_erasures_and_repeats_are_read_as_nats_server_reads_them() -> None:
    data = record(1, b"10") + record(2 | ERASED, b"") + record(9 | TOMBSTONE, b"")
    data += record(3, b"12") + record(3, b"99") + record(2, b"98")
    assert parse_block(data) == ({1: b"10", 3: b"12"}, [])


def test_a_record_cut_short_ends_the_block_and_is_said() -> None:
    data = record(1, b"10") + record(2, b"11")[:-5]
    copy, problems = parse_block(data)
    assert copy == {1: b"10"} and "impossible length" in problems[0]
    copy, problems = parse_block(record(1, b"10") + b"\x01\x02")
    assert copy == {1: b"10"} and "cut short" in problems[0]


def tar_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_blocks_are_read_in_their_numbers_order() -> None:
    archive = tar_of({"10.blk": record(5, b"late"), "2.blk": record(1, b"a") + record(5, b"b")})
    assert parse_blocks(archive) == ({1: b"a", 5: b"b"}, [])


def test_the_copy_is_read_inside_the_server_and_none_is_empty() -> None:
    asked: list[list[str]] = []

    def exec_in(cmd: list[str]) -> tuple[int, str]:
        asked.append(cmd)
        return 0, base64.b64encode(tar_of({"1.blk": record(1, b"7")})).decode()

    assert read_copy(exec_in, "store-1") == ({1: b"7"}, [])
    # $G is the account's directory, not a shell variable.
    assert "'/var/lib/nats/jetstream/$G/streams/store-1/msgs'" in asked[0][2]
    assert read_command("store-1") == asked[0]
    assert read_copy(lambda cmd: (3, ""), "store-1") == ({}, [])
