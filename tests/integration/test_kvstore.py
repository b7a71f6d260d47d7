"""The store on the real 3-broker cluster: cross-instance reads, forced races, a checked run,
surfaced client errors, and the ISR-shrink truncation under the unsafe configuration.

Every test uses its own topic and closes its instances, so tests share the session cluster;
the ones that break nodes have a cluster of their own.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import docker
import pytest

from checkers.linearizable.checker import check
from checkers.linearizable.models import MODELS
from harness.cluster.admin import Admin, AdminError
from harness.cluster.docker_cluster import DockerCluster
from history import pair
from kvstore import (
    VARIANTS,
    DefiniteFailure,
    Indeterminate,
    KafkaMap,
    PublishedRuleMap,
    Timeouts,
    create_store_topic,
)
from kvstore.records import Key
from kvstore.state import Entry
from nemesis.cluster import PartitionState
from nemesis.net import apply_grudge, heal
from tests.integration.conftest import _started as started_cluster
from tests.unit.kvstore.test_simulation import Recorder, run_all
from tests.unit.kvstore.test_truncation import ScriptedHistory
from workloads.core import OpDict
from workloads.kv import HANDLERS
from workloads.store_client import StoreClient

pytestmark = pytest.mark.integration
M = TypeVar("M", bound=KafkaMap)
TIMEOUTS = Timeouts(operation=10.0, catch_up=30.0)


def new_topic(cluster: DockerCluster, name: str, partitions: int = 1) -> str:
    topic = f"kv-{name}-{uuid.uuid4().hex[:8]}"
    create_store_topic(cluster.admin(), topic, partitions)
    return topic


@contextmanager
def opened(cls: type[M], cluster: DockerCluster, topic: str, n: int) -> Iterator[list[M]]:
    maps: list[M] = []
    try:
        for i in range(n):
            maps.append(cls(cluster.bootstrap_servers, topic, f"{topic}-c{i}", TIMEOUTS))
        yield maps
    finally:
        for m in maps:
            m.close()


def in_threads(calls: list[Callable[[], Any]]) -> list[Any]:
    """Runs each call in its own thread, as separate clients do. Returns the results."""
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_a_write_on_one_instance_is_read_on_another(cluster: DockerCluster) -> None:
    topic = new_topic(cluster, "cross")
    with opened(KafkaMap, cluster, topic, 2) as (a, b):
        a.put("k", 1)
        assert b.get("k") == 1
        assert b.replace("k", 1, "two")
        assert a.get("k") == "two"
        assert a.remove("k") and b.keys() == set() and b.size() == 0


def test_a_new_instance_catches_up_before_serving(cluster: DockerCluster) -> None:
    topic = new_topic(cluster, "catch-up", partitions=3)
    with opened(KafkaMap, cluster, topic, 1) as (a,):
        for i in range(30):
            a.put(f"k{i}", i)
        assert a.remove("k0")
        with opened(KafkaMap, cluster, topic, 1) as (late,):
            assert late._local_entry("k29") == a._local_entry("k29")
            assert late.size() == 29
            assert late.keys() == {f"k{i}" for i in range(1, 30)}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_serves_and_closes_promptly(cluster: DockerCluster, variant: str) -> None:
    topic = new_topic(cluster, variant)
    with opened(VARIANTS[variant], cluster, topic, 1) as (m,):
        assert m.put_if_absent("k", 1)
        assert m.replace("k", 1, 2)
        assert m.get("k") == 2
        assert m.remove("k")
        started = time.monotonic()
    assert time.monotonic() - started < TIMEOUTS.close + 1


def test_a_compacted_topic_serves_with_tombstones(cluster: DockerCluster) -> None:
    topic = f"kv-compacted-{uuid.uuid4().hex[:8]}"
    create_store_topic(cluster.admin(), topic, compaction=True)
    bootstrap = cluster.bootstrap_servers
    maps = [KafkaMap(bootstrap, topic, f"{topic}-{i}", TIMEOUTS) for i in range(2)]
    try:
        a, b = maps
        a.put("k", 1)
        assert b.replace("k", 1, 2) and not a.put_if_absent("k", 3)
        maps.append(KafkaMap(bootstrap, topic, f"{topic}-late", TIMEOUTS))
        assert maps[-1]._local_entry("k") == a._local_entry("k")
        assert maps[-1].get("k") == 2
    finally:
        for m in maps:
            m.close()


def test_an_unknown_topic_is_a_definite_failure(cluster: DockerCluster) -> None:
    with pytest.raises(DefiniteFailure):
        KafkaMap(
            cluster.bootstrap_servers, f"no-such-{uuid.uuid4().hex}", "c", Timeouts(catch_up=1.0)
        )


def test_nothing_blocks_while_every_broker_is_paused(fresh_cluster: DockerCluster) -> None:
    topic = new_topic(fresh_cluster, "paused")
    quick = Timeouts(operation=4.0, catch_up=4.0, close=2.0, message_ms=3000, request_ms=2000)
    bootstrap = fresh_cluster.bootstrap_servers
    m = KafkaMap(bootstrap, topic, "c", quick)
    try:
        m.put("k", 1)
        for node in fresh_cluster.brokers:
            fresh_cluster.pause(node)
        try:
            started = time.monotonic()
            with pytest.raises(Indeterminate):
                m.put("k", 2)
            with pytest.raises(DefiniteFailure):
                m.get("k")
            with pytest.raises(DefiniteFailure):
                KafkaMap(bootstrap, topic, "late", quick)
            assert time.monotonic() - started < 3 * quick.operation + 3
        finally:
            for node in fresh_cluster.brokers:
                fresh_cluster.resume(node)
        # The same instance serves again once the brokers are back; the put may have landed.
        assert m.get("k") in (1, 2)
        m.put("k", 3)
        assert m.get("k") == 3
    finally:
        started = time.monotonic()
        m.close()
        assert time.monotonic() - started < quick.close + 1


class _Lockstep:
    """Holds each instance's first local read until all racers have made theirs.

    Every racer then sends a record for version 1 before any has seen another's
    record: the race on the real cluster is forced, not left to timing.
    """

    gate: threading.Barrier

    def _local_entry(self, key: Key) -> Entry | None:
        entry: Entry | None = super()._local_entry(key)  # type: ignore[misc]
        self.gate.wait(10)
        return entry


class LockstepKafkaMap(_Lockstep, KafkaMap):
    pass


class LockstepPublishedRuleMap(_Lockstep, PublishedRuleMap):
    pass


def race_put_if_absent(maps: list[Any], value: Callable[[int], str]) -> list[bool]:
    gate = threading.Barrier(len(maps))
    for m in maps:
        m.gate = gate
    return in_threads([lambda i=i, m=m: m.put_if_absent("k", value(i)) for i, m in enumerate(maps)])


def test_five_racing_put_if_absent_have_exactly_one_winner(cluster: DockerCluster) -> None:
    topic = new_topic(cluster, "race")
    with opened(LockstepKafkaMap, cluster, topic, 5) as maps:
        results = race_put_if_absent(maps, lambda i: f"v{i}")
        assert sorted(results) == [False] * 4 + [True]
        winner = f"v{results.index(True)}"
        assert {m.get("k") for m in maps} == {winner}


def test_published_rule_gives_equal_values_several_winners(cluster: DockerCluster) -> None:
    topic = new_topic(cluster, "published")
    with opened(LockstepPublishedRuleMap, cluster, topic, 5) as maps:
        results = race_put_if_absent(maps, lambda _: "same")
        # Forced: all five raced for version 1, and all five see "same" win it.
        assert results == [True] * 5


# --- a fault-free concurrent run, recorded as a history and checked -------------------


def test_a_fault_free_concurrent_run_is_linearizable(
    cluster: DockerCluster, tmp_path: Path
) -> None:
    topic = new_topic(cluster, "linearizable")
    recorder = Recorder(tmp_path / "history.jsonl")
    with opened(KafkaMap, cluster, topic, 5) as maps:
        run_all(list(maps), 20, recorder)
    recorder.close()
    result = check(pair(recorder.events), MODELS["map"], time_limit=60)
    assert result["valid"] is True, result
    completions = [e for e in recorder.events if e["type"] != "invoke"]
    assert len(completions) > 1000
    assert sum(e["type"] == "ok" for e in completions) > 0.99 * len(completions)


# --- the ISR-shrink data loss under the unsafe configuration, step by step ---------------


@pytest.fixture
def unsafe_cluster(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A running 3-broker unsafe cluster (unclean election) of this test's own."""
    yield from started_cluster(engine, kafka_config="unsafe")


