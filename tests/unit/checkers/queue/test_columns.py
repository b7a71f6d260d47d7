"""The later half's records in columns (checkers/queue/columns.py) are made again exactly:
every field of its own type, in invoke order, whatever did not fit kept whole; a NONE that
was a real value refuses the columns."""

from __future__ import annotations

import pickle
from array import array
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from checkers.queue.columns import NONE, OpColumns, SendColumns, ops_from, sends_from
from checkers.queue.reader import Poll, Reposition, Send

ints = st.one_of(st.integers(0, 10**6), st.integers(-(2**70), 2**70), st.just(NONE))
processes = st.one_of(st.integers(0, 50), st.sampled_from(["worker", "w2"]))
times = st.one_of(st.integers(0, 2**62), st.floats(0, 1e18, allow_nan=False))
messages = st.one_of(ints, st.text(max_size=3))
outcomes = st.one_of(st.sampled_from(["ok", "info", "fail"]), st.text(min_size=4, max_size=5))
partition_sets = st.frozensets(st.integers(0, 8), max_size=3)

sends = st.builds(
    Send,
    index=st.integers(0, 40),
    process=processes,
    partition=st.integers(0, 8),
    value=messages,
    outcome=outcomes,
    offset=st.one_of(st.none(), st.integers(0, 10**6)),
    invoked=times,
    acked=st.one_of(st.none(), times),
    mop=st.integers(0, 3),
)
polls = st.builds(
    Poll,
    index=st.integers(0, 40),
    process=processes,
    time=times,
    received=st.one_of(
        st.lists(st.integers(-(2**63) + 1, 2**63 - 1), max_size=6).map(lambda v: array("q", v)),
        st.dictionaries(st.integers(0, 8), st.lists(st.tuples(st.integers(0, 9), messages))),
    ),
    moved=partition_sets,
    outcome=outcomes,
)
repositions = st.builds(
    Reposition,
    index=st.integers(0, 40),
    process=processes,
    partitions=st.one_of(st.none(), partition_sets),
    seek=st.dictionaries(st.integers(0, 8), st.integers(0, 99)),
    f=st.sampled_from(["assign", "seek", "subscribe", "crash", "poll"]),
)


def exactly(records: list[Any]) -> list[Any]:
    """Takes records. Returns each as its class and its fields' types and values."""
    return [
        (type(r), [(type(v), v) for v in (getattr(r, f) for f in r.__slots__)]) for r in records
    ]


def crossed(packed: Any) -> Any:
    return pickle.loads(pickle.dumps(packed, pickle.HIGHEST_PROTOCOL))


@given(st.lists(sends, max_size=40))
def test_sends_are_made_again_in_invoke_order(appended: list[Send]) -> None:
    columns = SendColumns()
    for send in appended:
        columns.append(send)
    packed = columns.packed()
    written_none = [
        s
        for s in appended
        if any(getattr(s, f) == NONE and type(getattr(s, f)) is int for f in s.__slots__)
    ]
    if packed is None:
        assert written_none
        return
    expected = sorted(appended, key=lambda s: s.index)
    assert exactly(sends_from(crossed(packed))) == exactly(expected)


def test_a_real_none_value_refuses_the_sends() -> None:
    columns = SendColumns()
    columns.append(Send(1, 2, 0, 5, "ok", None, 10, None))
    assert columns.packed() is not None
    columns.append(Send(2, 2, 0, 5, "ok", 3, 10, NONE))
    assert columns.packed() is None


def test_many_outcomes_keep_their_sends_whole() -> None:
    columns = SendColumns()
    appended = [Send(i, 0, 0, i, f"outcome {i}", None, i, None) for i in range(300)]
    for send in appended:
        columns.append(send)
    assert len(columns.whole) == 300 - 255
    assert exactly(sends_from(crossed(columns.packed()))) == exactly(appended)


@given(st.lists(st.one_of(polls, repositions), max_size=40))
def test_ops_are_made_again_and_sorted_by_their_permutation(appended: list[Any]) -> None:
    columns = OpColumns()
    for op in appended:
        columns.append(op)
    assert len(columns) == len(appended)
    made, order = ops_from(crossed(columns.packed()))
    assert exactly(made) == exactly(appended)
    sorted_ops = [made[i] for i in order]
    assert exactly(sorted_ops) == exactly(sorted(appended, key=lambda op: op.index))
