"""The faults made of faultproxy rules, against a stand-in for the proxies: the rule
each fault installs, and what its stop makes of the proxies' reports (held requests by
API, late Produce requests appended, requests held across an EndTxn of their own
producer); the client faults' choice of client, and the Java driver a pause stops. The
proxy itself is tested in faultproxy/ (Go) and on a real cluster in tests/integration."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from typing import Any

import pytest

from harness.report.proxy_story import proxy_words
from nemesis.client import choose_client, driver_pid, requests_between
from nemesis.cluster import Cluster, InPath
from nemesis.core import Skipped
from nemesis.late import HOLD_S, LateDelivery
from nemesis.proxy import crossed, late_end, summary
from tests.support.fake_cluster import FakeCluster

Value = dict[str, Any]


def _record(api: str, arrived: float, delivered: float, **more: Any) -> Value:
    return {"api": api, "direction": "up", "client": "p1-producer", "arrived": arrived,
            "delivered": delivered, "sender_closed": arrived + 5, **more}  # fmt: skip


HELD_PRODUCE = _record(
    "Produce",
    100.0,
    112.0,
    batches=[{"producer_id": 7, "producer_epoch": 0, "base_sequence": 3, "records": 1}],
    answer={"error": 0, "partitions": [{"partition": 2, "error": 0, "base_offset": 41}]},
)
ENDS = [
    {"producer_id": 7, "commit": True, "delivered": 105.0},
    {"producer_id": 7, "commit": False, "delivered": 99.0},  # before the hold
    {"producer_id": 8, "commit": True, "delivered": 106.0},  # another producer
]


def test_a_held_request_crossed_the_ends_of_its_own_producer_during_its_hold() -> None:
    assert crossed(HELD_PRODUCE, ENDS) == {"commit": 1}
    end_txn = _record("EndTxn", 100.0, 112.0, end_txn={"producer_id": 8, "commit": False})
    assert crossed(end_txn, ENDS) == {"commit": 1}
    assert crossed(_record("Metadata", 100.0, 112.0), ENDS) == {}


def test_a_summary_counts_what_was_held_and_where_late_produces_landed() -> None:
    report = {
        "broker": "n1",
        "frames": {"Produce": 3, "Metadata": 1},
        "conns": 2,
        "clients": {"p1-producer": 1},
        "longest_ms": 12004,
        "held_now": 0,
        "delivered_after_sender_closed": 2,
        "discarded": 0,
        "records": [HELD_PRODUCE],
    }
    done = summary([report], ENDS)
    assert done["held"] == {"Produce": 3, "Metadata": 1} and done["longest_s"] == 12.004
    assert done["held_across"] == {"Produce across a commit": 1}
    assert done["answers"] == {"Produce appended": 1}
    assert done["landed"] == [
        {
            "broker": "n1",
            "client": "p1-producer",
            "partition": 2,
            "offset": 41,
            "producer": [7, 0],
            "sequence": 3,
            "records": 1,
            "held_s": 12.0,
            "after_sender_gave_up": True,
        }
    ]
    assert "error" not in done
    assert "still held" in summary([report | {"held_now": 1}], [])["error"]
    resent = HELD_PRODUCE | {"answer": HELD_PRODUCE["answer"] | {"duplicate": True}}
    again = summary([report | {"records": [resent]}], ENDS)
    assert "landed" not in again and again["answers"] == {"Produce a duplicate of its retry": 1}
    words = proxy_words("late-produce", "stop", done)
    assert (
        words is not None
        and "held across their producer's EndTxn: 1 Produce across a commit" in words
    )


class FakeProxies(FakeCluster):
    """A FakeCluster behind stand-in proxies: rules are kept, reports scripted."""

    def __init__(self) -> None:
        super().__init__(leader=2)
        self.rules: dict[str, list[Value]] = {b: [] for b in self.brokers}
        self.report: Value = {"frames": {}, "records": [], "held_now": 0}

    def proxy_add_rule(self, broker: str, rule: dict[str, Any]) -> dict[str, Any]:
        self.rules[broker].append(rule)
        return {"id": len(self.rules[broker])}

    def proxy_rule(self, broker: str, rule_id: int) -> dict[str, Any]:
        return self.report

    def proxy_end_rule(self, broker: str, rule_id: int, release_now: bool) -> dict[str, Any]:
        return self.report | {"hold_ms": 0}

    def proxy_heal(self, broker: str) -> list[dict[str, Any]]:
        return []

    def proxy_stats(self, broker: str) -> dict[str, Any]:
        return {"clients": {}}

    def proxy_ends(self, broker: str, since: float) -> list[dict[str, Any]]:
        return []

    def proxy_markers(self, broker: str, since: float) -> list[dict[str, Any]]:
        return []


def test_late_produce_holds_one_connection_per_client_to_the_leader_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("nemesis.proxy.SETTLE_S", 0.0)
    cluster = FakeProxies()
    assert isinstance(cluster, InPath)
    fault = LateDelivery("late-produce", "t", random.Random(1))
    c: Cluster = cluster
    fault.setup(c)
    started = fault.invoke("start-late-produce")
    assert started == {"holding": ["Produce"], "hold_s": HOLD_S, "brokers": ["n2"], "leader": "n2",
                       "partition": 0}  # fmt: skip
    [rule] = cluster.rules["n2"]
    assert rule["apis"] == ["Produce"] and rule["per_client"] == 1 and rule["action"] == "hold"
    assert rule["exclude_peers"] == [cluster.ip(n) for n in cluster.nodes]  # clients only
    assert cluster.rules["n1"] == cluster.rules["n3"] == []
    assert fault.invoke("stop-late-produce")["held"] == {}
    with pytest.raises(Skipped, match="holds nothing"):
        fault.invoke("stop-late-produce")


def test_a_cluster_without_proxies_is_refused() -> None:
    with pytest.raises(TypeError, match="no faultproxy"):
        LateDelivery("late-end-txn", "t", random.Random(1)).setup(FakeCluster())


def test_a_client_is_chosen_among_the_recent_transactional_producers() -> None:
    now = time.time()
    seen = {
        "p1-producer": {"open": 1, "last_at": now, "transactional_id": "t-txn-1", "requests": {}},
        "p2-producer": {"open": 0, "last_at": now, "transactional_id": "t-txn-2", "requests": {}},
        "p3-producer": {
            "open": 1,
            "last_at": now - 60,
            "transactional_id": "t-txn-3",
            "requests": {},
        },
        "p4-consumer": {"open": 1, "last_at": now, "requests": {"n1": {"Heartbeat": 3}}},
    }
    assert choose_client(seen, random.Random(1), "txn")[0] == "p1-producer"
    assert choose_client(seen, random.Random(1), "group")[0] == "p4-consumer"
    with pytest.raises(Skipped, match="no transactional producer"):
        choose_client({"p4-consumer": seen["p4-consumer"]}, random.Random(1), "txn")


def test_what_a_cut_client_sent_meanwhile_is_the_difference_per_broker() -> None:
    before = {"n1": {"Produce": 3, "Metadata": 1}}
    after = {"n1": {"Produce": 7, "Metadata": 1}, "n2": {"Fetch": 2}}
    assert requests_between(before, after) == {"n1": {"Produce": 4}, "n2": {"Fetch": 2}}
    cut = {"n2": {"Fetch": 2}}  # counted as they arrived, then cut
    assert requests_between(before, after, cut) == {"n1": {"Produce": 4}}


def test_the_java_driver_of_a_transactional_id_is_found_among_this_processs_children() -> None:
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    drivers = [
        subprocess.Popen([*argv, "-Dkafka-harness.client=t-txn-4#1", "kafkaharness.Driver"]),
        subprocess.Popen([*argv, "-Dkafka-harness.client=t-txn-4#2", "kafkaharness.Driver"]),
    ]
    try:
        time.sleep(0.2)
        assert driver_pid("t-txn-4") == drivers[1].pid  # the latest incarnation
        assert driver_pid("t-txn-40") is None and driver_pid("t-txn-5") is None
    finally:
        for d in drivers:
            d.kill()
            d.wait()


def test_a_late_end_txn_that_markers_follow_ended_a_live_transaction() -> None:
    late = _record(
        "EndTxn",
        200.0,
        212.0,
        conn=4,
        broker="n2",
        end_txn={"producer_id": 7, "producer_epoch": 0, "commit": False},
        answer={"error": 0},
    )
    itself = {"producer_id": 7, "delivered": 212.0, "conn": 4, "broker": "n2"}
    marker = {"producer_id": 7, "commit": False, "arrived": 212.4, "partitions": ["t-3"]}
    later = {"producer_id": 7, "delivered": 212.6, "conn": 9, "broker": "n2"}
    its_next = {"producer_id": 7, "commit": False, "arrived": 212.7, "partitions": ["t-5"]}
    live = late_end(late, [itself, later], [marker, its_next])
    assert live["ended_a_live_transaction"] and live["partitions"] == ["t-3"]
    # The producer's own EndTxn came between: the markers are its, not the late one's.
    own = {"producer_id": 7, "delivered": 212.2, "conn": 9, "broker": "n2"}
    assert not late_end(late, [itself, own], [marker])["ended_a_live_transaction"]
    # No markers: the late EndTxn found its transaction over (a retry's answer).
    assert not late_end(late, [itself], [])["ended_a_live_transaction"]
    done = summary([{"broker": "n2", "records": [late]}], [itself], [marker])
    assert done["late_ends_accepted"] == 1 and done["late_ends_live"] == 1
    assert done["answers"] == {"EndTxn accepted": 1}
