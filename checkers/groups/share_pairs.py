"""The share checks that compare a record's deliveries with one another, each in O(n log n)
of the record's n deliveries, never pair by pair: a lock held by two members at once,
a delivery after an applied accept, a delivery count that did not grow.

A case is one per record (lock-overlap) or one per later delivery (the others), with the
first pair found as its evidence, so that a record delivered a million times makes a
million cases at most, never a million squared. The rules are checkers/groups/share.py's
(KIP-932); SLACK_NS covers placing the client's readings on the history's time line.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from checkers.groups.share_history import Delivery

SLACK_NS = 100_000_000
Pair = tuple[Delivery, Delivery]
"""Two deliveries of one record: the first, then the one the rule breaks with."""


def overlapping_pair(found: Sequence[Delivery]) -> Pair | None:
    """Takes a record's deliveries in the order their polls returned. Returns a first and a
    second that held its lock at once, or None: the first's lock certainly lasted from
    before its poll returned until its applied acknowledgement was asked (ack_sent); the
    second, a later acquisition (a higher count) or itself acknowledged with its lock
    certainly held while the first's was, was handed over more than SLACK_NS before."""
    handed = [d.handed for d in found]
    # A later acquisition: a second with a higher count handed before the first's ack.
    best: list[int] = []  # per prefix of `found`, the place of its highest count
    for i, d in enumerate(found):
        top = best[-1] if best else None
        higher = top is None or (d.count is not None and _count(found[top]) < d.count)
        best.append(i if higher else top)  # type: ignore[arg-type]
    held = [d for d in found if d.ack_ok and d.ack_sent is not None]
    for first in held:
        assert first.ack_sent is not None
        k = bisect_left(handed, first.ack_sent - SLACK_NS)
        if first.count is not None and k and _count(found[best[k - 1]]) > first.count:
            return first, found[best[k - 1]]
    return _both_held(held)


def _both_held(held: list[Delivery]) -> Pair | None:
    """Takes the deliveries whose acknowledgement was applied, in hand-over order. Returns
    two each handed over more than SLACK_NS before the other's acknowledgement was asked."""
    handed = [d.handed for d in held]
    ends = [_lock_end(d) for d in held]
    # Per prefix, the places of its two latest lock ends: the first may be the one asked.
    tops: list[tuple[int, int | None]] = []
    for i, end in enumerate(ends):
        one, two = tops[-1] if tops else (None, None)
        if one is None or end > ends[one]:
            one, two = i, one
        elif two is None or end > ends[two]:
            two = i
        tops.append((one, two))
    for i, first in enumerate(held):
        k = bisect_left(handed, ends[i])
        if not k:
            continue
        one, two = tops[k - 1]
        other = two if one == i else one
        if other is not None and ends[other] > first.handed:
            return first, held[other]
    return None


def after_accept(found: Sequence[Delivery]) -> list[Pair]:
    """Takes a record's deliveries. Returns, for each delivered again once an accept of the
    record was applied (its poll began more than SLACK_NS after the commit returned), the
    earliest such accept and it."""
    accepted = sorted(
        (d for d in found if d.ack == "accept" and d.ack_ok and d.ack_done is not None),
        key=lambda d: d.ack_done,  # type: ignore[arg-type, return-value]
    )[:2]
    pairs = []
    for again in found:
        first = next((a for a in accepted if a is not again), None)
        if first is not None and again.began > first.ack_done + SLACK_NS:  # type: ignore[operator]
            pairs.append((first, again))
    return pairs


def count_pairs(
    found: Sequence[Delivery], faults: Sequence[tuple[int, int]]
) -> tuple[list[Pair], list[Pair]]:
    """Takes a record's deliveries in hand-over order and the fault windows (ns). Returns
    the deliveries whose count is no higher than an earlier one's (earlier in that order,
    handed over more than SLACK_NS before this one's poll began), each with that earlier
    one: first those with such an earlier one that no fault excuses, then those whose every
    such earlier one a fault excuses (one in force at any time from the earlier hand-over
    to the later poll, or begun between: share.count_cases)."""
    handed = [d.handed for d in found]
    counts = RangeMax([-1 if d.count is None else d.count for d in found])
    windows = sorted(faults)
    starts = [start for start, _ in windows]
    reach: list[int] = []  # per prefix of the windows by start, the latest stop
    for _, stop in windows:
        reach.append(max(stop, reach[-1]) if reach else stop)
    unexcused: list[Pair] = []
    reset: list[Pair] = []
    for j, later in enumerate(found):
        if later.count is None:
            continue
        high = min(j, bisect_left(handed, later.began - SLACK_NS))
        w = bisect_right(starts, later.began)
        low = bisect_right(handed, reach[w - 1]) if w else 0  # earlier ones no fault excuses
        i = counts.place_of_max(low, high)
        if i is not None and found[i].count >= later.count:  # type: ignore[operator]
            unexcused.append((found[i], later))
            continue
        i = counts.place_of_max(0, high)
        if i is not None and found[i].count >= later.count:  # type: ignore[operator]
            reset.append((found[i], later))
    return unexcused, reset


class RangeMax:
    """The place of the largest of a fixed list's values in any range of places, in
    O(log n) a query (a segment tree over the places; ties to the lowest place)."""

    def __init__(self, values: list[int]) -> None:
        self.values = values
        self.n = len(values)
        self.tree: list[int] = [0] * self.n + list(range(self.n))
        for node in range(self.n - 1, 0, -1):
            self.tree[node] = self._better(self.tree[2 * node], self.tree[2 * node + 1])

    def _better(self, a: int, b: int) -> int:
        return (
            b
            if self.values[b] > self.values[a] or (self.values[b] == self.values[a] and b < a)
            else a
        )

    def place_of_max(self, low: int, high: int) -> int | None:
        """Returns the place in [low, high) of the largest value, None for an empty range."""
        found: int | None = None
        low, high = low + self.n, high + self.n
        while low < high:
            if low & 1:
                found = self.tree[low] if found is None else self._better(found, self.tree[low])
                low += 1
            if high & 1:
                high -= 1
                found = self.tree[high] if found is None else self._better(found, self.tree[high])
            low //= 2
            high //= 2
        return found


def _count(d: Delivery) -> int:
    return -1 if d.count is None else d.count


def _lock_end(d: Delivery) -> int:
    assert d.ack_sent is not None
    return d.ack_sent - SLACK_NS
