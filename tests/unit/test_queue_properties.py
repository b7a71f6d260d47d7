"""Property tests of the queue checker on simulated histories (tests/unit/queue_sim.py):
correct histories give no anomaly, and planted anomalies are found exactly.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import queue
from checkers.queue_cases import first_polled
from checkers.queue_history import read_queue_history
from tests.unit.queue_sim import Planted, SimConfig, simulate

EXAMPLES = 40
# Unseen sends are no fault of the log: consumers simply read slower than producers.
ALWAYS_ZERO = (
    "lost-write",
    "unexpected",
    "duplicate",
    "inconsistent-offsets",
    "nonmonotonic-poll",
    "poll-skip",
    "nonmonotonic-send",
)

configs = st.builds(
    SimConfig,
    partitions=st.integers(1, 5),
    workers=st.integers(1, 6),
    ops=st.integers(0, 250),
    group=st.booleans(),
    marker_rate=st.sampled_from([0.0, 0.1, 0.4]),
    info_rate=st.sampled_from([0.0, 0.05, 0.2]),
    fail_rate=st.sampled_from([0.0, 0.05, 0.2]),
)


def all_cases(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    history = read_queue_history(events)
    lost_view = queue.lost_acks_view(history)
    polled = first_polled(history)
    return queue.find_cases(history, lost_view, polled)[kind]


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_correct_histories_have_no_anomaly(seed: int, config: SimConfig) -> None:
    events, _ = simulate(seed, config)
    result = queue.check(events, idempotent=True)
    assert {k: result["kinds"][k]["count"] for k in ALWAYS_ZERO} == dict.fromkeys(ALWAYS_ZERO, 0)
    assert result["valid"] is True
    assert result["lost_acks"]["lost_count"] == 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_without_drains_losses_are_unknown(seed: int, config: SimConfig) -> None:
    events, _ = simulate(seed, SimConfig(**{**config.__dict__, "drains": False}))
    result = queue.check(events, idempotent=True)
    assert result["valid"] == "unknown"
    assert result["kinds"]["lost-write"]["count"] == 0


def found(events: list[dict[str, Any]]) -> Planted:
    def steps(kind: str) -> set[tuple[int, int, int, int]]:
        return {
            (c["process"], c["partition"], c["prior_offset"], c["offset"])
            for c in all_cases(events, kind)
        }

    return Planted(
        losses={c["value"] for c in all_cases(events, "lost-write")},
        conflicts={
            (c["partition"], c["offset"]) for c in all_cases(events, "inconsistent-offsets")
        },
        duplicates={c["value"] for c in all_cases(events, "duplicate")},
        rewinds=steps("nonmonotonic-poll"),
        skips=steps("poll-skip"),
    )


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    config=configs,
    plants=st.tuples(*[st.integers(0, 3)] * 5),
)
def test_planted_anomalies_are_found_exactly(
    seed: int, config: SimConfig, plants: tuple[int, int, int, int, int]
) -> None:
    losses, conflicts, duplicates, rewinds, skips = plants
    planted_config = SimConfig(
        **{
            **config.__dict__,
            "losses": losses,
            "conflicts": conflicts,
            "duplicates": duplicates,
            "rewinds": rewinds,
            "skips": skips,
        }
    )
    events, planted = simulate(seed, planted_config)
    assert found(events) == planted
    result = queue.check(events, idempotent=True)
    assert result["kinds"]["nonmonotonic-send"]["count"] == 0
    assert result["lost"] == len(planted.losses) == result["lost_acks"]["lost_count"]
    assert result["valid"] is (not (planted.losses or planted.conflicts or planted.duplicates))
