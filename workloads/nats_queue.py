"""The queue workload on NATS JetStream: one R-replica file-backed stream is the one
partition (key 0), sends are publishes acknowledged by the stream (the stream sequence is
the offset), and each process reads the whole stream in order with an ordered consumer;
after healing, one drain per server reads the stream through that server from its first
message to its last (Jepsen's final fetches run on every node's client: the lost-acks
view says what each node's drain lacked). A drain's consumer, though, is wherever the
meta leader placed it (an R1 consumer goes to a random current replica), so a drain
through a server need not read that server's copy: the run compares the copies
themselves from each server's disk (harness/run/split_brain.py). The history has the
queue workload's shape, so the queue checker reads it unchanged.

Jepsen's NATS queue test (jepsen-io/nats src/jepsen/nats/queue.clj) publishes with acks
and drains at the end; here every process also reads while the faults go on, as the
Kafka queue's consumers do. An ordered consumer (nats-py's `ordered_consumer`: an
ephemeral push consumer without acks, which the client re-creates from the last stream
sequence it got whenever a delivery is missing or the heartbeats stop) hands a process
every message once and in stream order, the reading Kafka's assigned consumer gives, so
the checker's ordering rules (no skip, no going back) apply to it as they stand. A
pull consumer that fetches and acks would redeliver an unacknowledged message after its
ack wait, out of order by design, which the checker would call an anomaly of NATS.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import Iterator

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError

from checkers import gone_error
from kvstore.topic import TopicAdmin
from workloads.core import Client, Context, OpDict, Workload, fail, info, ok
from workloads.nats_loop import CLOSE_TIMEOUT_S, CONNECT_TIMEOUT_S, LoopThread, connect
from workloads.nats_outcomes import outcome
from workloads.nats_publish import attempts, publish

PARTITION = 0
"""The one partition: the stream."""
SEND = 0.5
PUBLISH_TIMEOUT_S = 5.0
"""How long a publish waits for the stream's ack before it is indeterminate."""
POLL_S = 0.1
"""How long a poll waits for its first message."""
POLL_BATCH = 100
HEARTBEAT_S = 1.0
"""The ordered consumer's idle heartbeat: two missed re-create it (nats-py)."""
SUBSCRIBE_TIMEOUT_S = 5.0
STREAM_WAIT_S = 30.0
"""How long stream creation waits for every replica to be current."""
STREAM_NOT_FOUND = 10059
"""JetStream's error code for a stream that does not exist (JSStreamNotFoundErr)."""


def subject(stream: str) -> str:
    """Returns the subject the workload publishes to: one the stream's `<stream>.>`
    subjects take (harness/db/nats.py makes the stream)."""
    return f"{stream}.{PARTITION}"


def nats_queue_ops(rng: random.Random, ctx: Context) -> Iterator[OpDict]:
    """Takes a random source. Yields queue invokes forever: sends of unique integers to
    the one partition and polls, in equal measure."""
    messages = itertools.count(1)
    while True:
        if rng.random() < SEND:
            yield {"f": "send", "key": PARTITION, "value": next(messages)}
        else:
            yield {"f": "poll", "value": None}


def create_stream(admin: TopicAdmin, ctx: Context) -> None:
    """Creates the stream (the database's admin makes a topic of one partition a stream
    of that many replicas) and waits until every replica is current."""
    replicas = admin.brokers()[: ctx.replication_factor]
    admin.create_topic(ctx.topic, [replicas])
    admin.wait_full_isr(ctx.topic, STREAM_WAIT_S)


def _record(msg: Msg) -> list[int | str]:
    """Returns a received message as [stream sequence, value]."""
    try:
        value: int | str = int(msg.data)
    except ValueError:  # not one of ours: recorded as it is, the checker says so
        value = msg.data.decode(errors="replace")
    return [int(msg.metadata.sequence.stream), value]


