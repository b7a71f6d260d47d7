"""Property tests of the queue checker on simulated histories (tests/support/queue_sim.py):
correct histories give no anomaly, with drains or from the polls alone, and planted
anomalies are found exactly, under the verdict policy.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.queue import checker as queue
from checkers.queue.policy import KINDS
from checkers.queue.reader import read_queue_history
from tests.support.queue_sim import Planted, SimConfig, simulate

EXAMPLES = 40
BUT_UNSEEN = tuple(k for k in KINDS if k != "unseen")

configs = st.builds(
    SimConfig,
    partitions=st.integers(1, 5),
    workers=st.integers(1, 6),
    ops=st.integers(0, 250),
    group=st.booleans(),
    mixed=st.booleans(),
    microops=st.booleans(),
    marker_rate=st.sampled_from([0.0, 0.1, 0.4]),
    info_rate=st.sampled_from([0.0, 0.05, 0.2]),
    fail_rate=st.sampled_from([0.0, 0.05, 0.2]),
)


def all_cases(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    history = read_queue_history(events)
    evidence = queue.gather_evidence(history)
    from_polls = queue.polls_lost_cases(
        history, evidence.polled, evidence.bounds, evidence.index, evidence.gaps
    )
    return queue.find_cases(history, evidence, from_polls)


def subscribed(events: list[dict[str, Any]]) -> bool:
    return any(e.get("f") == "subscribe" and e["type"] == "ok" for e in events)


def counts(result: dict[str, Any], kinds: tuple[str, ...]) -> dict[str, int]:
    return {k: result["kinds"][k]["count"] for k in kinds}


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_correct_histories_have_no_anomaly(seed: int, config: SimConfig) -> None:
    events, _ = simulate(seed, config)
    result = queue.check(events)
    assert counts(result, KINDS) == dict.fromkeys(KINDS, 0)
    assert (result["valid"], result["unknown"]) == (True, [])
    assert result["lost_acks"]["lost_count"] == result["lost_from_polls"] == 0
    assert result["sub_via"] == ("subscribe" if subscribed(events) else "assign")


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_without_drains_the_polls_find_no_loss_and_what_no_one_read_is_unseen(
    seed: int, config: SimConfig
) -> None:
    events, _ = simulate(seed, SimConfig(**{**config.__dict__, "drains": False}))
    result = queue.check(events)
    assert counts(result, BUT_UNSEEN) == dict.fromkeys(BUT_UNSEEN, 0)
    unseen = result["kinds"]["unseen"]["count"]
    assert result["valid"] is (unseen == 0)
    relaxed = queue.check(events, ignore={"unseen"})
    assert relaxed["valid"] == ("unknown" if unseen else True)
    judged = sum(int(r.split(", and ")[1].split()[0]) for r in relaxed["unknown"])
    assert judged == unseen  # every unseen send is one the polls could not judge


def found(events: list[dict[str, Any]]) -> Planted:
    cases = all_cases(events)

    def steps(kind: str) -> set[tuple[int, int, int, int]]:
        return {(c["process"], c["partition"], c["prior_offset"], c["offset"]) for c in cases[kind]}

    return Planted(
        losses={c["value"] for c in cases["lost-write"]},
        conflicts={(c["partition"], c["offset"]) for c in cases["inconsistent-offsets"]},
        duplicates={c["value"] for c in cases["duplicate"]},
        rewinds=steps("nonmonotonic-poll"),
        skips=steps("poll-skip"),
        int_skips=steps("int-poll-skip"),
    )


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    config=configs,
    drains=st.booleans(),
    plants=st.tuples(*[st.integers(0, 3)] * 6),
)
def test_planted_anomalies_are_found_exactly(
    seed: int, config: SimConfig, drains: bool, plants: tuple[int, ...]
) -> None:
    losses, vanish, conflicts, duplicates, rewinds, skips = plants
    if not drains:
        # A conflict or a skip leaves a message no poll reads, which the polls alone then
        # find lost, and a duplicate no poll reads is never seen: the others only, here.
        losses = conflicts = skips = duplicates = 0
    planted_config = SimConfig(
        **{
            **config.__dict__,
            "drains": drains,
            "losses": losses,
            "vanish": vanish,
            "conflicts": conflicts,
            "duplicates": duplicates,
            "rewinds": rewinds,
            "skips": skips,
        }
    )
    events, planted = simulate(seed, planted_config)
    assert found(events) == planted
    result = queue.check(events)
    never = ("nonmonotonic-send", "int-nonmonotonic-poll", "int-nonmonotonic-send")
    assert counts(result, never) == dict.fromkeys(never, 0)
    assert result["lost"] == len(planted.losses)
    jumps_count = not subscribed(events) and bool(planted.rewinds or planted.skips)
    broken = (
        planted.losses or planted.conflicts or planted.duplicates or planted.int_skips
    ) or jumps_count
    if drains:
        assert result["lost_acks"]["lost_count"] == len(planted.losses)
        assert result["valid"] is (not broken)
    elif broken:
        assert result["valid"] is False
