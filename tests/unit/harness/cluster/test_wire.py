"""The Kafka requests the harness sends itself: answers built byte by byte as the
protocol's schemas lay them out are read back; short or foreign frames are refused;
one real request goes over a local socket to a scripted node. And the quorum's leader,
lags and freshest broker chosen from those answers (no Docker)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cluster import wire
from harness.cluster.quorum import (
    FRESH_FETCH_MS,
    freshest_broker,
    leader_answer,
    quorum_view,
)
from harness.cluster.wire import QuorumAnswer, Reader, ReplicaState, WireError, Writer


def i64(value: int) -> bytes:
    return struct.pack(">q", value)


def replicas(w: Writer, states: list[tuple[int, int, int, int]]) -> None:
    w.array_length(len(states))
    for node_id, leo, fetched, caught_up in states:
        w.int32(node_id).raw(i64(leo) + i64(fetched) + i64(caught_up)).no_tags()


def quorum_answer(error: int, leader: int, epoch: int, hw: int, part_error: int = 0) -> bytes:
    w = Writer().int16(error).array_length(1).string(wire.METADATA_TOPIC).array_length(1)
    w.int32(0).int16(part_error).int32(leader).int32(epoch).raw(i64(hw))
    replicas(w, [(101, 50, -1, -1), (102, 48, 1000, 900), (103, 20, 400, 100)])
    replicas(w, [(1, 50, 1100, 1100), (2, 49, 1050, 1000)])
    return bytes(w.no_tags().no_tags().no_tags().data)


def test_describe_quorum_request_and_answer_follow_the_v1_schema() -> None:
    body = Reader(wire.describe_quorum_body())
    assert body.array_length() == 1 and body.string() == "__cluster_metadata"
    assert body.array_length() == 1 and body.int32() == 0
    answer = wire.read_describe_quorum(Reader(quorum_answer(0, 101, 7, 49)))
    assert (answer.error, answer.leader_id, answer.leader_epoch, answer.high_watermark) == (
        0,
        101,
        7,
        49,
    )
    assert answer.voters[1] == ReplicaState(102, 48, 1000, 900)
    assert [o.node_id for o in answer.observers] == [1, 2]
    not_leader = wire.read_describe_quorum(Reader(quorum_answer(0, -1, -1, -1, part_error=6)))
    assert not_leader.error == 6


def test_metadata_answer_gives_leader_epoch_and_isr_of_the_asked_topic() -> None:
    w = Writer().int32(0).array_length(1).int32(1).string("h").int32(9092).string("r").no_tags()
    w.string("cluster").int32(1).array_length(2)
    for name, epoch in (("other", 9), ("t", 4)):
        w.int16(0).string(name).raw(bytes(16)).raw(b"\x00").array_length(1)
        w.int16(0).int32(0).int32(2).int32(epoch)
        for ids in ((1, 2, 3), (2, 3), ()):
            w.array_length(len(ids))
            for i in ids:
                w.int32(i)
        w.no_tags().int32(0).no_tags()
    error, parts = wire.read_metadata(Reader(bytes(w.no_tags().data)), "t")
    assert error == 0
    assert parts == [wire.PartitionMetadata(0, 0, 2, 4, (1, 2, 3), (2, 3))]
    request = Reader(wire.metadata_body("t"))
    assert request.array_length() == 1 and request.uuid() == bytes(16) and request.string() == "t"


def test_reassignment_request_and_answer_follow_the_v0_schema() -> None:
    body = wire.reassignment_body("store-1", {0: (3, 1, 2)}, 5000)
    # TimeoutMs, 1 topic (compact: 2), its name, 1 partition, index 0, 3 replicas (4),
    # then the partition's, the topic's and the request's empty tag sections.
    expected = struct.pack(">i", 5000) + b"\x02\x08store-1\x02" + struct.pack(">i", 0)
    expected += b"\x04" + struct.pack(">iii", 3, 1, 2) + b"\x00\x00\x00"
    assert body == expected

    w = Writer().int32(0).int16(0).array_length(-1).array_length(1).string("store-1")
    w.array_length(2).int32(0).int16(0).array_length(-1).no_tags()
    w.int32(1).int16(41).string("this is not the controller").no_tags()
    answer = bytes(w.no_tags().no_tags().data)
    assert wire.read_reassignment(Reader(answer)) == {
        0: "",
        1: "error 41 (this is not the controller)",
    }


def test_a_reassignment_refused_as_a_whole_is_a_wire_error() -> None:
    w = Writer().int32(0).int16(41).string("not the controller").array_length(0).no_tags()
    with pytest.raises(WireError, match="error 41 \\(not the controller\\)"):
        wire.read_reassignment(Reader(bytes(w.data)))


def test_finalized_features_come_from_tag_2_of_api_versions() -> None:
    features = Writer().array_length(2)
    for name, level in (("metadata.version", 33), ("eligible.leader.replicas.version", 1)):
        features.string(name).int16(level).int16(1).no_tags()
    w = Writer().int16(0).array_length(1).int16(3).int16(0).int16(12).no_tags().int32(0)
    w.uvarint(2).uvarint(1).uvarint(8).raw(i64(5))
    w.uvarint(2).uvarint(len(features.data)).raw(bytes(features.data))
    found = wire.read_finalized_features(Reader(bytes(w.data)))
    assert found == {"metadata.version": 33, "eligible.leader.replicas.version": 1}
    bare = Writer().int16(0).array_length(0).int32(0).no_tags()
    assert wire.read_finalized_features(Reader(bytes(bare.data))) == {}
    with pytest.raises(WireError, match="error 35"):
        wire.read_finalized_features(Reader(bytes(Writer().int16(35).data)))


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=200))
def test_a_cut_short_answer_is_refused_not_misread(cut: int) -> None:
    full = quorum_answer(0, 101, 7, 49)
    if cut >= len(full):
        return
    with pytest.raises(WireError):
        wire.read_describe_quorum(Reader(full[:cut]))


@settings(max_examples=60, deadline=None)
@given(value=st.integers(min_value=0, max_value=2**31 - 1))
def test_varints_round_trip(value: int) -> None:
    assert Reader(bytes(Writer().uvarint(value).data)).uvarint() == value


@pytest.fixture
def scripted_node() -> Iterator[tuple[int, list[bytes]]]:
    """A node on localhost that answers one request with a DescribeQuorum answer,
    echoing the correlation id; yields its port and the frames it received."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    received: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            size = struct.unpack(">i", conn.recv(4))[0]
            frame = b""
            while len(frame) < size:
                frame += conn.recv(size - len(frame))
            received.append(frame)
            correlation = frame[4:8]
            body = correlation + b"\x00" + quorum_answer(0, 102, 9, 60)
            conn.sendall(struct.pack(">i", len(body)) + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    thread.join(timeout=5)
    server.close()


def test_a_request_goes_out_framed_and_its_answer_comes_back(
    scripted_node: tuple[int, list[bytes]],
) -> None:
    port, received = scripted_node
    answer = wire.describe_quorum("127.0.0.1", port, timeout=5)
    assert (answer.leader_id, answer.leader_epoch) == (102, 9)
    header = Reader(received[0])
    assert (header.int16(), header.int16()) == (wire.DESCRIBE_QUORUM, 1)


def test_a_silent_node_is_a_wire_error() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(WireError, match="did not answer"):
        wire.describe_quorum("127.0.0.1", port, timeout=1)


def answer(leader: int, epoch: int, error: int = 0) -> QuorumAnswer:
    return wire.read_describe_quorum(Reader(quorum_answer(error, leader, epoch, 49)))


def test_the_leader_is_the_answering_leader_of_the_highest_epoch() -> None:
    stale, current = answer(101, 7), answer(102, 8)
    found = {"c1": stale, "c2": current, "c3": answer(-1, -1, error=6), "c4": WireError("x")}
    assert leader_answer(found) is current
    assert leader_answer({"c1": answer(-1, -1, error=6), "c2": WireError("down")}) is None


def test_lags_are_behind_the_leaders_log_and_fetch_ages_on_our_clock() -> None:
    view = quorum_view(answer(101, 7), now_ms=1500)
    assert [(v.node_id, v.lag, v.last_fetch_ago_ms) for v in view.voters] == [
        (101, 0, None),
        (102, 2, 500),
        (103, 30, 1100),
    ]
    assert [o.last_fetch_ago_ms for o in view.observers] == [400, 450]


def test_the_freshest_broker_is_the_most_replicated_that_fetched_lately() -> None:
    both_fresh = quorum_view(answer(101, 7), now_ms=1500)
    assert freshest_broker(both_fresh, [1, 2]) == 1
    assert freshest_broker(both_fresh, [2, 3]) == 2  # 3 is not a replica of the log
    view = quorum_view(answer(101, 7), now_ms=1100 + FRESH_FETCH_MS)
    assert freshest_broker(view, [1, 2]) == 1
    assert freshest_broker(view, [2]) is None
    late = quorum_view(answer(101, 7), now_ms=1100 + FRESH_FETCH_MS + 100)
    assert freshest_broker(late, [1, 2]) is None
    assert freshest_broker(late, [101]) == 101  # a combined node that leads is fresh
