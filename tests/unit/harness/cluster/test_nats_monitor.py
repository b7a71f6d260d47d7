"""Reading nats-server's /jsz (answers captured from a real 3-server v2.12.1 cluster
with an R3 stream `queue` of 5 messages and an R3 bucket `kv`), and the leader a
majority of servers names (no Docker)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.cluster.nats import (
    MonitorError,
    agreed_leader,
    parse_jsz,
    replica_states,
    split_brain,
    stream_lag,
)
from tests.support import DATA


def captured(name: str) -> tuple[str, dict[str, Any]]:
    found = json.loads((DATA / f"nats_jsz_{name}.json").read_text())
    return found["server"], found["jsz"]


def test_the_meta_leader_lists_its_peers_and_a_follower_only_names_it() -> None:
    follower = parse_jsz(*captured("leader"))  # n2 leads the stream, not the meta group
    meta_leader = parse_jsz(*captured("follower"))
    assert meta_leader.server == meta_leader.meta_leader == follower.meta_leader == "n1"
    assert [p.name for p in meta_leader.meta_peers] == ["n2", "n3"]
    assert all(p.current and not p.offline for p in meta_leader.meta_peers)
    assert follower.meta_peers == ()
    assert follower.meta_size == meta_leader.meta_size == 3


def test_streams_of_every_account_are_read_with_their_leader_and_state() -> None:
    view = parse_jsz(*captured("leader"))
    assert set(view.streams) == {"queue", "KV_kv"}
    queue = view.streams["queue"]
    assert (queue.leader, queue.messages, queue.first_seq, queue.last_seq) == ("n2", 5, 1, 5)
    assert [p.name for p in queue.replicas] == ["n1", "n3"]


def test_the_default_profile_fsyncs_every_two_minutes() -> None:
    view = parse_jsz(*captured("leader"))
    assert (view.sync_always, view.sync_interval_ns) == (False, 120 * 10**9)


def test_lag_comes_from_the_server_that_leads_the_stream() -> None:
    leader, follower = parse_jsz(*captured("leader")), parse_jsz(*captured("follower"))
    # The follower's own view gives the leader a lag of 6: only the leader's view counts.
    assert {p.name: p.lag for p in follower.streams["queue"].replicas} == {"n2": 6, "n3": 6}
    assert stream_lag([follower, leader], "queue") == {"n2": 0, "n1": 0, "n3": 0}
    assert stream_lag([follower], "queue") == {}
    assert stream_lag([leader], "missing") == {}


@pytest.mark.parametrize(
    ("claims", "leader"),
    [
        (["n1", "n1", "n1"], "n1"),
        (["n1", "n1", None], "n1"),
        (["n1", "n2", None], None),
        (["n1", "n2"], None),
        (["n2", "n2", "n1"], "n2"),
        ([None, None], None),
        ([], None),
    ],
)
def test_a_leader_counts_only_when_a_majority_of_answers_names_it(
    claims: list[str | None], leader: str | None
) -> None:
    assert agreed_leader(claims) == leader


@pytest.mark.parametrize(
    "body",
    [
        {"meta_cluster": {"cluster_size": "three"}},
        {"account_details": [{"stream_detail": [{"cluster": {}}]}]},
        {"meta_cluster": {"replicas": [{"current": True}]}},
        {"meta_cluster": ["n1"]},
    ],
)
def test_an_unreadable_answer_is_an_error_not_a_view(body: dict[str, Any]) -> None:
    with pytest.raises(MonitorError, match="unreadable /jsz"):
        parse_jsz("n1", body)


def test_each_server_says_what_its_own_replica_holds() -> None:
    leader, follower = parse_jsz(*captured("leader")), parse_jsz(*captured("follower"))
    states = replica_states([leader, follower], "queue")
    assert states == {
        "n2": {"leader": "n2", "messages": 5, "first_seq": 1, "last_seq": 5},
        "n1": {"leader": "n2", "messages": 5, "first_seq": 1, "last_seq": 5},
    }
    assert split_brain(states) == []
    assert replica_states([leader], "missing") == {}


def state(leader: str | None, last: int, first: int = 1) -> dict[str, Any]:
    return {"leader": leader, "messages": last - first + 1, "first_seq": first, "last_seq": last}


def test_two_leaders_and_replicas_that_differ_are_a_split_brain() -> None:
    # After the heal of nats-server#7567: n1 and n2 follow n2, n3 still leads its own log.
    states = {"n1": state("n2", 900), "n2": state("n2", 900), "n3": state("n3", 1400)}
    assert split_brain(states) == [
        "2 servers each lead the stream: n2, n3",
        "the servers name different leaders (n1: n2, n2: n2, n3: n3)",
        "the replicas' messages differ (n1: 900, n2: 900, n3: 1400)",
        "the replicas' last_seq differ (n1: 900, n2: 900, n3: 1400)",
    ]


def test_one_leader_with_a_replica_behind_is_told_apart_from_two_leaders() -> None:
    states = {"n1": state("n1", 10), "n2": state("n1", 10), "n3": state(None, 7)}
    assert split_brain(states) == [
        "the servers name different leaders (n1: n1, n2: n1, n3: none)",
        "the replicas' messages differ (n1: 10, n2: 10, n3: 7)",
        "the replicas' last_seq differ (n1: 10, n2: 10, n3: 7)",
    ]
