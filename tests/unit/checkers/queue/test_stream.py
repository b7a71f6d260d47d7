"""The queue check as `harness check` runs it: the history read as it is loaded (a
QueueStream), neither events nor ops kept, gives exactly the result of the check over
the loaded events; lost-acks' view built from the records equals lost-acks run on the
history seen as a set; a malformed value is refused alike, as bad input (254), never
a verdict; the collector is restored.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers import lost_acks
from checkers.queue import checker as queue
from checkers.queue.reader import DRAIN, SEND, QueueHistory, pairs, read_queue_history
from harness.commands.check_file import Asked, check_file
from history import Event, HistoryError, OpFound, load
from tests.support.queue_builder import QueueHistoryBuilder
from tests.support.queue_sim import SimConfig, simulate, untimed, write_jsonl

configs = st.builds(
    SimConfig,
    partitions=st.integers(1, 4),
    workers=st.integers(1, 6),
    ops=st.integers(0, 300),
    group=st.booleans(),
    marker_rate=st.sampled_from([0.0, 0.3]),
    info_rate=st.sampled_from([0.0, 0.1]),
    fail_rate=st.sampled_from([0.0, 0.1]),
    drains=st.booleans(),
    losses=st.integers(0, 2),
    conflicts=st.integers(0, 2),
    duplicates=st.integers(0, 2),
    rewinds=st.integers(0, 2),
    skips=st.integers(0, 2),
)


def streamed(path: Path) -> Any:
    history = load(path, keep_events=False, reader=queue.QueueStream(str(path)))
    assert history.events == [] and history.ops == []
    return history.read


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    config=configs,
    sub_via=st.sampled_from(["assign", "subscribe", None]),
)
def test_streamed_check_is_the_events_check(
    tmp_path: Path, seed: int, config: SimConfig, sub_via: Any
) -> None:
    events, _ = simulate(seed, config)
    path = tmp_path / "history.jsonl"
    write_jsonl(events, path)
    expected = queue.check(load(path).events, sub_via=sub_via)
    got = queue.check_read(streamed(path), sub_via=sub_via)
    assert untimed(got) == untimed(expected)


def as_set_history(events: list[Event], history: QueueHistory) -> list[Event]:
    # The queue seen as a set, from the events: every send event as it is, and the last ok
    # drain of each partition as a read of that partition returning its messages.
    reads: dict[int, Event] = {}
    for d in history.drains.values():
        invoke = {"index": d.index, "time": d.invoked, "process": d.process, "key": d.partition}
        reads[d.index] = invoke | {"type": "invoke", "f": "read", "value": None}
        values = [v for _, v in pairs(d.records)]
        reads[d.completion] = invoke | {"index": d.completion, "time": d.time, "type": "ok"}
        reads[d.completion] |= {"f": "read", "value": values}
    return [
        e if e["f"] == SEND else reads[e["index"]]
        for e in events
        if e.get("f") == SEND or (e.get("f") == DRAIN and e["index"] in reads)
    ]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_lost_acks_view_is_lost_acks_on_the_set(seed: int, config: SimConfig) -> None:
    events, _ = simulate(seed, config)
    history = read_queue_history(events)
    expected = lost_acks.check(as_set_history(events, history))
    view = queue.lost_acks_view(history)
    view.pop("breakout")  # the view's own addition (test_breakout.py)
    assert untimed(view) == untimed(expected)


def test_a_malformed_value_read_as_loaded_is_refused_as_from_the_events(tmp_path: Path) -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.poll(1, {0: [(0, 10)]})
    b.events[3]["value"] = {"p0": [[0, 10]]}
    path = tmp_path / "history.jsonl"
    write_jsonl(b.events, path)
    with pytest.raises(HistoryError, match="partition 'p0'") as from_events:
        queue.check(load(path).events)
    with pytest.raises(HistoryError, match="partition 'p0'") as as_loaded:
        queue.check_read(streamed(path))
    assert (from_events.value.line, as_loaded.value.line) == (4, 4)
    outcome = check_file(str(path), Asked(), tmp_path)
    assert outcome["valid"] is None and "error" not in outcome
    assert outcome["malformed"].startswith(f"{path}:4: index 3: partition 'p0' is not")


def test_harness_check_guesses_queue_at_the_first_poll(tmp_path: Path) -> None:
    events, _ = simulate(3, SimConfig(ops=200, losses=1))
    path = tmp_path / "history.jsonl"
    write_jsonl(events, path)
    with pytest.raises(OpFound):
        load(path, keep_events=False, stop_at=frozenset({"poll", "drain"}))
    guessed = check_file(str(path), Asked(), tmp_path)
    asked = check_file(str(path), Asked(model="queue"), tmp_path)
    assert guessed["model"] == asked["model"] == "queue"
    assert untimed(guessed | {"seconds": 0}) == untimed(asked | {"seconds": 0, "guessed": True})
    assert guessed["ops"] == load(path).invocations  # every op invoked, as stats counts
    assert guessed["valid"] is False and guessed["lost"] > 0


def test_loading_restores_the_collector(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "poll"}\n{')
    assert gc.isenabled()
    with pytest.raises(HistoryError):
        load(path)
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(HistoryError):
            load(path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_checked_history_is_freed_when_dropped(tmp_path: Path) -> None:
    # Its reader and holdings are a cycle: the reader must keep none of the records, or
    # they would wait for a collection, which check_file's gc.freeze never makes.
    path = tmp_path / "history.jsonl"
    events, _ = simulate(5, SimConfig(ops=200, losses=1))
    write_jsonl(events, path)
    reader = queue.QueueStream(str(path))
    read = load(path, keep_events=False, reader=reader).read
    assert isinstance(read, QueueHistory) and read.sends and read.consumer_ops
    assert reader.reader is not None
    left = reader.reader
    assert (left.sends, left.consumer_ops, left.drains) == ([], [], {})
    assert gc.isenabled()
    outcome = check_file(str(path), Asked(), tmp_path)
    assert outcome["valid"] is False and gc.isenabled()
