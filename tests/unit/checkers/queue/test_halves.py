"""A queue history read in two halves (history.halves, checkers/queue/halves.py) is the one
read serially, record for record, with the same check result, wherever the seam falls;
a malformed history is refused with the same error, and the forked path joins.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.queue import checker as queue
from checkers.queue.halves import QueueHalf, SeamHoldings, _replay, load_queue_halves
from checkers.queue.positions import Holdings
from checkers.queue.reader import QueueReader, Reposition
from history import History, HistoryError, load
from history import halves as halves_module
from history.halves import load_halves, read_second_half
from tests.support.queue_sim import SimConfig, simulate, untimed, write_jsonl
from tests.unit.checkers.queue.test_forked import in_fresh_process

configs = st.builds(
    SimConfig,
    partitions=st.integers(1, 4),
    workers=st.integers(1, 6),
    ops=st.integers(20, 250),
    group=st.booleans(),
    mixed=st.booleans(),
    microops=st.booleans(),
    drains=st.booleans(),
    info_rate=st.sampled_from([0.0, 0.1, 0.3]),
    losses=st.integers(0, 2),
    vanish=st.integers(0, 2),
    conflicts=st.integers(0, 2),
    duplicates=st.integers(0, 2),
    rewinds=st.integers(0, 2),
    skips=st.integers(0, 2),
)


def serial(path: Path) -> History:
    return load(str(path), keep_events=False, reader=queue.QueueStream(str(path)))


def seams(path: Path, every: int) -> list[int]:
    """Returns the byte offsets after every `every`-th line end but the last."""
    data = path.read_bytes()
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")][:-1]
    return ends[::every]


def in_halves(path: Path, at: int, joins: list[bool]) -> History:
    """Reads the history in halves at `at`, both in this process; notes whether they
    were joined (True) or the first half's process read on (False)."""
    real = halves_module._joined

    def noted(*args: Any) -> bool:
        joined = real(*args)
        joins.append(joined)
        return joined

    halves_module._joined = noted  # type: ignore[assignment]
    try:
        return load_halves(
            str(path),
            at,
            QueueHalf(str(path)),
            lambda: read_second_half(str(path), at, QueueHalf(str(path), later=True)),
        )
    finally:
        halves_module._joined = real


def same(one: History, other: History) -> None:
    for name in ("path", "format", "nemesis", "fs", "invocations", "fails"):
        assert getattr(one, name) == getattr(other, name), name
    assert one.read == other.read
    if isinstance(one.read, queue.QueueHistory):
        assert untimed(queue.check_read(one.read, jobs=1)) == untimed(
            queue.check_read(other.read, jobs=1)
        )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16), config=configs)
def test_every_seam_reads_as_one(seed: int, config: SimConfig, tmp_path: Path) -> None:
    events, _ = simulate(seed, config)
    path = tmp_path / f"h{seed}.jsonl"
    write_jsonl(events, path)
    alone = serial(path)
    joins: list[bool] = []
    for at in seams(path, max(1, len(events) // 7)):
        same(in_halves(path, at, joins), alone)
    assert all(joins)  # a well-formed history is always joined, never read on


def test_planted_anomalies_are_found_the_same(tmp_path: Path) -> None:
    config = SimConfig(
        ops=600,
        partitions=3,
        workers=5,
        losses=2,
        duplicates=2,
        conflicts=1,
        rewinds=2,
        skips=2,
        vanish=1,
        info_rate=0.1,
        mixed=True,
    )
    events, _ = simulate(7, config)
    path = tmp_path / "h.jsonl"
    write_jsonl(events, path)
    alone = serial(path)
    assert isinstance(alone.read, queue.QueueHistory)
    result = queue.check_read(alone.read, jobs=1)
    assert result["valid"] is False and result["lost"] and result["kinds"]["duplicate"]["count"]
    joins: list[bool] = []
    for at in seams(path, 97):
        same(in_halves(path, at, joins), alone)
    assert joins and all(joins)


def lines_of(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(e) for e in events]


def events_around_a_seam() -> list[dict[str, Any]]:
    """A well-formed history whose middle has sends and polls in flight."""
    events, _ = simulate(11, SimConfig(ops=80, partitions=2, workers=3, info_rate=0.2))
    return events


@pytest.mark.parametrize(
    "spoil",
    [
        "reuse a crashed process",
        "invoke twice",
        "complete without an invoke",
        "leave out an index",
        "index going back",
        "refuse a value",
        "string process",
    ],
)
def test_a_malformed_later_half_is_refused_as_serially(spoil: str, tmp_path: Path) -> None:
    events = events_around_a_seam()
    middle = len(events) // 2
    later = [dict(e) for e in events[middle:]]
    client = next(e for e in later if isinstance(e["process"], int))
    if spoil == "reuse a crashed process":
        crashed = next(e for e in events[:middle] if e["type"] == "info" and e["f"] == "send")
        later.insert(1, {**client, "process": crashed["process"], "type": "invoke"})
    elif spoil == "invoke twice":
        in_flight = next(e for e in reversed(events[:middle]) if e["type"] == "invoke")
        later.insert(1, dict(in_flight))
    elif spoil == "complete without an invoke":
        later.insert(1, {**client, "process": 999, "type": "ok"})
    elif spoil == "refuse a value":
        send = next(e for e in later if e["f"] == "send" and e["type"] == "invoke")
        send["value"] = 1.5
    elif spoil == "string process":  # a client named by a string: well formed
        send = next(e for e in later if e["f"] == "send" and e["type"] == "invoke")
        later += [{**send, "process": "worker"}, {**send, "process": "worker", "type": "fail"}]
    for i, e in enumerate(later, events[middle]["index"]):
        e["index"] = i
    if spoil == "leave out an index":
        del later[3]["index"]
    elif spoil == "index going back":
        later[3]["index"] = 0
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines_of(events[:middle]) + lines_of(later)) + "\n")
    at = len("\n".join(lines_of(events[:middle]))) + 1

    def outcome(read: Any) -> Any:
        try:
            history = read()
        except HistoryError as e:
            return str(e)
        return str(history.read) if isinstance(history.read, HistoryError) else history

    alone = outcome(lambda: serial(path))
    joins: list[bool] = []
    split = outcome(lambda: in_halves(path, at, joins))
    if spoil in ("leave out an index", "string process"):  # well formed: read on
        assert isinstance(alone, History) and joins == [False]
        same(split, alone)
    else:
        assert isinstance(alone, str) and split == alone


