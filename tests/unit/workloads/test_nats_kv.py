"""The kv workload's ops on a NATS KV bucket, over an in-memory bucket that answers as
nats-py's KeyValue does (a deleted key's tombstone is its last revision; a write at a
stale revision is refused): put-if-absent, replace and remove decide by the entry they
read and write at its revision, try again when another write came between, and fail
(certainly not applied) when every try was refused."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue

from workloads.nats_kv import NatsKvClient, bucket_config, bucket_stream


@dataclass
class Entry:
    value: bytes | None
    revision: int


class Bucket:
    """One revision per key; `interfere` writes a key's value again (a new revision)
    just before each of the next N conditional writes, as a racing client would."""

    def __init__(self) -> None:
        self.keys: dict[str, Entry] = {}
        self.deleted: set[str] = set()
        self.revision = 0
        self.interfere = 0

    def _write(self, key: str, value: bytes | None) -> int:
        self.revision += 1
        self.keys[key] = Entry(value, self.revision)
        (self.deleted.add if value is None else self.deleted.discard)(key)
        return self.revision

    async def get(self, key: str) -> Entry:
        if key not in self.keys:
            raise KeyNotFoundError
        if key in self.deleted:
            raise KeyNotFoundError(self.keys[key], "DEL")
        return self.keys[key]

    async def put(self, key: str, value: bytes) -> int:
        return self._write(key, value)

    async def _at(self, key: str, last: int, value: bytes | None) -> int:
        if self.interfere:
            self.interfere -= 1
            self._write(key, self.keys[key].value if key in self.keys else b"999")
        held = self.keys[key].revision if key in self.keys else 0
        if held != last:
            raise KeyWrongLastSequenceError
        return self._write(key, value)

    async def update(self, key: str, value: bytes, last: int) -> int:
        return await self._at(key, last, value)

    async def delete(self, key: str, last: int) -> int:
        return await self._at(key, last, None)


def client(bucket: Bucket) -> NatsKvClient:
    made = object.__new__(NatsKvClient)
    made._kv = bucket  # type: ignore[assignment]
    made._wrote = False
    return made


def run(c: NatsKvClient, f: str, key: str, value: Any = None) -> Any:
    return asyncio.run(c._handlers()[f](key, value))


def test_the_map_ops_decide_by_the_entry_they_read() -> None:
    bucket = Bucket()
    c = client(bucket)
    assert run(c, "get", "0") == {"type": "ok", "value": None}
    assert run(c, "put-if-absent", "0", 1)["value"] == [1, True]
    assert run(c, "put-if-absent", "0", 2)["value"] == [2, False]
    assert run(c, "replace", "0", [7, 3])["value"] == [7, 3, False]
    assert run(c, "replace", "0", [1, 3])["value"] == [1, 3, True]
    assert run(c, "get", "0")["value"] == 3
    assert run(c, "remove", "0")["value"] is True
    assert run(c, "remove", "0")["value"] is False
    assert run(c, "get", "0")["value"] is None
    # Created again over its tombstone, at the tombstone's revision.
    assert run(c, "put-if-absent", "0", 4)["value"] == [4, True]
    assert run(c, "put", "0", 5)["value"] == 5 and run(c, "get", "0")["value"] == 5


def test_a_write_that_lost_a_race_reads_again() -> None:
    bucket = Bucket()
    c = client(bucket)
    run(c, "put", "0", 1)
    bucket.interfere = 1  # another client writes 1 again between the read and the write
    assert run(c, "replace", "0", [1, 2])["value"] == [1, 2, True]
    bucket.interfere = 1
    assert run(c, "remove", "0")["value"] is True


def test_every_try_refused_is_a_definite_failure() -> None:
    bucket = Bucket()
    c = client(bucket)
    c._loop = _Inline()  # type: ignore[assignment]
    run(c, "put", "0", 1)
    bucket.interfere = 10
    done = c.invoke({"f": "replace", "key": 0, "value": [1, 2]})
    assert done["type"] == "fail" and "refused 5 times" in done["error"]
    assert run(c, "get", "0")["value"] == 1


class _Inline:
    def run(self, coro: Any, timeout: float) -> Any:
        return asyncio.run(coro)


def test_the_bucket_keeps_one_revision_and_lives_in_its_stream() -> None:
    config = bucket_config("store-1", 3, direct=True)
    assert (config.history, config.replicas, config.direct) == (1, 3, True)
    assert bucket_stream("store-1") == "KV_store-1"


class _NoStream:
    """A JetStream context whose meta leader no longer has the bucket's stream: every
    get answers 10059, which nats-py's own KeyValue.get turns into KeyNotFoundError."""

    async def get_msg(self, *args: Any, **kwargs: Any) -> Any:
        raise NotFoundError(code=404, err_code=10059, description="stream not found")


class _NoMessage(_NoStream):
    async def get_msg(self, *args: Any, **kwargs: Any) -> Any:
        raise NotFoundError(code=404, err_code=10037, description="no message found")


def vanished(js: _NoStream) -> KeyValue:
    return KeyValue("store-1", "KV_store-1", "$KV.store-1.", js, direct=False)  # type: ignore[arg-type]


def gone_client(bucket: Any) -> NatsKvClient:
    c = client(bucket)
    c._bucket = "store-1"
    c._loop = _Inline()  # type: ignore[assignment]
    return c


def test_a_get_of_a_vanished_bucket_says_the_store_is_gone() -> None:
    c = gone_client(vanished(_NoStream()))
    done = c.invoke({"f": "get", "key": 0, "value": None})
    assert done["type"] == "ok" and done["value"] is None
    assert done["error"].startswith("store gone:") and "KV_store-1" in done["error"]
    # A write that first reads the key fails: nothing can be written to a missing stream.
    for f, value in (("replace", [1, 2]), ("remove", None), ("put-if-absent", 3)):
        done = c.invoke({"f": f, "key": 0, "value": value})
        assert done["type"] == "fail" and done["error"].startswith("store gone:"), f


def test_a_key_never_written_is_no_vanished_bucket() -> None:
    c = gone_client(vanished(_NoMessage()))
    assert c.invoke({"f": "get", "key": 0, "value": None}) == {"type": "ok", "value": None}
