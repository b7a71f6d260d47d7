"""Run options, each declared once: a field of an options record holds its default, its
help and how the command line gives it; argparse, TestSpec, test.json and the workloads
all read the same record (QueueOptions, ShareOptions, NatsOptions, and harness.spec's
TestSpec).

A field made by `option` carries a Flag in its metadata. harness/commands/options.py
turns every such field into one argument of `harness run` and back into the record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from checkers.groups import BROKER_DELIVERY_LIMIT
from checkers.queue import KINDS, SUB_VIA, TXN_KINDS
from workloads.argtypes import IGNORE_HELP, anomaly_kinds, probability
from workloads.java_driver import KAFKA_CLIENTS_VERSION
from workloads.names import (
    DEFAULT_NATS_VERSION,
    NATS_KV_READS,
    NATS_PUBLISH,
    NATS_SYNCS,
    NATS_VERSIONS,
)

T = TypeVar("T")
FLAG = "flag"
"""The metadata key of a field's Flag."""


@dataclass(frozen=True, slots=True)
class Flag:
    """How an option is given on the command line: its flags, its help (the default is
    added from the field), argparse's other keywords, how the parsed value becomes the
    field's (`to_field`) and the field's default the command line's (`to_cli`), and
    other flags that set it to a constant (`aliases`: flag -> value, with its help)."""

    flags: tuple[str, ...]
    help: str
    kwargs: Mapping[str, Any]
    to_field: Callable[[Any], Any] | None = None
    to_cli: Callable[[Any], Any] | None = None
    aliases: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    shown_default: str | None = None
    """The default as the help says it, when the field's value does not say it well."""


def option(
    default: T,
    help: str,
    *flags: str,
    to_field: Callable[[Any], Any] | None = None,
    to_cli: Callable[[Any], Any] | None = None,
    aliases: Mapping[str, tuple[Any, str]] | None = None,
    shown_default: str | None = None,
    **kwargs: Any,
) -> T:
    """Takes an option's default, its help, its flags (default: the field's name as
    --words-like-this), how its parsed value becomes the field's and back, and
    argparse's other keywords. Returns the dataclass field that declares it."""
    flag = Flag(flags, help, kwargs, to_field, to_cli, aliases or {}, shown_default)
    made: T = field(default=default, metadata={FLAG: flag})
    return made


CRASH_CLIENT_INTERVAL_S = 30.0
"""Jepsen's default :crash-client-interval (jepsen.tests.kafka `crash-client-gen`)."""
CLIENTS = ("librdkafka", "java")
"""The Kafka clients --txn can run through."""
OFFSET_RESETS = ("earliest", "latest")
"""Where a group starts in a partition it has no committed offset (or share state) for."""
GROUP_PROTOCOLS = ("classic", "consumer")
"""The consumer group rebalance protocols: the classic one, and KIP-848's."""
DELIVERY_LIMIT = 3
"""The share workload's default delivery count limit: small (Kafka allows 2 to 10, and
defaults to BROKER_DELIVERY_LIMIT), so that records released again and again are
archived within a run."""
assert DELIVERY_LIMIT < BROKER_DELIVERY_LIMIT


