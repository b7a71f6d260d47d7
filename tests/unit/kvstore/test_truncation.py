"""A log truncated under the store (an unclean election) on the in-process log: the instances
that read past the cut fail with the cause, the op in flight is info, a fresh instance reads
what was kept, the checker calls the lost write out, and the runner replaces failed clients.
Also the unclean-election rule: attempts judged lost are Indeterminate there."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.run.runner import Plan, Recorder, Runner
from harness.run.verdict import check_run
from history import HistoryWriter, load
from kvstore import DefiniteFailure, Indeterminate, KafkaMap, Timeouts
from kvstore.memlog import MemoryLog
from kvstore.records import Record
from kvstore.state import Outcome
from kvstore.variants import ReplicaStyleMap
from nemesis.core import Compose
from tests.unit.harness.run.test_runner import CHECKING, context
from tests.unit.kvstore.test_map import Call, finish, instances, wait_for
from workloads.core import Client, OpDict
from workloads.kv import HANDLERS
from workloads.registry import WORKLOADS
from workloads.store_client import StoreClient


class ScriptedHistory:
    """Ops run by hand through the kv workload's own client, recorded as the runner does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer = HistoryWriter(path)

    def invoke(
        self, process: int, client: StoreClient, f: str, key: Any, value: Any = None
    ) -> OpDict:
        """Records the invoke, runs the op, records and returns its completion."""
        op = {"f": f, "key": key, "value": value}
        self._writer.append({"process": process, "type": "invoke", **op})
        completion = client.invoke(op)
        self._writer.append({"process": process, **op, **completion})
        return completion

    def linearizable(self) -> dict[str, Any]:
        """Closes the history and returns the kv workload's linearizability result for it."""
        self._writer.close()
        return check_run(load(self.path), WORKLOADS["kv"], CHECKING).results["linearizable"]


def client(m: KafkaMap) -> StoreClient:
    return StoreClient(m, HANDLERS)


def test_truncation_fails_the_instances_that_read_past_it_and_a_fresh_one_reads_what_was_kept(
    tmp_path: Path,
) -> None:
    log = MemoryLog(unclean_election=True)
    history = ScriptedHistory(tmp_path / "history.jsonl")
    first = client(KafkaMap.over(log.connect(), "p0"))
    assert history.invoke(0, first, "put", 1, 10)["type"] == "ok"
    kept = log.end()
    assert history.invoke(0, first, "put", 1, 11)["type"] == "ok"
    assert history.invoke(0, first, "get", 1)["value"] == 11
    log.truncate(0, kept)

    assert first.failure is not None and "truncated at offset 1" in first.failure
    refused = history.invoke(0, first, "get", 1)
    assert refused["type"] == "fail" and "truncated" in refused["error"]
    assert log.end() == kept, "a failed instance sends nothing"
    fresh = client(KafkaMap.over(log.connect(), "p1"))
    assert history.invoke(1, fresh, "get", 1)["value"] == 10

    result = history.linearizable()
    assert result["valid"] is False
    assert [f["key"] for f in result["failures"]] == [1]


def test_the_op_in_flight_at_a_truncation_is_info_with_the_cause(tmp_path: Path) -> None:
    log = MemoryLog(hold=True, unclean_election=True)
    (m,) = instances(KafkaMap, log, 1)
    m._timeouts = Timeouts(operation=30.0)  # only the truncation can end the wait
    finish(log, [Call(lambda: m.put("k", 1))])
    kept = log.end()
    finish(log, [Call(lambda: m.put("k", 2))])
    history = ScriptedHistory(tmp_path / "history.jsonl")
    in_flight: list[OpDict] = []
    worker = threading.Thread(
        target=lambda: in_flight.append(history.invoke(0, client(m), "put", "k", 3))
    )
    worker.start()
    wait_for(lambda: log.length() == 3)  # sent, not yet delivered
    log.truncate(0, kept)
    worker.join(2)
    assert not worker.is_alive(), "the wait ended at the truncation, not at its time-out"
    (completion,) = in_flight
    assert completion["type"] == "info"
    assert "truncated at offset 1" in completion["error"]


def test_an_instance_that_did_not_read_past_the_cut_goes_on_on_the_log_as_it_is() -> None:
    log = MemoryLog(hold=True)
    writer_conn, lagging_conn = log.connect(), log.connect()
    writer, lagging = KafkaMap.over(writer_conn, "w"), KafkaMap.over(lagging_conn, "l")
    finish(log, [Call(lambda: writer.put("k", 1))])
    kept = log.end()
    put = Call(lambda: writer.put("k", 2))
    wait_for(lambda: log.length() == kept + 1)
    log.deliver(to=writer_conn)
    put.join(1)
    log.truncate(0, kept)
    assert writer.failure is not None
    assert lagging.failure is None
    assert finish(log, [Call(lambda: lagging.get("k"))]) == [1]


