"""The interface every store variant offers (KVMap) and the timeouts bounding its waits.

Workloads depend on this module only, so any variant can be swapped in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kvstore.records import Key, Value


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeouts:
    """Upper bounds on every wait, so that nothing hangs while brokers are partitioned away.

    Seconds for the store's own waits, milliseconds for librdkafka settings.
    `message_ms` stays below `operation` so that a delivery error usually
    arrives before the operation gives up.
    """

    operation: float = 10.0
    catch_up: float = 30.0
    close: float = 5.0
    message_ms: int = 8000
    request_ms: int = 4000
    socket_ms: int = 5000
    connect_ms: int = 1000
    reconnect_backoff_max_ms: int = 1000


DEFAULT_TIMEOUTS = Timeouts()


@runtime_checkable
class KVMap(Protocol):
    """A key-value map shared by every instance on the same topic.

    Each method returns its result, raises DefiniteFailure (certainly not
    applied; InvalidArgument, a ValueError too, for a key or value that is not
    a str or an int) or raises Indeterminate (may have been applied). Nothing
    else leaves a method.
    """

    @property
    def failure(self) -> str | None:
        """Why this instance serves no more operations (its log was truncated, its client
        failed, it was closed), or None. A failed instance is replaced by a fresh one."""
        ...

    def get(self, key: Key) -> Value | None:
        """Returns the key's value, or None if absent."""
        ...

    def put(self, key: Key, value: Value) -> None:
        """Sets the key to value."""
        ...

    def put_if_absent(self, key: Key, value: Value) -> bool:
        """Sets the key to value if it is absent. Returns whether it did."""
        ...

    def replace(self, key: Key, old: Value, new: Value) -> bool:
        """Sets the key to new if its value is old. Returns whether it did."""
        ...

    def remove(self, key: Key) -> bool:
        """Removes the key. Returns whether it was present."""
        ...

    def size(self) -> int:
        """Returns the number of keys present."""
        ...

    def keys(self) -> set[Key]:
        """Returns the keys present."""
        ...

    def close(self) -> None:
        """Stops the instance's threads and clients, within Timeouts.close."""
        ...
