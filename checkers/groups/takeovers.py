"""Takeovers of a consumer group's partitions (checkers/groups/consumer.py's takeover
rule): a member assigned a partition starts reading it at or below the committed offset,
judged for every assignment in O(n log n) of the history, never by rescanning a member's
polls or the group's commits for each.

Per member, one pass over its callbacks in time order says what each assignment of a
partition followed (the member's previous callback naming it) and one pass backwards
where it ended; the first poll of it is found by binary search among the member's polls
of that partition; the highest commit it is judged by comes from one sweep per
partition over the commits in the order they were invoked, keeping the best of any
member, the best of the others, and, per member, the best of its own in op order (a
Fenwick tree), for the bound leaves out the member's own commits since the assignment.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from typing import Any

from checkers.groups.consumer_history import (
    ENDS,
    Callback,
    Commit,
    Fetch,
    GroupHistory,
    by_member,
)

Case = dict[str, Any]
Best = tuple[tuple[int, int], Commit]
"""A commit found best so far: (its offset, less its place among the commits), itself."""


@dataclass(frozen=True, slots=True)
class Taken:
    """An assignment to judge: the partition, its callback, and its first poll there."""

    partition: int
    assigned: Callback
    first: Fetch


def takeover_cases(group: GroupHistory, auto_commit: bool) -> tuple[list[Case], dict[str, int]]:
    """Takes a GroupHistory and whether librdkafka committed. Returns the assignments whose
    first poll started above the committed offset (consumer.py's takeover rule, Kafka's
    consumer contract) and the assignments not judged, by reason."""
    assigns = [cb for cb in group.callbacks if cb.kind == "assigned"]
    if auto_commit:  # a close's last commit is reported to no op: the bound is not known
        return [], {"auto-commit": sum(len(cb.partitions) for cb in assigns)}
    unjudged: Counter[str] = Counter()
    polls = _polls(group.fetches)
    judged: list[Taken] = []
    for member, callbacks in by_member(sorted(group.callbacks, key=lambda c: c.at)):
        for why, taken in _assignments(callbacks, polls.get(member, {})):
            if taken is None:
                unjudged[why] += 1
            else:
                judged.append(taken)
    bounds = _bounds(group.commits, judged)
    cases = []
    for taken in judged:
        commit = bounds.get(id(taken))
        if commit is None:
            unjudged["no commit before"] += 1
        elif taken.first.first > commit.offsets[taken.partition]:
            cases.append(_case(taken, commit))
    return cases, dict(unjudged)


Polls = dict[int, tuple[list[int], list[Fetch]]]
"""One member's polls, per partition: their op indexes, sorted, and the polls."""


def _polls(fetches: list[Fetch]) -> dict[str, Polls]:
    out: dict[str, Polls] = {}
    for member, mine in by_member(sorted(fetches, key=lambda f: f.index)):
        per: Polls = {}
        for f in mine:
            indexes, found = per.setdefault(f.partition, ([], []))
            indexes.append(f.index)
            found.append(f)
        out[member] = per
    return out


def _assignments(callbacks: list[Callback], polls: Polls) -> list[tuple[str, Taken | None]]:
    """Takes one member's callbacks in time order and its polls. Returns, per assignment
    of a partition, why it is not judged, or what to judge."""
    ends: dict[tuple[int, int], int | None] = {}  # (place, partition) -> its end's op index
    upcoming: dict[int, int] = {}
    for place in range(len(callbacks) - 1, -1, -1):
        cb = callbacks[place]
        for p in cb.partitions:
            if cb.kind == "assigned":
                ends[place, p] = upcoming.get(p)
            if cb.kind in ENDS:
                upcoming[p] = cb.index
    found: list[tuple[str, Taken | None]] = []
    previous: dict[int, Callback] = {}
    for place, cb in enumerate(callbacks):
        for p in cb.partitions:
            if cb.kind == "assigned":
                found.append(_assignment(p, cb, previous.get(p), ends[place, p], polls))
        for p in cb.partitions:
            previous[p] = cb
    return found


def _assignment(
    p: int, cb: Callback, previous: Callback | None, end: int | None, polls: Polls
) -> tuple[str, Taken | None]:
    if previous is not None and previous.kind == "assigned":
        return "held already", None
    indexes, found = polls.get(p, ([], []))
    at = bisect_left(indexes, cb.index)
    if at == len(indexes) or (end is not None and indexes[at] > end):
        return "nothing read", None
    first = found[at]
    if previous is not None and first.index == previous.index and not _after(first, previous, cb):
        return "revoked and assigned in one op", None  # its records may be of either
    return "", Taken(p, cb, first)


