"""A simulated Kafka topic and its clients, writing queue histories in the recorded format.

Concurrent workers send to partition logs (with transaction markers making offsets
sparse), poll as assigned consumers (assigns, seeks) or as members of one consumer group
(rebalances resume from lagging committed offsets), or some of each (`mixed`: each
process is one or the other), and retire their process after an info op; indeterminate
sends land or not, and are read like any other once they land. After the workers, fresh
processes drain every partition (sometimes after a failed or superseded attempt).
Anomalies can be planted, and the simulation records exactly which cases the checker
must then find.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import DATA
from tests.support.queue_sim_microops import as_micro_ops

Event = dict[str, Any]


@dataclass(frozen=True)
class SimConfig:
    """The shape of one simulated run; the plant counts are upper bounds (a plant needs a
    moment where it can happen)."""

    partitions: int = 3
    workers: int = 4
    ops: int = 200
    group: bool = False
    mixed: bool = False
    microops: bool = False
    """Sends and polls written as Jepsen's micro-op ops, some merged into txn ops."""
    """Each process subscribes (with probability 1/2) or is assigned, whatever `group` says."""
    drains: bool = True
    marker_rate: float = 0.1
    info_rate: float = 0.05
    fail_rate: float = 0.05
    losses: int = 0
    vanish: int = 0
    """Acknowledged sends whose message never reaches a reader (its offset then holds
    nothing): lost by the drains, and by the polls when a poll read past it."""
    conflicts: int = 0
    duplicates: int = 0
    rewinds: int = 0
    skips: int = 0


@dataclass
class Planted:
    """The cases the checker must find, in the finders' terms."""

    losses: set[int] = field(default_factory=set)
    """The messages the verdict's lost-write finds."""
    conflicts: set[tuple[int, int]] = field(default_factory=set)
    duplicates: set[int] = field(default_factory=set)
    rewinds: set[tuple[int, int, int, int]] = field(default_factory=set)
    """(process, partition, prior_offset, offset)"""
    skips: set[tuple[int, int, int, int]] = field(default_factory=set)
    int_skips: set[tuple[int, int, int, int]] = field(default_factory=set)
    """Skips within one poll: over a vanished message's offset."""


@dataclass
class _Consumer:
    assigned: set[int] | None = None
    positions: dict[int, int] = field(default_factory=dict)
    last: dict[int, int] = field(default_factory=dict)  # offset last delivered, per partition
    # Per partition sought to O and not read since: O-1, as the checker counts a seek.
    after_seek: dict[int, int] = field(default_factory=dict)
    moved: set[int] = field(default_factory=set)
    pending: dict[int, tuple[str, int]] = field(default_factory=dict)  # planted, undelivered
    # After a failed consumer op the history no longer tells what the consumer holds,
    # until its next assign or subscribe; a plant the history cannot show is no case.
    known: bool = True


@dataclass
class _Worker:
    process: int
    group: bool
    """Whether this process's consumer subscribes (else it is assigned partitions)."""
    consumer: _Consumer = field(default_factory=_Consumer)
    in_flight: Event | None = None


