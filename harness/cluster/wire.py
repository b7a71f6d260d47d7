"""The few Kafka protocol requests the harness sends itself, to one node it chooses:
DescribeQuorum (v1), Metadata (v12), ApiVersions (v3) and AlterPartitionReassignments
(v0). confluent-kafka cannot describe the KRaft quorum or reorder a partition's
replicas, and it answers metadata from whichever broker it likes and without leader
epochs; these can.

Only the flexible (compact) encodings these versions use are here. Every read is
bounded by the frame the node sent: a short or malformed frame raises WireError.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from itertools import count

API_VERSIONS, METADATA, ALTER_REASSIGNMENTS, DESCRIBE_QUORUM = 18, 3, 45, 55
METADATA_TOPIC = "__cluster_metadata"
_CLIENT_ID = b"kafka-harness"
_MAX_FRAME = 16 * 2**20
_correlation = count(1)


class WireError(RuntimeError):
    """A node did not answer, or answered something that cannot be read."""


class Writer:
    """Builds a request body in Kafka's flexible encoding."""

    def __init__(self) -> None:
        self.data = bytearray()

    def int16(self, value: int) -> Writer:
        """Appends a big-endian INT16."""
        self.data += struct.pack(">h", value)
        return self

    def int32(self, value: int) -> Writer:
        """Appends a big-endian INT32."""
        self.data += struct.pack(">i", value)
        return self

    def uvarint(self, value: int) -> Writer:
        """Appends an unsigned varint."""
        while value >= 0x80:
            self.data.append((value & 0x7F) | 0x80)
            value >>= 7
        self.data.append(value)
        return self

    def string(self, text: str) -> Writer:
        """Appends a COMPACT_STRING."""
        raw = text.encode()
        return self.uvarint(len(raw) + 1).raw(raw)

    def array_length(self, length: int) -> Writer:
        """Appends a COMPACT_ARRAY's length (-1 for null)."""
        return self.uvarint(length + 1)

    def no_tags(self) -> Writer:
        """Appends an empty tagged-field section."""
        return self.uvarint(0)

    def raw(self, data: bytes) -> Writer:
        """Appends bytes as they are."""
        self.data += data
        return self


class Reader:
    """Reads a response body in Kafka's flexible encoding."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._at = 0

    def _take(self, size: int) -> bytes:
        if size < 0 or self._at + size > len(self._data):
            raise WireError(f"the answer ends early (wanted {size} bytes at {self._at})")
        chunk = bytes(self._data[self._at : self._at + size])
        self._at += size
        return chunk

    def int8(self) -> int:
        """Reads an INT8 (a BOOLEAN too)."""
        return int(struct.unpack(">b", self._take(1))[0])

    def int16(self) -> int:
        """Reads an INT16."""
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        """Reads an INT32."""
        return int(struct.unpack(">i", self._take(4))[0])

    def int64(self) -> int:
        """Reads an INT64."""
        return int(struct.unpack(">q", self._take(8))[0])

    def uvarint(self) -> int:
        """Reads an unsigned varint (at most 5 bytes, as Kafka writes them)."""
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise WireError("a varint longer than 5 bytes")

    def string(self) -> str | None:
        """Reads a COMPACT_NULLABLE_STRING (a COMPACT_STRING too)."""
        length = self.uvarint() - 1
        return None if length < 0 else self._take(length).decode(errors="replace")

    def array_length(self) -> int:
        """Reads a COMPACT_ARRAY's length (0 for null)."""
        return max(0, self.uvarint() - 1)

    def uuid(self) -> bytes:
        """Reads a UUID."""
        return self._take(16)

    def tags(self) -> dict[int, bytes]:
        """Reads a tagged-field section; returns tag -> its raw bytes."""
        return {self.uvarint(): self._take(self.uvarint()) for _ in range(self.uvarint())}

    def int32_array(self) -> tuple[int, ...]:
        """Reads a COMPACT_ARRAY of INT32."""
        return tuple(self.int32() for _ in range(self.array_length()))