def _after(fetch: Fetch, *callbacks: Callback) -> bool:
    """Returns whether the op's first record was handed over after the callbacks."""
    return fetch.first_at is not None and all(c.at < fetch.first_at for c in callbacks)


def _bounds(commits: list[Commit], judged: list[Taken]) -> dict[int, Commit]:
    """Takes the group's commits and the assignments to judge. Returns, per assignment (by
    id), the commit op of the highest offset of its partition that may have landed (ok or
    info) and was invoked before its first poll completed, leaving out its member's own
    commits from its assignment on (the first such in the commits' order, among equals)."""
    landed: dict[int, list[tuple[int, Commit]]] = {}
    for place, c in enumerate(commits):
        if c.outcome != "fail" and not c.auto:
            for p in c.offsets:
                landed.setdefault(p, []).append((place, c))
    asked: dict[int, list[Taken]] = {}
    for taken in judged:
        asked.setdefault(taken.partition, []).append(taken)
    out: dict[int, Commit] = {}
    for p, takens in asked.items():
        out |= _Sweep(p, landed.get(p, [])).bounds(takens)
    return out


class _Sweep:
    """One partition's commits, added in the order they were invoked."""

    def __init__(self, partition: int, commits: list[tuple[int, Commit]]) -> None:
        self.partition = partition
        self.commits = sorted(commits, key=lambda pc: pc[1].invoked)
        self.best: dict[str, Best] = {}  # per member
        self.top: Best | None = None
        self.second: Best | None = None  # the best of another member than the top's
        own: dict[str, list[int]] = {}
        for _, c in commits:
            own.setdefault(c.member, []).append(c.index)
        self.own = {m: _Fenwick(sorted(set(indexes))) for m, indexes in own.items()}

    def bounds(self, takens: list[Taken]) -> dict[int, Commit]:
        """Returns each assignment's bound (by id), as _bounds says."""
        out: dict[int, Commit] = {}
        added = 0
        for taken in sorted(takens, key=lambda t: t.first.completed):
            while (
                added < len(self.commits) and self.commits[added][1].invoked < taken.first.completed
            ):
                self.add(*self.commits[added])
                added += 1
            member = taken.assigned.member
            other = (
                self.second if self.top is not None and self.top[1].member == member else self.top
            )
            mine = self.own[member].best_below(taken.assigned.index) if member in self.own else None
            best = max(
                (b for b in (other, mine) if b is not None), key=lambda b: b[0], default=None
            )
            if best is not None:
                out[id(taken)] = best[1]
        return out

    def add(self, place: int, c: Commit) -> None:
        """Adds a commit invoked before every poll still to be judged."""
        new: Best = ((c.offsets[self.partition], -place), c)
        self.own[c.member].add(c.index, new)
        held = self.best.get(c.member)
        if held is not None and held[0] >= new[0]:
            return
        self.best[c.member] = new
        if self.top is None or self.top[1].member == c.member:
            self.top = new if self.top is None or new[0] > self.top[0] else self.top
        elif new[0] > self.top[0]:
            self.top, self.second = new, self.top
        elif self.second is None or self.second[1].member == c.member or new[0] > self.second[0]:
            self.second = new


class _Fenwick:
    """The best commit among those added at op indexes below a given one (a Fenwick tree
    of prefix maxima over one member's commit indexes)."""

    def __init__(self, indexes: list[int]) -> None:
        self.indexes = indexes
        self.tree: list[Best | None] = [None] * (len(indexes) + 1)

    def add(self, index: int, best: Best) -> None:
        i = bisect_left(self.indexes, index) + 1
        while i < len(self.tree):
            held = self.tree[i]
            if held is None or best[0] > held[0]:
                self.tree[i] = best
            i += i & -i

    def best_below(self, index: int) -> Best | None:
        i = bisect_left(self.indexes, index)
        found: Best | None = None
        while i > 0:
            held = self.tree[i]
            if held is not None and (found is None or held[0] > found[0]):
                found = held
            i -= i & -i
        return found


def _case(taken: Taken, commit: Commit) -> Case:
    cb, first = taken.assigned, taken.first
    return {
        "partition": taken.partition,
        "member": cb.member,
        "assigned_at": cb.at,
        "assigned_in": cb.index,
        "first_offset": first.first,
        "fetched_in": first.index,
        "committed": commit.offsets[taken.partition],
        "commit_index": commit.index,
        "commit_member": commit.member,
    }
