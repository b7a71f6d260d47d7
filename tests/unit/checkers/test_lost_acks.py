"""Tests for the lost-acknowledged-writes checker and the validity merge.

Constructed anomalies, keyed histories, and a property test against a set-based oracle.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import lost_acks
from checkers.result import check_safe, merge_valid
from history import Event


class Recorder:
    """Builds a history the way the runner would: indices and times in event order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, process: Any, type_: str, f: str, value: Any = None, **extra: Any) -> None:
        n = len(self.events)
        self.events.append(
            {"index": n, "time": n, "process": process, "type": type_, "f": f, "value": value}
            | extra
        )

    def op(self, process: Any, outcome: str | None, f: str, value: Any, **extra: Any) -> None:
        """An invoke and, unless `outcome` is None (still in flight), its completion."""
        invoke_value = None if f == "read" else value
        self.add(process, "invoke", f, invoke_value, **extra)
        if outcome is not None:
            self.add(process, outcome, f, value, **extra)


def check(r: Recorder) -> dict[str, Any]:
    return lost_acks.check(r.events)


def test_all_acknowledged_and_read() -> None:
    r = Recorder()
    for v in range(3):
        r.op(0, "ok", "add", v)
    r.op(1, "ok", "read", [2, 0, 1])
    result = check(r)
    assert result["valid"] is True
    assert (result["attempt_count"], result["ack_count"], result["lost_count"]) == (3, 3, 0)
    assert result["by_key"][0]["read_count"] == 3


def test_lost_write() -> None:
    r = Recorder()
    r.op(0, "ok", "add", 1)
    r.op(0, "ok", "send", 2)
    r.op(0, "ok", "add", 3)
    r.op(1, "ok", "read", [1])
    result = check(r)
    assert result["valid"] is False
    key = result["by_key"][0]
    assert (key["lost"], key["lost_count"]) == ([2, 3], 2)
    assert key["cases"]["lost"][0] == {"key": None, "value": 2, "process": 0, "index": 2}
    assert any("lost 2 acknowledged: 2, 3" in line for line in lost_acks.explain(result))


def test_recovered_and_unrecovered_info_writes() -> None:
    r = Recorder()
    r.op(0, "info", "add", 1)
    r.op(1, None, "add", 2)  # in flight at the end: as good as info
    r.op(2, "info", "add", 3)
    r.op(3, "ok", "read", [1, 2])
    result = check(r)
    assert result["valid"] is True
    assert result["by_key"][0]["recovered"] == [1, 2]
    assert result["recovered_count"] == 2


def test_unexpected_values() -> None:
    r = Recorder()
    r.op(0, "ok", "add", 1)
    r.op(0, "fail", "add", 2)
    r.op(1, "ok", "read", [1, 2, 99])
    result = check(r)
    assert result["valid"] is False
    key = result["by_key"][0]
    assert key["unexpected"] == [2, 99]
    assert [c["write"] for c in key["cases"]["unexpected"]] == ["failed", "none"]
    assert key["fail_count"] == 1


def test_duplicates_are_reported_but_valid() -> None:
    r = Recorder()
    for v in (1, 2):
        r.op(0, "ok", "add", v)
    r.op(1, "ok", "read", [1, 2, 2, 2])
    r.op(2, "ok", "read", [1, 1])
    result = check(r)
    assert result["valid"] is True
    assert result["by_key"][0]["duplicated_copies"] == [[2, 3], [1, 2]]
    assert result["duplicated_count"] == 2


def test_no_final_read_is_unknown() -> None:
    r = Recorder()
    r.op(0, "ok", "add", 1)
    r.op(1, "fail", "read", None)
    result = check(r)
    assert result["valid"] == "unknown"
    assert result["lost_count"] == 0
    assert any("no final read" in line for line in lost_acks.explain(result))


def test_empty_history_is_unknown() -> None:
    assert lost_acks.check([])["valid"] == "unknown"


def test_reads_before_writes_settle_are_not_final() -> None:
    r = Recorder()
    r.op(1, "ok", "read", [])  # before any write: it cannot be asked to see them
    r.add(0, "invoke", "add", 1)
    r.add(2, "invoke", "read")  # overlaps the write's acknowledgement
    r.add(0, "ok", "add", 1)
    r.add(2, "ok", "read", [])
    r.op(3, "ok", "read", [1])
    result = check(r)
    assert result["valid"] is True
    assert result["by_key"][0]["final_reads"] == 1


def test_final_reads_per_partition_are_united() -> None:
    r = Recorder()
    for v in range(4):
        r.op(0, "ok", "send", v)
    r.op(1, "ok", "read", [0, 2])
    r.op(1, "ok", "read", [1, 3])
    assert check(r)["valid"] is True


