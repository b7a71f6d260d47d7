"""Tests of the realtime lag (checkers/queue/lag.py) on histories whose lag is known by
hand: measured from the first unread offset's appearance to the poll's invocation."""

from __future__ import annotations

from typing import Any

from checkers.queue.lag import LagPoint, poll_invocations, realtime_lag, worst_lags
from checkers.queue.reader import Poll, QueueHistory, Reposition, Send, read_queue_history

Event = dict[str, Any]


class Ops:
    """Appends invoke/completion pairs at the times given (ns), indexes in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def op(
        self, process: int, f: str, times: tuple[int, int], value: Any, done: Any, **kw: Any
    ) -> None:
        for type_, time, v in (("invoke", times[0], value), (kw.pop("type", "ok"), times[1], done)):
            self.events.append(
                {"index": len(self.events), "time": time, "process": process, "type": type_}
                | {"f": f, "value": v}
                | kw
            )


def _history() -> list[Event]:
    ops = Ops()
    ops.op(0, "send", (0, 10), 1, [0, 1], key=0)  # offset 0 known from 10
    ops.op(1, "assign", (20, 30), [0], [0])
    ops.op(1, "poll", (40, 50), None, {"0": [[0, 1]]})  # at the tail: no lag
    ops.op(0, "send", (60, 100), 2, [1, 2], key=0)  # offset 1 known from 100
    ops.op(1, "poll", (300, 310), None, {})  # 300 - 100 behind, one offset
    ops.op(0, "send", (350, 360), 3, 3, key=0, type="info")  # never acknowledged...
    ops.op(2, "poll", (400, 420), None, {"0": [[1, 2], [2, 3]]})  # ...but read: 2 from 420
    ops.op(1, "poll", (500, 510), None, {})  # since offset 1 appeared (100), not 2 (420)
    ops.op(1, "poll", (600, 610), None, {"0": [[1, 2]]})  # at 1: since 420
    ops.op(1, "seek", (650, 660), {"0": 0}, {"0": 0})  # back before offset 0
    ops.op(1, "poll", (700, 710), None, {})  # offset 0 known from 10
    ops.op(1, "assign", (720, 730), [1], [1])  # partition 0 dropped
    ops.op(1, "poll", (800, 810), None, {})  # no position anywhere: no point
    return ops.events


def test_lag_runs_from_the_first_unread_offsets_appearance_to_the_polls_invocation() -> None:
    events = _history()
    history = read_queue_history(events)
    points = realtime_lag(history, poll_invocations(events, history))
    assert points == [
        LagPoint(time=40, process=1, partition=0, lag=0, behind=0),
        LagPoint(time=300, process=1, partition=0, lag=200, behind=1),
        LagPoint(time=400, process=2, partition=0, lag=0, behind=0),
        LagPoint(time=500, process=1, partition=0, lag=400, behind=2),
        LagPoint(time=600, process=1, partition=0, lag=180, behind=1),
        LagPoint(time=700, process=1, partition=0, lag=690, behind=3),
    ]
    assert worst_lags(points) == {1: points[-1], 2: points[2]}


def test_without_invocation_times_a_poll_is_timed_at_its_completion() -> None:
    history = read_queue_history(_history())
    assert [p.lag for p in realtime_lag(history, {})][:2] == [0, 310 - 100]


def test_worst_partition_moves_and_polls_that_were_not_ok() -> None:
    sends = [
        Send(0, 9, 0, "a", "ok", 0, 0, 10),
        Send(1, 9, 0, "b", "ok", 1, 0, 20),
        Send(2, 9, 1, "c", "ok", 0, 0, 30),
        Send(3, 9, 1, "d", "ok", 5, 0, 40),  # offsets 1 to 4 are markers: known from 40
    ]
    none: frozenset[int] = frozenset()
    consumer_ops: list[Poll | Reposition] = [
        # Its records move the position although the poll ended info; no point of its own.
        Poll(10, 1, 60, {0: [(0, "a")], 1: [(0, "c")]}, none, outcome="info"),
        Poll(11, 1, 90, {}, none),  # partition 0: 80 - 20; partition 1: 80 - 40
        Poll(12, 1, 130, {}, frozenset({0})),  # the group moved 0: only 1 counts
        Reposition(13, 1, None, {}),
        Poll(14, 1, 150, {}, none),
    ]
    history = QueueHistory(sends, consumer_ops, {})
    assert realtime_lag(history, {11: 80, 12: 120, 14: 140}) == [
        LagPoint(time=80, process=1, partition=0, lag=60, behind=5),
        LagPoint(time=120, process=1, partition=1, lag=80, behind=5),
    ]


def test_the_worst_lag_is_reported_as_plain_data() -> None:
    from checkers.queue.lag import lag_points, worst_realtime_lag

    def worst(events: list[dict[str, Any]]) -> dict[str, object] | None:
        return worst_realtime_lag(lag_points(events, read_queue_history(events)), {})

    assert worst(_history()) == {
        "time": 700e-9,
        "process": 1,
        "partition": 0,
        "lag": 690e-9,
        "behind": 3,
    }
    assert worst(_history()[:4]) is None  # a send and an assign: no poll