@pytest.mark.parametrize("form", ["bom", "crlf", "lone cr", "blank lines", "not utf-8"])
def test_the_lines_read_in_halves_as_load_reads_them(form: str, tmp_path: Path) -> None:
    lines = lines_of(events_around_a_seam())
    middle = len(lines) // 2
    if form == "bom":
        text = "\ufeff" + "\n".join(lines) + "\n"
    elif form == "crlf":
        text = "\r\n".join(lines) + "\r\n"
    elif form == "lone cr":
        text = "\r".join(lines[:middle]) + "\r" + "\n".join(lines[middle:]) + "\n"
    else:
        text = "\n\n" + "\n".join(lines) + "\n"
    data = text.encode()
    if form == "not utf-8":
        data = data.replace(b'"type"', b'"\xfftype"', 1)
    path = tmp_path / "h.jsonl"
    path.write_bytes(data)

    def outcome(read: Any) -> Any:
        try:
            return read()
        except HistoryError as e:
            return str(e)

    alone = outcome(lambda: serial(path))
    for at in seams(path, 17):
        split = outcome(partial(in_halves, path, at, []))
        if isinstance(alone, str):
            assert split == alone
        else:
            same(split, alone)


def halves_equal_serial(seeds: list[int], folder: str) -> list[int]:
    """Run in a fresh process (no other threads, so it may fork): reads each seed's history
    forked in halves and serially. Returns the seeds that differ, or were not split."""
    halves_module.MIN_BYTES = 0  # type: ignore[misc]
    wrong = []
    for seed in seeds:
        config = SimConfig(ops=400, partitions=3, workers=4, losses=1, duplicates=1, skips=1)
        events, _ = simulate(seed, config)
        path = Path(folder) / f"h{seed}.jsonl"
        write_jsonl(events, path)
        split = load_queue_halves(str(path), 2)
        alone = serial(path)
        if split is None or split.read != alone.read or split.nemesis != alone.nemesis:
            wrong.append(seed)
    return wrong


def test_the_forked_halves_are_the_serial_reading(tmp_path: Path) -> None:
    assert in_fresh_process(halves_equal_serial, [1, 2, 3], str(tmp_path)) == []


def test_one_process_or_a_short_file_is_not_split(tmp_path: Path) -> None:
    events, _ = simulate(1, SimConfig(ops=100))
    path = tmp_path / "h.jsonl"
    write_jsonl(events, path)
    assert load_queue_halves(str(path), 2) is None  # under MIN_BYTES
    assert load_queue_halves(str(path), 1) is None


partitions = st.frozensets(st.integers(0, 3), max_size=3)
holdings_calls = st.lists(
    st.one_of(
        st.tuples(st.just("polled"), partitions),
        st.tuples(st.just("move"), partitions, partitions),
        st.tuples(st.just("assigned"), partitions, st.booleans()),
        st.tuples(st.just("subscribed"), st.none() | partitions),
        st.tuples(st.just("crashed")),
        st.tuples(st.just("unknown")),
    ),
    max_size=12,
)


def call(holdings: Holdings, made: tuple[Any, ...]) -> Any:
    """Makes one Holdings call on process 1. Returns what it returned."""
    name, *args = made
    if name in ("move", "assigned"):
        args[0] = set(args[0])
    if name == "move" or (name == "subscribed" and args[0] is not None):
        args[-1] = set(args[-1])
    return getattr(holdings, name)(1, *args)


@given(before=holdings_calls, after=holdings_calls)
def test_the_seam_holdings_replayed_give_the_serial_boundaries(
    before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]
) -> None:
    alone = Holdings(QueueReader("<serial>"))
    for made in before:
        call(alone, made)
    results = [(made[0], call(alone, made)) for made in after]
    expected = [given for name, given in results if name in ("assigned", "subscribed")]
    earlier = Holdings(QueueReader("<earlier>"))
    for made in before:
        call(earlier, made)
    reader = QueueReader("<later>")
    seam = reader.holdings = SeamHoldings(reader)
    for made in after:
        given_back = call(seam, made)
        if made[0] in ("assigned", "subscribed"):  # as QueueReader.reposition records it
            reader.consumer_ops.append(Reposition(len(reader.consumer_ops), 1, given_back, {}))
    later: list[Any] = reader.consumer_ops
    _replay(earlier, seam.calls, later)
    assert [op.partitions for op in later] == expected