class Simulation:
    """One run: the logs, the group, the workers and the history they write."""

    def __init__(self, rng: random.Random, config: SimConfig) -> None:
        self.rng, self.config = rng, config
        self.logs: dict[int, list[int | None]] = {p: [] for p in range(config.partitions)}
        self.events: list[Event] = []
        self.time = 0
        self.processes = itertools.count()
        self.messages = itertools.count(1)
        self.workers = [
            _Worker(next(self.processes), self.subscribes()) for _ in range(config.workers)
        ]
        self.members: list[_Worker] = []
        self.committed: dict[int, int] = {}
        self.planted = Planted()
        self.ok_sends: list[tuple[int, int]] = []  # (partition, message)
        self.vanished: list[tuple[int, int, int]] = []  # (partition, message, offset)
        self.max_read: dict[int, int] = {}  # per partition, the highest offset delivered
        self.seek_gaps: dict[int, list[tuple[int, int]]] = {}  # offsets seeks stepped over

    def subscribes(self) -> bool:
        """Returns whether a new process's consumer is to subscribe."""
        return self.rng.random() < 0.5 if self.config.mixed else self.config.group

    def emit(self, process: int | str, type_: str, f: str, **fields: Any) -> Event:
        self.time += self.rng.randint(1, 2_000_000)
        event = {
            "index": len(self.events),
            "time": self.time,
            "process": process,
            "type": type_,
            "f": f,
        } | fields
        self.events.append(event)
        return event

    def run(self) -> tuple[list[Event], Planted]:
        invoked = 0
        while invoked < self.config.ops or any(w.in_flight for w in self.workers):
            worker = self.rng.choice(self.workers)
            if worker.in_flight is not None:
                self.complete(worker)
            elif invoked < self.config.ops:
                self.invoke(worker)
                invoked += 1
            if self.rng.random() < 0.01:
                self.emit("nemesis", "info", "start-partition", value={"n1": ["n2"]})
        if self.config.drains:
            self.drain_all()
        self.plant_losses()
        if self.config.microops:
            return as_micro_ops(self.events, self.rng), self.planted
        return self.events, self.planted

    def invoke(self, w: _Worker) -> None:
        r = self.rng.random()
        if r < 0.5:
            key, value = self.rng.randrange(self.config.partitions), next(self.messages)
            w.in_flight = self.emit(w.process, "invoke", "send", key=key, value=value)
        elif r < 0.88:
            w.in_flight = self.emit(w.process, "invoke", "poll", value=None)
        elif w.group:
            w.in_flight = self.emit(w.process, "invoke", "subscribe", value=["topic"])
        elif r < 0.94 or not w.consumer.assigned:
            chosen = self.rng.sample(
                range(self.config.partitions), self.rng.randint(1, min(2, self.config.partitions))
            )
            w.in_flight = self.emit(w.process, "invoke", "assign", value=sorted(chosen))
        else:
            p = self.rng.choice(sorted(w.consumer.assigned))
            target = {str(p): self.rng.randint(0, len(self.logs[p]))}
            w.in_flight = self.emit(w.process, "invoke", "seek", value=target)

    def complete(self, w: _Worker) -> None:
        invoke, w.in_flight = w.in_flight, None
        assert invoke is not None
        r = self.rng.random()
        outcome = "info" if r < self.config.info_rate else "ok"
        if outcome == "ok" and r < self.config.info_rate + self.config.fail_rate:
            outcome = "fail"
        getattr(self, f"complete_{invoke['f']}")(w, invoke, outcome)
        if outcome == "info":  # Jepsen's rule: the worker goes on as a new process
            self.leave_group(w)
            w.process, w.consumer = next(self.processes), _Consumer()
            w.group = self.subscribes()

    def append(self, partition: int, message: int) -> int:
        log = self.logs[partition]
        if self.rng.random() < self.config.marker_rate:
            log.append(None)  # a transaction marker: an offset no one sees a value at
        log.append(message)
        return len(log) - 1

    def complete_send(self, w: _Worker, invoke: Event, outcome: str) -> None:
        p, m = invoke["key"], invoke["value"]
        if outcome == "fail" or (outcome == "info" and self.rng.random() < 0.5):
            self.emit(w.process, outcome, "send", key=p, value=m)
            return
        if outcome == "ok" and len(self.planted.duplicates) < self.config.duplicates:
            self.append(p, m)  # an earlier attempt landed too
            self.planted.duplicates.add(m)
        offset = self.append(p, m)
        if outcome != "ok":
            self.emit(w.process, "info", "send", key=p, value=m)
            return
        if self.plant_vanish(p, m):
            self.logs[p][offset] = None
            self.vanished.append((p, m, offset))
        else:
            self.ok_sends.append((p, m))
        self.emit(w.process, "ok", "send", key=p, value=[offset, m])

    def plant_vanish(self, p: int, m: int) -> bool:
        if len(self.vanished) >= self.config.vanish or m in self.planted.duplicates:
            return False
        return self.rng.random() < 0.3

    def complete_poll(self, w: _Worker, invoke: Event, outcome: str) -> None:
        c = w.consumer
        if outcome != "ok":
            self.reset(c, set(range(self.config.partitions)))
            c.known = False
            self.emit(w.process, outcome, "poll", value=None)
            return
        if c.assigned is None:
            self.start_reading(w)
        moved, c.moved = sorted(c.moved), set()
        records = {str(p): self.deliver(w, p, p in moved) for p in sorted(c.assigned or ())}
        extra: dict[str, Any] = {"rebalanced": {"assigned": moved, "revoked": []}} if moved else {}
        self.emit(
            w.process, "ok", "poll", value={p: rs for p, rs in records.items() if rs}, **extra
        )
        if w.group:
            for p in c.assigned or ():  # auto commit, sometimes lagging behind
                if self.rng.random() < 0.7:
                    self.committed[p] = c.positions[p]

    def start_reading(self, w: _Worker) -> None:
        c = w.consumer
        if w.group:
            c.assigned = set()
            self.join_group(w)
        else:
            c.assigned = set(range(self.config.partitions))
            c.positions = dict.fromkeys(c.assigned, 0)
            c.moved |= c.assigned

    def deliver(self, w: _Worker, p: int, moved: bool) -> list[list[int]]:
        c, log = w.consumer, self.logs[p]
        self.maybe_plant_jump(w, p)
        out: list[list[int]] = []
        prior = self.position(c, p)
        want = self.rng.randint(0, 4)
        while len(out) < want and c.positions[p] < len(log):
            offset = c.positions[p]
            c.positions[p] += 1
            message = log[offset]
            if message is None:
                continue
            if p in c.pending:
                kind, prior = c.pending.pop(p)
                getattr(self.planted, kind).add((w.process, p, prior, offset))
            if self.plant_conflict(p, offset):
                message = -next(self.messages)  # a value never sent
            self.note_vanished_skip(w.process, p, prior, offset, within=bool(out), moved=moved)
            out.append([offset, message])
            c.last[p] = prior = offset
            self.max_read[p] = max(self.max_read.get(p, -1), offset)
        return out

    def note_vanished_skip(
        self, process: int, p: int, prior: int | None, offset: int, *, within: bool, moved: bool
    ) -> None:
        """A consumer stepping over a vanished message's offset (acknowledged, so known to
        hold a message) skips it: across polls, or within one (unless the poll moved the
        partition: the checker leaves those out, as Jepsen does)."""
        if prior is None or not any(prior < o < offset for q, _, o in self.vanished if q == p):
            return
        if not within:
            self.planted.skips.add((process, p, prior, offset))
        elif not moved:
            self.planted.int_skips.add((process, p, prior, offset))

    def maybe_plant_jump(self, w: _Worker, p: int) -> None:
        c, log = w.consumer, self.logs[p]
        if p not in c.last or p in c.pending or self.rng.random() > 0.2:
            return
        if len(self.planted.rewinds) + self.pending_count("rewinds") < self.config.rewinds:
            c.positions[p] = self.rng.randint(0, c.last[p])
            c.pending[p] = ("rewinds", c.last[p])
            return
        if len(self.planted.skips) + self.pending_count("skips") < self.config.skips:
            ahead = [o for o in range(c.positions[p], len(log)) if log[o] is not None]
            if len(ahead) >= 2:
                c.positions[p] = ahead[0] + 1
                c.pending[p] = ("skips", c.last[p])

    def pending_count(self, kind: str) -> int:
        return sum(k == kind for w in self.workers for k, _ in w.consumer.pending.values())

    def plant_conflict(self, p: int, offset: int) -> bool:
        if len(self.planted.conflicts) >= self.config.conflicts or self.rng.random() > 0.05:
            return False
        if self.logs[p][offset] in self.planted.duplicates or (p, offset) in self.planted.conflicts:
            return False
        self.planted.conflicts.add((p, offset))
        return True

    def reset(self, c: _Consumer, partitions: set[int]) -> None:
        for p in partitions:
            c.last.pop(p, None)
            c.after_seek.pop(p, None)
            c.pending.pop(p, None)

    def position(self, c: _Consumer, p: int) -> int | None:
        """Returns the offset the checker takes the consumer to have read last in p."""
        return c.last.get(p, c.after_seek.get(p))

    def complete_assign(self, w: _Worker, invoke: Event, outcome: str) -> None:
        c = w.consumer
        if outcome == "ok":
            wanted = set(invoke["value"])
            held = c.assigned or set()
            self.reset(c, held ^ wanted if c.known else set(range(self.config.partitions)))
            c.known = True
            for p in wanted - held:
                c.positions[p] = 0  # OFFSET_BEGINNING, as the workload assigns
            c.assigned = wanted
        else:
            self.reset(c, set(range(self.config.partitions)))
            c.known = False
        self.emit(w.process, outcome, "assign", value=invoke["value"])

    def complete_seek(self, w: _Worker, invoke: Event, outcome: str) -> None:
        c = w.consumer
        if outcome != "ok":
            self.reset(c, set(range(self.config.partitions)))
            c.known = False
        for key, offset in invoke["value"].items():
            known = self.position(c, int(key))
            first = 0 if known is None else known + 1
            if outcome == "ok" and offset > first:
                self.seek_gaps.setdefault(int(key), []).append((first, offset - 1))
            self.reset(c, {int(key)})
            if outcome == "ok":
                c.positions[int(key)] = offset
                c.after_seek[int(key)] = offset - 1
        self.emit(w.process, outcome, "seek", value=invoke["value"])

    def complete_subscribe(self, w: _Worker, invoke: Event, outcome: str) -> None:
        if outcome == "ok":
            self.leave_group(w)
            w.consumer.assigned = set()
            w.consumer.known = True
            self.join_group(w)
        else:
            self.reset(w.consumer, set(range(self.config.partitions)))
            w.consumer.known = False
        self.emit(w.process, outcome, "subscribe", value=invoke["value"])

    def join_group(self, w: _Worker) -> None:
        self.members.append(w)
        self.rebalance()

    def leave_group(self, w: _Worker) -> None:
        if w in self.members:
            self.members.remove(w)
            self.rebalance()

    def rebalance(self) -> None:
        """Deals the partitions round-robin to the members; a member resumes a partition it
        is newly given at the group's committed offset, which may lag behind."""
        share: dict[int, set[int]] = {id(m): set() for m in self.members}
        for p in range(self.config.partitions):
            if self.members:
                share[id(self.members[p % len(self.members)])].add(p)
        for m in self.members:
            c, new = m.consumer, share[id(m)]
            old = c.assigned or set()
            changed = old ^ new
            c.moved |= changed
            self.reset(c, changed)
            for p in new - old:
                c.positions[p] = self.committed.get(p, 0)
            c.assigned = new

    def drain_all(self) -> None:
        for p in range(self.config.partitions):
            process = next(self.processes)
            for attempt in ("fail", "ok", "ok")[self.rng.randint(0, 2) :]:
                self.emit(process, "invoke", "drain", key=p, value=None)
                records = [[o, m] for o, m in enumerate(self.logs[p]) if m is not None]
                value = records if attempt == "ok" else None
                self.emit(process, attempt, "drain", key=p, value=value)

    def plant_losses(self) -> None:
        """Removes some acknowledged messages from every drain (as a truncation would), and
        says which losses the checker must find: these and the vanished messages, judged
        by the drains, or without drains the vanished ones a poll read past."""
        choices = [ps for ps in self.ok_sends if ps[1] not in self.planted.duplicates]
        chosen = self.rng.sample(choices, min(self.config.losses, len(choices)))
        gone = {m for _, m in chosen}
        for e in self.events:
            if e["f"] == "drain" and e["type"] == "ok":
                e["value"] = [r for r in e["value"] if r[1] not in gone]
        if self.config.drains:
            self.planted.losses = gone | {m for _, m, _ in self.vanished}
        else:
            self.planted.losses = {
                m
                for p, m, offset in self.vanished
                if offset < self.max_read.get(p, -1)
                and not any(lo <= offset <= hi for lo, hi in self.seek_gaps.get(p, ()))
            }


def simulate(seed: int, config: SimConfig) -> tuple[list[Event], Planted]:
    """Takes a seed and a SimConfig. Returns the history's events and what was planted."""
    return Simulation(random.Random(seed), config).run()


def write_jsonl(events: list[Event], path: Path) -> None:
    """Writes events as history.jsonl."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


FIXTURE = DATA / "queue_loss.jsonl"
FIXTURE_SEED = 2013
FIXTURE_CONFIG = SimConfig(partitions=3, workers=4, ops=120, losses=3)
"""The recorded-format fixture with a loss: `python -m tests.support.queue_sim` rewrites it."""


if __name__ == "__main__":
    write_jsonl(simulate(FIXTURE_SEED, FIXTURE_CONFIG)[0], FIXTURE)
    print(f"wrote {FIXTURE}")


def untimed(result: Any) -> Any:
    """A checker's result without its `time` fields, to compare two checks of one history."""
    if isinstance(result, dict):
        return {k: untimed(v) for k, v in result.items() if k != "time"}
    if isinstance(result, list):
        return [untimed(v) for v in result]
    return result
