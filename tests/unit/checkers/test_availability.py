"""Availability under faults: the ok and all ops completed inside each fault window, the
time from each heal to the next ok op (said only where ops had stopped), and the sentence
a VALID run's headline carries; counted exactly, as a naive count over every op does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import Sample, availability_section, availability_sentence


def _op(at: float, outcome: str = "ok", latency_ms: float = 0.0) -> Sample:
    return Sample("read", at, latency_ms, outcome)


def _window(start: float, stop: float | None, fault: str = "partition-leader") -> dict[str, object]:
    return {"fault": fault, "start": start, "in_force": start, "stop": stop}


def test_no_op_in_the_fault_and_the_time_to_the_first_ok_after_its_heal() -> None:
    samples = [_op(1), _op(10.5, "fail"), _op(11, "info"), _op(21.5), _op(25)]
    windows = [_window(10, 20), _window(30, 40)]
    found = availability_section(windows, samples)
    first, second = found["windows"]
    assert (first["ok_during"], first["ops_during"], first["resumed_s"]) == (0, 2, 1.5)
    assert (second["ok_during"], second["ops_during"], second["resumed_s"]) == (0, 0, None)
    assert found["summary"]["partition-leader"] == {
        "windows": 2,
        "without_ok": 2,
        "ok_during": 0,
        "resumed_s": [1.5, 1.5],
    }
    assert availability_sentence(found) == (
        "No op succeeded during any of the 2 partition-leader windows, and ops succeeded "
        "again 1.5 s after each of their heals."
    )


def test_an_op_counts_where_it_completed_and_the_fault_from_when_it_was_in_force() -> None:
    # Invoked before the fault took effect, it returned inside: it counts there.
    samples = [_op(9.0, latency_ms=1500), _op(9.5, latency_ms=100)]
    window = {"fault": "kill-leader", "start": 9.0, "in_force": 10.0, "stop": 12.0}
    (row,) = availability_section([window], samples)["windows"]
    assert (row["ok_during"], row["resumed_s"]) == (1, None)


def test_ops_that_went_on_in_a_fault_are_counted_not_timed() -> None:
    samples = [_op(t / 10) for t in range(0, 300)]
    found = availability_section([_window(10, 20, "kill-leader")], samples)
    assert found["summary"]["kill-leader"]["resumed_s"] is None
    assert availability_sentence(found) == "100 ops succeeded during the 1 kill-leader window."
    assert availability_sentence({"summary": {}}) == ""


times = st.floats(min_value=0, max_value=60, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(st.tuples(times, st.sampled_from(["ok", "fail", "info"]), times), max_size=40),
    spans=st.lists(st.tuples(times, times, st.booleans()), max_size=5),
)
def test_the_counts_are_a_naive_count_over_every_op(
    ops: list[tuple[float, str, float]], spans: list[tuple[float, float, bool]]
) -> None:
    samples = [_op(at, outcome, latency * 10) for at, outcome, latency in ops]
    windows = [_window(min(a, b), max(a, b) if healed else None) for a, b, healed in spans]
    done = [(s.time_s + s.latency_ms / 1000, s.outcome) for s in samples]
    for w, row in zip(windows, availability_section(windows, samples)["windows"], strict=True):
        stop = float("inf") if w["stop"] is None else w["stop"]
        inside = [o for t, o in done if w["start"] <= t < stop]  # type: ignore[operator]
        assert row["ops_during"] == len(inside)
        assert row["ok_during"] == inside.count("ok")
        after = [t - stop for t, o in done if o == "ok" and t >= stop]
        assert row["resumed_s"] == (round(min(after), 3) if after else None)


def test_one_window_of_two_without_an_ok_op_says_its_heal() -> None:
    samples = [_op(5), _op(12), _op(31.5)]
    found = availability_section([_window(10, 20), _window(25, 30)], samples)
    assert availability_sentence(found) == (
        "No op succeeded during 1 of the 2 partition-leader windows, and ops succeeded "
        "again 1.5 s after its heal."
    )
