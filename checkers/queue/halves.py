"""A queue history read in two halves by two processes (history.halves): the later half's
reader keeps its records in columns, and the earlier half's reader joins them.

Records cross as columns (checkers/queue/columns.py), not as objects: pickling a million
slotted records costs more than reading them, an int64 array next to nothing. The later
half's reader takes each record apart as it is made, and packs the columns in the order
read, with the permutation that sorts them; this half makes the records again, sorts
them with it, and puts them after its own once QueueReader.finish has sorted those. What a
consumer holds (checkers/queue/positions.py) depends on its ops before the seam, which the
later half does not see: there each process's holdings calls are recorded until its own
ops decide what it holds (an assign or a crash), and replayed here on what this half
knew, which gives the boundaries (a Reposition's partitions) their serial values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from checkers.fork_pool import can_fork, forked_beside
from checkers.queue.checker import QueueStream
from checkers.queue.columns import OpColumns, SendColumns, ops_from, sends_from
from checkers.queue.positions import Holdings
from checkers.queue.reader import Poll, QueueHistory, QueueReader, Reposition, Send
from history import Event, History, SecondHalf, find_seam, load_halves, read_second_half

__all__ = ["QueueHalf", "SeamHoldings", "load_queue_halves"]

POLLED, MOVED, ASSIGNED, SUBSCRIBED, CRASHED, UNKNOWN = range(6)
_FORGOTTEN = frozenset({POLLED, MOVED, UNKNOWN})
"""The calls whose effect an unknown undoes."""

Call = tuple[Any, ...]
"""A Holdings call as SeamHoldings records it: its kind first, then its arguments, then,
for an assign or subscribe, the position of its Reposition among the consumer ops, in
the order read."""
Packed = tuple[Any, ...]


def load_queue_halves(path: str, jobs: int) -> History | None:
    """Takes a queue history's path and how many processes may read it. Returns it read in
    halves by two (as load(path, keep_events=False, reader=QueueHalf(path)) reads it), or
    None when it is not to be split: one process, a short file, not history.jsonl."""
    at = find_seam(path) if jobs > 1 and can_fork() else None
    if at is None:
        return None

    def second() -> SecondHalf | None:
        try:
            return read_second_half(path, at, QueueHalf(path, later=True))
        except Exception:  # a bug of the split's costs only its time: read on serially
            return None

    with forked_beside(second) as made:
        return load_halves(path, at, QueueHalf(path), made)


class QueueHalf:
    """The queue checker's Reader (a QueueStream) for one half of a history
    (history.halves.HalfReader); `later` for the half after the seam."""

    def __init__(self, path: str, *, later: bool = False) -> None:
        self.stream = QueueStream(path)
        self.later: tuple[list[Send], list[Poll | Reposition]] = ([], [])
        reader = self.stream.reader
        if later and reader is not None:
            reader.holdings = SeamHoldings(reader)
            # The reader only appends to its lists (and counts the consumer ops) before
            # pack: these take each record apart as it comes.
            reader.sends = cast(list[Send], SendColumns())
            reader.consumer_ops = cast(list[Poll | Reposition], OpColumns())

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does, for the stream."""
        self.stream.add(invoke, invoke_line, completion, line)

    def finish(self) -> object:
        """Returns what the reader read (QueueReader.finish sorts it), then the later
        half's records joined after it: every invoke there follows every invoke here."""
        read = self.stream.finish()
        if isinstance(read, QueueHistory):
            sends, ops = self.later
            read.sends.extend(sends)
            read.consumer_ops.extend(ops)
        return read

    def pack(self) -> Packed | None:
        """Returns what the reader read, in columns; None after it refused a value."""
        reader = self.stream.reader
        if reader is None or reader.named or not isinstance(reader.holdings, SeamHoldings):
            return None
        if reader.oddity is not None:  # refused in our format: this half reads on to it
            return None
        sends, ops = cast(Any, reader.sends), cast(Any, reader.consumer_ops)
        assert isinstance(sends, SendColumns) and isinstance(ops, OpColumns)
        columns = sends.packed()
        if columns is None:
            return None
        return (
            columns,
            ops.packed(),
            reader.drains,
            reader.holdings.calls,
            reader.holdings.sub_via,
            reader.txn_ops,
            reader.claims,
            reader.stalled,
        )

    def join(self, packed: object) -> None:
        """Takes what the later half's QueueHalf packed, and reads it in after this half."""
        reader = self.stream.reader
        if reader is None:  # it refused a value before the seam: nothing after counts
            return
        assert isinstance(packed, tuple)  # what pack returned, across processes
        sends, ops, drains, calls, sub_via, txn_ops, claims, stalled = packed
        later, order = ops_from(ops)
        _replay(reader.holdings, calls, later)  # the calls' positions: in the order read
        self.later = sends_from(sends), list(map(later.__getitem__, order))
        for partition, drain in drains.items():  # the last by completion, as QueueReader's
            if partition not in reader.drains or reader.drains[partition].completion < (
                drain.completion
            ):
                reader.drains[partition] = drain
        reader.holdings.sub_via |= sub_via
        reader.txn_ops += txn_ops
        reader.claims += claims  # after this half's: in invoke order
        reader.stalled += stalled


