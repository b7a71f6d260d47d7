"""The kv workload on a NATS JetStream KV bucket: the kv workload's ops (get, put,
put-if-absent, replace, remove) over a few keys, checked per key against the same `map`
model as the store on Kafka.

A bucket keeps one revision per key; each write is one publish to the bucket's stream.
put is a plain put; put-if-absent, replace and remove read the key's entry (its value and
revision, a deleted key's tombstone too) and then write only if the key's revision is
still the one read (`Nats-Expected-Last-Subject-Sequence`, nats-py's create, update and
delete with `last`), trying again when another write came between. An op whose read
already decides it (the key present for put-if-absent, a value other than the expected
one for replace, no key for remove) completes at that read, so the read must be
linearizable: from the stream leader ($JS.API.STREAM.MSG.GET), unless the bucket allows
Direct Get (`--nats-kv-reads direct`), when any replica answers and NATS documents the
answer as not read-your-writes: the variant built to fail.

A bucket whose stream no longer exists (lost in a power cut of every server under the
default sync interval, nats-server#7564) is said, never read as empty: nats-py turns
JetStream's "stream not found" (10059) into "no such key", so the client asks what its
get's not-found was, and a get of a vanished bucket completes as a read of nothing whose
error says the store is gone (checkers/lost_store.py); a write that meets it fails.

Jepsen's NATS analysis (jepsen.io/analyses/nats-2.12.1) left the KV store untested.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from nats.errors import NoRespondersError
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import (
    BucketNotFoundError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
    NotFoundError,
)
from nats.js.kv import KeyValue

from checkers import gone_error
from kvstore.topic import TopicAdmin
from workloads.core import Client, Context, OpDict, Workload, fail, info, ok
from workloads.kv import kv_ops
from workloads.nats_loop import (
    CLOSE_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    PLACEMENT_WAIT_S,
    LoopThread,
    connect,
    until_placed,
)
from workloads.nats_outcomes import outcome

OP_TIMEOUT_S = 5.0
"""How long one request (a read or a write) waits for its answer."""
TRIES = 5
"""Conditional writes refused because another write came between, before the op fails."""
BUCKET_WAIT_S = 30.0
STREAM_NOT_FOUND = 10059
"""JetStream's error code for a stream that does not exist (JSStreamNotFoundErr): the
meta leader's answer for a stream its group no longer has."""


def bucket_config(bucket: str, replicas: int, direct: bool) -> KeyValueConfig:
    """Takes a bucket's name, replica count and whether reads may go to any replica.
    Returns its config: file storage, one revision kept per key, Direct Get only if
    direct."""
    return KeyValueConfig(
        bucket=bucket,
        history=1,
        storage=StorageType.FILE,
        replicas=replicas,
        direct=direct,
    )


def bucket_stream(bucket: str) -> str:
    """Returns the name of the stream that holds a bucket (JetStream's KV_<bucket>)."""
    return f"KV_{bucket}"


class Refused(Exception):
    """Every conditional write of an op was refused: it certainly took no effect."""


class BucketGone(Exception):
    """The bucket's stream does not exist: JetStream's meta leader said so."""


def _stream_not_found(err: BaseException | None) -> bool:
    """Takes an error. Returns whether it, or one it was raised while handling (nats-py
    raises KeyNotFoundError and BucketNotFoundError inside its `except NotFoundError`),
    is JetStream's "stream not found"."""
    while err is not None:
        # KeyNotFoundError is a NotFoundError too, made without an err_code.
        if isinstance(err, NotFoundError) and getattr(err, "err_code", None) == STREAM_NOT_FOUND:
            return True
        err = err.__cause__ or err.__context__
    return False


