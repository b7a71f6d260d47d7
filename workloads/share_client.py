"""One process of the share workload: a producer and a ShareConsumer in the run's share
group (KIP-932, confluent-kafka's explicit acknowledgement mode), turning what they did
into completions.

A send is the queue workload's (queue_client.send_message). A poll takes what the share
group hands over and records every record as a delivery [partition, offset, message,
delivery count]; it then acknowledges each, ACCEPT, RELEASE or REJECT as the client's
dice say, and commits the acknowledgements with commit_sync, recording each partition's
result (None, or the error) and what the acknowledgement commit callback reported. The
op is ok when every partition's commit came back ok, info when one did not (the broker
may still have applied it). Each step's time is `time.monotonic_ns()`, the history's
clock before the run's start is subtracted (checkers/groups/share_history.py reads them back).
With `--crash-clients` a poll that is due to crash walks away after the poll, holding its
records unacknowledged: the group must hand them to someone else once their locks expire
or the member leaves. A drain accepts everything until nothing comes for a while.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from confluent_kafka import (
    AcknowledgeType,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    ShareConsumer,
    TopicPartition,
)

from kvstore.kafka_log import KAFKA_LOG, client_config, client_error, close_within
from workloads.core import OpDict, fail, info, ok
from workloads.queue_client import QueueSettings, producer_config, send_message
from workloads.txn_rules import CrashClock

POLL_S = 0.1
COMMIT_S = 10.0
DRAIN_MAX_S = 60.0
ACK_TYPES = {
    "accept": AcknowledgeType.ACCEPT,
    "release": AcknowledgeType.RELEASE,
    "reject": AcknowledgeType.REJECT,
}
CRASHED_HOLDING = "crashed after the poll (--crash-clients): its records never acknowledged"
Round = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareSettings:
    """How the share workload's clients talk to Kafka, and how they acknowledge."""

    queue: QueueSettings
    """The producer's settings and the topic."""
    group: str
    release_p: float
    """The probability that a poll's record is released (redelivered) instead of accepted."""
    reject_p: float
    """The probability that it is rejected (archived) instead."""
    drain_idle_s: float
    """A drain ends once nothing has come for this long: longer than a record lock."""


def share_consumer_config(s: ShareSettings, client_id: str) -> dict[str, Any]:
    """Returns a share consumer's settings: the group, explicit acknowledgement."""
    return client_config(s.queue.bootstrap, f"{client_id}-share", s.queue.timeouts) | {
        "group.id": s.group,
        "share.acknowledgement.mode": "explicit",
    }


def choose_ack(rng: random.Random, release_p: float, reject_p: float) -> str:
    """Takes a random source and the probabilities. Returns accept, release or reject."""
    r = rng.random()
    if r < release_p:
        return "release"
    if r < release_p + reject_p:
        return "reject"
    return "accept"


class AckReports:
    """Gathers what the acknowledgement commit callback reported until a round takes it."""

    def __init__(self) -> None:
        self._reports: list[dict[str, Any]] = []

    def on_commit(self, offsets: dict[TopicPartition, set[int]], error: Any) -> None:
        """The broker answered an acknowledgement commit (the callback's signature)."""
        for tp, acked in offsets.items():
            entry: dict[str, Any] = {"partition": tp.partition, "offsets": sorted(acked)}
            entry["error"] = None if error is None else str(error)
            entry["mono-ns"] = time.monotonic_ns()
            self._reports.append(entry)

    def take(self) -> list[dict[str, Any]]:
        """Returns the reports gathered, and forgets them."""
        taken, self._reports = self._reports, []
        return taken


