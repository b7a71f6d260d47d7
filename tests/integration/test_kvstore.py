"""The store on the real 3-broker cluster: cross-instance reads, forced races, a checked run.

Every test uses its own topic and closes its instances, so tests share the session cluster.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from checkers.linearizable import check
from checkers.models import MODELS
from harness.cluster.docker_cluster import DockerCluster
from harness.history import Event, HistoryWriter, pair
from kvstore import (
    VARIANTS,
    DefiniteFailure,
    KafkaMap,
    PublishedRuleMap,
    Timeouts,
    create_store_topic,
)
from kvstore.records import Key
from kvstore.state import Entry

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


def test_an_unknown_topic_is_a_definite_failure(cluster: DockerCluster) -> None:
    with pytest.raises(DefiniteFailure):
        KafkaMap(cluster.bootstrap_servers, f"no-such-{uuid.uuid4().hex}", "c", TIMEOUTS)


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
        assert results.count(True) > 1


# --- a fault-free concurrent run, recorded as a history and checked -------------------

KEYS = ["k0", "k1", "k2", "k3"]


def random_op(rng: random.Random, m: KafkaMap) -> tuple[str, Key, Any, Callable[[], Any]]:
    """Returns (f, key, invoke value, call returning the ok value) in the map vocabulary."""
    key, v, old = rng.choice(KEYS), rng.randrange(5), rng.randrange(5)
    match rng.choice(["get", "get", "put", "put-if-absent", "replace", "replace", "remove"]):
        case "get":
            return "get", key, None, lambda: m.get(key)
        case "put":
            return "put", key, v, lambda: (m.put(key, v), v)[1]
        case "put-if-absent":
            return "put-if-absent", key, v, lambda: [v, m.put_if_absent(key, v)]
        case "replace":
            return "replace", key, [old, v], lambda: [old, v, m.replace(key, old, v)]
        case _:
            return "remove", key, None, lambda: m.remove(key)


def run_worker(m: KafkaMap, worker: int, workers: int, until: float, out: HistoryWriter) -> None:
    rng, process = random.Random(worker), worker
    while time.monotonic() < until:
        f, key, value, call = random_op(rng, m)
        out.append({"process": process, "type": "invoke", "f": f, "key": key, "value": value})
        try:
            result = call()
        except DefiniteFailure as e:
            out.append(
                {
                    "process": process,
                    "type": "fail",
                    "f": f,
                    "key": key,
                    "value": value,
                    "error": str(e),
                }
            )
        except Exception as e:  # the outcome is unknown: Jepsen's info, under a new process
            out.append(
                {
                    "process": process,
                    "type": "info",
                    "f": f,
                    "key": key,
                    "value": value,
                    "error": f"indeterminate: {e}",
                }
            )
            process += workers
        else:
            out.append({"process": process, "type": "ok", "f": f, "key": key, "value": result})


class _Recorder(HistoryWriter):
    """A HistoryWriter that also keeps the events it wrote, for checking in the test."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.events: list[Event] = []

    def append(self, event: Any) -> Event:
        written = super().append(event)
        self.events.append(written)
        return written


def test_a_fault_free_concurrent_run_is_linearizable(
    cluster: DockerCluster, tmp_path: Path
) -> None:
    topic = new_topic(cluster, "linearizable")
    recorder = _Recorder(tmp_path / "history.jsonl")
    with opened(KafkaMap, cluster, topic, 5) as maps:
        until = time.monotonic() + 20
        in_threads(
            [lambda i=i, m=m: run_worker(m, i, 5, until, recorder) for i, m in enumerate(maps)]
        )
    recorder.close()
    ops = pair(recorder.events)
    result = check(ops, MODELS["map"], time_limit=60)
    assert result["valid"] is True, result
    completions = [e for e in recorder.events if e["type"] != "invoke"]
    assert len(completions) > 1000
    assert sum(e["type"] == "ok" for e in completions) > 0.99 * len(completions)
