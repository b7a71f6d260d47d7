"""The pure apply logic: log order, first record per (key, version) wins, removes, commands."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kvstore.records import Barrier, Command, Record, Value, Write
from kvstore.state import MapState


def apply_all(log: list[Record]) -> MapState:
    state = MapState()
    for record in log:
        state.apply(record)
    return state


def test_the_first_record_of_a_version_wins_and_later_ones_lose() -> None:
    state = MapState()
    first = state.apply(Write("k", 1, "a", "A"))
    second = state.apply(Write("k", 1, "b", "B"))
    assert first.applied and not second.applied
    assert state.get("k") == "a"
    assert second.entry is not None and second.entry.attempt == "A"


def test_the_winner_is_decided_by_log_order() -> None:
    a, b = Write("k", 1, "a", "A"), Write("k", 1, "b", "B")
    assert apply_all([a, b]).get("k") == "a"
    assert apply_all([b, a]).get("k") == "b"


def test_equal_values_are_told_apart_by_attempt_id() -> None:
    state = MapState()
    state.apply(Write("k", 1, "same", "A"))
    lost = state.apply(Write("k", 1, "same", "B"))
    assert not lost.applied
    assert lost.entry is not None and lost.entry.attempt == "A"


def test_a_write_based_on_a_stale_version_loses() -> None:
    state = apply_all([Write("k", 1, "a", "A"), Write("k", 2, "b", "B")])
    assert not state.apply(Write("k", 2, "c", "C")).applied
    assert not state.apply(Write("k", 1, "d", "D")).applied
    assert state.get("k") == "b"


def test_a_version_jump_left_by_compaction_is_accepted() -> None:
    state = MapState()
    outcome = state.apply(Write("k", 7, "x", "X"))
    assert outcome.applied and state.entry("k") is not None


def test_an_applied_write_reports_what_it_superseded() -> None:
    state = MapState()
    state.apply(Write("k", 1, "a", "A"))
    outcome = state.apply(Write("k", 2, "b", "B"))
    assert outcome.superseded is not None and outcome.superseded.attempt == "A"


def test_removes_leave_no_key_behind_but_keep_the_version() -> None:
    state = apply_all([Write("k", 1, "a", "A"), Write("j", 1, "b", "B"), Write("k", 2, None, "R")])
    assert state.get("k") is None
    assert state.keys() == {"j"}
    assert state.size() == 1
    entry = state.entry("k")
    assert entry is not None and entry.version == 2
    # A put after the remove must race for version 3, not 1.
    assert not state.apply(Write("k", 1, "c", "C")).applied
    assert state.apply(Write("k", 3, "c", "C")).applied
    assert state.keys() == {"j", "k"} and state.size() == 2


def test_barriers_change_nothing() -> None:
    state = apply_all([Write("k", 1, "a", "A")])
    outcome = state.apply(Barrier("b"))
    assert not outcome.applied and state.changes == 1 and state.get("k") == "a"


def test_changes_count_only_applied_records() -> None:
    state = apply_all([Write("k", 1, "a", "A"), Write("k", 1, "b", "B"), Barrier("x")])
    assert state.changes == 1


def test_commands_check_their_precondition_when_applied() -> None:
    state = MapState()
    assert state.apply(Command("k", "put-if-absent", None, 1, "a")).applied
    assert not state.apply(Command("k", "put-if-absent", None, 2, "b")).applied
    assert not state.apply(Command("k", "replace", 5, 6, "c")).applied
    assert state.apply(Command("k", "replace", 1, 6, "d")).applied
    assert state.apply(Command("k", "remove", None, None, "e")).applied
    assert not state.apply(Command("k", "remove", None, None, "f")).applied
    assert state.apply(Command("k", "put", None, 9, "g")).applied
    entry = state.entry("k")
    assert entry is not None and (entry.version, entry.value) == (4, 9)


# A log as concurrent writers make it: each writes (key, v + 1) where v is the
# version in its own view, a prefix of the log that may lag behind.
@st.composite
def writer_logs(draw: st.DrawFn) -> list[Record]:
    log: list[Record] = []
    for i in range(draw(st.integers(0, 40))):
        key = draw(st.sampled_from(["a", "b"]))
        view = apply_all(log[: draw(st.integers(0, len(log)))])
        entry = view.entry(key)
        value: Value | None = draw(st.none() | st.integers(0, 3))
        log.append(Write(key, 1 if entry is None else entry.version + 1, value, f"w{i}"))
    return log


def first_per_version(log: list[Record]) -> dict[str, Value | None]:
    """The rule as the design states it, computed the naive way."""
    winners: dict[tuple[str, int], Value | None] = {}
    for r in log:
        if isinstance(r, Write) and isinstance(r.key, str):
            winners.setdefault((r.key, r.version), r.value)
    latest: dict[str, tuple[int, Value | None]] = {}
    for (key, version), value in winners.items():
        if version > latest.get(key, (0, None))[0]:
            latest[key] = (version, value)
    return {k: v for k, (_, v) in latest.items()}


@given(writer_logs())
def test_apply_is_first_record_per_version_on_writer_logs(log: list[Record]) -> None:
    state = apply_all(log)
    expected = first_per_version(log)
    assert {k: state.get(k) for k in expected} == expected
    assert state.keys() == {k for k, v in expected.items() if v is not None}
    assert state.size() == len(state.keys())
