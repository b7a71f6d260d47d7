"""NATS JetStream on real servers in Docker: three nats-server 2.12.1 (Jepsen's version)
with sync_interval always come up on a labelled network; an R3 file-backed stream keeps
every message it acked while its leader is SIGKILLed and a new one takes over, on every
replica once the killed server is back, and stores none that the cluster refused with
"no responders" meanwhile (so a client may call that refusal a definite fail); a publish
that timed out may be stored all the same, so one asked again is stored twice unless it
carries its Nats-Msg-Id; a KV bucket, read from the stream leader and
through Direct Get, puts, gets, creates, updates at the expected revision only, and
deletes; each server's log, config and store are copied out, and the cluster is found
again from its labels; nothing is left behind.

The queue half is the shape of Jepsen's NATS queue test (jepsen-io/nats
src/jepsen/nats/queue.clj: publish with acks, then drain with a pull consumer that
fetches and acks; a lost message is one acked and never read, on any node).
"""

from __future__ import annotations

import asyncio
import tarfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import StreamConfig
from nats.js.errors import (
    BadRequestError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
    NoStreamResponseError,
    ServiceUnavailableError,
)

from harness.cluster.engine import docker_client
from harness.cluster.nats import (
    DEFAULT_NATS_VERSION,
    KV_READS,
    KvReads,
    NatsCluster,
    NatsSpec,
    ensure_nats_image,
    kv_config,
    stream_config,
)
from tests.integration.conftest import PREFIX
from workloads.nats_publish import publish as publish_again

STREAM, SUBJECT = "queue", "queue.0"
NO_PLACEMENT = 10005
"""JetStream's error code when the meta leader finds no peers to place a stream on."""
BATCH = 100
ACK_TIMEOUT_S = 2.0


@pytest.fixture(scope="module")
def nats_cluster() -> Iterator[NatsCluster]:
    """Three NATS servers, syncing every write; removed at the end even on failure."""
    client = docker_client()
    ensure_nats_image(client, print, DEFAULT_NATS_VERSION)
    cluster = NatsCluster(NatsSpec(name=f"{PREFIX}-nats", sync="always"), client)
    try:
        cluster.up(timeout=90)
        yield cluster
    finally:
        cluster.down()
        assert cluster.exists() == 0


