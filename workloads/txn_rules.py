"""The rules of the queue workload's transactions, shared by its two clients (librdkafka's
in workloads/txn_client.py, the Java client's in workloads/java_client.py): what an op's
completion is, given what the client saw of its transaction, and who takes which
transactional id.

A commit that returned is `ok`, with each send's offset; an abort that returned (chosen, or
after an error), an error before anything was begun, or a crash before the commit is
`fail`; anything else (a commit or abort that timed out, a fatal error) is `info`, and the
client is replaced. The same facts give the same history whichever client saw them, so
that one checker judges both.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from workloads.core import OpDict, fail, info, ok

# The coordinator aborts a transaction left open this long (a client replaced at the end
# of a run has no successor to fence it), well within the final drains' catch-up time;
# librdkafka wants it above message.timeout.ms.
TXN_TIMEOUT_MS = 10_000

Stage = Literal["init", "begin", "body", "commit", "abort"]
NOT_BEGUN: frozenset[Stage] = frozenset({"init", "begin"})
"""Stages whose error leaves nothing of the transaction anywhere: begin_transaction is
local to the client, and nothing is sent before it."""
Outcome = Literal["ok", "fail", "info"]
ABORTED_ON_PURPOSE = "aborted by the workload (--abort-p)"
CRASHED = "crashed before its commit (--crash-clients): the client walked away from it"


@dataclass(frozen=True, slots=True)
class TxnError:
    """One error the client met, classified as librdkafka classifies it (fatal(),
    retriable(), txn_requires_abort()); the Java driver reports the same facts."""

    stage: Stage
    text: str
    fatal: bool = False
    retriable: bool = False
    requires_abort: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TxnSeen:
    """What the client saw of one transaction: what it meant to do, the first error, and
    which of commit_transaction and abort_transaction returned."""

    chose_abort: bool = False
    crashed: bool = False
    """The client crashed on purpose after the body, without a commit or an abort."""
    error: TxnError | None = None
    committed: bool = False
    aborted: bool = False
    abort_error: str | None = None
    """Why the abort tried after an error did not return."""


def should_abort(error: TxnError) -> bool:
    """Takes the error that stopped a transaction. Returns whether aborting it may end it
    for certain: not after a fatal error (the producer serves nothing more), nor a
    timed-out commit or abort (its outcome is unknown: librdkafka would only retry it),
    nor before anything was begun."""
    if error.fatal or error.stage in NOT_BEGUN or error.stage == "abort":
        return False
    return error.stage == "body" or error.requires_abort


def txn_outcome(seen: TxnSeen) -> Outcome:
    """Takes what the client saw of a transaction. Returns its completion's type: ok when
    the commit returned, fail when an abort returned, nothing was begun or the client
    crashed before asking to commit, else info."""
    if seen.committed:
        return "ok"
    if seen.aborted or seen.crashed:
        return "fail"
    if seen.error is not None and seen.error.stage in NOT_BEGUN:
        return "fail"
    return "info"


def needs_replacing(seen: TxnSeen) -> bool:
    """Takes what the client saw of a transaction. Returns whether its producer must be
    replaced (and so fenced): after a crash, an info outcome, a fatal error, an init that
    cannot be tried again, or a begin that failed (a sound producer begins whenever asked)."""
    error = seen.error
    if seen.crashed or txn_outcome(seen) == "info" or (error is not None and error.fatal):
        return True
    if error is None:
        return False
    return error.stage == "begin" or (error.stage == "init" and not error.retriable)


def error_text(seen: TxnSeen) -> str | None:
    """Takes what the client saw of a transaction. Returns its completion's error, or None."""
    if seen.crashed:
        return CRASHED
    if seen.error is None:
        return ABORTED_ON_PURPOSE if seen.chose_abort else None
    text = f"{seen.error.stage}: {seen.error.text}"
    if seen.aborted:
        return f"{text}; then aborted"
    if seen.abort_error is not None:
        return f"{text}; the abort failed: {seen.abort_error}"
    return text


