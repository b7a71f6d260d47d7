"""A queue history's records in columns, for the later half's reader (checkers/
queue_halves.py) to send to the other process: stand-ins for a QueueReader's lists of
sends and of consumer ops that take each record apart as it is appended, and the records
made again from what they kept.

A record is taken apart while it is still in the cache: once the reading is done, its
fields lie scattered over the heap, and fetching them again (to pack, then to pickle)
cost more than making the records did. Its ints are packed as int64s (struct), which
cross as one array, pickled as one copy of its bytes; its strs and sets of partitions
become codes into a table of the distinct values (interchangeable: equal values of one
type); a flat poll's records go on the end of one array. A None where an int is
expected is written as NONE, and the Nones are counted, so that a NONE that was a real
value (a time of -2**63) is found and the columns refused. A record with a field that
fits none of these (a message that is a string, a time that is a float, an int beyond 64
bits) is kept whole, in its place.

Values that reach these fields are never bools (history.events.check_event and
checkers/queue/values.py take only exact ints), which struct would pack as ints.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import accumulate
from operator import attrgetter
from struct import Struct
from struct import error as StructError
from typing import Any

from checkers.queue.reader import Poll, Reposition, Send

__all__ = ["NONE", "OpColumns", "SendColumns", "ops_from", "sends_from"]

NONE = -(2**63)
"""None in an int field (the least int64)."""
_WHOLE = 255
"""The code of a send's outcome when the send is kept whole."""
_FLAT, _REPOSITIONED, _WHOLE_OP = 0, 1, 2
"""The kinds of consumer op: a poll of flat records, a reposition, one kept whole."""
_SEND_INTS = attrgetter(
    "index", "process", "partition", "value", "offset", "invoked", "acked", "mop"
)
# Struct packs ints into int64s faster than an array takes them one by one, and refuses
# (StructError) whatever is not an int64, writing nothing.
_SEND_WIDTH, _POLL_WIDTH, _REPOSITION_WIDTH = 8, 6, 4
_SEND = Struct(f"{_SEND_WIDTH}q")  # _SEND_INTS
_POLL = Struct(f"{_POLL_WIDTH}q")  # index, process, time, moved's, outcome's codes, len(records)
_REPOSITION = Struct(f"{_REPOSITION_WIDTH}q")  # index, process, partitions' and f's codes
_TO_NONE = {NONE: None}
_IS_WHOLE = bytes(int(code == _WHOLE) for code in range(256))

Packed = tuple[Any, ...]


class _Codes(dict[Any, int]):
    """Each distinct value seen, with its code: the order it was first seen in."""

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self)
        return code


class SendColumns:
    """Stands in for QueueReader.sends, which it only appends to: keeps each send's ints
    and its outcome's code, or the send whole."""

    def __init__(self) -> None:
        self.ints = bytearray()  # per send not kept whole, its _SEND
        self.outcomes = bytearray()  # per send, its outcome's code, or _WHOLE
        self.codes = _Codes()
        self.whole: list[Send] = []
        self.nones = 0

    def append(self, send: Send) -> None:
        """Takes a send, as QueueReader appends it."""
        code = self.codes[send.outcome]
        if code < _WHOLE:
            if send.offset is not None and send.acked is not None:
                try:
                    self.ints += _SEND.pack(*_SEND_INTS(send))
                except StructError:  # a field that is no int64
                    pass
                else:
                    self.outcomes.append(code)
                    return
            elif self._with_nones(send):
                self.outcomes.append(code)
                return
        self.whole.append(send)
        self.outcomes.append(_WHOLE)

    def _with_nones(self, send: Send) -> bool:
        """Takes a send with a None offset or acked. Keeps its ints with each None as
        NONE; returns whether they fit so."""
        offset, acked = send.offset, send.acked
        fields = (send.index, send.process, send.partition, send.value)
        at = (NONE if offset is None else offset, send.invoked, NONE if acked is None else acked)
        try:
            self.ints += _SEND.pack(*fields, *at, send.mop)
        except StructError:
            return False
        self.nones += (offset is None) + (acked is None)
        return True

    def packed(self) -> Packed | None:
        """Returns the sends in columns, with the permutation that puts them in invoke
        order (stable); None when a field held NONE itself."""
        ints = _ints(self.ints)
        if ints.count(NONE) != self.nones:
            return None
        indexes = (ints[0::_SEND_WIDTH], [send.index for send in self.whole])
        index = _merged(indexes, bytes(self.outcomes).translate(_IS_WHOLE))
        order = array("q", sorted(range(len(index)), key=index.__getitem__))
        return ints, bytes(self.outcomes), tuple(self.codes), self.whole, order


