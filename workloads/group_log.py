"""What a consumer group did to one consumer between two of its ops: the rebalance callbacks
(assigned, revoked, lost) and the auto-commit reports, each at the moment it was served.

librdkafka serves these callbacks inside the consumer's poll (and close, which no op
records), so each lands in the completion of the op that served it. Their times are
`time.monotonic_ns()`, the history writer's clock before it subtracts the run's start;
the completion carries `mono-ns`, the clock when the client returned, so that a checker
can place them on the history's time line (checkers/groups/consumer_history.py); a poll's, beside
them, `first-record-ns`, when its first record was handed over, which tells whether a
partition revoked and assigned again in one op was read before or after.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from workloads.core import OpDict, fail, info, ok

RebalanceEvent = dict[str, Any]
# A commit the coordinator refused, or librdkafka never sent: certainly not applied. A
# time-out or a lost connection may have been applied, and is info.
_NOT_COMMITTED = frozenset(
    {
        KafkaError.ILLEGAL_GENERATION,
        KafkaError.UNKNOWN_MEMBER_ID,
        KafkaError.REBALANCE_IN_PROGRESS,
        KafkaError.FENCED_MEMBER_EPOCH,
        KafkaError.STALE_MEMBER_EPOCH,
        KafkaError._NO_OFFSET,
        KafkaError._ASSIGNMENT_LOST,
        KafkaError._STATE,
    }
)


class GroupLog:
    """Gathers one consumer's callbacks until the op that served them completes."""

    def __init__(self) -> None:
        self._events: list[RebalanceEvent] = []
        self._commits: list[RebalanceEvent] = []
        self._moved: dict[str, list[int]] = {"assigned": [], "revoked": []}

    def assigned_by_hand(self, partitions: list[int]) -> None:
        """Takes partitions the client assigned itself (no group): recorded as moved."""
        self._moved["assigned"] += partitions

    def on_assign(self, _: Consumer, parts: list[TopicPartition]) -> None:
        """The group gave the consumer parts (librdkafka's on_assign)."""
        self._moved["assigned"] += [tp.partition for tp in parts]
        self._event("assigned", parts)

    def on_revoke(self, _: Consumer, parts: list[TopicPartition]) -> None:
        """The consumer gave parts back (on_revoke): it was still a member."""
        self._moved["revoked"] += [tp.partition for tp in parts]
        self._event("revoked", parts)

    def on_lost(self, _: Consumer, parts: list[TopicPartition]) -> None:
        """The consumer learnt it no longer holds parts (on_lost: fenced, its session
        expired); to the queue checker that is a revocation like any other."""
        self._moved["revoked"] += [tp.partition for tp in parts]
        self._event("lost", parts)

    def on_commit(self, error: KafkaError | None, parts: list[TopicPartition]) -> None:
        """An offset commit ended (on_commit; registered under auto-commit only)."""
        offsets = {str(tp.partition): tp.offset for tp in parts if tp.error is None}
        entry: RebalanceEvent = {"offsets": offsets, "mono-ns": time.monotonic_ns()}
        failed = [tp.partition for tp in parts if tp.error is not None]
        if error is not None or failed:
            entry["error"] = f"{error.name()}: {error.str()}" if error else f"failed: {failed}"
        self._commits.append(entry)

    def take(self) -> OpDict:
        """Returns the completion fields of what was gathered, and forgets it: `rebalanced`
        (the queue checker's), `group-log` and `auto-commits` with `mono-ns`."""
        fields: OpDict = {}
        if self._moved["assigned"] or self._moved["revoked"]:
            fields["rebalanced"] = self._moved
            self._moved = {"assigned": [], "revoked": []}
        if self._events:
            fields["group-log"], self._events = self._events, []
        if self._commits:
            fields["auto-commits"], self._commits = self._commits, []
        if "group-log" in fields or "auto-commits" in fields:
            fields["mono-ns"] = time.monotonic_ns()
        return fields

    def _event(self, kind: str, parts: list[TopicPartition]) -> None:
        if not parts:  # an empty callback (eager's first revoke, say) moves nothing
            return
        partitions = sorted(tp.partition for tp in parts)
        now = time.monotonic_ns()
        self._events.append({"type": kind, "partitions": partitions, "mono-ns": now})


def commit_positions(consumer: Consumer, within: float) -> OpDict | None:
    """Commits the consumer's positions in the partitions it holds, synchronously, waiting
    at most `within` seconds. Returns the commit op's completion, whose value is the
    offsets asked to commit (partition -> the next offset to read): ok, fail when
    certainly refused, else info; an ok commit some of whose partitions were certainly
    refused keeps the others and names those. Returns None when the commit did not return
    in time: librdkafka's synchronous commit has no time-out and waits for as long as the
    group coordinator is unreachable (a partition-coordinator run hung on it: the fault is
    healed only after the workload, which waited for the commit); the caller records it
    info and gives up the consumer, whose commit is left to its daemon thread."""
    held = consumer.assignment()
    positions = [tp for tp in consumer.position(held) if tp.offset >= 0]
    offsets = {str(tp.partition): tp.offset for tp in positions}
    if not positions:  # nothing read yet: nothing to commit, nothing sent
        return ok({})
    answer: list[Any] = []

    def commit() -> None:
        try:
            answer.append(consumer.commit(offsets=positions, asynchronous=False))
        except KafkaException as err:
            answer.append(err)

    committer = threading.Thread(target=commit, name="consumer-commit", daemon=True)
    committer.start()
    committer.join(within)
    if not answer:
        return None
    done = answer[0]
    if isinstance(done, KafkaException):
        return commit_refused(done.args[0], offsets)
    refused = {str(tp.partition): tp.error for tp in done or [] if tp.error is not None}
    if not refused:
        return ok(offsets)
    if any(e.code() not in _NOT_COMMITTED for e in refused.values()):
        return info(f"partitions refused: {sorted(refused)}", offsets)
    landed = {p: o for p, o in offsets.items() if p not in refused}
    return ok(landed) | {"refused": sorted(refused)}


def commit_refused(error: KafkaError, offsets: dict[str, int]) -> OpDict:
    """Takes the error a commit raised and the offsets it asked for. Returns the commit's
    completion: fail when the coordinator certainly refused it, else info."""
    what = f"{error.name()}: {error.str()}"
    if error.code() in _NOT_COMMITTED:
        return fail(what, offsets)
    return info(what, offsets)