def after_error(seen: TxnSeen, abort: Callable[[], str | None]) -> TxnSeen:
    """Takes a transaction stopped by an error and a function that aborts it (returning None
    when the abort returned, else why not). Aborts when that may end the transaction for
    certain (should_abort); returns what was seen, with the abort's result."""
    assert seen.error is not None
    if not should_abort(seen.error):
        return seen
    why = abort()
    if why is not None:
        return dataclasses.replace(seen, abort_error=why)
    return dataclasses.replace(seen, aborted=True)


def conclude(
    seen: TxnSeen,
    asked: list[list[Any]],
    done: list[list[Any]],
    notes: OpDict,
    label: str,
    rewind: Callable[[dict[int, int]], dict[str, int]],
) -> tuple[OpDict, str | None]:
    """Takes what a client saw of a transaction, its micro-ops as invoked and as completed,
    the op's notes, its transactional id as `<id>#<incarnation>` and a function that seeks
    the consumer back (returning where it did). Returns the completion and why the client
    must be replaced, or None; a client kept after a transaction that did not commit is
    rewound first, the completion saying where (`rewound`)."""
    replace = None
    if needs_replacing(seen):
        replace = f"transaction ended {txn_outcome(seen)}: {error_text(seen)}"
    elif not seen.committed and (rewound := rewind(first_offsets(done))):
        notes = notes | {"rewound": rewound}
    completion = completed(seen, asked, done) | notes
    completion["transactional-id"] = label
    return completion, replace


def first_offsets(done: list[list[Any]]) -> dict[int, int]:
    """Takes a transaction's micro-ops as completed. Returns, per partition its polls read,
    the lowest offset they read there."""
    first: dict[int, int] = {}
    for mop in done:
        if mop[0] != "poll" or len(mop) < 2 or not isinstance(mop[1], dict):
            continue
        for partition, records in mop[1].items():
            for offset, _ in records:
                key = int(partition)
                first[key] = min(first.get(key, offset), offset)
    return first


def completed(seen: TxnSeen, asked: list[list[Any]], done: list[list[Any]]) -> OpDict:
    """Takes what the client saw, the invoked micro-ops and the same completed as far as
    the client got. Returns the completion: ok carries every micro-op completed (sends
    with [offset, value]); fail and info the sends as invoked and the polls that returned."""
    outcome = txn_outcome(seen)
    if outcome == "ok":
        return ok(done)
    value = [
        asked_mop if asked_mop[0] == "send" else mop
        for asked_mop, mop in zip(asked, done, strict=True)
    ]
    text = error_text(seen) or "no error"
    return fail(text, value) if outcome == "fail" else info(text, value)


class TransactionalIds:
    """Hands out the transactional ids of one run: one its last client released, if any
    (so that taking it fences that client), else a new one; each with its incarnation."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._lock = threading.Lock()
        self._free: list[tuple[str, int]] = []
        self._made = 0

    def take(self) -> tuple[str, int]:
        """Returns a transactional id and its incarnation (1 for a new id)."""
        with self._lock:
            if self._free:
                tid, last = self._free.pop()
                return tid, last + 1
            self._made += 1
            return f"{self._prefix}-txn-{self._made}", 1

    def release(self, tid: str, incarnation: int) -> None:
        """Gives back an id whose client is closed."""
        with self._lock:
            self._free.append((tid, incarnation))


class CrashClock:
    """When a client crashes on purpose: at a time drawn uniformly from [0, 2 * mean_s]
    after it opened (the gaps of Jepsen's `gen/stagger`), or never when mean_s is None."""

    def __init__(self, mean_s: float | None, rng: random.Random) -> None:
        self._at = time.monotonic() + rng.uniform(0, 2 * mean_s) if mean_s else float("inf")

    def due(self) -> bool:
        """Returns whether the client's crash is due."""
        return time.monotonic() >= self._at
