"""Admin queries on a running cluster through confluent-kafka's AdminClient:
live brokers, the controller, each partition's leader and ISR, topic creation.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from itertools import count
from typing import Any

from confluent_kafka import ElectionType, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewPartitions, NewTopic

from nemesis.cluster import PartitionState

# librdkafka reports every refused connection; during faults that is expected
# noise, so it goes to this logger (a run's log file), not to the terminal.
KAFKA_LOG = logging.getLogger("harness.kafka")
KAFKA_LOG.addHandler(logging.NullHandler())
KAFKA_LOG.propagate = False


CREATE_TOPIC_S = 60.0
"""How long topic creation is tried again after time-outs (a loaded controller)."""
METADATA_WAIT_S = 15.0
"""How long a topic that already exists may take to show in the brokers' metadata."""
_RETRIABLE_CREATE = {
    KafkaError._TIMED_OUT,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NOT_CONTROLLER,
    KafkaError._TRANSPORT,
}


class AdminError(RuntimeError):
    """A query or topic operation did not succeed within its time bound."""


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """What the cluster reports about itself at one moment."""

    brokers: dict[int, str]
    controller: int
    topics: dict[str, list[PartitionState]]


def client_config(bootstrap: str) -> dict[str, Any]:
    """Returns the librdkafka settings every harness client shares (short, bounded timeouts)."""
    return {
        "bootstrap.servers": bootstrap,
        "socket.timeout.ms": 5000,
        "socket.connection.setup.timeout.ms": 1000,
        "reconnect.backoff.max.ms": 1000,
        "logger": KAFKA_LOG,
    }


def _topics(md: Any) -> dict[str, list[PartitionState]]:
    """Takes librdkafka's cluster metadata. Returns each topic's partitions in order."""
    return {
        name: sorted(
            (
                PartitionState(p.id, p.leader, tuple(p.replicas), tuple(sorted(p.isrs)))
                for p in t.partitions.values()
            ),
            key=lambda s: s.partition,
        )
        for name, t in md.topics.items()
    }