def sends_from(packed: Packed) -> list[Send]:
    """Takes what SendColumns.packed returned. Returns the sends, in invoke order."""
    ints, outcomes, table, whole, order = packed
    index, process, partition, value, offset, invoked, acked, mop = _columns(ints, _SEND_WIDTH)
    kept = map(table.__getitem__, outcomes.replace(bytes([_WHOLE]), b""))
    offsets, ackeds = (map(_TO_NONE.get, column, column) for column in (offset, acked))
    made = map(Send, index, process, partition, value, kept, offsets, invoked, ackeds, mop)
    sends = _merged((made, whole), outcomes.translate(_IS_WHOLE)) if whole else list(made)
    return list(map(sends.__getitem__, order))


class OpColumns:
    """Stands in for QueueReader.consumer_ops, which it only appends to and counts: keeps
    each flat poll's ints, codes and records, each reposition's ints, codes and seek, or
    the op whole."""

    def __init__(self) -> None:
        self.kinds = bytearray()  # per op: _FLAT, _REPOSITIONED or _WHOLE_OP
        self.polls = bytearray()  # per flat poll, its _POLL
        self.records: array[int] = array("q")  # the flat polls' records, one after another
        self.repositions = bytearray()  # per reposition, its _REPOSITION
        self.seeks: list[dict[int, int]] = []
        self.codes = _Codes()
        self.whole: list[Poll | Reposition] = []

    def __len__(self) -> int:
        return len(self.kinds)

    def append(self, op: Poll | Reposition) -> None:
        """Takes a consumer op, as QueueReader appends it."""
        codes = self.codes
        try:
            if isinstance(op, Reposition):
                partitions, f = codes[op.partitions], codes[op.f]
                self.repositions += _REPOSITION.pack(op.index, op.process, partitions, f)
                self.seeks.append(op.seek)
                self.kinds.append(_REPOSITIONED)
                return
            if isinstance(op.received, array):
                moved, outcome, count = codes[op.moved], codes[op.outcome], len(op.received)
                self.polls += _POLL.pack(op.index, op.process, op.time, moved, outcome, count)
                self.records += op.received
                self.kinds.append(_FLAT)
                return
        except StructError:  # a field that is no int64
            pass
        self.whole.append(op)
        self.kinds.append(_WHOLE_OP)

    def packed(self) -> Packed:
        """Returns the ops in columns, with the permutation that puts them in invoke order
        (stable)."""
        polls, repositions = _ints(self.polls), _ints(self.repositions)
        flat, repositioned = polls[0::_POLL_WIDTH], repositions[0::_REPOSITION_WIDTH]
        index = _merged((flat, repositioned, [op.index for op in self.whole]), self.kinds)
        order = array("q", sorted(range(len(index)), key=index.__getitem__))
        columns = (polls, self.records, repositions, self.seeks)
        return (bytes(self.kinds), *columns, tuple(self.codes), self.whole, order)


def ops_from(packed: Packed) -> tuple[list[Poll | Reposition], array[int]]:
    """Takes what OpColumns.packed returned. Returns the ops in the order appended, and the
    permutation that puts them in invoke order."""
    kinds, polls, records, repositions, seeks, table, whole, order = packed
    index, process, time, moved, outcome, counts = _columns(polls, _POLL_WIDTH)
    ends = list(accumulate(counts))
    received = map(records.__getitem__, map(slice, [0, *ends], ends))
    code = table.__getitem__
    flat = map(Poll, index, process, time, received, map(code, moved), map(code, outcome))
    index, process, partitions, f = _columns(repositions, _REPOSITION_WIDTH)
    repositioned = map(Reposition, index, process, map(code, partitions), seeks, map(code, f))
    return _merged((flat, repositioned, whole), kinds), order


def _ints(packed: bytearray) -> array[int]:
    """Takes int64s packed by Struct. Returns them in an array."""
    ints: array[int] = array("q")
    ints.frombytes(packed)
    return ints


def _columns(ints: array[int], width: int) -> list[array[int]]:
    """Takes rows of `width` ints, one after another. Returns each column."""
    return [ints[field::width] for field in range(width)]


def _merged(sources: tuple[Iterable[Any], ...], kinds: bytes | bytearray) -> list[Any]:
    """Takes iterables, and per value the position of the one it comes from. Returns the
    values in that order."""
    iterators = tuple(map(iter, sources))
    return list(map(next, map(iterators.__getitem__, kinds)))
