"""Lost writes split per writer into prefix, middle and postfix (Jepsen's NATS
lost-breakout), over the final drains and per node's drain, in the lost-acks view."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from checkers import gone_error
from checkers.queue import breakout
from checkers.queue import checker as queue
from checkers.queue.reader import read_queue_history
from checkers.queue.records import Message
from tests.support.queue_builder import QueueHistoryBuilder


def test_a_writers_lost_sends_fall_before_between_and_after_its_read_ones() -> None:
    placed = {m: (0, m - 1) for m in range(1, 6)} | {10: (1, 0)}
    found = breakout.breakout([1, 3, 5, 10], {2, 4}, placed)
    assert found["lost-prefix"] == [1]
    assert found["lost-middle"] == [3]
    # After the last read one, and all of a writer none of whose sends was read.
    assert found["lost-postfix"] == [5, 10]
    assert (
        found["lost-prefix-count"],
        found["lost-middle-count"],
        found["lost-postfix-count"],
    ) == (
        1,
        1,
        2,
    )
    assert found["writers"] == {
        "0": {"prefix": 1, "middle": 1, "postfix": 1},
        "1": {"prefix": 0, "middle": 0, "postfix": 1},
    }


def test_a_writers_place_is_its_invoke_order_not_the_message() -> None:
    b = QueueHistoryBuilder()
    for offset, message in enumerate((30, 20, 10)):  # one writer, messages falling
        b.send(0, 0, message, offset)
    sends = read_queue_history(b.events).sends
    assert breakout.ranks(sends) == {30: (0, 0), 20: (0, 1), 10: (0, 2)}
    assert breakout.breakout([30], {20, 10}, breakout.ranks(sends))["lost-prefix"] == [30]


def test_the_view_splits_what_the_drains_lack_overall_and_per_node() -> None:
    b = QueueHistoryBuilder()
    for offset, message in enumerate(range(1, 5)):
        b.send(0, 0, message, offset)
    b.send(1, 0, 9, 4)
    b.drain(7, 0, [(1, 2), (2, 3)], node="n1")  # lacks 1 (prefix), 4 (postfix), 9
    b.drain(8, 0, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 9)], node="n2")
    view = queue.lost_acks_view(read_queue_history(b.events))
    # The last ok drain judges the run, as the queue checker has it: nothing lost.
    assert view["lost_count"] == 0
    assert view["breakout"]["lost-prefix-count"] == 0
    assert view["breakout"]["lost-postfix-count"] == 0
    n1, n2 = view["breakout_by_node"]["n1"], view["breakout_by_node"]["n2"]
    assert n1["lost-count"] == 3
    assert (n1["lost-prefix"], n1["lost-middle"], n1["lost-postfix"]) == ([1], [], [4, 9])
    assert n2["lost-count"] == 0


def test_without_a_final_drain_there_is_no_breakout_and_no_node_view() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 1, 0)
    view = queue.lost_acks_view(read_queue_history(b.events))
    assert view["breakout"] is None
    assert "breakout_by_node" not in view


def _naive_kinds(
    lost: list[Message], read: set[Message], placed: dict[Message, tuple[int | str, int]]
) -> dict[str, list[Message]]:
    """The definition itself: a writer's first and last read places by min and max."""
    places: dict[int | str, list[int]] = {}
    for message in read:
        if message in placed:
            writer, place = placed[message]
            places.setdefault(writer, []).append(place)
    kinds: dict[str, list[Message]] = {kind: [] for kind in breakout.KINDS}
    for message in lost:
        writer, place = placed[message]
        seen = places.get(writer)
        if seen and place < min(seen):
            kinds["prefix"].append(message)
        elif seen and place < max(seen):
            kinds["middle"].append(message)
        else:
            kinds["postfix"].append(message)
    return {kind: sorted(found, key=_sent_int) for kind, found in kinds.items()}


def _sent_int(message: Message) -> int:
    assert isinstance(message, int)  # the test sends ints
    return message


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40)), max_size=60),
    st.sets(st.integers(0, 50)),
)
def test_the_breakout_is_its_definition_whatever_the_sends(
    sent: list[tuple[int, int]], read_ints: set[int]
) -> None:
    read: set[Message] = set(read_ints)
    b = QueueHistoryBuilder()
    for offset, (writer, message) in enumerate(sent):  # messages may be sent twice
        b.send(writer, 0, message, offset)
    placed = breakout.ranks(read_queue_history(b.events).sends)
    lost = [m for m in placed if m not in read]
    found = breakout.breakout(lost, read, placed)
    expected = _naive_kinds(lost, read, placed)
    for kind in breakout.KINDS:
        assert found[f"lost-{kind}-count"] == len(expected[kind])
        assert found[f"lost-{kind}"] == expected[kind][: breakout.SHOWN]


def test_drains_told_the_stream_is_gone_say_so_and_the_sends_are_lost() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 1, 0)
    b.send(0, 0, 2, 1)
    said = gone_error("stream s not found (JetStream 10059)")
    b.drain(7, 0, [], node="n1", error=said)
    b.drain(8, 0, [], node="n2", error=said)
    result = queue.check(b.events)
    assert result["lost"] == 2 and result["valid"] is False
    assert result["store_gone"] == {"drains": 2, "store": "stream s not found (JetStream 10059)"}


def test_drains_that_read_the_stream_say_nothing_of_a_gone_store() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 1, 0)
    b.drain(7, 0, [(0, 1)], node="n1")
    assert queue.check(b.events)["store_gone"] is None