def _ignored(kinds: frozenset[str] | None) -> tuple[str, ...]:
    # Every kind named, queue's and transactions', in the tables' order.
    return tuple(k for k in KINDS + TXN_KINDS if k in (kinds or ()))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueOptions:
    """The queue workload's options: its producers, its consumers, its transactions and
    the anomaly kinds its checks report without counting."""

    producer_acks: str = option(
        "all", "queue: the producers' acks", choices=("all", "1"), metavar="all|1"
    )
    idempotence: bool = option(
        False, "queue: idempotent producers (they retry; else one attempt each)"
    )
    consumer_group: bool = option(
        False,
        "queue: consumers are assigned partitions, or subscribe in one consumer group",
        "--sub-via",
        choices=SUB_VIA,
        to_field=lambda via: via == "subscribe",
        to_cli=lambda grouped: "subscribe" if grouped else "assign",
        aliases={"--consumer-group": ("subscribe", "queue: the same as --sub-via subscribe")},
    )
    group_protocol: str = option(
        "classic",
        "with --sub-via subscribe: the rebalance protocol, classic or consumer (KIP-848; "
        "Kafka 4.0 and later)",
        choices=GROUP_PROTOCOLS,
    )
    auto_commit: bool = option(
        False,
        "with --sub-via subscribe: librdkafka commits the positions every 5 s (else commit ops do)",
    )
    auto_offset_reset: str = option(
        "earliest",
        "with --sub-via subscribe: where the group starts in a partition it has no committed "
        "offset for (latest, Kafka's default, skips what was sent to a partition added "
        "under the group before the group found it: documented, KAFKA-20539)",
        choices=OFFSET_RESETS,
    )
    txn: bool = option(False, "queue: each op a Kafka transaction of 1 to 4 sends and polls")
    abort_p: float = option(
        0.1,
        "with --txn: the probability of aborting a transaction on purpose",
        type=probability,
        metavar="P",
    )
    isolation_level: str = option(
        "read_committed",
        "queue: what consumers read of transactions (the final drains read committed records only)",
        choices=("read_committed", "read_uncommitted"),
    )
    client: str = option(
        "librdkafka",
        "with --txn: the Kafka client the transactions run through: librdkafka "
        f"(confluent-kafka; transactions v1) or java (kafka-clients {KAFKA_CLIENTS_VERSION}, "
        "transactions v2 where the brokers have it: 4.x)",
        choices=CLIENTS,
    )
    ww_deps: bool = option(
        False,
        "queue: the transaction checks order writes by offset too (Jepsen's :ww-deps), so "
        "that a G1c may join a ww edge to a wr one (allowed, as Jepsen allows it; a G1c "
        "of reads alone still counts)",
    )
    ignore: tuple[str, ...] = option(
        (),
        IGNORE_HELP + " (queue's and transactions' kinds; test.json keeps every one)",
        type=anomaly_kinds,
        metavar="KIND,...",
        to_field=_ignored,
        to_cli=lambda kinds: frozenset(kinds) or None,
        shown_default="none",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareOptions:
    """The share workload's options: what its consumers do with a record, and the
    group's delivery count limit (recorded so `harness check` judges by it)."""

    release_p: float = option(
        0.2,
        "share: the probability that a consumer releases a record it polled (delivered "
        "again) instead of accepting it",
        type=probability,
        metavar="P",
    )
    reject_p: float = option(
        0.05,
        "share: the probability that it rejects the record (archived)",
        type=probability,
        metavar="P",
    )
    share_auto_offset_reset: str = option(
        "earliest",
        "share: the group's share.auto.offset.reset (latest, Kafka's default, skips what was "
        "sent before the group first fetched a partition; before 4.4.0 also what was sent "
        "to a partition added to a topic the group knew: KAFKA-20742)",
        "--share-auto-offset-reset",
        choices=OFFSET_RESETS,
    )
    delivery_limit: int = option(
        DELIVERY_LIMIT,
        "share: the group's delivery count limit, 2 to 10 (a record delivered N times is "
        f"archived; Kafka's default is {BROKER_DELIVERY_LIMIT})",
        type=int,
        choices=range(2, 11),
        metavar="N",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class NatsOptions:
    """The NATS servers' options (with --db nats): their release and how often they
    fsync."""

    version: str = option(
        DEFAULT_NATS_VERSION,
        "with --db nats: the nats-server release (2.12.1: Jepsen's)",
        "--nats-version",
        choices=NATS_VERSIONS,
    )
    sync: str = option(
        "default",
        "with --db nats: when the servers fsync (default: NATS's sync_interval, 2 minutes; "
        "always: every write)",
        "--nats-sync",
        choices=NATS_SYNCS,
    )
    kv_reads: str = option(
        "leader",
        "with --db nats, kv: where the bucket's reads go: the stream leader, or any replica "
        "through Direct Get (documented as not read-your-writes: a variant that must fail)",
        "--nats-kv-reads",
        choices=NATS_KV_READS,
    )
    publish: str = option(
        "once",
        "with --db nats, queue: how a send publishes: once; retry, asked again after a "
        "time-out (a timed-out publish the stream stored is stored twice); msg-id, asked "
        "again with the same Nats-Msg-Id, which JetStream deduplicates",
        "--nats-publish",
        choices=NATS_PUBLISH,
    )
