"""A private asyncio loop in a thread of its own, so that a synchronous Client (one
worker thread calling invoke) can drive nats-py, which is asyncio only; and the
connection settings every NATS client of a run shares.

The loop runs between invokes too: nats-py's reader, pings, flow-control replies and
an ordered consumer's heartbeat checks go on while the worker waits for its next op.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import nats
from nats.aio.client import Client as NatsClient
from nats.js.errors import BadRequestError

T = TypeVar("T")
LOG = logging.getLogger("workloads.nats")
"""nats-py's errors and its background tasks' failures (the run puts them in client.log)."""
CONNECT_TIMEOUT_S = 2.0
RECONNECT_WAIT_S = 0.2
CLOSE_TIMEOUT_S = 5.0
PING_INTERVAL_S = 1.0
PLACEMENT_WAIT_S = 30.0
"""How long a stream or bucket made right after the servers start waits for JetStream to
see enough peers to place its replicas (it answers 10005 until then)."""
NO_PEERS = 10005
"""JetStream's error code for "no suitable peers for placement"."""
MAX_OUTSTANDING_PINGS = 3
"""A connection that has not answered 3 pings a second apart is given up for another
server: nats-py's default (2 minutes) would leave a client cut off with its server for
the whole fault."""


class LoopThread:
    """An event loop running forever in a daemon thread until closed."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(_log_loop_error)
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Takes a coroutine; runs it on the loop and returns its result. Raises what it
        raised, or TimeoutError (having cancelled it) after timeout seconds."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            # Since Python 3.11 a time-out the coroutine raised itself (nats-py's, say) is
            # the same class as the wait's: a finished future's own outcome is told as is.
            if future.done():
                return future.result()
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def close(self) -> None:
        """Cancels what still runs on the loop (a consumer's heartbeat checks), then stops
        the loop and its thread."""
        with contextlib.suppress(Exception):  # stopping goes on regardless
            self.run(_cancel_the_rest(), CLOSE_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CLOSE_TIMEOUT_S)
        if not self._thread.is_alive():
            self._loop.close()


def _log_loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Logs what a background task of nats-py raised (a consumer it failed to re-create,
    a flush cut short), which asyncio would print on stderr."""
    err = context.get("exception")
    LOG.info("%s: %s", context.get("message", "asyncio"), repr(err) if err else "")


async def _log_client_error(err: Exception) -> None:
    LOG.info("nats-py: %r", err)


async def _cancel_the_rest() -> None:
    mine = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not mine]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


async def connect(servers: str, name: str) -> NatsClient:
    """Takes the comma list of client URLs and a client name. Returns a connection that
    reconnects to any server for as long as it is open (Jepsen's NATS client too keeps
    reconnecting: a fault must not end a client)."""
    return await nats.connect(
        servers=servers.split(","),
        name=name,
        connect_timeout=CONNECT_TIMEOUT_S,
        reconnect_time_wait=RECONNECT_WAIT_S,
        max_reconnect_attempts=-1,
        allow_reconnect=True,
        error_cb=_log_client_error,
        ping_interval=PING_INTERVAL_S,
        max_outstanding_pings=MAX_OUTSTANDING_PINGS,
    )


async def until_placed(make: Callable[[], Awaitable[T]], seconds: float = PLACEMENT_WAIT_S) -> T:
    """Runs make (which creates a stream or a bucket) until JetStream stops refusing it
    for want of peers: a server just started is not yet one JetStream places replicas
    on. Returns what make returned; raises its last error once seconds have passed, or
    at once for any other error."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        try:
            return await make()
        except BadRequestError as err:
            if err.err_code != NO_PEERS or loop.time() >= deadline:
                raise
            LOG.info("JetStream cannot place the replicas yet (%s): trying again", err)
            await asyncio.sleep(0.5)