def test_keyed_history_is_checked_per_key() -> None:
    r = Recorder()
    r.op(0, "ok", "add", 1, key="a")
    r.op(0, "ok", "add", 1, key="b")
    r.op(1, "ok", "read", [1], key="a")
    r.op(1, "ok", "read", [], key="b")
    r.op(2, "ok", "add", 5, key="c")
    result = check(r)
    assert result["valid"] is False
    assert result["keys"] == 3
    verdicts = {k["key"]: k["valid"] for k in result["by_key"]}
    assert verdicts == {"a": True, "b": False, "c": "unknown"}
    assert any(line.startswith("key 'b': lost 1") for line in lost_acks.explain(result))


def test_nemesis_events_are_ignored() -> None:
    r = Recorder()
    r.add("nemesis", "info", "start-partition", {"n1": ["n2"]})
    r.op(0, "ok", "add", 1)
    r.op(1, "ok", "read", [1])
    assert check(r)["valid"] is True


# --- property: the checker agrees with a plain-set oracle ----------------------

OUTCOMES = ("ok", "info", "fail", "pending", "never")


def oracle(outcome: dict[int, str], copies: dict[int, int], reads: int) -> dict[str, Any]:
    present = {v for v, n in copies.items() if n > 0}
    acked = {v for v, o in outcome.items() if o == "ok"}
    unsure = {v for v, o in outcome.items() if o in ("info", "pending")}
    written = acked | unsure
    lost = acked - present if reads else set()
    unexpected = present - written
    return {
        "lost": sorted(lost),
        "recovered": sorted(unsure & present),
        "unexpected": sorted(unexpected),
        "duplicated": sorted(v for v, n in copies.items() if n > 1),
        "valid": "unknown" if not reads else not (lost or unexpected),
    }


def build(
    outcome: dict[int, str],
    copies: dict[int, int],
    placement: dict[int, int],
    reads: int,
    seed: int,
) -> Recorder:
    """Writes under three interleaved workers (a new process after each info), then reads."""
    rng = random.Random(seed)
    r = Recorder()
    todo = [v for v, o in outcome.items() if o != "never"]
    processes = [0, 1, 2]
    pending: dict[int, int] = {}  # worker -> element in flight
    if any(outcome[v] in ("ok", "info", "pending") for v in todo):
        r.op(9, "ok", "read", [12345])  # a read during the run: never final
    while todo or pending:
        worker = rng.randrange(3)
        if worker not in pending and todo:
            v = todo.pop()
            r.add(processes[worker], "invoke", "add", v)
            if outcome[v] == "pending":  # never completes: the worker goes on as a new process
                processes[worker] += 3
            else:
                pending[worker] = v
        elif worker in pending:
            v = pending.pop(worker)
            r.add(processes[worker], outcome[v], "add", v)
            if outcome[v] == "info":
                processes[worker] += 3
    for i in range(reads):
        held = [v for v in copies for _ in range(copies[v]) if placement[v] % reads == i]
        rng.shuffle(held)
        r.op(100 + i, "ok", "read", held)
    return r


@settings(max_examples=100, deadline=None)
@given(
    outcome=st.dictionaries(st.integers(0, 30), st.sampled_from(OUTCOMES), max_size=15),
    copy_counts=st.lists(st.integers(0, 3), min_size=15, max_size=15),
    places=st.lists(st.integers(0, 5), min_size=15, max_size=15),
    reads=st.integers(0, 3),
    seed=st.integers(0, 1000),
)
def test_agrees_with_set_oracle(
    outcome: dict[int, str], copy_counts: list[int], places: list[int], reads: int, seed: int
) -> None:
    elements = sorted(outcome)
    copies = {v: copy_counts[i] if reads else 0 for i, v in enumerate(elements)}
    placement = {v: places[i] for i, v in enumerate(elements)}
    result = lost_acks.check(build(outcome, copies, placement, reads, seed).events)
    expected = oracle(outcome, copies, reads)
    assert result["valid"] == expected["valid"]
    if not result["by_key"]:  # nothing attempted and nothing read
        assert all(o == "never" for o in outcome.values()) and not reads
        return
    (key,) = result["by_key"]
    for name in ("lost", "recovered", "unexpected", "duplicated"):
        assert key[name] == expected[name], name


# --- the result helpers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("vals", "merged"),
    [
        ((), True),
        ((True, True), True),
        ((True, "unknown"), "unknown"),
        (("unknown", False, True), False),
        ((False, "unknown"), False),
    ],
)
def test_merge_valid(vals: tuple[Any, ...], merged: Any) -> None:
    assert merge_valid(*vals) == merged


def test_merge_valid_rejects_other_values() -> None:
    with pytest.raises(ValueError, match="not a validity"):
        merge_valid(True, "maybe")  # type: ignore[arg-type]


def test_check_safe_turns_a_crash_into_unknown() -> None:
    def broken(history: list[Event]) -> dict[str, Any]:
        raise KeyError("boom")

    result = check_safe(broken, [])
    assert result["valid"] == "unknown"
    assert result["error"] == "KeyError: 'boom'"
    assert "Traceback" in result["trace"]
    assert check_safe(lambda: {"valid": True}) == {"valid": True}