class Truncate:
    """A nemesis that cuts the in-process log back by `by` messages, as an unclean
    election does to the real one."""

    faults = ("truncate",)

    def __init__(self, log: MemoryLog, by: int) -> None:
        self._log = log
        self._by = by

    def setup(self, cluster: Any) -> None: ...

    def invoke(self, f: str) -> dict[str, Any]:
        if f == "start-truncate":
            self._log.truncate(0, max(0, self._log.end() - self._by))
        return {}

    def teardown(self) -> dict[str, Any]:
        return {}


def test_the_runner_replaces_instances_failed_by_a_truncation(tmp_path: Path) -> None:
    log = MemoryLog(unclean_election=True)
    concurrency = 3

    def open_client(client_id: str) -> Client:
        return StoreClient(KafkaMap.over(log.connect(), client_id), HANDLERS)

    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as writer:
        runner = Runner(
            Plan(time_limit=1.5, concurrency=concurrency, rate=300.0, nemesis_interval=0.5),
            WORKLOADS["kv"].ops(random.Random(3), context(keys=4)),
            open_client,
            Compose([Truncate(log, by=20)]),
            iter(["start-truncate", "stop-truncate"]),
            Recorder(writer),
            random.Random(4),
        )
        runner.run(lambda _: None)
    history = load(path)  # validates: no process goes on after its info
    cut = next(e["index"] for e in history.nemesis if e["f"] == "start-truncate")
    told = [e for e in history.events if "truncated" in str(e.get("error", ""))]
    assert told, "the ops the truncation ended say why"
    assert all(e["type"] in ("info", "fail") for e in told)
    for t in told:  # a failed instance's process does nothing more
        assert not [
            e for e in history.events if e["process"] == t["process"] and e["index"] > t["index"]
        ]
    before = {e["process"] for e in history.events if e["index"] < cut}
    fresh = [e for e in history.events if e["process"] not in before and e["type"] == "ok"]
    assert fresh, "fresh instances, under new process ids, served after the truncation"
    assert min(e["process"] for e in fresh) >= concurrency


# --- the unclean-election rule ------------------------------------------------------------


def race_put_if_absent(log: MemoryLog, cls: type[KafkaMap] = KafkaMap) -> list[Call]:
    a, b = instances(cls, log, 2)
    calls = [Call(lambda: a.put_if_absent("k", "a")), Call(lambda: b.put_if_absent("k", "b"))]
    wait_for(lambda: log.length() == 2)  # both raced for version 1
    return calls


def outcomes(log: MemoryLog, calls: list[Call]) -> list[Any]:
    finish(log, calls)
    return [c.error or c.result for c in calls]


def test_a_lost_attempt_is_false_on_a_safe_topic() -> None:
    log = MemoryLog(hold=True)
    assert outcomes(log, race_put_if_absent(log)) == [True, False]


def test_a_lost_attempt_is_indeterminate_where_unclean_election_is_allowed() -> None:
    log = MemoryLog(hold=True, unclean_election=True)
    won, lost = outcomes(log, race_put_if_absent(log))
    assert won is True
    assert isinstance(lost, Indeterminate) and "unclean leader election" in str(lost)


class FailsAfterLosing(KafkaMap):
    """Its instance fails (as on a fatal client error) right after an attempt loses."""

    def _tidy(self, partition: int, record: Record, outcome: Outcome) -> None:
        super()._tidy(partition, record, outcome)
        if not outcome.applied:
            self._replica.fail("fatal Kafka client error")


@pytest.mark.parametrize("unclean", [False, True])
def test_a_failure_after_a_lost_attempt_is_indeterminate_only_under_unclean_election(
    unclean: bool,
) -> None:
    log = MemoryLog(hold=True, unclean_election=unclean)
    winner = KafkaMap.over(log.connect(), "w")
    loser = FailsAfterLosing.over(log.connect(), "l")
    calls = [Call(lambda: winner.put("k", 1)), Call(lambda: loser.put("k", 2))]
    wait_for(lambda: log.length() == 2)
    log.deliver()  # the loser's retry is refused before sending: its replica has failed
    finish(log, calls)
    assert calls[0].error is None
    error = calls[1].error
    assert isinstance(error, Indeterminate if unclean else DefiniteFailure), error
    assert "fatal Kafka client error" in str(error.__cause__ or error)


def test_a_replica_style_command_refused_where_applied_is_indeterminate_there() -> None:
    log = MemoryLog(hold=True, unclean_election=True)
    won, lost = outcomes(log, race_put_if_absent(log, ReplicaStyleMap))
    assert won is True
    assert isinstance(lost, Indeterminate)


def test_no_tombstone_is_written_where_unclean_election_is_allowed() -> None:
    log = MemoryLog(compacted=True, unclean_election=True)
    (m,) = instances(KafkaMap, log, 1)
    for i in range(5):
        m.put("k", i)
    assert m.get("k") == 4
    assert all(value is not None for messages in log.partitions for _, _, value in messages)


@pytest.mark.parametrize("unclean", [False, True])
def test_a_precondition_false_without_any_attempt_stays_false(unclean: bool) -> None:
    (m,) = instances(KafkaMap, MemoryLog(unclean_election=unclean), 1)
    assert m.remove("k") is False
    assert m.replace("k", 1, 2) is False
