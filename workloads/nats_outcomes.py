"""What a nats-py error means for a NATS workload's op: `fail` only when the error proves
the op did not take effect, `info` (indeterminate) otherwise; a first cut for the queue
and kv clients of issue 38.

A write (a stream publish, or a KV put, create, update or delete, each one publish) is
`fail` on two errors only:
- NoStreamResponseError: the server answered 503 "no responders": no server had an
  interest in the subject when the message arrived, so nothing took it (Jepsen's NATS
  client, jepsen-io/nats src/jepsen/nats/client.clj, counts "503 No Responders" as
  fail; tests/integration/test_nats_cluster.py shows none of them stored while a killed
  stream leader is replaced);
- KeyWrongLastSequenceError: the stream leader compared the expected last revision with
  its own and refused before proposing the message;
and on client-side refusals made before anything is sent (an invalid key or bucket).
Anything else is `info`: a timeout above all (a publish that times out may be stored:
the same test stores every one of 50 publishes given a 0.5 ms timeout), a closed or
reconnecting connection (the message may have left), and every other JetStream API
error (as with Kafka's NOT_LEADER_OR_FOLLOWER, docs/KAFKA.md, a leader that loses its
place may answer an error for a message the next leader commits).

A read (a KV get) has no effect, so every error makes it `fail`; a get that finds no key
is not an error but a read of nothing (None). A fetch is a read too, but its acks
consume the messages it received: a fetch that received messages completes `ok` with
them, whatever came after; only one that received none may `fail`.
"""

from __future__ import annotations

from typing import Literal

from nats.js.errors import (
    InvalidBucketNameError,
    InvalidKeyError,
    KeyWrongLastSequenceError,
    NoStreamResponseError,
)

Outcome = Literal["fail", "info"]
WRITES = frozenset({"publish", "put", "create", "update", "delete"})
READS = frozenset({"get", "fetch"})
_DEFINITE_WRITE_ERRORS = (
    NoStreamResponseError,
    KeyWrongLastSequenceError,
    InvalidKeyError,
    InvalidBucketNameError,
)


def outcome(f: str, err: Exception) -> Outcome:
    """Takes an op's f and the error nats-py raised for it. Returns "fail" when the op
    certainly took no effect, else "info"; raises ValueError for an f that is neither a
    read nor a write."""
    if f in READS:
        return "fail"
    if f not in WRITES:
        raise ValueError(f"no outcome rule for op {f!r}")
    return "fail" if isinstance(err, _DEFINITE_WRITE_ERRORS) else "info"
