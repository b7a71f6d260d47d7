"""The nemesis story's words for the membership faults, from values as the faults record
them (the 2026-11-28 runs of FINDINGS.md's membership section)."""

from __future__ import annotations

from harness.report.membership_story import membership_op_words, membership_step_words
from harness.report.nemesis_story import op_words, step_words


def test_a_voter_removed_and_added_back_is_told_with_its_voter_sets() -> None:
    start = {
        "removed": "c1",
        "cut_off": "c2",
        "voters": {"before": ["c1", "c2", "c3"], "after": ["c2", "c3"]},
    }
    assert op_words("start-remove-controller-partitioned", start) == (
        "remove-controller-partitioned: c1 removed from the voters, c2 cut off first; "
        "voters [c1, c2, c3] then [c2, c3]"
    )
    stop = {"added": "c1", "voters": {"after": ["c1", "c2", "c3"]}}
    assert op_words("stop-remove-controller", stop) == (
        "remove-controller: c1 added back; voters [c1, c2, c3]"
    )
    assert "not added back" in str(membership_op_words("stop-remove-controller", {"added": None}))


def test_a_decommission_is_told_with_what_moved_and_what_was_killed() -> None:
    start = {"decommissioned": "n1", "moved": 10, "killed": "n2", "set_up": True}
    assert op_words("start-decommission-kill-leader", start) == (
        "decommission-kill-leader: n1 decommissioned, 10 partitions moved off it, "
        "n2 killed meanwhile"
    )
    failed = {"decommissioned": None, "node": "n3", "moved": 3, "set_up": False}
    assert "not moved away in time" in op_words("start-decommission-broker", failed)
    back = {"recommissioned": "n1", "moved": 10, "set_up": True}
    assert op_words("stop-decommission-broker", back) == (
        "decommission-broker: n1 back, 10 partitions moved back to it"
    )
    assert membership_op_words("start-kill-leader", {"killed": ["n1"]}) is None


def test_each_step_has_its_words_and_shared_steps_keep_theirs() -> None:
    removed = {"step": "removed", "after_s": 12.2, "voters": ["c2", "c3"], "leader": "c2"}
    assert step_words(removed) == "voters now [c2, c3], leader c2"
    stuck = {"step": "not-removed", "within_s": 30.0, "error": "the quorum never answered"}
    assert step_words(stuck) == (
        "the voter set did not change within 30.0 s: unknown (the quorum never answered)"
    )
    left = {
        "step": "not-reassigned-back",
        "within_s": 60.0,
        "unsettled": [f"t-{i}" for i in range(7)],
    }
    assert step_words(left).endswith("t-0, t-1, t-2, t-3, t-4 and 2 more")
    assert step_words({"step": "reassigned-away", "partitions": 10, "took_s": 0.18}) == (
        "10 partitions moved off in 0.18 s"
    )
    # A step another fault records too keeps the words it always had.
    assert membership_step_words({"step": "stopped", "node": "n1"}) is None
    assert "controlled shutdown" in step_words({"step": "stopped", "node": "n1"})


def test_a_nats_server_removed_and_back_is_told_with_what_jsz_said() -> None:
    start = {"node": "n2", "removed": "n2", "replicas": 3}
    assert op_words("start-remove-server", start) == (
        "remove-server: n2 wiped and peer-removed as n2 (the stream had 3 replicas)"
    )
    assert "not out of the cluster" in op_words("start-remove-server", {"node": "n1"})
    assert op_words("stop-remove-server", {"node": "n2", "rejoined": "n2-2"}) == (
        "remove-server: n2 back as a new peer, n2-2"
    )
    jsz = {
        "meta_leader": "n1",
        "cluster_size": 2,
        "meta_peers": [{"name": "n3", "current": True}],
        "stream_leader": "n3",
        "stream_peers": [{"name": "n1", "current": False}],
        "healthy": ["n1", "n3"],
    }
    assert step_words({"step": "server-left", "server": "n2", "jsz": jsz}) == (
        "n2 left: meta leader n1 of 2 with [n3]; stream leader n3 with [n1 (behind)]; "
        "healthy [n1, n3]"
    )
    assert "no server answered" in step_words({"step": "server-not-left", "jsz": None})
    assert step_words({"step": "rejoining", "node": "n2", "server": "n2-2"}) == (
        "n2 started as n2-2, empty"
    )
