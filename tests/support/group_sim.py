"""A simulated consumer group writing queue histories as the queue workload records a
group (workloads/group_log.py): sends, polls, commit ops, rebalance callbacks with their
client-clock times, members that crash and are replaced.

One op at a time on one clock, each op one tick long. A rebalance is eager, as the classic
protocol's: every owner revokes (in its next op), then the partitions are dealt round robin
to the live members, each assigned in its next op after every revocation, reading on from
the committed offset. One anomaly of one kind can be planted; `planted` names it once the
history shows it (a member that crashes first may take it away).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]
CLOCK_START = 10**12
"""The client clock's reading at the history's time 0."""


@dataclass(frozen=True)
class GroupSimConfig:
    """The shape of one simulated run and the anomaly to plant (None: none)."""

    partitions: int = 3
    members: int = 3
    ops: int = 300
    crash_p: float = 0.02
    plant: str | None = None


@dataclass
class _Member:
    name: str
    process: int
    held: set[int] = field(default_factory=set)
    positions: dict[int, int] = field(default_factory=dict)
    callbacks: list[tuple[str, list[int]]] = field(default_factory=list)


class GroupSimulation:
    """One run: the logs, the members, the committed offsets and the history."""

    def __init__(self, rng: random.Random, config: GroupSimConfig) -> None:
        self.rng, self.config = rng, config
        self.logs: dict[int, list[int]] = {p: [] for p in range(config.partitions)}
        self.committed: dict[int, int] = {}
        self.events: list[Event] = []
        self.time = 0
        self.messages = itertools.count(1)
        self.names = itertools.count(0)
        self.members: list[_Member] = []
        self.planted: set[str] = set()
        self.tried = False
        self.skipped: tuple[str, int] | None = None  # the member whose start was planted
        self.late_revoke: tuple[str, int] | None = None
        self.revoking: set[str] = set()  # members yet to revoke in a rebalance under way
        self.late: tuple[str, int] | None = None  # the planted owner that revokes late
        for _ in range(config.members):
            self._join()

    def run(self) -> list[Event]:
        """Runs the ops. Returns the history's events."""
        for _ in range(self.config.ops):
            member = self.rng.choice(self.members)
            if self.rng.random() < self.config.crash_p:
                self._crash(member)
                continue
            r = self.rng.random()
            if r < 0.45:
                self._send(member)
            elif r < 0.85:
                self._poll(member)
            else:
                self._commit(member)
        return self.events

    # ---- the group ---------------------------------------------------------------------

    def _join(self) -> None:
        n = next(self.names)
        self.members.append(_Member(f"p{n}", n))
        self._rebalance()

    def _crash(self, member: _Member) -> None:
        self.members.remove(member)  # its client closes: it holds nothing any more
        self._join()

    def _rebalance(self) -> None:
        # An assignment not yet served belongs to a generation that is over: dropped.
        self.late = None
        for m in self.members:
            m.callbacks = []
        self.revoking = set()
        for m in self.members:
            revoked = sorted(m.held)
            if self.config.plant == "double-ownership" and not self.tried and revoked:
                self.tried = True
                self.late = (m.name, revoked.pop())  # revoked only after its next owner's assign
            if revoked:
                m.callbacks.append(("revoked", revoked))
                self.revoking.add(m.name)
        if not self.revoking:
            self._deal()

    def _deal(self) -> None:
        for p in range(self.config.partitions):
            m = self.members[p % len(self.members)]
            m.callbacks.append(("assigned", [p]))

    def _serve(self, member: _Member, op: Event) -> None:
        """Serves member's callbacks during op: moves what it holds, records them."""
        log = []
        for kind, parts in member.callbacks:
            self.time += 1
            log.append({"type": kind, "partitions": parts, "mono-ns": CLOCK_START + self.time})
            if kind == "revoked":
                self._revoked(member, parts)
                continue
            for p in parts:
                member.held.add(p)
                member.positions[p] = self._start(member, p)
                self._plant_late_revoke(member, p)
        member.callbacks = []
        if member.name in self.revoking:
            self.revoking.discard(member.name)
            if not self.revoking:
                self._deal()
        if log:
            op["group-log"] = log
            op["mono-ns"] = CLOCK_START + self.time + 1

    def _plant_late_revoke(self, member: _Member, p: int) -> None:
        if self.late is None or self.late[1] != p:
            return
        owner = next((m for m in self.members if m.name == self.late[0]), None)
        self.late = None
        if owner is not None and owner is not member:
            owner.callbacks.append(("revoked", [p]))
            self.late_revoke = (owner.name, p)

    def _revoked(self, member: _Member, parts: list[int]) -> None:
        if self.late_revoke is not None and (member.name, parts) == (
            self.late_revoke[0],
            [self.late_revoke[1]],
        ):
            self.planted.add("double-ownership")
        member.held -= set(parts)
        if self.skipped is not None and self.skipped[0] == member.name:
            self.skipped = None  # it never read from the planted start

    def _start(self, member: _Member, p: int) -> int:
        start = self.committed.get(p, 0)
        planting = self.config.plant == "takeover-skip" and not self.tried
        if planting and p in self.committed and len(self.logs[p]) > start + 1:
            self.tried = True
            self.skipped = (member.name, p)
            return start + 1
        return start

    # ---- ops ---------------------------------------------------------------------------

    def _send(self, member: _Member) -> None:
        p = self.rng.randrange(self.config.partitions)
        message = next(self.messages)
        self.logs[p].append(message)
        self._op(member, "send", [len(self.logs[p]) - 1, message], key=p, invoked=message)

    def _poll(self, member: _Member) -> None:
        extra: Event = {}
        self._serve(member, extra)
        records: dict[str, list[list[int]]] = {}
        for p in sorted(member.held):
            at = member.positions[p]
            taken = self.logs[p][at : at + self.rng.randint(1, 4)]
            if taken:
                records[str(p)] = [[at + i, m] for i, m in enumerate(taken)]
                member.positions[p] = at + len(taken)
                if self.skipped == (member.name, p):
                    self.planted.add("takeover-skip")
        if records and self.config.plant == "at-least-once" and "at-least-once" not in self.planted:
            self.planted.add("at-least-once")  # the records never reach the history
            self._op(member, "poll", None, outcome="fail", extra=extra)
            return
        self._op(member, "poll", records, extra=extra)

    def _commit(self, member: _Member) -> None:
        extra: Event = {}
        self._serve(member, extra)
        offsets = {p: member.positions[p] for p in member.held}
        if self.config.plant == "commit-regression" and "commit-regression" not in self.planted:
            high = [p for p in offsets if self.committed.get(p, 0) > 1]
            if high:
                offsets[high[0]] = self.committed[high[0]] - 1
                self.planted.add("commit-regression")
        self.committed |= offsets
        self._op(member, "commit", {str(p): o for p, o in offsets.items()}, extra=extra)

    def _op(
        self,
        member: _Member,
        f: str,
        value: Any,
        *,
        key: int | None = None,
        invoked: Any = None,
        outcome: str = "ok",
        extra: Event | None = None,
    ) -> None:
        self.time += 1
        invoke: Event = {"process": member.process, "type": "invoke", "f": f, "value": invoked}
        if key is not None:
            invoke["key"] = key
        invoke = self._stamp(invoke)
        self.time += 1
        done = {**invoke, "type": outcome, "value": value, **(extra or {})}
        if f != "send":
            done["member"] = member.name
        if "mono-ns" in done:
            done["mono-ns"] = CLOCK_START + self.time
        self._stamp(done)

    def _stamp(self, event: Event) -> Event:
        stamped = {**event, "index": len(self.events), "time": self.time}
        self.events.append(stamped)
        return stamped