class NatsQueueClient:
    """One process's connection: publishes, and its own ordered consumer of the stream."""

    def __init__(
        self, servers: str, stream: str, client_id: str, catch_up_s: float, publish: str = "once"
    ) -> None:
        self._stream = stream
        self._publish = publish
        """The `--nats-publish` mode: how a send publishes (workloads/nats_publish.py)."""
        self._catch_up_s = catch_up_s
        self._loop = LoopThread(f"nats-{client_id}")
        try:
            self._nc = self._loop.run(connect(servers, client_id), CONNECT_TIMEOUT_S + 1)
        except BaseException:
            self._loop.close()
            raise
        self._js = self._nc.jetstream(timeout=SUBSCRIBE_TIMEOUT_S)
        self._reader: Subscription | None = None
        self._last_read = 0
        """The stream sequence of the last message this process read."""

    @property
    def failure(self) -> str | None:
        """Returns why the client can serve no more ops (its connection closed), or None."""
        return "the connection is closed" if self._nc.is_closed else None

    def invoke(self, op: OpDict) -> OpDict:
        """Takes a send, poll or drain invoke; returns its completion, never raising."""
        f = op["f"]
        try:
            if f == "send":
                bound = PUBLISH_TIMEOUT_S * attempts(self._publish) + 1
                return self._loop.run(self._send(op["value"]), bound)
            if f == "poll":
                return self._loop.run(self._poll(), SUBSCRIBE_TIMEOUT_S + 1)
            if f == "drain":
                drain = self._drain_through(op["server"]) if "server" in op else self._drain()
                return self._loop.run(drain, self._catch_up_s + CONNECT_TIMEOUT_S + 1)
        except Exception as err:  # sorted into fail or info by what the error proves
            said = f"{type(err).__name__}: {err}"
            rule = "publish" if f == "send" else "fetch"
            return fail(said) if outcome(rule, err) == "fail" else info(said)
        return fail(f"the NATS queue has no op {f!r}")

    async def _send(self, value: int) -> OpDict:
        waits = [PUBLISH_TIMEOUT_S] * attempts(self._publish)
        ack = await publish(self._js, subject(self._stream), value, self._publish, waits)
        return ok([ack.seq, value])

    async def _poll(self) -> OpDict:
        if self._reader is not None and _stalled(self._reader):
            with contextlib.suppress(Exception):  # its consumer is gone already
                await self._reader.unsubscribe()
            self._reader = None
        if self._reader is None:
            self._reader = await self._subscribe(after=self._last_read)
        records: list[list[int | str]] = []
        try:
            records.append(_record(await self._reader.next_msg(timeout=POLL_S)))
        except NatsTimeout:
            return ok({})
        while len(records) < POLL_BATCH and self._reader.pending_msgs > 0:
            records.append(_record(await self._reader.next_msg(timeout=POLL_S)))
        self._last_read = int(records[-1][0])
        return ok({str(PARTITION): records})

    async def _subscribe(self, after: int = 0, js: JetStreamContext | None = None) -> Subscription:
        """Returns an ordered consumer of the stream (through js, else this process's own
        connection) from the message after sequence `after` (0: from the first)."""
        if after == 0:
            start: dict[str, object] = {"deliver_policy": DeliverPolicy.ALL}
        else:
            start = {"deliver_policy": DeliverPolicy.BY_START_SEQUENCE, "opt_start_seq": after + 1}
        return await (js or self._js).subscribe(
            subject(self._stream),
            stream=self._stream,
            ordered_consumer=True,
            idle_heartbeat=HEARTBEAT_S,
            **start,  # type: ignore[arg-type]
        )

    async def _drain_through(self, server: str) -> OpDict:
        """Drains the stream through one server: a connection to it alone."""
        nc = await connect(server, f"drain-{server}")
        try:
            return await self._drain(nc.jetstream(timeout=SUBSCRIBE_TIMEOUT_S))
        finally:
            with contextlib.suppress(Exception):  # closing is best effort
                await nc.close()

    async def _drain(self, js: JetStreamContext | None = None) -> OpDict:
        """Reads the stream from its first message to the last it holds now with an
        ordered consumer of its own (through js, else this process's connection); fail
        when it cannot get there in time. A stream JetStream says does not exist (10059:
        the meta group, whose leader answers, has no such stream, as after a power cut
        lost its creation) is read as holding nothing: every acknowledged publish is
        lost, and the drain says why (an ok read whose error says the store is gone:
        checkers/gone.py)."""
        try:
            state = (await (js or self._js).stream_info(self._stream)).state
        except NotFoundError as err:
            if err.err_code != STREAM_NOT_FOUND:
                raise
            said = f"stream {self._stream} not found (JetStream {STREAM_NOT_FOUND})"
            return ok([]) | {"last-seq": 0, "stream": "not found", "error": gone_error(said)}
        last = int(state.last_seq)
        if state.messages == 0:
            return ok([]) | {"last-seq": last}
        reader = await self._subscribe(js=js)
        records: list[list[int | str]] = []
        deadline = time.monotonic() + self._catch_up_s
        try:
            while not records or int(records[-1][0]) < last:
                left = deadline - time.monotonic()
                if left <= 0:
                    return fail(f"did not reach the stream's last sequence {last} in time")
                try:
                    records.append(_record(await reader.next_msg(timeout=min(left, 1.0))))
                except NatsTimeout:
                    continue
        finally:
            await reader.unsubscribe()
        return ok(records) | {"last-seq": last}

    def close(self) -> None:
        """Closes the connection and the loop, within a bounded time."""
        try:
            with contextlib.suppress(Exception):  # closing is best effort
                self._loop.run(self._nc.close(), CLOSE_TIMEOUT_S)
        finally:
            self._loop.close()


def _stalled(reader: Subscription) -> bool:
    """Returns whether an ordered consumer has stopped re-creating itself: nats-py's
    heartbeat check ends for good when re-creating the consumer fails (a 503 while the
    stream has no leader), after which nothing more is delivered. It reads nats-py's
    private state, as nothing public says so."""
    check = getattr(getattr(reader, "_jsi", None), "_hbtask", None)
    return isinstance(check, asyncio.Task) and check.done()


def open_client(ctx: Context, client_id: str) -> Client:
    """Opens one process's connection to the cluster's servers (ctx.bootstrap)."""
    return NatsQueueClient(
        ctx.bootstrap, ctx.topic, client_id, ctx.timeouts.catch_up, ctx.nats.publish
    )


def _final_reads(ctx: Context) -> list[OpDict]:
    """Returns one drain per server, through that server: ctx.bootstrap lists the
    servers' URLs in node order (n1 first: NatsDb.bootstrap_servers)."""
    servers = ctx.bootstrap.split(",")
    return [
        {"f": "drain", "key": PARTITION, "value": None, "node": f"n{i}", "server": url}
        for i, url in enumerate(servers, start=1)
    ]


NATS_QUEUE = Workload(
    name="queue",
    create_topics=create_stream,
    ops=nats_queue_ops,
    open_client=open_client,
    final_reads=_final_reads,
    model="queue",
)
"""The queue workload when the database is NATS."""