class SeamHoldings(Holdings):
    """The later half's Holdings: each process's calls are kept in `calls` until its own
    ops decide what it holds (its first assign or crash), to be replayed in the earlier
    half (the results it gives before then assume a consumer that held nothing).

    Only what the replay needs is kept: a run of polls as one call (the partitions they
    hold, in any order), and no poll or move before an unknown (back to the process's
    last subscribe) or after it: an unknown leaves what the consumer holds unknown,
    whatever came before, and polls and moves leave that as it is."""

    def __init__(self, reader: QueueReader) -> None:
        super().__init__(reader)
        self.reader = reader
        self.calls: dict[Any, list[Call]] = {}
        self.decided: set[Any] = set()

    def polled(self, process: Any, partitions: Iterable[int]) -> None:
        partitions = tuple(partitions)
        if process not in self.decided:
            made = self.calls.setdefault(process, [])
            last = made[-1][0] if made else None
            if last == POLLED:
                made[-1][1].update(partitions)
            elif last != UNKNOWN:
                made.append((POLLED, set(partitions)))
        super().polled(process, partitions)

    def move(self, process: Any, gained: set[int], lost: set[int]) -> None:
        if process not in self.decided:
            made = self.calls.setdefault(process, [])
            if not made or made[-1][0] != UNKNOWN:
                made.append((MOVED, set(gained), set(lost)))
        super().move(process, gained, lost)

    def assigned(self, process: Any, wanted: set[int], restart: bool) -> frozenset[int] | None:
        if process not in self.decided:
            at = len(self.reader.consumer_ops)  # where reposition() puts its Reposition
            self.calls.setdefault(process, []).append((ASSIGNED, set(wanted), restart, at))
            self.decided.add(process)
        return super().assigned(process, wanted, restart)

    def subscribed(self, process: Any, named: set[int] | None) -> frozenset[int] | None:
        if process not in self.decided:
            at = len(self.reader.consumer_ops)
            kept = None if named is None else set(named)
            self.calls.setdefault(process, []).append((SUBSCRIBED, kept, at))
        return super().subscribed(process, named)

    def crashed(self, process: Any) -> None:
        if process not in self.decided:
            self.calls.setdefault(process, []).append((CRASHED,))
            self.decided.add(process)
        super().crashed(process)

    def unknown(self, process: Any) -> None:
        if process not in self.decided:
            made = self.calls.setdefault(process, [])
            while made and made[-1][0] in _FORGOTTEN:
                made.pop()
            made.append((UNKNOWN,))
        super().unknown(process)


def _replay(holdings: Holdings, calls: dict[Any, list[Call]], later: list[Any]) -> None:
    """Replays the later half's recorded calls on this half's holdings, setting each
    assign's and subscribe's boundaries to what they are given what came before. A process
    this half never saw held nothing, as the later half assumed: its results stand."""
    for process, made in calls.items():
        if process not in holdings.held and process not in holdings.via:
            continue
        for call in made:
            kind = call[0]
            if kind == POLLED:
                holdings.polled(process, call[1])
            elif kind == MOVED:
                holdings.move(process, call[1], call[2])
            elif kind == ASSIGNED:
                later[call[3]].partitions = holdings.assigned(process, call[1], call[2])
            elif kind == SUBSCRIBED:
                later[call[2]].partitions = holdings.subscribed(process, call[1])
            elif kind == CRASHED:
                holdings.crashed(process)
            else:
                holdings.unknown(process)