class Admin:
    """Answers questions about a cluster and creates topics."""

    def __init__(self, bootstrap: str, timeout: float = 5.0) -> None:
        self._client = AdminClient(client_config(bootstrap))
        self._timeout = timeout

    def metadata(self) -> ClusterMetadata:
        """Returns the brokers, controller and topics the cluster reports now."""
        try:
            md = self._client.list_topics(timeout=self._timeout)
        except KafkaException as err:
            raise AdminError(f"no metadata from the cluster: {err}") from err
        topics = {name: parts for name, parts in _topics(md).items() if not name.startswith("__")}
        brokers = {b.id: f"{b.host}:{b.port}" for b in md.brokers.values()}
        return ClusterMetadata(brokers=brokers, controller=md.controller_id, topics=topics)

    def assignments(self) -> dict[str, list[PartitionState]]:
        """Returns every topic's partitions, the internal ones (__consumer_offsets,
        __transaction_state) too, with their replicas, leaders and ISRs."""
        try:
            md = self._client.list_topics(timeout=self._timeout)
        except KafkaException as err:
            raise AdminError(f"no metadata from the cluster: {err}") from err
        return _topics(md)

    def brokers(self) -> list[int]:
        """Returns the ids of the brokers registered (alive) now."""
        return sorted(self.metadata().brokers)

    def controller(self) -> int:
        """Returns the controller's broker id (-1 while there is none)."""
        return self.metadata().controller

    def partitions(self, topic: str) -> list[PartitionState]:
        """Returns each partition of topic with its leader and ISR."""
        try:
            return self.metadata().topics[topic]
        except KeyError:
            raise AdminError(f"no topic {topic!r} in the cluster's metadata") from None

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        """Moves each partition of topic's leadership to its preferred replica (the first
        of its assignment) where that replica is in sync. Returns partition -> "" when it
        was moved or already there, else the broker's reason."""
        parts = [TopicPartition(topic, p.partition) for p in self.partitions(topic)]
        # No timeout arguments: confluent-kafka 2.16's binding rejects them (SystemError);
        # the wait on the result below bounds the call instead.
        future = self._client.elect_leaders(ElectionType.PREFERRED, parts)
        try:
            answers = future.result(timeout=self._timeout * 2)
        except KafkaException as err:
            raise AdminError(f"preferred leader election on {topic!r} failed: {err}") from err
        return {
            tp.partition: "" if err is None or "ELECTION_NOT_NEEDED" in str(err) else str(err)
            for tp, err in answers.items()
        }

    def create_topic(
        self, name: str, assignment: list[list[int]], config: dict[str, str] | None = None
    ) -> None:
        """Creates topic name with an explicit replica assignment (the first replica of
        each partition is its preferred leader) and topic-level config. A time-out is
        tried again for up to CREATE_TOPIC_S: the attempt may have landed, so on a retry
        the topic already existing with this very assignment is success."""
        # The binding rejects an assignment with the default partition count of -1.
        topic = NewTopic(
            name, num_partitions=len(assignment), replica_assignment=assignment, config=config or {}
        )
        deadline = time.monotonic() + CREATE_TOPIC_S
        for attempt in count():
            futures = self._client.create_topics([topic], request_timeout=self._timeout)
            try:
                futures[name].result(timeout=self._timeout * 2)
                return
            except KafkaException as err:
                code = err.args[0].code() if err.args else None
                if code == KafkaError.TOPIC_ALREADY_EXISTS:
                    if attempt > 0 and self._has_assignment(name, assignment):
                        return
                    raise AdminError(f"could not create topic {name!r}: {err}") from err
                if code not in _RETRIABLE_CREATE or time.monotonic() >= deadline:
                    raise AdminError(f"could not create topic {name!r}: {err}") from err
                KAFKA_LOG.warning("creating topic %s: %s; trying again", name, err)

    def create_partitions(self, name: str, total: int) -> None:
        """Grows topic name to total partitions (CreatePartitions; the controller places
        the new replicas). A time-out is tried again for up to CREATE_TOPIC_S: the attempt
        may have landed, so on a retry a topic that already has total partitions is
        success. Raises AdminError when the cluster refuses."""
        deadline = time.monotonic() + CREATE_TOPIC_S
        for attempt in count():
            futures = self._client.create_partitions(
                [NewPartitions(name, total)], request_timeout=self._timeout
            )
            try:
                futures[name].result(timeout=self._timeout * 2)
                return
            except KafkaException as err:
                code = err.args[0].code() if err.args else None
                grown = code == KafkaError.INVALID_PARTITIONS and attempt > 0
                if grown and len(self.partitions(name)) == total:
                    return
                if code not in _RETRIABLE_CREATE or time.monotonic() >= deadline:
                    raise AdminError(
                        f"could not grow {name!r} to {total} partitions: {err}"
                    ) from err
                KAFKA_LOG.warning("growing topic %s: %s; trying again", name, err)

    def _has_assignment(self, name: str, assignment: list[list[int]]) -> bool:
        # A topic just created may not be in the metadata brokers answer with yet.
        deadline = time.monotonic() + METADATA_WAIT_S
        while True:
            try:
                parts = self.partitions(name)
            except AdminError:
                parts = []
            if len(parts) == len(assignment):
                return [list(p.replicas) for p in parts] == assignment
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.25)

    def wait_full_isr(self, topic: str, timeout: float) -> list[PartitionState]:
        """Waits until every partition of topic has a leader and all replicas in its ISR;
        returns the partitions, or raises AdminError after timeout seconds."""
        deadline = time.monotonic() + timeout
        last = "no metadata yet"
        while time.monotonic() < deadline:
            try:
                parts = self.partitions(topic)
            except AdminError as err:
                last = str(err)
            else:
                last = "; ".join(
                    f"p{p.partition} leader {p.leader} isr {list(p.isr)}" for p in parts
                )
                whole = all(p.leader >= 0 and set(p.isr) == set(p.replicas) for p in parts)
                if parts and whole:
                    lagging = self._broker_without(topic, len(parts))
                    if lagging is None:
                        return parts
                    last = f"broker {lagging} does not know it whole yet"
            time.sleep(0.25)
        raise AdminError(f"topic {topic!r} has no full ISR after {timeout:.0f} s ({last})")

    def _broker_without(self, topic: str, partitions: int) -> str | None:
        # A broker learns a new topic from the controller a moment after the others; a
        # client whose first metadata came from that broker is told the topic does not
        # exist (UNKNOWN_TOPIC_OR_PART), which the store takes as definite. A client made
        # with one bootstrap address asks that broker first, so each is asked in turn.
        # Returns the address of a broker that does not know all partitions, or None.
        for address in self.metadata().brokers.values():
            try:
                parts = Admin(address, timeout=self._timeout).partitions(topic)
            except AdminError:
                return address
            if len(parts) != partitions:
                return address
        return None