class ShareClient:
    """A Client doing send, poll and drain ops in one share group."""

    def __init__(
        self, settings: ShareSettings, client_id: str, crash_every_s: float | None = None
    ) -> None:
        self._s = settings
        self._client_id = client_id
        self._failure: str | None = None
        # Seeded by who the client is, so a run's seed gives the same draws.
        self._rng = random.Random(f"{client_id}-acks")
        self._crash = CrashClock(crash_every_s, random.Random(client_id))
        on_error = partial(client_error, self._fail)
        config = producer_config(settings.queue, client_id) | {"error_cb": on_error}
        self._producer = Producer(config)
        self._reports = AckReports()
        self._consumer: ShareConsumer | None = None

    @property
    def failure(self) -> str | None:
        """Returns why this client serves no more ops (a fatal error, a crash)."""
        return self._failure

    def _fail(self, why: str) -> None:
        if self._failure is None:
            self._failure = why

    def invoke(self, op: OpDict) -> OpDict:
        """Takes an invoke. Returns its completion; never raises."""
        handlers = {"send": self._send, "poll": self._poll, "drain": self._drain}
        try:
            completion = handlers[op["f"]](op)
        except KafkaException as err:  # raised before anything was handed over or sent
            return fail(f"KafkaException: {err}", op.get("value"))
        except Exception as err:  # an unknown outcome: never guess ok or fail
            return info(f"{type(err).__name__}: {err}", op.get("value"))
        # Beside the rounds' readings: how checkers/group_history.clock_start places them.
        completion["member"] = self._client_id
        completion["mono-ns"] = time.monotonic_ns()
        return completion

    def close(self) -> None:
        """Closes the producer and the share consumer (which leaves the group, releasing
        what it holds); never raises."""
        try:
            self._producer.flush(self._s.queue.timeouts.close)
        except KafkaException as err:
            KAFKA_LOG.warning("a producer did not flush on close: %s", err)
        if self._consumer is not None:
            close_within(self._consumer, self._s.queue.timeouts.close)

    def _send(self, op: OpDict) -> OpDict:
        return send_message(self._producer, self._s.queue, op)

    def _joined(self) -> ShareConsumer:
        if self._consumer is None:
            consumer = ShareConsumer(share_consumer_config(self._s, self._client_id))
            consumer.set_acknowledgement_commit_callback(self._reports.on_commit)
            consumer.subscribe([self._s.queue.topic])
            self._consumer = consumer
        return self._consumer

    def _poll(self, _op: OpDict) -> OpDict:
        """Polls once; acknowledges and commits what came, unless a crash is due."""
        consumer = self._joined()
        if self._crash.due():
            taken, _ = self._take(consumer)
            self._fail("crashed on purpose (--crash-clients)")
            return ok([taken]) | {"crashed": CRASHED_HOLDING}
        done = self._round(
            consumer, lambda: choose_ack(self._rng, self._s.release_p, self._s.reject_p)
        )
        return _completion([done])

    def _drain(self, _op: OpDict) -> OpDict:
        """Polls and accepts until nothing has come for drain_idle_s (ok), or DRAIN_MAX_S
        has passed (info: the group may still hold records)."""
        consumer = self._joined()
        rounds: list[Round] = []
        started = last = time.monotonic()
        while time.monotonic() - last < self._s.drain_idle_s:
            if time.monotonic() - started > DRAIN_MAX_S:
                return info(f"still delivering after {DRAIN_MAX_S:g} s", rounds)
            done = self._round(consumer, lambda: "accept")
            if done["deliveries"]:
                rounds.append(done)
                last = time.monotonic()
        completion = _completion(rounds)
        if completion["type"] != "ok":
            return info("a commit of the drain's acknowledgements did not come back ok", rounds)
        return completion

    def _take(self, consumer: ShareConsumer) -> tuple[Round, list[Message]]:
        """Polls once. Returns the round so far (its deliveries, when the poll began and
        returned, any errors it carried, the callback's reports) and the records handed
        over."""
        began = time.monotonic_ns()
        batch = consumer.poll(POLL_S)
        taken: Round = {"began-ns": began, "polled-ns": time.monotonic_ns(), "deliveries": []}
        messages = []
        for msg in batch:
            if (error := msg.error()) is not None:
                taken.setdefault("errors", []).append(f"{error.name()}: {error.str()}")
                continue
            taken["deliveries"].append(_delivery(msg))
            messages.append(msg)
        taken["ack-reports"] = self._reports.take()
        return taken, messages

    def _round(self, consumer: ShareConsumer, choose: Callable[[], str]) -> Round:
        """Polls once, acknowledges each record as choose() says and commits. Returns the
        round: deliveries, acks, `committed` (partition -> None or the error), times."""
        taken, messages = self._take(consumer)
        if not messages:
            return taken
        acks = []
        for msg in messages:
            kind = choose()
            consumer.acknowledge(msg, ACK_TYPES[kind])
            acks.append([msg.partition(), msg.offset(), kind])
        taken["acks"] = acks
        taken["acked-ns"] = time.monotonic_ns()
        try:
            results = consumer.commit_sync(COMMIT_S)
        except KafkaException as err:
            taken["commit-error"] = _error_text(err.args[0])
            results = {}
        taken["committed-ns"] = time.monotonic_ns()
        taken["committed"] = {
            str(tp.partition): None if e is None else _error_text(e.args[0])
            for tp, e in results.items()
        }
        taken["ack-reports"] += self._reports.take()
        return taken


def _completion(rounds: list[Round]) -> OpDict:
    """Takes a poll's or a drain's rounds. Returns ok when every acknowledged partition's
    commit came back ok, else info (an acknowledgement may still have been applied)."""
    for done in rounds:
        asked = {str(p) for p, _, _ in done.get("acks", [])}
        committed = done.get("committed", {})
        unsure = [p for p in asked if p not in committed or committed[p] is not None]
        if "commit-error" in done or unsure:
            why = done.get("commit-error") or f"partitions not committed ok: {sorted(unsure)}"
            return info(why, rounds)
    return ok(rounds)


def _delivery(msg: Message) -> list[Any]:
    raw = msg.value() or b""
    try:
        value: int | str = int(raw)
    except ValueError:  # not one of ours: recorded as it is, the checker says so
        value = raw.decode(errors="replace")
    return [msg.partition(), msg.offset(), value, msg.delivery_count()]


def _error_text(error: Any) -> str:
    if isinstance(error, KafkaError):
        return f"{error.name()}: {error.str()}"
    return str(error)