def request(
    address: str, port: int, api_key: int, version: int, body: bytes, timeout: float
) -> Reader:
    """Sends one request (header v2) to address:port and returns a Reader of its
    answer's body (past the response header: v0 for ApiVersions, else v1). Raises
    WireError when the node does not answer within timeout seconds."""
    correlation = next(_correlation) & 0x7FFFFFFF
    header = (
        Writer()
        .int16(api_key)
        .int16(version)
        .int32(correlation)
        .int16(len(_CLIENT_ID))
        .raw(_CLIENT_ID)
        .no_tags()
    )
    frame = bytes(header.data) + body
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            size = struct.unpack(">i", _read_exactly(sock, 4))[0]
            if not 0 < size <= _MAX_FRAME:
                raise WireError(f"{address}:{port} sent a frame of {size} bytes")
            answer = Reader(_read_exactly(sock, size))
    except OSError as err:
        raise WireError(f"{address}:{port} did not answer: {err}") from err
    if answer.int32() != correlation:
        raise WireError(f"{address}:{port} answered another request")
    if api_key != API_VERSIONS:
        answer.tags()
    return answer


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise WireError("the connection closed mid-answer")
        chunks += chunk
    return bytes(chunks)


@dataclass(frozen=True, slots=True)
class ReplicaState:
    """One replica of the metadata log as the quorum's leader sees it."""

    node_id: int
    log_end_offset: int
    last_fetch_ms: int
    """The leader's wall clock (ms) at this replica's last fetch; -1 when unknown."""
    last_caught_up_ms: int


@dataclass(frozen=True, slots=True)
class QuorumAnswer:
    """A controller's answer to DescribeQuorum: error 0 only from a leader."""

    error: int
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaState, ...]
    observers: tuple[ReplicaState, ...]


def describe_quorum_body() -> bytes:
    """Returns a DescribeQuorum v1 body asking about the metadata partition."""
    body = Writer().array_length(1).string(METADATA_TOPIC).array_length(1).int32(0)
    return bytes(body.no_tags().no_tags().no_tags().data)


def read_describe_quorum(answer: Reader) -> QuorumAnswer:
    """Takes a DescribeQuorum v1 answer's body. Returns the metadata partition's state,
    the top-level error when there is one, else the partition's."""
    error = answer.int16()
    found = QuorumAnswer(error, -1, -1, -1, (), ())
    for _ in range(answer.array_length()):
        answer.string()
        for _ in range(answer.array_length()):
            answer.int32()
            part_error = answer.int16()
            leader, epoch, hw = answer.int32(), answer.int32(), answer.int64()
            voters, observers = _replicas(answer), _replicas(answer)
            answer.tags()
            found = QuorumAnswer(error or part_error, leader, epoch, hw, voters, observers)
        answer.tags()
    answer.tags()
    return found


def _replicas(answer: Reader) -> tuple[ReplicaState, ...]:
    replicas = []
    for _ in range(answer.array_length()):
        replica = ReplicaState(answer.int32(), answer.int64(), answer.int64(), answer.int64())
        answer.tags()
        replicas.append(replica)
    return tuple(replicas)


def describe_quorum(address: str, port: int, timeout: float) -> QuorumAnswer:
    """Asks one controller (its controller listener) about the metadata quorum."""
    body = describe_quorum_body()
    return read_describe_quorum(request(address, port, DESCRIBE_QUORUM, 1, body, timeout))


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition as one broker's metadata cache holds it."""

    error: int
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


def metadata_body(topic: str) -> bytes:
    """Returns a Metadata v12 body asking about one topic, creating nothing."""
    body = Writer().array_length(1).raw(bytes(16)).string(topic).no_tags()
    return bytes(body.raw(b"\x00\x00").no_tags().data)


