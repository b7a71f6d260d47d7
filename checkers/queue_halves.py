"""A queue history read in two halves by two processes (history.halves): the later half's
reader packs its records in columns, and the earlier half's reader joins them.

Records cross as columns (a list per field), not as objects: pickling a million slotted
records costs more than reading them, a list of ints or strings next to nothing. What a
consumer holds (checkers/queue_positions.py) depends on its ops before the seam, which the
later half does not see: there each process's holdings calls are recorded until its own
ops decide what it holds (an assign or a crash), and replayed here on what this half
knew, which gives the boundaries (a Reposition's partitions) their serial values.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import accumulate
from operator import attrgetter
from typing import Any

from checkers.fork_pool import can_fork, forked_beside
from checkers.group_history import WithoutGroupOps
from checkers.queue import QueueStream
from checkers.queue_history import Poll, QueueReader, Reposition, Send
from checkers.queue_positions import Holdings
from history import History
from history.halves import SecondHalf, find_seam, load_halves, read_second_half

__all__ = ["QueueHalf", "SeamHoldings", "load_queue_halves"]

_SEND = ("index", "process", "partition", "value", "outcome", "offset", "invoked", "acked", "mop")
_POLL = ("index", "process", "time", "moved", "outcome")
_OTHER_POLL = ("index", "process", "time", "received", "moved", "outcome")
_REPOSITION = ("index", "process", "partitions", "seek", "f")
_FLAT, _REPOSITIONED, _OTHER = 0, 1, 2
POLLED, MOVED, ASSIGNED, SUBSCRIBED, CRASHED, UNKNOWN = range(6)
_PLACED = frozenset({ASSIGNED, SUBSCRIBED})
"""The calls whose last element is the position of their Reposition."""
_BY_INDEX = attrgetter("index")

Call = tuple[Any, ...]
"""A Holdings call as SeamHoldings records it: its kind first, then its arguments, then,
for an assign or subscribe, the position of its Reposition among the consumer ops."""
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


class QueueHalf(WithoutGroupOps):
    """The queue checker's Reader (a QueueStream without the group's ops) for one half of
    a history (history.halves.HalfReader); `later` for the half after the seam."""

    def __init__(self, path: str, *, later: bool = False) -> None:
        self.stream = QueueStream(path)
        super().__init__(self.stream)
        if later and self.stream.reader is not None:
            self.stream.reader.holdings = SeamHoldings(self.stream.reader)

    def pack(self) -> Packed | None:
        """Returns what the reader read, in columns; None after it refused a value."""
        reader = self.stream.reader
        if reader is None or reader.named or not isinstance(reader.holdings, SeamHoldings):
            return None
        # In invoke order, as QueueReader.finish sorts them: every invoke here follows
        # every invoke before the seam, so the joined lists stay in order.
        reader.sends.sort(key=_BY_INDEX)
        ops, calls = _sorted_ops(reader.consumer_ops, reader.holdings.calls)
        return (
            _columns(reader.sends, _SEND),
            _pack_ops(ops),
            reader.drains,
            calls,
            reader.holdings.sub_via,
            reader.txn_ops,
        )

    def join(self, packed: object) -> None:
        """Takes what the later half's QueueHalf packed, and reads it in after this half."""
        reader = self.stream.reader
        if reader is None:  # it refused a value before the seam: nothing after counts
            return
        assert isinstance(packed, tuple)  # what pack returned, across processes
        sends, ops, drains, calls, sub_via, txn_ops = packed
        later = _unpack_ops(ops)
        _replay(reader.holdings, calls, later)
        reader.sends.sort(key=_BY_INDEX)
        reader.sends += map(Send, *sends)
        reader.consumer_ops.sort(key=_BY_INDEX)
        reader.consumer_ops += later
        for partition, drain in drains.items():  # the last by completion, as QueueReader's
            if partition not in reader.drains or reader.drains[partition].completion < (
                drain.completion
            ):
                reader.drains[partition] = drain
        reader.holdings.sub_via |= sub_via
        reader.txn_ops += txn_ops


class SeamHoldings(Holdings):
    """The later half's Holdings: each process's calls are kept in `calls` until its own
    ops decide what it holds (its first assign or crash), to be replayed in the earlier
    half (the results it gives before then assume a consumer that held nothing)."""

    def __init__(self, reader: QueueReader) -> None:
        super().__init__(reader)
        self.reader = reader
        self.calls: dict[Any, list[Call]] = {}
        self.decided: set[Any] = set()

    def polled(self, process: Any, partitions: Iterable[int]) -> None:
        partitions = tuple(partitions)
        if process not in self.decided:
            self.calls.setdefault(process, []).append((POLLED, partitions))
        super().polled(process, partitions)

    def move(self, process: Any, gained: set[int], lost: set[int]) -> None:
        if process not in self.decided:
            self.calls.setdefault(process, []).append((MOVED, set(gained), set(lost)))
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
            self.calls.setdefault(process, []).append((UNKNOWN,))
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


def _sorted_ops(
    ops: list[Poll | Reposition], calls: dict[Any, list[Call]]
) -> tuple[list[Poll | Reposition], dict[Any, list[Call]]]:
    """Takes the consumer ops in the order read and the calls recorded. Returns the ops in
    invoke order (stable: one op's polls stay in order), and the calls with each position
    among the ops moved to where its op went."""
    order = sorted(range(len(ops)), key=[op.index for op in ops].__getitem__)
    moved_to = [0] * len(ops)
    for new, old in enumerate(order):
        moved_to[old] = new
    placed = {
        process: [(*call[:-1], moved_to[call[-1]]) if call[0] in _PLACED else call for call in made]
        for process, made in calls.items()
    }
    return [ops[old] for old in order], placed


def _columns(records: list[Any], fields: tuple[str, ...]) -> list[list[Any]]:
    return [list(map(attrgetter(name), records)) for name in fields]


def _pack_ops(ops: list[Poll | Reposition]) -> Packed:
    """Takes consumer ops. Returns them in columns: each op's kind, then the polls whose
    records are flat (their records as one array's bytes and their lengths), the
    repositions, and the other polls."""
    kinds = bytes(
        _REPOSITIONED
        if op.__class__ is Reposition
        else _FLAT
        if op.received.__class__ is array  # type: ignore[union-attr]
        else _OTHER
        for op in ops
    )
    flat: list[Any] = [op for op, kind in zip(ops, kinds, strict=True) if kind == _FLAT]
    received = [op.received for op in flat]
    return (
        kinds,
        _columns(flat, _POLL),
        b"".join(map(array.tobytes, received)),
        list(map(len, received)),
        _columns(
            [op for op, kind in zip(ops, kinds, strict=True) if kind == _REPOSITIONED], _REPOSITION
        ),
        _columns([op for op, kind in zip(ops, kinds, strict=True) if kind == _OTHER], _OTHER_POLL),
    )


def _unpack_ops(packed: Packed) -> list[Any]:
    """Takes what _pack_ops packed. Returns the consumer ops, in their order."""
    kinds, polls, data, lengths, repositions, others = packed
    flat: array[int] = array("q")
    flat.frombytes(data)
    ends = list(accumulate(lengths))
    received = [flat[start:end] for start, end in zip([0, *ends], ends, strict=False)]
    index, process, time, moved, outcome = polls
    made = (
        map(Poll, index, process, time, received, moved, outcome),
        map(Reposition, *repositions),
        map(Poll, *others),
    )
    return [next(made[kind]) for kind in kinds]
