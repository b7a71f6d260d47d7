"""Runs a workload's clients and a nemesis on plain threads for a time limit, recording
every invoke and completion in the history the moment it happens.

One worker thread per process slot. An op that ends `info` retires its process and
the worker goes on under a new process id (Jepsen's rule); a client that fails for
good is replaced by a fresh one, under a new process id too.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from harness import signals
from harness.run.run_log import nemesis_line
from history import HistoryWriter
from nemesis.cluster import Cluster
from nemesis.core import Compose, Skipped, split_f
from nemesis.schedule import FaultPlan
from workloads.core import Client, OpDict

LOG = logging.getLogger("harness.run")
REOPEN_PAUSE_S = 1.0
STATUS_EVERY_S = 0.5


class Recorder:
    """Writes events to the history and keeps the figures the status line shows; each
    nemesis step is a line of run.log too."""

    def __init__(self, writer: HistoryWriter) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self.counts = {"ok": 0, "fail": 0, "info": 0}
        self.fault = ""
        self.max_process = -1
        self._nemesis_invoked: dict[str, tuple[int, float]] = {}

    def invoke(self, process: int, op: OpDict) -> None:
        """Records the invoke of op by process."""
        with self._lock:
            self.max_process = max(self.max_process, process)
        self._writer.append({"process": process, "type": "invoke", **_fields(op)})

    def complete(self, process: int, op: OpDict, completion: OpDict) -> None:
        """Records the completion of process's op."""
        event = {"process": process, **_fields(op), **completion}
        self._writer.append(event)
        with self._lock:
            self.counts[completion["type"]] += 1

    def elapsed_ns(self) -> int:
        """Returns the history's clock now."""
        return self._writer.elapsed_ns()

    def nemesis(self, kind: str, f: str, value: Any = None, error: str | None = None) -> None:
        """Records a nemesis event (process "nemesis"); a completion is logged with the
        invoke's test and wall time."""
        event: dict[str, Any] = {"process": "nemesis", "type": kind, "f": f, "value": value}
        if error is not None:
            event["error"] = error
        written = self._writer.append(event)
        if kind == "invoke":
            self._nemesis_invoked[f] = (written["time"], time.time())
            return
        line = nemesis_line(f, self._nemesis_invoked.pop(f, None), written["time"], value, error)
        LOG.log(logging.WARNING if error else logging.INFO, line)


def _fields(op: OpDict) -> OpDict:
    # "node": the server an op reads through, when it names one (a NATS queue's drains).
    return {k: op[k] for k in ("f", "key", "value", "node") if k in op}


class Pacer:
    """Spaces invokes so that all workers together make about `rate` ops/s.

    Gaps are uniform in [0, 2/rate] (mean 1/rate); a worker that falls behind does
    not burst to catch up, so the rate is a ceiling, not a debt.
    """

    def __init__(self, rate: float, rng: random.Random, clock: Callable[[], float]) -> None:
        self._gap = 1.0 / rate
        self._rng = rng
        self._clock = clock
        self._lock = threading.Lock()
        self._next = clock()

    def next_slot(self) -> float:
        """Returns the clock time at which the caller may invoke its next op."""
        with self._lock:
            slot = max(self._next, self._clock())
            self._next = slot + self._rng.uniform(0, 2 * self._gap)
            return slot


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """How long and how hard a run goes."""

    time_limit: float
    concurrency: int
    rate: float
    nemesis_interval: float

    def words(self) -> str:
        """Returns how hard and how long the workload goes, in words for run.log."""
        return (
            f"{self.concurrency} clients at {self.rate:g} ops/s for {self.time_limit:g} s, "
            f"faults {self.nemesis_interval:g} s apart"
        )


