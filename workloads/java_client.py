"""One process of the queue workload under --txn through the official Java client
(kafka-clients 4.4.0, which speaks KIP-890's transactions v2) instead of librdkafka.

Each client incarnation is one JVM running the driver of clients/java/ (built and started
by workloads/java_driver.py), holding one transactional producer and one consumer. The
transactions, assigns, subscribes and polls run there; the driver reports facts (the
records, the offsets, the stage an error stopped, the producer's classification of it) and
the rules of workloads/txn_rules.py turn them into completions, the same rules and the same
history shape as librdkafka's client (workloads/txn_client.py), so that one checker judges
both: the transactional-id pool fences a replaced client, `--abort-p` aborts, a
transaction that did not commit rewinds the consumer (KAFKA-17582).

A reply that does not come within the workload's timeouts is `info`; the JVM is killed
and the client replaced. `--crash-clients` is a real crash here: the driver runs the body,
and then its process is killed (SIGKILL) before any commit or abort, leaving the
transaction open for the successor's fencing or the coordinator's timeout to abort.

The final drains stay on the Python QueueClient (librdkafka): they measure what Kafka
kept, not the client under test.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

from workloads.core import OpDict, consumer_group_name, fail, info, ok
from workloads.java_driver import CLOCK_FILE_KEY, Driver, DriverError, DriverProcess
from workloads.queue_client import POLL_BATCH, QueueClient, QueueSettings
from workloads.txn_rules import (
    TXN_TIMEOUT_MS,
    CrashClock,
    Stage,
    TransactionalIds,
    TxnError,
    TxnSeen,
    after_error,
    conclude,
)

SLACK_S = 5.0
"""Beyond the Java client's own bounded waits: the JVM's start, a collection, the pipe."""
TXN_WAITS = 5
"""The Java client's waits in one transaction, each up to the operation timeout
(max.block.ms): initTransactions, a send's metadata, the deliveries, sendOffsets, and the
commit or abort."""
_STAGES: frozenset[str] = frozenset(get_args(Stage))


def driver_config(s: QueueSettings, client_id: str, tid: str) -> OpDict:
    """Returns the driver's first line: the Java producer's and consumer's properties
    (the librdkafka clients' settings, as the Java client names them) and the topic."""
    t = s.timeouts
    common = {
        "bootstrap.servers": s.bootstrap,
        "socket.connection.setup.timeout.ms": t.connect_ms,
        "reconnect.backoff.max.ms": t.reconnect_backoff_max_ms,
    }
    producer = common | {
        "client.id": f"{client_id}-producer",
        "transactional.id": tid,
        "transaction.timeout.ms": TXN_TIMEOUT_MS,
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 0,
        "request.timeout.ms": t.request_ms,
        "delivery.timeout.ms": t.message_ms,
        # Bounds initTransactions, commit, abort, sendOffsets and a send's wait for metadata.
        "max.block.ms": round(t.operation * 1000),
    }
    consumer = common | {
        "client.id": f"{client_id}-consumer",
        "isolation.level": s.isolation_level,
        "fetch.max.wait.ms": 100,
        "max.poll.records": POLL_BATCH,
        "request.timeout.ms": t.socket_ms,
        "default.api.timeout.ms": round(t.operation * 1000),
        # The transactions commit the group's offsets (consume-transform-produce).
        "enable.auto.commit": False,
    }
    if s.consumer_group:
        consumer |= {
            "group.id": consumer_group_name(s.topic),
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
        }
    else:  # assigned: a log truncated under the consumer is an error, never a reset
        consumer |= {"group.id": f"{s.topic}-{client_id}", "auto.offset.reset": "none"}
    return {
        "topic": s.topic,
        "partitions": s.partitions,
        "group": s.consumer_group,
        "operation_ms": round(t.operation * 1000),
        "close_ms": round(t.close * 1000),
        "producer": producer,
        "consumer": consumer,
    }


def seen_in(reply: OpDict, chose_abort: bool) -> TxnSeen:
    """Takes the driver's reply to a txn request. Returns what it saw of the transaction;
    raises ValueError for a reply that says nothing a transaction can end with."""
    error = reply.get("error")
    if error is not None and error.get("stage") not in _STAGES:
        raise ValueError(f"an error at no stage: {error}")
    if error is None and not any(reply.get(k) for k in ("committed", "aborted", "crashed")):
        raise ValueError(f"a transaction with no end: {reply}")
    return TxnSeen(
        chose_abort=chose_abort,
        crashed=bool(reply.get("crashed")),
        error=None
        if error is None
        else TxnError(
            error["stage"],
            str(error.get("text")),
            fatal=bool(error.get("fatal")),
            retriable=bool(error.get("retriable")),
            requires_abort=bool(error.get("requires_abort")),
        ),
        committed=bool(reply.get("committed")),
        aborted=bool(reply.get("aborted")),
    )


def notes_in(reply: OpDict) -> OpDict:
    """Returns what a poll noted besides its records: assignment changes and errors."""
    return {k: reply[k] for k in ("rebalanced", "errors") if reply.get(k)}


class JavaTxnClient:
    """A Client of the queue workload under --txn whose txn, assign, subscribe and poll
    ops run in a Java driver process (one per incarnation); drains run in a QueueClient."""

    def __init__(
        self,
        settings: QueueSettings,
        client_id: str,
        ids: TransactionalIds,
        crash_every_s: float | None = None,
        start: Callable[[OpDict, str, float], DriverProcess] = Driver.start,
    ) -> None:
        self._s = settings
        self._client_id = client_id
        self._ids = ids
        self._tid, self._incarnation = ids.take()
        self._label = f"{self._tid}#{self._incarnation}"
        # Seeded as librdkafka's client seeds it, so a run's seed gives the same crashes.
        self._crash = CrashClock(crash_every_s, random.Random(f"{client_id}/{self._label}"))
        self._failure: str | None = None
        self._drainer: QueueClient | None = None
        config = driver_config(settings, client_id, self._tid)
        if settings.client_clocks is not None:  # this incarnation's own clock
            config[CLOCK_FILE_KEY] = str(Path(settings.client_clocks) / self._label)
        try:
            self._driver = start(config, self._label, settings.timeouts.catch_up)
        except BaseException:
            ids.release(self._tid, self._incarnation)
            raise

    @property
    def failure(self) -> str | None:
        """Returns why this client serves no more ops (it must be replaced), or None."""
        return self._failure

    def _fail(self, why: str) -> None:
        if self._failure is None:
            self._failure = why

    def invoke(self, op: OpDict) -> OpDict:
        """Takes an invoke. Returns its completion; never raises."""
        try:
            if op["f"] == "drain":
                return self._drain(op)
            if op["f"] == "txn":
                return self._txn(op)
            return self._serve(op)
        except Exception as err:  # an unknown outcome: never guess ok or fail
            self._fail(f"{type(err).__name__}: {err}")
            return info(f"{type(err).__name__}: {err}", op.get("value"))

    def close(self) -> None:
        """Lets the driver close its clients and exit (killed if it takes too long), closes
        the drains' client; then the transactional id is free for the next client."""
        try:
            # The producer's close and then the consumer's, each bounded by the close time.
            self._driver.close(2 * self._s.timeouts.close + SLACK_S)
            if self._drainer is not None:
                self._drainer.close()
        finally:
            self._ids.release(self._tid, self._incarnation)

    def _ask(self, request: OpDict, timeout: float) -> OpDict:
        """Sends one request to the driver; returns its reply. When none comes in time (or
        the driver is gone) kills the driver, fails the client and raises DriverError."""
        try:
            reply = self._driver.ask(request, timeout)
        except DriverError as err:
            self._fail(str(err))
            self._driver.kill()
            raise
        if reply.get("failure"):
            self._fail(str(reply["failure"]))
        return reply

    def _serve(self, op: OpDict) -> OpDict:
        """Runs an assign, subscribe or poll in the driver."""
        value = op.get("value")
        try:
            reply = self._ask({"f": op["f"], "value": value}, self._s.timeouts.operation + SLACK_S)
        except DriverError as err:
            return info(str(err), value)
        if "exception" in reply:  # the Java consumer's assign and subscribe are local
            return fail(str(reply["exception"]), value)
        return ok(reply["value"]) | notes_in(reply)

    def _drain(self, op: OpDict) -> OpDict:
        """Drains a partition through librdkafka's QueueClient, opened on the first drain."""
        if self._drainer is None:
            self._drainer = QueueClient(self._s, self._client_id)
        return self._drainer.invoke(op)

    # ---- one transaction -----------------------------------------------------------

    def _txn(self, op: OpDict) -> OpDict:
        """Runs one transaction in the driver (crashing it after the body when the crash is
        due), aborts after an error when the rules say so; returns the completion."""
        asked: list[list[Any]] = [list(mop) for mop in op["value"]]
        chose_abort = bool(op.get("abort"))
        request = {"f": "txn", "value": asked, "abort": chose_abort, "crash": self._crash.due()}
        try:
            reply = self._ask(request, TXN_WAITS * self._s.timeouts.operation + SLACK_S)
            seen = seen_in(reply, chose_abort)
            done = reply["done"]
            if not isinstance(done, list) or len(done) != len(asked):
                raise ValueError(f"micro-ops done: {done!r}")
        except (DriverError, ValueError, KeyError) as err:
            self._fail(f"{type(err).__name__}: {err}")
            self._driver.kill()
            return info(str(err), asked) | {"transactional-id": self._label}
        if seen.crashed:
            self._driver.kill()  # the crash: the open transaction is left to others to end
        elif seen.error is not None:
            seen = after_error(seen, self._abort)
        completion, replace = conclude(
            seen, asked, done, notes_in(reply), self._label, self._rewind
        )
        if replace is not None:
            self._fail(replace)
        return completion

    def _abort(self) -> str | None:
        """Aborts the transaction an error stopped; returns None when the abort returned,
        else why not."""
        try:
            reply = self._ask({"f": "abort"}, self._s.timeouts.operation + SLACK_S)
        except DriverError as err:
            return str(err)
        if reply.get("aborted"):
            return None
        return str(reply.get("abort_error") or reply.get("exception") or "no abort reported")

    def _rewind(self, first: dict[int, int]) -> dict[str, int]:
        """Takes the first offset the consumer read in each partition during a transaction
        that did not commit. Seeks back there; returns the partitions rewound and where."""
        if not first:
            return {}
        offsets = {str(p): o for p, o in sorted(first.items())}
        try:
            reply = self._ask({"f": "seek", "value": offsets}, self._s.timeouts.operation + SLACK_S)
        except DriverError:
            return {}
        rewound = reply.get("value")
        return {str(p): int(o) for p, o in rewound.items()} if isinstance(rewound, dict) else {}