def read_metadata(answer: Reader, topic: str) -> tuple[int, list[PartitionMetadata]]:
    """Takes a Metadata v12 answer's body. Returns the topic's error code and its
    partitions."""
    answer.int32()
    for _ in range(answer.array_length()):
        answer.int32(), answer.string(), answer.int32(), answer.string()
        answer.tags()
    answer.string()
    answer.int32()
    error, partitions = -1, []
    for _ in range(answer.array_length()):
        topic_error, name = answer.int16(), answer.string()
        answer.uuid(), answer.int8()
        parts = []
        for _ in range(answer.array_length()):
            part_error, index, leader, epoch = (
                answer.int16(),
                answer.int32(),
                answer.int32(),
                answer.int32(),
            )
            replicas, isr = answer.int32_array(), answer.int32_array()
            answer.int32_array()
            answer.tags()
            parts.append(PartitionMetadata(part_error, index, leader, epoch, replicas, isr))
        answer.int32()
        answer.tags()
        if name == topic:
            error, partitions = topic_error, parts
    answer.tags()
    return error, partitions


def metadata(address: str, port: int, topic: str, timeout: float) -> list[PartitionMetadata]:
    """Asks one broker for a topic's partitions as its own metadata cache holds them.
    Raises WireError when it does not answer or does not know the topic."""
    answer = request(address, port, METADATA, 12, metadata_body(topic), timeout)
    error, partitions = read_metadata(answer, topic)
    if error != 0:
        raise WireError(f"{address}:{port} has no metadata for {topic!r} (error {error})")
    return sorted(partitions, key=lambda p: p.partition)


def api_versions_body() -> bytes:
    """Returns an ApiVersions v3 body."""
    return bytes(Writer().string("kafka-harness").string("1").no_tags().data)


def read_finalized_features(answer: Reader) -> dict[str, int]:
    """Takes an ApiVersions v3 answer's body. Returns each finalized feature's level
    (tag 2 of the answer's tagged fields)."""
    error = answer.int16()
    if error != 0:
        raise WireError(f"ApiVersions refused (error {error})")
    for _ in range(answer.array_length()):
        answer.int16(), answer.int16(), answer.int16()
        answer.tags()
    answer.int32()
    tagged = answer.tags()
    if 2 not in tagged:
        return {}
    features = Reader(tagged[2])
    found = {}
    for _ in range(features.array_length()):
        name, level = features.string(), features.int16()
        features.int16()
        features.tags()
        found[str(name)] = level
    return found


def finalized_features(address: str, port: int, timeout: float) -> dict[str, int]:
    """Asks one node for the feature levels its cluster has finalized (metadata.version,
    eligible.leader.replicas.version, ...)."""
    answer = request(address, port, API_VERSIONS, 3, api_versions_body(), timeout)
    return read_finalized_features(answer)


def reassignment_body(topic: str, replicas: dict[int, tuple[int, ...]], timeout_ms: int) -> bytes:
    """Returns an AlterPartitionReassignments v0 body moving each partition of topic to
    its replicas (preferred leader first)."""
    body = Writer().int32(timeout_ms).array_length(1).string(topic).array_length(len(replicas))
    for partition, assigned in sorted(replicas.items()):
        body.int32(partition).array_length(len(assigned))
        for broker in assigned:
            body.int32(broker)
        body.no_tags()
    return bytes(body.no_tags().no_tags().data)


def read_reassignment(answer: Reader) -> dict[int, str]:
    """Takes an AlterPartitionReassignments v0 answer's body. Returns partition -> "" when
    accepted, else the broker's error; raises WireError when the whole request was refused."""
    answer.int32()
    error, message = answer.int16(), answer.string()
    if error != 0:
        raise WireError(f"reassignment refused: error {error} ({message})")
    found = {}
    for _ in range(answer.array_length()):
        answer.string()
        for _ in range(answer.array_length()):
            partition, part_error, part_message = answer.int32(), answer.int16(), answer.string()
            answer.tags()
            found[partition] = "" if part_error == 0 else f"error {part_error} ({part_message})"
        answer.tags()
    answer.tags()
    return found


def reassign(
    address: str, port: int, topic: str, replicas: dict[int, tuple[int, ...]], timeout: float
) -> dict[int, str]:
    """Asks the controller (on KRaft any broker, which forwards it) to move partitions of
    topic to new replicas. Returns partition -> "" or the reason it was refused."""
    body = reassignment_body(topic, replicas, int(timeout * 1000))
    return read_reassignment(request(address, port, ALTER_REASSIGNMENTS, 0, body, timeout))
