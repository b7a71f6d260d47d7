"""The stuck-consumer kind (checkers/queue/stuck.py): a final drain that gave up below its
high watermark is found, exactly once, reported and never counted against the history;
a correct history, whose drains fail only for ordinary reasons and are retried, has none.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.queue import checker as queue
from checkers.queue.halves import QueueHalf
from checkers.queue.policy import counts_against, effect
from checkers.queue.reader import read_queue_history
from history import HistoryError
from history.halves import load_halves, read_second_half
from tests.support.queue_sim import SimConfig, simulate, write_jsonl

KIND = "stuck-consumer"
Event = dict[str, Any]


def last_drain(events: list[Event], partition: int) -> Event:
    """Returns the completion of the partition's last drain."""
    return [
        e for e in events if e["f"] == "drain" and e["type"] != "invoke" and e["key"] == partition
    ][-1]


def plant_stuck(events: list[Event], rng: random.Random) -> tuple[int, int, int]:
    """Makes the last drain of one partition with records give up below its high
    watermark, as the workload's drain says so; the partition's earlier drains go, so no
    ok drain judges it. Returns (partition, position, high watermark)."""
    drained = {
        e["key"]: e["value"]
        for e in events
        if e["f"] == "drain" and e["type"] == "ok" and e["value"]
    }
    partition = rng.choice(sorted(drained))
    records = drained[partition]
    high = records[-1][0] + 1
    cut = rng.randrange(len(records))
    position = records[cut][0]
    done = last_drain(events, partition)
    others = [
        e
        for e in events
        if e["f"] == "drain" and e["key"] == partition and e["type"] != "invoke" and e is not done
    ]
    for e in others:  # an ordinary failure: what the simulator's failed attempts say
        e.update(type="fail", value=None, error="_TRANSPORT: broker down")
    done.update(
        type="fail",
        value=None,
        error=f"did not reach the high watermark {high} within 30 s",
        position=position,
        **{"high-watermark": high, "last-read": records[cut - 1] if cut else None},
    )
    done["time"] += 30 * 10**9
    return partition, position, high


@pytest.mark.parametrize("seed", range(8))
def test_one_planted_stuck_consumer_is_found_once_and_reported(seed: int) -> None:
    events, _ = simulate(seed, SimConfig(partitions=3, ops=150))
    partition, position, high = plant_stuck(events, random.Random(seed))

    result = queue.check(events)
    found = result["kinds"][KIND]

    assert found["count"] == 1
    (case,) = found["cases"]
    assert (case["partition"], case["position"], case["high_watermark"]) == (
        partition,
        position,
        high,
    )
    assert case["waited_s"] >= 30 and case["attempts"] == 1 and not case["then_drained"]
    assert case["acked_behind"] >= 1 and case["first_behind"]["offset"] >= position
    assert f"stayed at offset {position}" in case["explanation"]
    assert found["invalidating"] is False
    # No read was wrong: the partition nothing drained leaves its losses unjudged.
    assert result["valid"] is not False


def again(events: list[Event], partition: int, completion: Event) -> None:
    """Appends one more drain of the partition, on a process of its own, ending as
    `completion` says."""
    index, time = events[-1]["index"] + 1, events[-1]["time"] + 1
    base = {"process": 1000 + index, "f": "drain", "key": partition}
    events.append(base | {"index": index, "type": "invoke", "value": None, "time": time})
    done = base | {"index": index + 1, "value": None, "time": time + 30 * 10**9}
    events.append(done | completion)


def test_attempts_on_one_partition_are_one_case_that_says_whether_one_got_there() -> None:
    events, _ = simulate(5, SimConfig(partitions=3, ops=150))
    partition, position, high = plant_stuck(events, random.Random(5))
    gave_up = last_drain(events, partition)
    again(
        events,
        partition,
        {k: v for k, v in gave_up.items() if k not in ("index", "process", "time")},
    )

    (case,) = queue.check(events)["kinds"][KIND]["cases"]
    assert (case["attempts"], case["position"], case["then_drained"]) == (2, position, False)
    assert case["waited_s"] >= 60 and "in 2 attempts" in case["explanation"]

    # A drain that reached the high watermark after all (what it read does not matter here).
    again(events, partition, {"type": "ok", "value": [], "high-watermark": high})
    (case,) = queue.check(events)["kinds"][KIND]["cases"]
    assert case["then_drained"] and case["explanation"].endswith("a later drain got there")


def test_a_drain_that_gave_up_is_read_in_halves_as_a_whole(tmp_path: Path) -> None:
    events, _ = simulate(3, SimConfig(partitions=2, ops=120))
    plant_stuck(events, random.Random(3))
    path = tmp_path / "history.jsonl"
    write_jsonl(events, path)
    whole = read_queue_history(events).stalled
    data = path.read_bytes()
    at = data.rindex(b"\n", 0, len(data) // 2) + 1  # a seam before the drains
    second = read_second_half(str(path), at, QueueHalf(str(path), later=True))
    halves = load_halves(str(path), at, QueueHalf(str(path)), lambda: second)
    assert halves is not None and halves.read.stalled == whole and len(whole) == 1


def test_a_stuck_consumer_never_counts_against_the_history() -> None:
    assert not counts_against(KIND, "assign")
    assert not counts_against(KIND, "subscribe")
    assert effect(KIND, invalidating=False, ignored=False).startswith("reported: a liveness")


def test_a_position_that_is_no_offset_is_refused_as_malformed() -> None:
    events, _ = simulate(1, SimConfig(partitions=2, ops=60))
    plant_stuck(events, random.Random(1))
    gave_up = next(e for e in events if e.get("position") is not None)
    gave_up["position"] = "near the end"
    with pytest.raises(HistoryError, match="offset"):
        read_queue_history(events)


configs = st.builds(
    SimConfig,
    partitions=st.integers(1, 5),
    workers=st.integers(1, 6),
    ops=st.integers(0, 200),
    group=st.booleans(),
    microops=st.booleans(),
    info_rate=st.sampled_from([0.0, 0.05, 0.2]),
    fail_rate=st.sampled_from([0.0, 0.05, 0.2]),
)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_correct_histories_have_no_stuck_consumer(seed: int, config: SimConfig) -> None:
    events, _ = simulate(seed, config)
    # Drains that failed for an ordinary reason and were retried (the simulator's failed
    # attempts), as after a leader change: no position, so nothing was stuck.
    for e in events:
        if e["f"] == "drain" and e["type"] == "fail":
            e["error"] = "_TRANSPORT: Broker transport failure"
    result = queue.check(events)
    assert result["kinds"][KIND]["count"] == 0
    assert read_queue_history(events).stalled == []