class NatsKvClient:
    """One process's connection to the bucket, serving the kv workload's ops."""

    def __init__(self, servers: str, bucket: str, client_id: str) -> None:
        self._loop = LoopThread(f"nats-{client_id}")
        self._bucket = bucket
        self._kv: KeyValue | None = None
        """The open bucket; None while its stream is gone (each op asks again)."""
        try:
            self._nc = self._loop.run(connect(servers, client_id), CONNECT_TIMEOUT_S + 1)
            self._js: JetStreamContext = self._nc.jetstream(timeout=OP_TIMEOUT_S)
            with contextlib.suppress(BucketGone):  # said by each op, not by a failed open
                self._loop.run(self._open(), OP_TIMEOUT_S + 1)
        except BaseException:
            self._loop.close()
            raise
        self._wrote = False
        """Whether the op in progress has sent a write: an error after it is indeterminate."""

    @property
    def failure(self) -> str | None:
        """Returns why the client can serve no more ops (its connection closed), or None."""
        return "the connection is closed" if self._nc.is_closed else None

    def invoke(self, op: OpDict) -> OpDict:
        """Takes a kv invoke; returns its completion, never raising."""
        f, key, value = op["f"], str(op["key"]), op.get("value")
        serve = self._handlers().get(f)
        if serve is None:
            return fail(f"the NATS kv has no op {f!r}")
        self._wrote = False
        try:
            return self._loop.run(serve(key, value), TRIES * 2 * OP_TIMEOUT_S)
        except Refused as err:
            return fail(str(err))
        except BucketGone as err:
            said = gone_error(str(err))
            # A read of a vanished bucket finds the key absent; a write took no effect.
            return ok(None) | {"error": said} if f == "get" else fail(said)
        except Exception as err:  # sorted into fail or info by what the error proves
            said = f"{type(err).__name__}: {err}"
            if not self._wrote:
                return fail(said)
            rule = "delete" if f == "remove" else "put"
            return fail(said) if outcome(rule, err) == "fail" else info(said)

    def _handlers(self) -> dict[str, Callable[[str, Any], Coroutine[Any, Any, OpDict]]]:
        return {
            "get": self._get,
            "put": self._put,
            "put-if-absent": self._put_if_absent,
            "replace": self._replace,
            "remove": self._remove,
        }

    async def _open(self) -> KeyValue:
        """Returns the bucket, opening it if it is not open. Raises BucketGone when
        JetStream says its stream does not exist."""
        if self._kv is None:
            try:
                self._kv = await self._js.key_value(self._bucket)
            except BucketNotFoundError as err:
                if not _stream_not_found(err):
                    raise
                raise BucketGone(self._gone_words()) from err
        return self._kv

    def _gone_words(self) -> str:
        return f"stream {bucket_stream(self._bucket)} not found (JetStream {STREAM_NOT_FOUND})"

    async def _entry(self, key: str) -> tuple[int | None, int]:
        """Returns the key's value (None when absent or deleted) and the revision a
        conditional write must expect (0: never written). Raises BucketGone when the
        bucket's stream does not exist."""
        kv = await self._open()
        try:
            entry = await kv.get(key)
        except NoRespondersError:
            # A Direct Get nobody answered: no replica serves it, and perhaps no stream.
            await self._still_there()
            raise
        except KeyNotFoundError as err:
            if _stream_not_found(err):
                raise BucketGone(self._gone_words()) from err
            # A deleted key's tombstone is its last revision (nats-py's get turns
            # KeyDeletedError into KeyNotFoundError carrying the entry).
            deleted = err.entry
            return None, 0 if deleted is None or deleted.revision is None else deleted.revision
        revision = 0 if entry.revision is None else entry.revision
        return (None if entry.value is None else int(entry.value)), revision

    async def _still_there(self) -> None:
        """Raises BucketGone when JetStream says the bucket's stream does not exist."""
        try:
            await self._js.stream_info(bucket_stream(self._bucket))
        except NotFoundError as err:
            if err.err_code == STREAM_NOT_FOUND:
                raise BucketGone(self._gone_words()) from err

    async def _write_at(self, key: str, revision: int, value: int | None) -> bool:
        """Writes value (None: a delete) if the key's revision is still revision.
        Returns whether it was taken."""
        kv = await self._open()
        self._wrote = True
        try:
            if value is None:
                await kv.delete(key, last=revision)
            else:
                await kv.update(key, str(value).encode(), last=revision)
        except KeyWrongLastSequenceError:
            self._wrote = False  # refused before anything was proposed
            return False
        return True

    async def _get(self, key: str, _value: Any) -> OpDict:
        value, _ = await self._entry(key)
        return ok(value)

    async def _put(self, key: str, value: int) -> OpDict:
        kv = await self._open()
        self._wrote = True
        await kv.put(key, str(value).encode())
        return ok(value)

    async def _put_if_absent(self, key: str, value: int) -> OpDict:
        for _ in range(TRIES):
            held, revision = await self._entry(key)
            if held is not None:
                return ok([value, False])
            if await self._write_at(key, revision, value):
                return ok([value, True])
        raise Refused(f"put-if-absent refused {TRIES} times: other writes came between")

    async def _replace(self, key: str, value: list[int]) -> OpDict:
        old, new = value
        for _ in range(TRIES):
            held, revision = await self._entry(key)
            if held != old:
                return ok([old, new, False])
            if await self._write_at(key, revision, new):
                return ok([old, new, True])
        raise Refused(f"replace refused {TRIES} times: other writes came between")

    async def _remove(self, key: str, _value: Any) -> OpDict:
        for _ in range(TRIES):
            held, revision = await self._entry(key)
            if held is None:
                return ok(False)
            if await self._write_at(key, revision, None):
                return ok(True)
        raise Refused(f"remove refused {TRIES} times: other writes came between")

    def close(self) -> None:
        """Closes the connection and the loop, within a bounded time."""
        try:
            with contextlib.suppress(Exception):  # closing is best effort
                self._loop.run(self._nc.close(), CLOSE_TIMEOUT_S)
        finally:
            self._loop.close()


def create_bucket(admin: TopicAdmin, ctx: Context) -> None:
    """Creates the run's bucket (named as the run's topic) with as many replicas as the
    run's replication factor, and waits until every replica of its stream is current."""
    loop = LoopThread("nats-create-bucket")
    try:
        loop.run(_add_bucket(ctx), PLACEMENT_WAIT_S + OP_TIMEOUT_S * 3)
    finally:
        loop.close()
    admin.wait_full_isr(bucket_stream(ctx.topic), BUCKET_WAIT_S)


async def _add_bucket(ctx: Context) -> None:
    nc = await connect(ctx.bootstrap, "create-bucket")
    try:
        js = nc.jetstream(timeout=OP_TIMEOUT_S)
        config = bucket_config(ctx.topic, ctx.replication_factor, ctx.nats.kv_reads == "direct")
        await until_placed(lambda: js.create_key_value(config))
    finally:
        await nc.close()


def open_client(ctx: Context, client_id: str) -> Client:
    """Opens one process's connection to the run's bucket."""
    # Where the reads go is the bucket's (allow_direct), which nats-py reads when it opens it.
    return NatsKvClient(ctx.bootstrap, ctx.topic, client_id)


NATS_KV = Workload(
    name="kv",
    create_topics=create_bucket,
    ops=lambda rng, ctx: kv_ops(rng, ctx.keys),
    open_client=open_client,
    final_reads=lambda ctx: [{"f": "get", "key": k, "value": None} for k in range(ctx.keys)],
    model="map",
)
"""The kv workload when the database is NATS."""
