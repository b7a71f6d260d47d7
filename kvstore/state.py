"""The pure state machine of one store partition: records applied in log order.

No Kafka here: every replica feeds the same log into a MapState and reaches the same state.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvstore.records import Barrier, Command, Key, Record, Value, Write


@dataclass(frozen=True, slots=True)
class Entry:
    """The winning record of a key so far; `value` None means removed."""

    version: int
    value: Value | None
    attempt: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What applying one record did.

    `applied` is True when the record changed the state: a Write that won its
    version, a Command whose precondition held. `entry` is the key's entry
    after the record (None for barriers and keys never written), `superseded`
    the entry an applied record replaced.
    """

    record: Record
    applied: bool
    entry: Entry | None = None
    superseded: Entry | None = None


class MapState:
    """The map as of a prefix of one partition's log.

    Removed keys keep their entry (value None) so that versions keep counting
    up across a remove, but they are absent from get, size and keys.
    """

    def __init__(self) -> None:
        self._entries: dict[Key, Entry] = {}
        self._present = 0
        self.changes = 0
        """Records that changed the state; equal counts at two offsets mean no change between."""

    def entry(self, key: Key) -> Entry | None:
        """Returns the key's winning entry, including a removal, or None if never written."""
        return self._entries.get(key)

    def get(self, key: Key) -> Value | None:
        """Returns the key's value, or None if absent."""
        entry = self._entries.get(key)
        return None if entry is None else entry.value

    def size(self) -> int:
        """Returns the number of keys present."""
        return self._present

    def keys(self) -> set[Key]:
        """Returns the keys present."""
        return {k for k, e in self._entries.items() if e.value is not None}

    def apply(self, record: Record) -> Outcome:
        """Takes the next record of the log. Returns what it did.

        A Write wins iff its version is above the key's current one. Writers
        only ever write their view's version + 1, and their view is a prefix
        of the log, so on a whole log this is "the first record for each
        (key, version) wins"; on a compacted log, where superseded records are
        gone, it also accepts the version jumps that compaction leaves.
        """
        match record:
            case Barrier():
                return Outcome(record, applied=False)
            case Write(key, version, value, attempt):
                current = self._entries.get(key)
                if version <= (0 if current is None else current.version):
                    return Outcome(record, applied=False, entry=current)
                return self._set(record, key, Entry(version, value, attempt))
            case Command(key, name, old, new, attempt):
                current = self._entries.get(key)
                if not precondition_holds(name, old, None if current is None else current.value):
                    return Outcome(record, applied=False, entry=current)
                version = 1 if current is None else current.version + 1
                return self._set(record, key, Entry(version, new, attempt))

    def _set(self, record: Record, key: Key, entry: Entry) -> Outcome:
        previous = self._entries.get(key)
        was_present = previous is not None and previous.value is not None
        self._present += (entry.value is not None) - was_present
        self._entries[key] = entry
        self.changes += 1
        return Outcome(record, applied=True, entry=entry, superseded=previous)


def precondition_holds(name: str, old: Value | None, current: Value | None) -> bool:
    """Returns whether operation `name` (a CommandName) applies to a key valued `current`."""
    if name == "put-if-absent":
        return current is None
    if name == "replace":
        return current is not None and current == old
    if name == "remove":
        return current is not None
    return True