def wait_for(what: str, pred: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


async def connect(cluster: NatsCluster) -> NatsClient:
    return await nats.connect(
        servers=cluster.client_urls,
        connect_timeout=2,
        reconnect_time_wait=0.2,
        max_reconnect_attempts=-1,
    )


@dataclass
class Published:
    """What became of each value published: acked (stored, the server said so),
    refused (no server had the stream's subjects, so nothing took the message: nats-py's
    NoStreamResponseError, 503 no responders) or unknown (any other error: a timed-out
    publish may still be stored)."""

    acked: set[int] = field(default_factory=set)
    refused: set[int] = field(default_factory=set)
    unknown: set[int] = field(default_factory=set)


async def publish(js: JetStreamContext, start: int, want: int, within_s: float) -> Published:
    """Publishes start, start+1, ... one at a time until `want` are acked or within_s
    seconds pass; returns what became of each."""
    done = Published()
    deadline = time.monotonic() + within_s
    value = start
    while len(done.acked) < want and time.monotonic() < deadline:
        try:
            await js.publish(SUBJECT, str(value).encode(), timeout=ACK_TIMEOUT_S)
            done.acked.add(value)
        except NoStreamResponseError:
            done.refused.add(value)
            await asyncio.sleep(0.05)
        except NatsError:
            done.unknown.add(value)
        value += 1
    return done


async def drain(js: JetStreamContext, expected: int) -> list[int]:
    """Reads the stream from its start with a pull consumer, fetching and acking, until
    `expected` messages or 10 s; returns the values in delivery order."""
    sub = await js.pull_subscribe(SUBJECT, durable="drain", stream=STREAM)
    read: list[int] = []
    deadline = time.monotonic() + 10
    while len(read) < expected and time.monotonic() < deadline:
        try:
            batch = await sub.fetch(64, timeout=1)
        except NatsError:
            continue
        for msg in batch:
            read.append(int(msg.data))
            await msg.ack()
    return read


def test_acked_messages_survive_a_killed_stream_leader(nats_cluster: NatsCluster) -> None:
    cluster = nats_cluster
    views = cluster.jetstream_views()
    assert all(v.sync_always for v in views.values()), "the always profile is not in force"

    async def publishing(start: int) -> Published:
        nc = await connect(cluster)
        try:
            return await publish(nc.jetstream(), start, BATCH, within_s=20)
        finally:
            await nc.close()

    async def creating() -> None:
        nc = await connect(cluster)
        try:
            await placed(nc.jetstream(), stream_config(STREAM, [f"{STREAM}.>"], 3))
        finally:
            await nc.close()

    # The first batch waits for the new stream's leader: before it, a publish meets no
    # responder (refused), which a loaded make test met.
    asyncio.run(creating())
    wait_for("a stream leader", lambda: cluster.stream_leader(STREAM) is not None)
    before = asyncio.run(publishing(0))
    assert len(before.acked) == BATCH and not before.refused and not before.unknown
    leader = cluster.stream_leader(STREAM)
    assert leader is not None
    cluster.kill(leader)
    assert cluster.state(leader) == "exited"
    # Published at once: the first publishes meet the election.
    after = asyncio.run(publishing(BATCH))
    assert len(after.acked) == BATCH, f"only {len(after.acked)} acked within 20 s of the kill"
    new_leader = cluster.stream_leader(STREAM)
    assert new_leader not in (None, leader), f"{new_leader} leads after {leader} was killed"
    cluster.start(leader)

    def caught_up() -> bool:
        lag = cluster.replica_lag(STREAM)
        return set(lag) == set(cluster.nodes) and not any(lag.values())

    wait_for(f"{leader} to catch up", caught_up)

    # Every replica comes to hold the same stream, the restarted one included (Jepsen's
    # NATS checker also looks for writes lost on one node).
    def last_seqs() -> dict[str, int]:
        views = cluster.jetstream_views()
        return {n: v.streams[STREAM].last_seq for n, v in views.items() if STREAM in v.streams}

    wait_for(
        "every replica to hold the same stream",
        lambda: set(last_seqs()) == set(cluster.nodes) and len(set(last_seqs().values())) == 1,
    )
    stored = next(iter(last_seqs().values()))

    async def read_back() -> list[int]:
        nc = await connect(cluster)
        try:
            return await drain(nc.jetstream(), stored)
        finally:
            await nc.close()

    read = asyncio.run(read_back())
    acked = before.acked | after.acked
    assert not acked - set(read), f"acked and never read: {sorted(acked - set(read))}"
    assert not set(read) & after.refused, "a publish that met no responders was stored"
    assert set(read) <= acked | after.unknown, "read values never published"
    assert len(read) == len(set(read)) == stored, f"{len(read)} reads of {stored} messages"
    print(f"after the kill: {len(after.refused)} refused, {len(after.unknown)} unknown")


def test_logs_config_and_store_are_copied_and_the_cluster_is_found_again(
    nats_cluster: NatsCluster, tmp_path: Path
) -> None:
    nats_cluster.copy_logs(tmp_path)
    for node in nats_cluster.nodes:
        assert "Server is ready" in (tmp_path / node / "nats.log").read_text()
        assert f"server_name: {node}\n" in (tmp_path / node / "nats.conf").read_text()
        with tarfile.open(tmp_path / node / "data.tar") as tar:
            assert any(name.startswith("nats/jetstream/") for name in tar.getnames())
    again = NatsCluster(NatsSpec(name=nats_cluster.spec.name), docker_client())
    assert again.attach()
    assert again.spec == nats_cluster.spec
    assert [again.ip(n) for n in again.nodes] == [nats_cluster.ip(n) for n in nats_cluster.nodes]


async def fetch_when_served(
    sub: JetStreamContext.PullSubscription, batch: int, seconds: float = 20
) -> list[Msg]:
    """Fetches up to batch messages, asking again while the new consumer answers 503 (its
    Raft group has no leader yet: a loaded machine takes seconds to elect one)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await sub.fetch(batch, timeout=5)
        except ServiceUnavailableError:
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(0.5)


WARM_UP = 1000
"""A value published (and acknowledged) before the timed test's: not one of its 50."""


async def placed(js: JetStreamContext, config: StreamConfig) -> None:
    """Creates the stream, asking again for 30 s at most while the meta leader finds no
    three peers to place it on (10005 "no suitable peers for placement, peer offline":
    under a load of 8 busy processes a server was not yet counted online)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            await js.add_stream(config)
            return
        except BadRequestError as err:
            if err.err_code != NO_PLACEMENT or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.5)


async def served(js: JetStreamContext, subject: str, value: int) -> None:
    """Publishes value until the new stream acknowledges it (20 s at most): until its
    leader is elected, a publish meets no responder (NoStreamResponseError), which on a
    loaded machine took longer than the timed test's first publishes."""
    deadline = time.monotonic() + 20
    while True:
        try:
            await js.publish(
                subject, str(value).encode(), timeout=2, headers={"Nats-Msg-Id": "warm-up"}
            )
            return
        except (NoStreamResponseError, NatsTimeoutError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


def test_a_timed_out_publish_may_still_be_stored(nats_cluster: NatsCluster) -> None:
    """A publish given 0.5 ms for its ack times out in the client, yet the stream takes
    it: a timeout is indeterminate, never a fail (workloads/nats_outcomes.py)."""

    async def attempt() -> tuple[set[int], set[int]]:
        nc = await connect(nats_cluster)
        try:
            js = nc.jetstream()
            await placed(js, stream_config("timeouts", ["timeouts.>"], 3))
            await served(js, "timeouts.0", WARM_UP)
            timed_out = set()
            for value in range(50):
                try:
                    await js.publish("timeouts.0", str(value).encode(), timeout=0.0005)
                except NatsTimeoutError:
                    timed_out.add(value)
            sub = await js.pull_subscribe("timeouts.0", durable="drain", stream="timeouts")
            return timed_out, {int(msg.data) for msg in await fetch_when_served(sub, 50)}
        finally:
            await nc.close()

    timed_out, stored = asyncio.run(attempt())
    assert timed_out & stored, f"{len(timed_out)} timed out, none of them stored"


@pytest.mark.parametrize("mode", ["retry", "msg-id"])
def test_a_send_asked_again_is_stored_twice_without_its_msg_id_and_once_with_it(
    nats_cluster: NatsCluster, mode: str
) -> None:
    """Each send's first attempt waits 0.5 ms for its ack (a time-out that may have
    landed), the next 5 s (workloads/nats_publish.py): asked again without a Nats-Msg-Id,
    a landed first attempt is stored twice; with it, JetStream stores it once and answers
    the retry as a duplicate at the first one's sequence."""
    stream = f"again-{mode}"

    async def attempt() -> tuple[list[int], int]:
        nc = await connect(nats_cluster)
        try:
            js = nc.jetstream()
            await placed(js, stream_config(stream, [f"{stream}.>"], 3))
            await served(js, f"{stream}.0", WARM_UP)
            duplicates = 0
            for value in range(30):
                ack = await publish_again(js, f"{stream}.0", value, mode, [0.0005, 5.0])
                duplicates += bool(ack.duplicate)
            sub = await js.pull_subscribe(f"{stream}.0", durable="drain", stream=stream)
            stored = [int(msg.data) for msg in await fetch_when_served(sub, 100)]
            return [v for v in stored if v != WARM_UP], duplicates
        finally:
            await nc.close()

    stored, acked_as_duplicate = asyncio.run(attempt())
    assert set(stored) == set(range(30)), stored
    twice = len(stored) - len(set(stored))
    if mode == "retry":
        assert twice > 0 and acked_as_duplicate == 0, stored
    else:
        assert twice == 0 and acked_as_duplicate > 0, stored


@pytest.mark.parametrize("reads", KV_READS)
def test_a_kv_bucket_puts_updates_at_a_revision_and_deletes(
    nats_cluster: NatsCluster, reads: KvReads
) -> None:
    # Direct Get may answer from a replica that has not applied a write yet (NATS does
    # not promise read-your-writes there), so its reads are retried until they settle;
    # a read from the stream leader must see every acked write at once.
    tries = 1 if reads == "leader" else 50

    async def settled(check: Callable[[], Awaitable[None]]) -> None:
        for attempt in range(1, tries + 1):
            try:
                await check()
                return
            except (AssertionError, pytest.fail.Exception):
                if attempt == tries:
                    raise
                await asyncio.sleep(0.1)

    async def smoke() -> None:
        nc = await connect(nats_cluster)
        try:
            js = nc.jetstream()
            kv = await js.create_key_value(kv_config(f"kv-{reads}", 3, reads))
            info = await js.stream_info(f"KV_kv-{reads}")
            assert info.config.allow_direct is (reads == "direct")

            def holds(value: bytes, revision: int) -> Callable[[], Awaitable[None]]:
                async def check() -> None:
                    entry = await kv.get("k")
                    assert (entry.value, entry.revision) == (value, revision)

                return check

            async def gone() -> None:
                with pytest.raises(KeyNotFoundError):
                    await kv.get("k")

            first = await kv.put("k", b"1")
            await settled(holds(b"1", first))
            with pytest.raises(KeyWrongLastSequenceError):
                await kv.create("k", b"2")
            with pytest.raises(KeyWrongLastSequenceError):
                await kv.update("k", b"2", last=first + 100)
            second = await kv.update("k", b"3", last=first)
            await settled(holds(b"3", second))
            assert await kv.create("other", b"4") > second
            await kv.delete("k")
            await settled(gone)
        finally:
            await nc.close()

    asyncio.run(smoke())