def wait_until(what: str, predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"no {what} within {timeout:.0f} s"
        time.sleep(0.25)


def partition_seen_by(cluster: DockerCluster, nodes: list[str], topic: str) -> PartitionState:
    """Asks only these brokers: a broker cut off from the controller has stale metadata."""
    admin = Admin(",".join(f"{cluster.ip(n)}:9092" for n in nodes), timeout=2.0)
    try:
        return admin.partitions(topic)[0]
    except AdminError:
        return PartitionState(0, -1, (), ())


def test_an_unclean_election_truncates_and_the_store_reports_the_loss(
    unsafe_cluster: DockerCluster, tmp_path: Path
) -> None:
    """docs/KAFKA.md "The ISR-shrink data loss", by hand: the leader (the controller,
    so it can still shrink its ISR) is cut off from its followers only, acknowledges a
    write alone, is killed, a follower is elected uncleanly, the old leader returns and
    truncates. The instance that read the lost write fails with the cause, its op in
    flight is info, and a fresh instance reads the older value: invalid."""
    cluster = unsafe_cluster
    leader_id = cluster.controller()
    leader = cluster.node_of_broker(leader_id)
    followers = [n for n in cluster.brokers if n != leader]
    topic = f"kv-truncated-{uuid.uuid4().hex[:8]}"
    create_store_topic(cluster.admin(), topic, safety="unsafe", leader=leader_id)
    # Long waits, so that only the truncation ends the op in flight.
    patient = Timeouts(operation=60.0, catch_up=30.0, message_ms=50_000)
    history = ScriptedHistory(tmp_path / "history.jsonl")
    clients: list[StoreClient] = []

    def open_client(client_id: str) -> StoreClient:
        clients.append(
            StoreClient(KafkaMap(cluster.bootstrap_servers, topic, client_id, patient), HANDLERS)
        )
        return clients[-1]

    try:
        first = open_client("p0")
        assert history.invoke(0, first, "put", 1, 10)["type"] == "ok"
        assert history.invoke(0, first, "get", 1)["value"] == 10
        apply_grudge(cluster, {leader: followers} | {f: [leader] for f in followers})
        # A follower falls out of the ISR only once it misses a write: this put waits for
        # the shrink, then is acknowledged by the leader alone.
        assert history.invoke(0, first, "put", 1, 11)["type"] == "ok"
        wait_until(  # the metadata follows the leader's own view a little later
            "ISR of the leader alone",
            lambda: partition_seen_by(cluster, [leader], topic).isr == (leader_id,),
            30,
        )
        assert history.invoke(0, first, "get", 1)["value"] == 11
        cluster.kill(leader)
        in_flight: list[OpDict] = []
        writer = threading.Thread(
            target=lambda: in_flight.append(history.invoke(0, first, "put", 2, 20))
        )
        writer.start()
        wait_until(
            "unclean election of a follower",
            lambda: (
                partition_seen_by(cluster, followers, topic).leader
                in map(cluster.broker_id, followers)
            ),
            60,
        )
        heal(cluster, followers)
        cluster.start(leader)
        writer.join(patient.operation + 10)
        (completion,) = in_flight
        failure = first.failure
        assert failure is not None, "the instance that read the lost write has failed"
        assert completion["type"] == "info" and failure in completion["error"], completion
        fresh = open_client("p1")
        assert history.invoke(1, fresh, "get", 1)["value"] == 10, "the acknowledged 11 was lost"
        result = history.linearizable()
        assert result["valid"] is False
        assert [f["key"] for f in result["failures"]] == [1]
    finally:
        for c in clients:
            c.close()
        heal(cluster, cluster.brokers)
