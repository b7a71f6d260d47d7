"""Power loss on NATS JetStream, on three real nats-server 2.12.1 whose stores sit on
faultfs: an R3 stream is made and every server's layer synced (so the stream itself is
on disk), 50 publishes are acknowledged, and every server loses power at once (the
power-loss-all nemesis's own cut). Under NATS's default sync_interval (2 minutes) the
layer reports the stream's message block unsynced on every server and the stream comes
back empty: each acknowledged publish is gone (nats-server#7564's mechanism). Under
sync_interval always the block is synced with every write and all 50 come back.
Nothing is left behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import nats
import pytest
from nats.js import JetStreamContext
from nats.js.api import PubAck, StreamInfo
from nats.js.errors import NoStreamResponseError

from harness.cluster.engine import docker_client
from harness.cluster.nats import NatsSpec, ensure_nats_image, stream_config
from harness.db import NatsDb
from nemesis.power import power_off_all
from tests.integration.conftest import PREFIX
from workloads.nats_loop import until_placed

pytestmark = pytest.mark.integration

STREAM, SUBJECT, SENT = "power", "power.0", 50
PUBLISH_ATTEMPTS = 6
MESSAGE_BLOCK = f"jetstream/$G/streams/{STREAM}/msgs/1.blk"
"""The stream's first message block in the store (every publish here lands in it)."""


@pytest.fixture(params=["default", "always"])
def layered(request: pytest.FixtureRequest) -> Iterator[NatsDb]:
    """Three servers of one sync profile on faultfs; removed at the end even on failure."""
    client = docker_client()
    ensure_nats_image(client, print)
    spec = NatsSpec(name=f"{PREFIX}-natspower", sync=request.param, faultfs=True)
    cluster = NatsDb(spec, client)
    try:
        cluster.up(timeout=90)
        yield cluster
    finally:
        cluster.down()
        assert cluster.exists() == 0


async def publish_acknowledged(cluster: NatsDb) -> int:
    """Makes the stream, syncs every layer, publishes SENT messages; returns how many
    the stream says it holds."""
    nc = await nats.connect(servers=cluster.client_urls, connect_timeout=2)
    try:
        js = nc.jetstream(timeout=10)
        await until_placed(lambda: js.add_stream(stream_config(STREAM, [f"{STREAM}.>"], 3)))
        for _ in range(50):  # every replica has made its files before they are synced
            if len(cluster.partitions(STREAM)[0].isr) == 3:
                break
            await asyncio.sleep(0.2)
        for node in cluster.nodes:
            code, out = cluster.exec(node, ["faultfs", "ctl", "sync"])
            assert code == 0, out
        for i in range(SENT):
            ack = await publish_once(js, i)
            assert ack.seq == i + 1
        info = await js.stream_info(STREAM)
        return int(info.state.messages)
    finally:
        await nc.close()


async def publish_once(js: JetStreamContext, i: int) -> PubAck:
    """Publishes message i, asking again when its acknowledgement times out (an fsync
    per write through FUSE on a loaded machine can take seconds) or no server answers
    for the stream yet (its leader not yet elected); its Nats-Msg-Id makes a second
    attempt land once, as JetStream's duplicate window promises."""
    for _ in range(PUBLISH_ATTEMPTS - 1):
        try:
            return await js.publish(SUBJECT, str(i).encode(), headers={"Nats-Msg-Id": str(i)})
        except (nats.errors.TimeoutError, NoStreamResponseError):
            await asyncio.sleep(0.5)
    return await js.publish(SUBJECT, str(i).encode(), headers={"Nats-Msg-Id": str(i)})


async def stream_after_restart(cluster: NatsDb) -> StreamInfo:
    """Returns the stream's info once a leader answers (up to 30 s)."""
    nc = await nats.connect(
        servers=cluster.client_urls, connect_timeout=2, max_reconnect_attempts=-1
    )
    try:
        js = nc.jetstream(timeout=2)
        for _ in range(30):
            try:
                return await js.stream_info(STREAM)
            except nats.errors.TimeoutError:
                await asyncio.sleep(0.5)
        raise AssertionError(f"stream {STREAM} had no leader 30 s after power came back")
    finally:
        await nc.close()


def test_a_power_cut_of_all_loses_exactly_what_was_not_synced(layered: NatsDb) -> None:
    assert asyncio.run(publish_acknowledged(layered)) == SENT

    lost = power_off_all(layered, layered.nodes)
    for node in layered.nodes:
        layered.start(node)
    info = asyncio.run(stream_after_restart(layered))

    assert set(lost) == {"n1", "n2", "n3"}
    held = {node: [f["path"] for f in cut["largest"]] for node, cut in lost.items()}
    if layered.spec.sync == "always":
        # The stream's block was synced with every write (its Raft group's own log may
        # still hold an unsynced tail: the layer lists it, and it costs no message).
        assert not any(MESSAGE_BLOCK in paths for paths in held.values()), lost
        assert (info.state.messages, info.state.last_seq) == (SENT, SENT)
        return
    if not all(MESSAGE_BLOCK in paths for paths in held.values()):
        # sync_interval's timer fires every 2 minutes whatever the writes: one tick between
        # the first write and the cut syncs a server's block (seen once in a make test).
        synced = sorted(n for n, paths in held.items() if MESSAGE_BLOCK not in paths)
        pytest.skip(f"the 2-minute sync landed before the cut on {synced}: {lost}")
    # Every server lost the block's unsynced tail: no replica can give the writes back.
    assert info.state.messages == 0, info.state
    logs = layered.server_log("n1", f"Restored 0 messages for stream '\\$G > {STREAM}'")
    assert logs, layered.log_tail("n1", 40)
