"""What a map needs from its log: append records, and a replica that the log feeds.

Implemented on Kafka (kafka_log.KafkaConnection) and in process (memlog.MemoryLog).
"""

from __future__ import annotations

from typing import Any, Protocol

from kvstore.records import Record
from kvstore.replica import Pending, Replica


class Connection(Protocol):
    """One instance's link to the shared log."""

    @property
    def replica(self) -> Replica:
        """The instance's copy of the map, fed from the log in order."""
        ...

    @property
    def unclean_election(self) -> bool:
        """Whether the topic allows unclean leader election: its log may then be truncated."""
        ...

    def send(self, partition: int, record: Record, pending: Pending[Any]) -> None:
        """Appends record to partition, without waiting.

        Raises DefiniteFailure if it was certainly not sent. A later delivery
        error fails `pending` with Indeterminate.
        """
        ...

    def discard(self, partition: int, attempt: str) -> None:
        """Lets compaction drop the record of `attempt` (a tombstone); no-op on uncompacted logs."""
        ...

    def close(self) -> None:
        """Stops feeding the replica and releases the clients, within a bounded time."""
        ...
