"""Ownership overlaps of a consumer group's partitions (checkers/groups/consumer.py's
ownership rule): each time a member was assigned a partition another member owned,
counted by how the old owner's ownership ended, in O(n log n) of the callbacks n.

An overlap is a pair (an assignment, an owner at that moment), and n callbacks may make
n^2/2 of them: they are counted per ownership, from how many assignments its span held
(a running count and a binary search for the owner's last op), and only the first few
that ended by revocation (double-ownership) are written out as cases.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from checkers.groups.consumer_history import ENDS, Callback, GroupHistory

Case = dict[str, Any]


@dataclass(slots=True)
class Overlaps:
    """The overlaps of a group: their number by how the old owner's ownership ended
    (`revoked`, `lost`, or None: it never said), and the first `kept` ended by revocation,
    as cases, in the order of the callbacks (partition by partition)."""

    kept: int
    ended: Counter[str | None] = field(default_factory=Counter)
    double: list[tuple[tuple[int, int, int], Case]] = field(default_factory=list)

    def keep(self, order: tuple[int, int, int], case: Case) -> None:
        """Keeps a double ownership's case if among the first `kept` by `order`."""
        self.double.append((order, case))
        if len(self.double) >= 2 * self.kept:
            self.double = sorted(self.double, key=lambda c: c[0])[: self.kept]

    def cases(self) -> list[Case]:
        """Returns the first `kept` double ownerships' cases."""
        return [case for _, case in sorted(self.double, key=lambda c: c[0])[: self.kept]]


def ownership_overlaps(group: GroupHistory, kept: int) -> Overlaps:
    """Takes a GroupHistory and how many cases to keep. Returns its Overlaps (Jepsen has no
    group check; the rule is consumer.py's)."""
    per_partition: dict[int, list[Callback]] = {}
    for cb in sorted(group.callbacks, key=lambda c: c.at):
        for p in cb.partitions:
            per_partition.setdefault(p, []).append(cb)
    overlaps = Overlaps(kept)
    for rank, (p, callbacks) in enumerate(per_partition.items()):
        _Partition(p, rank, callbacks, group.last_seen, overlaps).run()
    return overlaps


class _Partition:
    """One partition's callbacks, in time order, and the ownerships they make."""

    def __init__(
        self,
        partition: int,
        rank: int,
        callbacks: list[Callback],
        last_seen: dict[str, int],
        overlaps: Overlaps,
    ) -> None:
        self.partition, self.rank, self.callbacks = partition, rank, callbacks
        self.last_seen, self.overlaps = last_seen, overlaps
        self.ats = [cb.at for cb in callbacks]
        self.assigns = [k for k, cb in enumerate(callbacks) if cb.kind not in ENDS]
        self.before = [0]  # per place, the assignments at earlier places
        for cb in callbacks:
            self.before.append(self.before[-1] + (cb.kind not in ENDS))

    def run(self) -> None:
        """Follows every ownership from its assignment to its end; closes each."""
        owners: dict[str, list[int]] = {}  # member -> [its place of assignment, own again]
        for k, cb in enumerate(self.callbacks):
            owned = owners.get(cb.member)
            if cb.kind in ENDS:
                if owned is not None:
                    del owners[cb.member]
                    self.close(cb.member, owned, k, cb)
            elif owned is None:
                owners[cb.member] = [k, 0]
            elif cb.at <= self.last_seen.get(cb.member, cb.at):
                owned[1] += 1  # assigned again while owning: no overlap with itself
        for member, owned in owners.items():
            self.close(member, owned, len(self.callbacks), None)

    def close(self, owner: str, owned: list[int], end: int, ended: Callback | None) -> None:
        """Counts the overlaps of owner's ownership from place owned[0] to place `end`:
        the others' assignments between, up to its last op (none after: its client had
        gone, it held nothing)."""
        since = owned[0]
        last = self.last_seen.get(owner)
        upto = end if last is None else min(end, bisect_right(self.ats, last))
        count = self.before[upto] - self.before[since + 1] - owned[1] if upto > since else 0
        kind = None if ended is None else ended.kind
        self.overlaps.ended[kind] += count
        if kind == "revoked" and count:
            self.keep_cases(owner, since, upto, ended)

    def keep_cases(self, owner: str, since: int, upto: int, ended: Any) -> None:
        """Keeps the first cases of one ownership ended by revocation."""
        found = 0
        at = bisect_right(self.assigns, since)
        while found < self.overlaps.kept and at < len(self.assigns) and self.assigns[at] < upto:
            k = self.assigns[at]
            at += 1
            cb = self.callbacks[k]
            if cb.member == owner:
                continue
            found += 1
            case = _overlap(self.partition, cb, self.callbacks[since], ended)
            self.overlaps.keep((self.rank, k, since), case)


def _overlap(partition: int, cb: Callback, since: Callback, ended: Callback) -> Case:
    return {
        "partition": partition,
        "member": cb.member,
        "assigned_at": cb.at,
        "assigned_in": cb.index,
        "owner": since.member,
        "owner_since": since.at,
        "ended_by": ended.kind,
        "ended_at": ended.at,
        "ended_in": ended.index,
    }
