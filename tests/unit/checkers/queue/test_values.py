"""Exact types in queue values. A partition named as a string of its digits is that
partition, wherever it is named: sends, polls, drains, assigns, seeks and rebalances; a
history and its twin with every partition spelled another way are checked alike, and a
lost write stays found. A message is exactly an int or a string: one of another type
that Python finds equal to one (True, a str subclass such as an EDN keyword) is refused.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.queue import checker as queue
from checkers.queue.reader import read_queue_history
from harness.cli import main
from history import HistoryError
from tests.support.queue_builder import Event, QueueHistoryBuilder
from tests.support.queue_sim import SimConfig, simulate, write_jsonl
from tests.unit.checkers.queue.test_stream import untimed

EXIT_INVALID = 1


def spelled(partition: int, rng: random.Random) -> int | str:
    """Takes a partition. Returns it as an int, its digits, or its digits after a zero."""
    return rng.choice([partition, str(partition), f"0{partition}"])


def respelled(events: list[Event], seed: int) -> list[Event]:
    """Takes a queue history's events. Returns a copy naming each partition, at each place
    it is named, as `spelled` chooses."""
    rng, twin = random.Random(seed), copy.deepcopy(events)
    for e in twin:
        if e["f"] in ("send", "drain"):
            e["key"] = spelled(e["key"], rng)
        elif e["f"] == "assign":
            e["value"] = [spelled(p, rng) for p in e["value"]]
        elif e["f"] == "seek":
            e["value"] = {str(spelled(int(p), rng)): o for p, o in e["value"].items()}
        elif e["f"] == "poll" and e["type"] == "ok":
            e["value"] = {str(spelled(int(p), rng)): rs for p, rs in e["value"].items()}
        moves: dict[str, list[Any]] = e.get("rebalanced", {})
        for kind, partitions in moves.items():
            moves[kind] = [spelled(p, rng) for p in partitions]
    return twin


def lost_write(key: int | str) -> list[Event]:
    """Returns a history of two acknowledged sends to partition `key` whose drain holds
    only the first."""
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(0, 0, 11, 1)
    b.poll(1, {0: [(0, 10), (1, 11)]})
    b.drain(2, 0, [(0, 10)])
    for e in b.events:
        if "key" in e:
            e["key"] = key
    return b.events


@pytest.mark.parametrize("key", [0, "0", "00"], ids=["0", "'0'", "'00'"])
def test_a_lost_write_is_found_however_its_partition_is_spelled(key: int | str) -> None:
    result = queue.check(lost_write(key))
    assert result["valid"] is False and result["unknown"] == []
    assert result["lost_messages"] == [11]
    assert result["kinds"]["lost-write"]["cases"][0]["partition"] == 0
    assert untimed(result) == untimed(queue.check(lost_write(0)))


def test_harness_check_finds_the_lost_write_to_partition_0_spelled_as_a_string(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.jsonl"
    write_jsonl(lost_write("0"), path)
    code = main(["check", str(path), "--model", "queue"])
    out, err = capsys.readouterr()
    assert (code, err) == (EXIT_INVALID, ""), out
    assert out.startswith("INVALID ") and "1 lost" in out


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    group=st.booleans(),
    losses=st.integers(0, 2),
    sub_via=st.sampled_from(["assign", "subscribe", None]),
)
def test_a_history_respelled_is_checked_alike(
    seed: int, group: bool, losses: int, sub_via: Any
) -> None:
    config = SimConfig(partitions=3, workers=4, ops=150, group=group, losses=losses)
    events, _ = simulate(seed, config)
    expected = queue.check(events, sub_via=sub_via)
    got = queue.check(respelled(events, seed), sub_via=sub_via)
    assert untimed(got) == untimed(expected)


class Named(str):
    """A string of another type, as an EDN keyword or symbol may be read."""

    __slots__ = ()


def a_send_drained(sent: Any, drained: Any) -> list[Event]:
    """Returns a history of one acknowledged send of `sent` whose drain holds `drained`."""
    b = QueueHistoryBuilder()
    b.send(0, 0, 1, 0)
    b.drain(1, 0, [(0, drained)])
    b.events[0]["value"], b.events[1]["value"] = sent, [0, sent]
    return b.events


@pytest.mark.parametrize(
    ("sent", "drained", "line"),
    [(Named("a"), "a", 1), ("a", Named("a"), 4), (True, 1, 1), (1, True, 4)],
    ids=["sent a str subclass", "drained a str subclass", "sent true", "drained true"],
)
def test_a_message_of_another_type_is_refused(sent: Any, drained: Any, line: int) -> None:
    with pytest.raises(HistoryError, match=r"is not a message|message is not") as caught:
        read_queue_history(a_send_drained(sent, drained))
    assert caught.value.line == line


def test_a_partition_of_another_type_is_refused() -> None:
    events = a_send_drained(1, 1)
    events[0]["key"] = Named("0")
    with pytest.raises(HistoryError, match="partition '0' is not") as caught:
        read_queue_history(events)
    assert caught.value.line == 1
