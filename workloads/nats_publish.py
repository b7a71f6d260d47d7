"""How the NATS queue's sends publish (`--nats-publish`): once, asked again after a
time-out, or asked again with the same Nats-Msg-Id, which JetStream deduplicates.

JetStream's exactly-once publishing (docs.nats.io, JetStream, "Message Deduplication"): a
publish whose Nats-Msg-Id header the stream has seen within its duplicate window (2
minutes by default) is acknowledged with the first one's sequence, `duplicate` set, and is
not stored again. A producer that asks again after a time-out without it stores the
message twice whenever the timed-out attempt had landed (a time-out is indeterminate:
tests/integration/test_nats_cluster.py shows one stored): the queue checker's `duplicate`
kind, a message at two offsets, catches that variant. Jepsen's NATS analysis (2.12.1)
did not test deduplication.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import PubAck
from nats.js.errors import APIError

MSG_ID = "Nats-Msg-Id"
"""The header JetStream deduplicates publishes by."""
ATTEMPTS = 3
"""How many times a send asks in the modes that ask again."""
IN_PROCESS = 10158
"""JetStream's error code for a publish whose Nats-Msg-Id an earlier attempt is still being
stored under ("duplicate message id is in process", 409): neither stored twice nor refused,
so the attempt asks again after IN_PROCESS_PAUSE_S, until the earlier one is decided and
the answer is its duplicate ack (a loaded make test met it)."""
IN_PROCESS_PAUSE_S = 0.2


def attempts(mode: str) -> int:
    """Takes a `--nats-publish` mode. Returns how many times a send may ask."""
    return 1 if mode == "once" else ATTEMPTS


async def publish(
    js: JetStreamContext, subject: str, value: int, mode: str, waits: Sequence[float]
) -> PubAck:
    """Publishes value (its decimal text) to subject, waiting for each attempt's ack as
    long as the next of waits, one attempt per wait up to attempts(mode); asks again only
    after a time-out (an attempt that may have landed: anything else the stream refused),
    with the same Nats-Msg-Id in mode msg-id. Returns the ack; raises the last time-out
    when no attempt was acknowledged."""
    headers = {MSG_ID: str(value)} if mode == "msg-id" else None
    tries = list(waits[: attempts(mode)])
    for wait in tries[:-1]:
        try:
            return await _attempt(js, subject, str(value).encode(), wait, headers)
        except NatsTimeout:
            continue
    return await _attempt(js, subject, str(value).encode(), tries[-1], headers)


async def _attempt(
    js: JetStreamContext, subject: str, payload: bytes, wait: float, headers: dict[str, str] | None
) -> PubAck:
    """One attempt of wait seconds in all: publishes, and asks again while the stream
    answers that an earlier attempt with the same Nats-Msg-Id is still in process."""
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        try:
            return await js.publish(subject, payload, timeout=max(left, 0.001), headers=headers)
        except APIError as err:
            if err.err_code != IN_PROCESS or left <= IN_PROCESS_PAUSE_S:
                raise
        await asyncio.sleep(IN_PROCESS_PAUSE_S)