class Runner:
    """The workload phase of one test: worker threads, a nemesis thread, a status line."""

    def __init__(
        self,
        plan: Plan,
        ops: Iterator[OpDict],
        open_client: Callable[[str], Client],
        nemesis: Compose,
        nemesis_ops: Iterator[str],
        recorder: Recorder,
        rng: random.Random,
    ) -> None:
        self._plan = plan
        self._ops = ops
        self._ops_lock = threading.Lock()
        self._open_client = open_client
        self._nemesis = nemesis
        self._nemesis_ops = nemesis_ops
        self._recorder = recorder
        self._pacer = Pacer(plan.rate, random.Random(rng.random()), time.monotonic)
        self._stop = threading.Event()
        self._end = 0.0

    def run(self, status: Callable[[str], None]) -> None:
        """Runs the workload for the time limit; re-raises KeyboardInterrupt after every
        thread has stopped (each is bounded by the store's own time-outs)."""
        self._end = time.monotonic() + self._plan.time_limit
        threads = [
            threading.Thread(target=self._worker, args=(i,), name=f"worker-{i}", daemon=True)
            for i in range(self._plan.concurrency)
        ]
        threads.append(threading.Thread(target=self._nemesis_loop, name="nemesis", daemon=True))
        for t in threads:
            t.start()
        try:
            while any(t.is_alive() for t in threads):
                status(self.status_text())
                time.sleep(STATUS_EVERY_S)
        except KeyboardInterrupt:
            self._stop.set()
            with signals.shielded():
                status("interrupted: waiting for in-flight operations")
                for t in threads:
                    t.join()
            raise

    def status_text(self) -> str:
        """Returns the live status: time left, counts by outcome, the fault in force."""
        left = max(0.0, self._end - time.monotonic())
        c = self._recorder.counts
        fault = self._recorder.fault or "no fault"
        return f"{left:4.0f} s left | ok {c['ok']} fail {c['fail']} info {c['info']} | {fault}"

    def _running(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self._end

    def _next_op(self) -> OpDict:
        with self._ops_lock:
            return next(self._ops)

    def _worker(self, slot: int) -> None:
        process = slot
        client: Client | None = None
        try:
            while self._running():
                if client is None:
                    client = self._open(process)
                    continue
                when = self._pacer.next_slot()
                if self._stop.wait(max(0.0, when - time.monotonic())) or not self._running():
                    break
                op = self._next_op()
                self._recorder.invoke(process, op)
                completion = client.invoke(op)
                self._recorder.complete(process, op, completion)
                failure = client.failure
                if completion["type"] == "info" or failure is not None:
                    process += self._plan.concurrency
                if failure is not None:
                    LOG.warning(
                        "client of process %s failed (%s): opening a new one", process, failure
                    )
                    client.close()
                    client = None
        finally:
            if client is not None:
                client.close()

    def _open(self, process: int) -> Client | None:
        try:
            return self._open_client(f"p{process}")
        except Exception as err:  # e.g. no broker reachable during a fault: try again
            LOG.warning("process %s could not open its client: %s", process, err)
            self._stop.wait(REOPEN_PAUSE_S)
            return None

    def _nemesis_loop(self) -> None:
        interval = self._plan.nemesis_interval
        started = time.monotonic()
        for step, f in enumerate(self._nemesis_ops, start=1):
            if time.monotonic() > started + step * interval:
                # The last op overran this one's slot (isr-shrink's start takes 20-40 s):
                # shift the schedule so this fault, too, waits a whole interval, instead
                # of every late op firing back to back.
                started = time.monotonic() - (step - 1) * interval
            due = started + step * interval
            if self._stop.wait(max(0.0, due - time.monotonic())) or not self._running():
                return
            run_nemesis_op(self._nemesis, f, self._recorder)


def run_nemesis_op(nemesis: Compose, f: str, recorder: Recorder) -> None:
    """Takes a nemesis op. Invokes it and records both ends; a fault that cannot happen
    is recorded as info with the reason, and the run goes on."""
    recorder.nemesis("invoke", f)
    action, fault = split_f(f)
    try:
        value = nemesis.invoke(f)
    except Skipped as why:
        recorder.nemesis("info", f, {"skipped": str(why)}, error=str(why))
        return
    except Exception as err:  # a broken fault must not end the run; the history says why
        LOG.exception("nemesis op %s failed", f)
        recorder.nemesis("info", f, {"failed": repr(err)}, error=repr(err))
        recorder.fault = f"{fault} (failed)" if action == "start" else ""
        return
    recorder.nemesis("info", f, value)
    recorder.fault = _describe_fault(fault, value) if action == "start" else ""


def _describe_fault(fault: str, value: dict[str, Any]) -> str:
    target = (
        value.get("isolated")
        or value.get("killed")
        or value.get("paused")
        or value.get("node")
        or value.get("client")
        or value.get("leader")
    )
    if isinstance(target, list):
        target = ", ".join(str(t) for t in target)
    return f"{fault} ({target})" if target else fault


def heal_all(faults: FaultPlan, cluster: Cluster | None, recorder: Recorder) -> None:
    """Heals every fault of the plan and every node not running (FaultPlan.heal), and
    records it all as the `heal` op."""
    recorder.nemesis("invoke", "heal")
    try:
        report = faults.heal(cluster)
    except Exception as err:  # recorded: a heal that failed explains later anomalies
        recorder.nemesis("info", "heal", {"failed": repr(err)}, error=repr(err))
        return
    recorder.nemesis("info", "heal", report)
    recorder.fault = ""
