"""Which transaction protocol each transactional client spoke, as the transaction
coordinator recorded it in its own log, the __transaction_state topic: KIP-890's
transactions v2 (TV2), or the protocol before it (TV1).

The coordinator writes one record per transactional id at each state change of its
transaction (TransactionLogKey and TransactionLogValue, Kafka's
transaction-coordinator/src/main/resources/common/message/). Where the cluster's
transaction.version is 1 or more the value is written at version 1, which carries the
client's transaction version as tagged field 2 (ClientTransactionVersion): 2 when the
client runs KIP-890's protocol (EndTxn v5 and later), else 0. A value of version 0 (Kafka
3.9, or transaction.version 0) has no such field: such a broker speaks TV1 only. The
records of a transaction's end (PrepareCommit, PrepareAbort, CompleteCommit,
CompleteAbort) are read, since the client ended it, or its coordinator with the version
the client began it with.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.cluster.wire import Reader, WireError
from kvstore import DEFAULT_TIMEOUTS
from kvstore.kafka_log import client_config

TOPIC = "__transaction_state"
TXN_FEATURE = "transaction.version"
CLIENT_VERSION_TAG = 2
ENDING = {2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit", 5: "CompleteAbort"}
"""The coordinator's TransactionState ids of a transaction's end."""
PREPARING = (2, 3)
"""The first record of a transaction's end: logged before EndTxn is answered, so before
the client's commit or abort returns."""
TV2_LEVEL = 2
"""transaction.version 2: KIP-890's epoch bump at every transaction's end."""


class TxnLogError(RuntimeError):
    """The transaction log could not be read; the message says why."""


@dataclass(frozen=True, slots=True)
class TxnRecord:
    """One state of one transactional id, as its coordinator logged it."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    status: int
    client_version: int | None
    """ClientTransactionVersion, or None where the value's version has no such field."""


def parse_record(key: bytes, value: bytes | None) -> TxnRecord | None:
    """Takes one record of __transaction_state. Returns it read, or None for a tombstone
    (an expired transactional id); raises TxnLogError when it cannot be read."""
    if value is None:
        return None
    try:
        key_version, length = struct.unpack_from(">hh", key)
        if key_version != 0 or length < 0 or 4 + length > len(key):
            raise TxnLogError(f"a key of version {key_version} and length {length}")
        tid = key[4 : 4 + length].decode(errors="replace")
        reader = Reader(value)
        version = reader.int16()
        producer_id, epoch = reader.int64(), reader.int16()
        reader.int32()  # the transaction timeout
        status = reader.int8()
        if version == 0:
            return TxnRecord(tid, producer_id, epoch, status, None)
        for _ in range(reader.array_length()):  # the partitions, flexible from version 1
            reader.string()
            reader.int32_array()
            reader.tags()
        reader.int64(), reader.int64()  # last update and start times
        tagged = reader.tags()
    except (struct.error, WireError) as err:
        raise TxnLogError(f"a record of {TOPIC} cannot be read: {err}") from err
    level = tagged.get(CLIENT_VERSION_TAG)
    client_version = struct.unpack(">h", level)[0] if level is not None and len(level) == 2 else 0
    return TxnRecord(tid, producer_id, epoch, status, client_version)


def protocol(client_version: int | None) -> str:
    """Returns the protocol a logged ClientTransactionVersion names: TV2 or TV1."""
    return "TV2" if client_version is not None and client_version >= TV2_LEVEL else "TV1"


def client_protocols(records: Iterable[TxnRecord]) -> dict[str, dict[str, Any]]:
    """Takes the logged records in log order. Returns per transactional id the protocols
    its transactions' ends were logged with, and how many ends were logged (a transaction
    that sent nothing ends in its client alone: the coordinator never hears of it)."""
    found: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.status not in ENDING:
            continue
        client = found.setdefault(record.transactional_id, {"protocols": [], "ended": 0})
        if (spoke := protocol(record.client_version)) not in client["protocols"]:
            client["protocols"].append(spoke)
        client["ended"] += record.status in PREPARING
    return dict(sorted(found.items()))


def transactions_section(records: Iterable[TxnRecord], broker_level: int) -> dict[str, Any]:
    """Takes the logged records and the cluster's finalized transaction.version. Returns
    results.json's account of the transaction protocol: per client and in one word (TV1,
    TV2, mixed, or none when the coordinator logged no transaction's end)."""
    clients = client_protocols(records)
    spoken = sorted({p for c in clients.values() for p in c["protocols"]})
    return {
        "protocol": spoken[0] if len(spoken) == 1 else ("mixed" if spoken else "none"),
        "broker_level": broker_level,
        "clients": clients,
        "source": f"the transaction coordinator's log ({TOPIC})",
    }


def read_transaction_log(bootstrap: str, timeout_s: float) -> list[TxnRecord]:
    """Reads every partition of __transaction_state from its start to its high watermark.
    Returns the records in log order (per partition); raises TxnLogError."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

    deadline = time.monotonic() + timeout_s
    consumer = Consumer(
        client_config(bootstrap, "harness-txn-log", DEFAULT_TIMEOUTS)
        | {"group.id": "harness-txn-log", "enable.auto.commit": False}  # assigned, never joined
    )
    try:
        topic = consumer.list_topics(TOPIC, timeout_s).topics.get(TOPIC)
        if topic is None or topic.error is not None or not topic.partitions:
            return []  # no transactional id was ever used
        ends = {}
        for p in topic.partitions:
            tp = TopicPartition(TOPIC, p)
            ends[p] = consumer.get_watermark_offsets(tp, timeout_s, cached=False)[1]
        filled = [p for p, end in ends.items() if end]
        consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in filled])
        return _read_to(consumer, ends, deadline)
    except KafkaException as err:
        raise TxnLogError(f"{TOPIC} could not be read: {err}") from err
    finally:
        consumer.close()


def _read_to(consumer: Any, ends: dict[int, int], deadline: float) -> list[TxnRecord]:
    """Polls until the position of every partition reaches its end (offsets may be sparse:
    the topic is compacted, so the position, not the last record, says where it is)."""
    from confluent_kafka import TopicPartition

    records: list[TxnRecord] = []
    left = {p for p, end in ends.items() if end}
    while left:
        if time.monotonic() > deadline:
            raise TxnLogError(f"{TOPIC} was not read to its end in time (partitions {left})")
        message = consumer.poll(0.5)
        if message is not None and message.error() is not None:
            raise TxnLogError(f"{TOPIC} could not be read: {message.error()}")
        if message is not None:
            record = parse_record(message.key() or b"", message.value())
            if record is not None:
                records.append(record)
        positions = consumer.position([TopicPartition(TOPIC, p) for p in left])
        left -= {tp.partition for tp in positions if tp.offset >= ends[tp.partition]}
    return records
