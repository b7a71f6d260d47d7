"""The transaction coordinator's log read without a cluster: its records built byte by byte
as Kafka's TransactionLogKey and TransactionLogValue schemas (versions 0 and 1) lay them
out, the protocol each client spoke, results.json's `release` and the report's rows."""

from __future__ import annotations

import struct

import pytest

from harness.cluster.txn_log import (
    TxnLogError,
    TxnRecord,
    client_protocols,
    parse_record,
    transactions_section,
)
from harness.cluster.wire import Writer
from harness.report.release_rows import release_rows
from harness.run.cluster_facts import release_section

ONGOING, PREPARE_COMMIT, COMPLETE_COMMIT, PREPARE_ABORT, COMPLETE_ABORT = 1, 2, 4, 3, 5


def key(tid: str) -> bytes:
    raw = tid.encode()
    return struct.pack(">hh", 0, len(raw)) + raw


def value(version: int, status: int, client_version: int | None = None) -> bytes:
    """A TransactionLogValue: producer 7000 epoch 3, one partition, and at version 1 the
    tagged fields (previous producer id, then ClientTransactionVersion when given)."""
    head = struct.pack(">hqhib", version, 7000, 3, 60000, status)
    times = struct.pack(">qq", 1_700_000_000_000, 1_700_000_000_100)
    if version == 0:
        partitions = struct.pack(">ih", 1, 5) + b"queue" + struct.pack(">ii", 1, 0)
        return head + partitions + times
    w = Writer().raw(head).array_length(1).string("queue").array_length(2)
    w.int32(0).int32(1).no_tags().raw(times)
    tags = [(0, struct.pack(">q", 6999))]
    if client_version is not None:
        tags.append((2, struct.pack(">h", client_version)))
    w.uvarint(len(tags))
    for tag, data in tags:
        w.uvarint(tag).uvarint(len(data)).raw(data)
    return bytes(w.data)


def test_a_version_1_value_carries_the_clients_transaction_version() -> None:
    record = parse_record(key("t-1"), value(1, COMPLETE_COMMIT, 2))
    assert record == TxnRecord("t-1", 7000, 3, COMPLETE_COMMIT, 2)
    # The tag left out is its default, 0: a client of the protocol before KIP-890's.
    assert parse_record(key("t-1"), value(1, PREPARE_ABORT)) == TxnRecord(
        "t-1", 7000, 3, PREPARE_ABORT, 0
    )


def test_a_version_0_value_has_no_client_version_and_a_tombstone_is_no_record() -> None:
    assert parse_record(key("t-2"), value(0, ONGOING)) == TxnRecord("t-2", 7000, 3, ONGOING, None)
    assert parse_record(key("t-2"), None) is None


@pytest.mark.parametrize(
    ("raw_key", "raw_value"),
    [(key("t")[:3], value(1, 4, 2)), (key("t"), value(1, 4, 2)[:20]), (b"\x00\x01xx", b"")],
)
def test_a_record_that_cannot_be_read_says_so(raw_key: bytes, raw_value: bytes) -> None:
    with pytest.raises(TxnLogError):
        parse_record(raw_key, raw_value)


def test_each_client_has_the_protocols_its_transactions_ended_with() -> None:
    records = [
        parse_record(key(tid), value(version, status, level))
        for tid, version, status, level in [
            ("t-0", 1, ONGOING, 0),  # not an end: not counted
            ("t-0", 1, PREPARE_COMMIT, 2),
            ("t-0", 1, COMPLETE_COMMIT, 2),
            ("t-0", 1, PREPARE_ABORT, 2),
            ("t-0", 1, COMPLETE_ABORT, 2),
            ("t-1", 1, PREPARE_COMMIT, 0),
            ("t-1", 1, COMPLETE_COMMIT, 0),
            ("t-2", 0, PREPARE_COMMIT, None),
            ("t-2", 0, COMPLETE_COMMIT, None),
        ]
    ]
    kept = [r for r in records if r is not None]
    assert client_protocols(kept) == {
        "t-0": {"protocols": ["TV2"], "ended": 2},
        "t-1": {"protocols": ["TV1"], "ended": 1},
        "t-2": {"protocols": ["TV1"], "ended": 1},
    }
    assert transactions_section(kept, 2)["protocol"] == "mixed"
    only_v2 = transactions_section(kept[:5], 2)
    assert (only_v2["protocol"], only_v2["broker_level"]) == ("TV2", 2)
    assert transactions_section([], 0)["protocol"] == "none"


def test_the_release_section_names_the_client_library_and_its_version() -> None:
    versions = {"confluent_kafka": "2.16.1", "librdkafka": "2.16.0", "kafka_clients": "4.4.0"}
    spec = {"kafka_version": "4.1.2", "metadata": "kraft", "client": "librdkafka"}
    plain = release_section({"spec": spec, "versions": versions}, None)
    assert plain == {
        "kafka": "4.1.2",
        "metadata": "kraft",
        "client": "confluent-kafka",
        "client_version": "2.16.1",
        "librdkafka": "2.16.0",
        "transactions": None,
    }
    assert release_rows(plain) == [("client", "confluent-kafka 2.16.1 (librdkafka 2.16.0)")]
    found = transactions_section(
        [TxnRecord("t-0", 1, 1, PREPARE_COMMIT, 2), TxnRecord("t-1", 2, 1, PREPARE_ABORT, 2)], 2
    )
    java = release_section({"spec": spec | {"client": "java"}, "versions": versions}, found)
    assert (java["client"], java["client_version"], "librdkafka" in java) == (
        "kafka-clients",
        "4.4.0",
        False,
    )
    assert release_rows(java) == [
        ("client", "kafka-clients 4.4.0"),
        (
            "transaction protocol",
            "TV2: t-0 TV2 (1 ended), t-1 TV2 (1 ended); the brokers' transaction.version 2",
        ),
    ]
    unread = java | {"transactions": {"protocol": "unknown", "error": "no broker"}}
    assert release_rows(unread)[1] == ("transaction protocol", "not read: no broker")
    assert release_rows(None) == []
