"""The runner on the in-process log: rate, process retirement, client replacement, the
nemesis ops in the history, and the recorded history checked end to end."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from checkers.faults import windows
from checkers.registry import CheckOptions
from harness.run.runner import Pacer, Plan, Recorder, Runner
from harness.run.verdict import check_run
from history import HistoryWriter, load
from kvstore import DEFAULT_TIMEOUTS, KafkaMap
from kvstore.memlog import MemoryLog
from nemesis.core import Compose, Skipped
from workloads.core import Client, Context, OpDict, info
from workloads.kv import HANDLERS as KV_HANDLERS
from workloads.register import HANDLERS as REGISTER_HANDLERS
from workloads.registry import WORKLOADS
from workloads.store_client import StoreClient

CHECKING = CheckOptions(time_limit=30.0)
"""What the checks of a run with no cluster are told."""


def context(keys: int = 8) -> Context:
    """A workload context for runs with no cluster."""
    return Context(
        bootstrap="",
        topic="t",
        kafka_config="safe",
        store="linearizable",
        keys=keys,
        partitions=1,
        replication_factor=3,
        timeouts=DEFAULT_TIMEOUTS,
    )


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_pacer_averages_the_rate_and_never_bursts_to_catch_up() -> None:
    clock = FakeClock()
    pacer = Pacer(100.0, random.Random(1), clock)
    slots = [pacer.next_slot() for _ in range(2000)]
    assert abs(slots[-1] / len(slots) - 0.01) < 0.001
    clock.now = slots[-1] + 50.0  # every worker was busy for 50 s
    after = [pacer.next_slot() for _ in range(100)]
    assert after[0] == clock.now and after[-1] - after[0] > 0.5


class Toggle:
    """A one-fault nemesis that records what it was asked."""

    faults = ("toggle",)

    def __init__(self) -> None:
        self.calls: list[str] = []

    def setup(self, cluster: Any) -> None: ...

    def invoke(self, f: str) -> dict[str, Any]:
        self.calls.append(f)
        if len(self.calls) == 3:
            raise Skipped("nothing to toggle")
        return {"node": "n1"}

    def teardown(self) -> dict[str, Any]:
        return {}


class FlakyClient:
    """Serves through a real store instance but makes every 5th op info, and fails for
    good after 12 ops."""

    def __init__(self, inner: StoreClient) -> None:
        self._inner = inner
        self._n = 0

    def invoke(self, op: OpDict) -> OpDict:
        self._n += 1
        if self._n % 5 == 0:
            return info("simulated time-out")
        return self._inner.invoke(op)

    @property
    def failure(self) -> str | None:
        return "simulated truncation" if self._n >= 12 else None

    def close(self) -> None:
        self._inner.close()


def _run(tmp_path: Path, workload: str, client_factory: Any, seconds: float = 1.5) -> Path:
    log = MemoryLog()
    wl = WORKLOADS[workload]
    opened: list[str] = []
    lock = threading.Lock()

    def open_client(client_id: str) -> Client:
        with lock:
            opened.append(client_id)
        handlers = KV_HANDLERS if workload == "kv" else REGISTER_HANDLERS
        return client_factory(StoreClient(KafkaMap.over(log.connect(), client_id), handlers))

    path = tmp_path / "history.jsonl"
    nemesis = Toggle()
    with HistoryWriter(path) as writer:
        recorder = Recorder(writer)
        runner = Runner(
            Plan(time_limit=seconds, concurrency=3, rate=400.0, nemesis_interval=0.3),
            wl.ops(random.Random(5), context(keys=4)),
            open_client,
            Compose([nemesis]),
            iter(["start-toggle", "stop-toggle", "start-toggle", "stop-toggle"]),
            recorder,
            random.Random(6),
        )
        statuses: list[str] = []
        runner.run(statuses.append)
    assert statuses and "left" in statuses[0]
    assert nemesis.calls == ["start-toggle", "stop-toggle", "start-toggle", "stop-toggle"]
    return path


def test_runner_records_a_valid_history_near_the_asked_rate(tmp_path: Path) -> None:
    path = _run(tmp_path, "kv", lambda c: c)
    history = load(path)
    results = check_run(history, WORKLOADS["kv"], CHECKING).results
    assert results["valid"] is True, results["linearizable"]
    # 400/s for 1.5 s: the rate is a ceiling whatever the load (the pacer's own test
    # checks the rate on a fake clock; a loaded machine may fall short of it here).
    assert 20 <= results["stats"]["count"] <= 800
    nemesis_fs = [e["f"] for e in history.nemesis if e["type"] == "info"]
    assert nemesis_fs == ["start-toggle", "stop-toggle", "start-toggle", "stop-toggle"]
    skipped = [e for e in history.nemesis if e.get("error") == "nothing to toggle"]
    assert len(skipped) == 1
    # The skipped start opens no window: only the first toggle was in force.
    assert [w["fault"] for w in windows(history.events)] == ["toggle"]


def test_info_retires_the_process_and_a_failed_client_is_replaced(tmp_path: Path) -> None:
    path = _run(tmp_path, "register", FlakyClient)
    history = load(path)  # validates: no process is reused after an info
    by_process: dict[Any, list[str]] = {}
    for e in history.events:
        if e["process"] != "nemesis":
            by_process.setdefault(e["process"], []).append(e["type"])
    infos = [p for p, types in by_process.items() if "info" in types]
    assert infos, "every 5th op was info"
    for p in infos:
        assert by_process[p][-1] == "info", f"process {p} went on after its info"
    # Process ids stay in their worker's lane: slot + k * concurrency.
    assert {p % 3 for p in by_process} == {0, 1, 2}
    assert max(by_process) >= 3 * 3, "clients failed for good were replaced"
    assert check_run(history, WORKLOADS["register"], CHECKING).results["valid"] is True


class SlowStart(Toggle):
    """A fault whose first start takes 0.7 s, like isr-shrink's steps."""

    def invoke(self, f: str) -> dict[str, Any]:
        if not self.calls:
            threading.Event().wait(0.7)
        self.calls.append(f)
        return {"node": "n1"}


def test_a_fault_that_overruns_its_slot_still_leaves_a_whole_interval_to_the_next(
    tmp_path: Path,
) -> None:
    nemesis = SlowStart()
    with HistoryWriter(tmp_path / "history.jsonl") as writer:
        runner = Runner(
            Plan(time_limit=1.5, concurrency=1, rate=10.0, nemesis_interval=0.2),
            WORKLOADS["kv"].ops(random.Random(5), context(keys=1)),
            lambda cid: StoreClient(KafkaMap.over(MemoryLog().connect(), cid), KV_HANDLERS),
            Compose([nemesis]),
            iter(["start-toggle", "stop-toggle", "start-toggle", "stop-toggle"]),
            Recorder(writer),
            random.Random(6),
        )
        runner.run(lambda status: None)
    marks = [e for e in load(tmp_path / "history.jsonl").nemesis]
    started_done = next(
        e["time"] for e in marks if e["f"] == "start-toggle" and e["type"] == "info"
    )
    stop_invoked = next(
        e["time"] for e in marks if e["f"] == "stop-toggle" and e["type"] == "invoke"
    )
    # Without the shift, the stop (slot 0.4 s) would follow the slow start (done at 0.9 s)
    # at once: a fault in force for no time at all.
    assert stop_invoked - started_done >= 0.15e9
