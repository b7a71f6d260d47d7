"""The Client protocol and the Workload: what a run needs from a workload, as plain data.

Ops flow as small dicts: an invoke is {"f", "key", "value"}; a completion adds "type"
(ok, fail or info), its "value" and, when something went wrong, an "error".
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kvstore import KVMap

OpDict = dict[str, Any]
Handler = Callable[[KVMap, Any, Any], OpDict]
"""Takes the store, an op's key and value; returns the completion (ok or fail)."""


class Client(Protocol):
    """One process's connection to the system under test."""

    def invoke(self, op: OpDict) -> OpDict:
        """Takes an invoke. Returns its completion: type ok, fail or info, never raising."""
        ...

    @property
    def failure(self) -> str | None:
        """Returns why the client can serve no more ops (it must be replaced), or None."""
        ...

    def close(self) -> None:
        """Releases the client, within a bounded time."""
        ...


OpenClient = Callable[[str], Client]
"""Takes a client id; returns an open client (raises if it cannot open now)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """What a run needs from a workload: its ops, how to open clients, how to check it."""

    name: str
    model: str
    """The linearizability model its history is checked against (checkers.models.MODELS)."""
    ops: Callable[[random.Random, int], Iterator[OpDict]]
    """Takes a random source and the key count; yields invokes forever."""
    final_read: Callable[[Any], OpDict]
    """Takes a key; returns the invoke that reads it at the end of the run."""
    handlers: Mapping[str, Handler]
    """How the store serves each op, by its f."""


def ok(value: Any) -> OpDict:
    """Returns an ok completion carrying value."""
    return {"type": "ok", "value": value}


def fail(error: str, value: Any = None) -> OpDict:
    """Returns a fail completion: the op certainly did not take effect."""
    return {"type": "fail", "value": value, "error": error}


def info(error: str, value: Any = None) -> OpDict:
    """Returns an info completion: the op may or may not take effect, at any later time."""
    return {"type": "info", "value": value, "error": f"indeterminate: {error}"}
