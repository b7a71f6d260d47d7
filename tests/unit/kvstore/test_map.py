"""The maps' algorithms on an in-process log: results, races forced record by record, variants."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from kvstore import VARIANTS
from kvstore.api import KVMap, Timeouts
from kvstore.errors import DefiniteFailure, Indeterminate
from kvstore.kafka_map import KafkaMap
from kvstore.memlog import MemoryLog
from kvstore.records import Record
from kvstore.replica import Pending, Replica
from kvstore.variants import LocalReadMap, PublishedRuleMap, ReplicaStyleMap

QUICK = Timeouts(operation=0.3)
M = TypeVar("M", bound=KafkaMap)


def instances(cls: type[M], log: MemoryLog, n: int) -> list[M]:
    return [cls.over(log.connect(), f"c{i}", QUICK) for i in range(n)]


def wait_for(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


class Call(threading.Thread):
    """One operation running in its own thread, as a client of its own; keeps its result
    or the exception it raised."""

    def __init__(self, op: Callable[[], Any]) -> None:
        super().__init__()
        self._op = op
        self.result: Any = None
        self.error: Exception | None = None
        self.start()

    def run(self) -> None:
        try:
            self.result = self._op()
        except Exception as e:
            self.error = e


def finish(log: MemoryLog, calls: list[Call]) -> list[Any]:
    """Delivers the held log until every call has returned (losers may send more records)."""

    def delivered_all() -> bool:
        log.deliver()
        return not any(c.is_alive() for c in calls)

    wait_for(delivered_all)
    return [c.result for c in calls]


@pytest.mark.parametrize("cls", VARIANTS.values())
def test_every_variant_offers_the_kvmap_interface(cls: type[KafkaMap]) -> None:
    (m,) = instances(cls, MemoryLog(), 1)
    assert isinstance(m, KVMap)
    m.close()


def test_a_write_on_one_instance_is_read_on_another() -> None:
    a, b = instances(KafkaMap, MemoryLog(), 2)
    a.put("k", 1)
    assert b.get("k") == 1
    assert b.replace("k", 1, "two")
    assert a.get("k") == "two"


def test_results_of_every_operation() -> None:
    (m,) = instances(KafkaMap, MemoryLog(), 1)
    assert m.get("k") is None
    assert m.put_if_absent("k", 1)
    assert not m.put_if_absent("k", 2)
    assert not m.replace("k", 5, 6)
    assert m.replace("k", 1, 6)
    m.put("j", "x")
    assert (m.size(), m.keys()) == (2, {"k", "j"})
    assert m.remove("k")
    assert not m.remove("k")
    assert (m.size(), m.keys(), m.get("k")) == (1, {"j"}, None)
    assert m.put_if_absent("k", 7)
    assert m.get("k") == 7


def test_several_partitions_hold_every_key_once() -> None:
    a, b = instances(KafkaMap, MemoryLog(partitions=4), 2)
    for i in range(20):
        a.put(f"k{i}", i)
    assert b.remove("k3")
    assert b.size() == 19
    assert a.keys() == {f"k{i}" for i in range(20)} - {"k3"}
    assert b.get("k7") == 7


def test_a_new_instance_catches_up_before_serving() -> None:
    log = MemoryLog()
    (a,) = instances(KafkaMap, log, 1)
    for i in range(5):
        a.put(f"k{i}", i)
    late = KafkaMap.over(log.connect(), "late", QUICK)
    assert late._local_entry("k4") is not None


def test_a_loser_retries_put_with_the_next_version() -> None:
    log = MemoryLog(hold=True)
    a, b = instances(KafkaMap, log, 2)
    calls = [Call(lambda: a.put("k", "a")), Call(lambda: b.put("k", "b"))]
    wait_for(lambda: log.length() == 2)  # both raced for version 1
    finish(log, calls)
    entry = a._local_entry("k")
    assert entry is not None and entry.version == 2


def test_five_racing_put_if_absent_have_exactly_one_winner() -> None:
    # Delivery is held until all five records are in the log, so every instance
    # races for version 1 from the same empty view.
    log = MemoryLog(hold=True)
    maps = instances(KafkaMap, log, 5)
    calls = [Call(lambda m=m: m.put_if_absent("k", m.client_id)) for m in maps]
    wait_for(lambda: log.length() == 5)
    results = finish(log, calls)
    assert sorted(results) == [False] * 4 + [True]
    winner = maps[results.index(True)].client_id
    assert {m._local_entry("k").value for m in maps} == {winner}  # type: ignore[union-attr]


def test_published_rule_lets_equal_put_if_absent_all_win() -> None:
    log = MemoryLog(hold=True)
    maps = instances(PublishedRuleMap, log, 5)
    calls = [Call(lambda m=m: m.put_if_absent("k", "same")) for m in maps]
    wait_for(lambda: log.length() == 5)
    assert finish(log, calls) == [True] * 5


def test_published_rule_takes_losing_to_a_remove_for_success() -> None:
    log = MemoryLog(hold=True)
    remover, adder = instances(PublishedRuleMap, log, 2)
    finish(log, [Call(lambda: remover.put("k", 1))])
    finish(log, [Call(lambda: remover.remove("k"))])
    # Both now see k removed at version 2. The remover's second removal and the
    # adder's put_if_absent race for version 3; the removal is first in the log.
    removal = Call(lambda: remover.remove("k"))
    wait_for(lambda: log.length() == 4)  # put, barrier, removal, barrier
    log.deliver()
    wait_for(lambda: log.length() == 5)  # the second removal
    added = Call(lambda: adder.put_if_absent("k", 5))
    wait_for(lambda: log.length() == 6)
    assert finish(log, [removal, added]) == [False, True]
    assert adder._local_entry("k").value is None  # type: ignore[union-attr]


@pytest.mark.parametrize(("cls", "replaced"), [(KafkaMap, False), (PublishedRuleMap, True)])
def test_a_replace_losing_to_an_equal_put(cls: type[KafkaMap], replaced: bool) -> None:
    log = MemoryLog(hold=True)
    a, b = instances(cls, log, 2)
    finish(log, [Call(lambda: a.put("k", 1))])
    put = Call(lambda: b.put("k", 2))
    wait_for(lambda: log.length() == 2)  # first in the race for version 2
    replace = Call(lambda: a.replace("k", 1, 2))
    wait_for(lambda: log.length() == 3)
    assert finish(log, [put, replace]) == [None, replaced]


def test_local_reads_are_stale_after_another_instance_wrote() -> None:
    log = MemoryLog(hold=True)
    writer_conn = log.connect()
    writer = KafkaMap.over(writer_conn, "w", QUICK)
    reader = LocalReadMap.over(log.connect(), "r", QUICK)
    put = Call(lambda: writer.put("k", 1))
    wait_for(lambda: log.length() == 1)
    log.deliver(to=writer_conn)
    put.join(1)
    assert not put.is_alive()  # the put returned...
    assert reader.get("k") is None  # ...and the read after it misses it


def test_replica_style_refuses_on_a_stale_copy_then_converges() -> None:
    log = MemoryLog(hold=True)
    remover_conn = log.connect()
    remover = ReplicaStyleMap.over(remover_conn, "r", QUICK)
    adder = ReplicaStyleMap.over(log.connect(), "a", QUICK)
    finish(log, [Call(lambda: remover.put("k", 1))])
    removal = Call(lambda: remover.remove("k"))
    wait_for(lambda: log.length() == 2)
    log.deliver(to=remover_conn)
    removal.join(1)
    assert removal.result is True
    assert not adder.put_if_absent("k", 2)  # refused on the stale copy, nothing sent
    assert log.length() == 2
    log.deliver()
    assert remover.keys() == adder.keys() == set()


def test_replica_style_commands_decide_at_apply_time() -> None:
    log = MemoryLog(hold=True)
    maps = instances(ReplicaStyleMap, log, 3)
    calls = [Call(lambda m=m: m.put_if_absent("k", m.client_id)) for m in maps]
    wait_for(lambda: log.length() == 3)
    assert sorted(finish(log, calls)) == [False, False, True]


def test_timeouts_are_indeterminate_for_writes_and_definite_for_reads() -> None:
    (m,) = instances(KafkaMap, MemoryLog(hold=True), 1)
    started = time.monotonic()
    with pytest.raises(Indeterminate):
        m.put("k", 1)
    with pytest.raises(DefiniteFailure):
        m.get("k")
    assert time.monotonic() - started < 2


class _StubConnection:
    """Sends go nowhere: `refuse` raises before sending, otherwise delivery fails."""

    unclean_election = False

    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.replica = Replica(1)

    def send(self, partition: int, record: Record, pending: Pending[Any]) -> None:
        if self.refuse:
            raise DefiniteFailure("queue full")
        pending.fail(Indeterminate("delivery failed: _MSG_TIMED_OUT"))

    def discard(self, partition: int, attempt: str) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_send_rejected_before_sending_is_a_definite_failure() -> None:
    m = KafkaMap.over(_StubConnection(refuse=True), "c", QUICK)
    with pytest.raises(DefiniteFailure):
        m.put("k", 1)


def test_a_delivery_error_is_indeterminate_for_writes_only() -> None:
    m = KafkaMap.over(_StubConnection(refuse=False), "c", QUICK)
    with pytest.raises(Indeterminate, match="_MSG_TIMED_OUT"):
        m.put("k", 1)
    with pytest.raises(DefiniteFailure):
        m.get("k")


def test_compaction_with_tombstones_keeps_every_instance_in_agreement() -> None:
    log = MemoryLog(hold=True, compacted=True)
    a, b = instances(KafkaMap, log, 2)
    calls = [Call(lambda: a.put_if_absent("k", "a")), Call(lambda: b.put_if_absent("k", "b"))]
    wait_for(lambda: log.length() == 2)  # the loser of version 1 is the last record of its race
    finish(log, calls)
    finish(log, [Call(lambda: a.get("k"))])
    before = a._local_entry("k")
    log.compact()
    late = KafkaMap.over(log.connect(), "late", QUICK)
    assert late._local_entry("k") == before
    finish(log, [Call(lambda: b.put("k", "c"))])
    log.compact()
    assert log.length() == 2  # only the live winner and the last barrier are left
    assert KafkaMap.over(log.connect(), "later", QUICK)._local_entry("k") == a._local_entry("k")


def random_ops(m: KafkaMap, rng: random.Random, n: int, keys: int = 4) -> None:
    for _ in range(n):
        key, value = f"k{rng.randrange(keys)}", rng.randrange(1000)
        match rng.choice(["get", "get", "put", "put-if-absent", "replace", "remove"]):
            case "get":
                m.get(key)
            case "put":
                m.put(key, value)
            case "put-if-absent":
                m.put_if_absent(key, value)
            case "replace":
                m.replace(key, m.get(key) or 0, value)
            case _:
                m.remove(key)


@pytest.mark.parametrize("partitions", [1, 3])
def test_compaction_bounds_the_log_by_the_keys_however_many_ops(partitions: int) -> None:
    log = MemoryLog(partitions, compacted=True)
    maps = instances(KafkaMap, log, 3)
    rng = random.Random(7)
    for _ in range(3):
        for m in maps:
            random_ops(m, rng, 200)
    log.compact()
    # One record per key written (its current entry) and one barrier per partition.
    assert log.length() <= 4 + partitions
    fresh = KafkaMap.over(log.connect(), "fresh", QUICK)
    for key in [f"k{i}" for i in range(4)]:
        assert fresh._local_entry(key) == maps[0]._local_entry(key)


def test_where_unclean_election_is_allowed_only_barriers_are_compacted() -> None:
    log = MemoryLog(compacted=True, unclean_election=True)
    (m,) = instances(KafkaMap, log, 1)
    for i in range(50):
        m.put("k", i)
        assert m.get("k") == i
    log.compact()
    assert log.length() == 50 + 1  # every write, and the last barrier
    assert KafkaMap.over(log.connect(), "fresh", QUICK).get("k") == 49
