"""The servers' copies of a stream compared sequence by sequence (checkers/split_brain.py):
a sequence held with different payloads on different servers is a split brain
(nats-server#7567's shape: counts and sequences agree, messages do not); copies that
agree wherever both hold a sequence, however far behind one is, are none."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from checkers import check_split_brain, split_brain_lines


def test_a_planted_divergence_is_a_split_brain_with_its_sides() -> None:
    log = {seq: str(seq * 10) for seq in range(1, 21)}
    n1 = dict(log) | {seq: f"other-{seq}" for seq in range(5, 9)} | {15: "x"}
    result = check_split_brain({"n1": n1, "n2": dict(log), "n3": dict(log)})
    assert result["valid"] is False and result["divergent"] == 5
    assert result["ranges"] == [[5, 8], [15, 15]]
    assert result["sides"] == {"n1 | n2 n3": 5}
    assert result["cases"][0] == {"sequence": 5, "held": {"n1": "other-5", "n2": "50", "n3": "50"}}
    said = split_brain_lines(result, "store-7567")
    assert "hold different messages at 5 sequences (5 to 8, 15)" in said[0]
    assert "n1 holds 'other-5'" in said[1]


def test_a_copy_that_lacks_sequences_is_no_split_brain() -> None:
    log = {seq: str(seq) for seq in range(1, 11)}
    behind = {seq: v for seq, v in log.items() if seq <= 6}
    result = check_split_brain({"n1": log, "n2": behind, "n3": {}})
    assert result["valid"] is True and result["divergent"] == 0
    assert result["servers"]["n2"]["lacks"] == 4 and result["servers"]["n3"]["lacks"] == 10


def test_one_readable_copy_cannot_say() -> None:
    result = check_split_brain({"n1": {1: "a"}, "n2": {}}, {"n2": "reading exited 1"})
    assert result["valid"] == "unknown" and result["unreadable"] == {"n2": "reading exited 1"}


@given(
    log=st.lists(st.text(max_size=4), min_size=0, max_size=40),
    holds=st.lists(st.sets(st.integers(min_value=1, max_value=40)), min_size=2, max_size=5),
)
def test_replicas_that_agree_where_they_overlap_are_valid(
    log: list[str], holds: list[set[int]]
) -> None:
    """Each server holds any subset of one log's sequences (a lag, a gap, a lost tail):
    never a split brain."""
    full = dict(enumerate(log, start=1))
    copies = {f"n{i}": {s: full[s] for s in held if s in full} for i, held in enumerate(holds, 1)}
    result = check_split_brain(copies)
    assert result["valid"] is True and result["divergent"] == 0 and not result["cases"]
