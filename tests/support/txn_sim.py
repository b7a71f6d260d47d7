"""A simulated transactional Kafka topic and its clients, writing strictly serializable
transaction histories in Jepsen's micro-op shape (`f` send, poll or txn; value a list of
[send, key, value] and [poll] micro-ops, completed in place).

One global lock: each transaction runs atomically at one instant inside its op's interval
(between its invoke and completion), so the history is strictly serializable and no
transaction anomaly may be found in it. Transactions mix sends and polls over a few
partitions; each process's consumer is assigned every partition and reads at
read_committed (aborted messages and commit markers take offsets and are skipped; a
transaction's own sends are pending while it runs, so its polls stop before them). Some
transactions abort (`fail`: nobody ever reads their messages), some end `info` (they
committed or not, at random), after which the worker goes on as a new process. Final
drains read every partition's committed messages.

One anomaly can be planted (`TxnSimConfig.plant`); `Planted` names its transactions by
op index, as the checker's cases do:

- G1a: an ok poll reads a message of an aborted transaction;
- G0: two concurrent transactions' sends interleave in two partitions in opposite orders;
- G1c: two concurrent transactions each poll the other's send;
- precommitted-read: a transaction polls its own send.
"""

from __future__ import annotations

import heapq
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Event = dict[str, Any]
PLANTS = ("G1a", "G0", "G1c", "precommitted-read")
PENDING, COMMITTED, ABORTED, MARKER = "pending", "committed", "aborted", "marker"
POLL_MAX = 3
"""Records a poll returns per partition at most."""


@dataclass(frozen=True)
class TxnSimConfig:
    """The shape of one simulated run."""

    processes: int = 4
    partitions: int = 3
    txns: int = 200
    max_mops: int = 4
    abort_p: float = 0.1
    info_p: float = 0.05
    drains: bool = True
    plant: str | None = None


@dataclass(frozen=True)
class Planted:
    """The planted anomaly: its kind and its transactions' op indexes (G1a: the reader,
    then the aborted writer; G0 and G1c: the two transactions)."""

    kind: str
    indexes: tuple[int, ...]


@dataclass
class Txn:
    """One simulated transaction as it will be written: its op's times and values."""

    tid: int
    process: int
    invoked: int
    done: int = 0
    mops: list[list[Any]] = field(default_factory=list)
    result: list[list[Any]] = field(default_factory=list)
    outcome: str = "ok"


@dataclass
class Worker:
    """A client slot: its current process and its consumer's position per partition."""

    process: int
    positions: dict[int, int]
    txn: Txn | None = None


class Topic:
    """The partitions' logs: per offset a message (None for a marker) and its state."""

    def __init__(self, partitions: int) -> None:
        self.logs: list[list[list[Any]]] = [[] for _ in range(partitions)]
        self.pending: list[list[int]] = [[] for _ in range(partitions)]

    def append(self, p: int, value: int | None, state: str) -> int:
        self.logs[p].append([value, state])
        if state == PENDING:
            self.pending[p].append(len(self.logs[p]) - 1)
        return len(self.logs[p]) - 1

    def read(self, p: int, start: int, limit: int, through: int = -1) -> tuple[list[Any], int]:
        """Returns committed records from `start`, at most `limit` (until offset `through`,
        which is read whatever its state, when given), and the position after them."""
        log, at = self.logs[p], start
        records: list[Any] = []
        while at < len(log) and (len(records) < limit or at <= through):
            value, state = log[at]
            if state == PENDING and at != through:
                break  # read_committed stops at the first open transaction's message
            if state == COMMITTED or at == through:
                records.append([at, value])
            at += 1
        return records, at

    def end(self, p: int, state: str) -> None:
        """Ends the open transaction(s) in a partition, committed or aborted, with a
        marker."""
        for offset in self.pending[p]:
            self.logs[p][offset][1] = state
        self.pending[p].clear()
        self.append(p, None, MARKER)


class Sim:
    """One run: the workers, the topic, the transactions run, and the other ops' events."""

    def __init__(self, seed: int, config: TxnSimConfig) -> None:
        self.rng = random.Random(seed)
        self.config = config
        self.topic = Topic(config.partitions)
        self.txns: list[Txn] = []
        self.extra: list[tuple[int, Event]] = []  # (time, event) of assigns and drains
        self.values = 0
        self.begun = 0  # transactions invoked: the next one's tid
        self.aborted: list[tuple[int, int, int, int]] = []  # (partition, offset, value, tid)
        self.planted: tuple[str, tuple[int, ...]] | None = None

    def run(self) -> None:
        """Runs the transactions in the order of their instants, one at a time."""
        n = self.config.processes
        workers = [Worker(w, {}) for w in range(n)]
        heap: list[tuple[int, int]] = []
        for w in workers:
            heapq.heappush(heap, (self.begin(w, 0), w.process % n))
        while len(self.txns) < self.config.txns and heap:
            at, slot = heapq.heappop(heap)
            w = workers[slot]
            partner = workers[heap[0][1]] if heap else None
            ran = self.plant(w, partner, at) if self.wants_plant() else []
            if not ran:
                self.execute(w, at)
                ran = [w]
            if partner in ran:
                heapq.heappop(heap)  # its instant moved to this one
            for r in ran:
                assert r.txn is not None
                heapq.heappush(heap, (self.begin(r, r.txn.done), r.process % n))
        if self.config.drains:
            self.drain(max(t.done for t in self.txns) + 1_000)

    def begin(self, w: Worker, after: int) -> int:
        """Invokes the worker's next transaction after a time (as a new process, assigned
        afresh, after an info one). Returns the instant it will run at."""
        if w.txn is None or w.txn.outcome == "info":
            if w.txn is not None:
                w.process += self.config.processes
            self.assign(w, after)
        invoked = after + self.rng.randint(100_000, 1_000_000)
        self.begun += 1
        w.txn = Txn(self.begun, w.process, invoked)
        return invoked + self.rng.randint(50_000, 2_000_000)

    def assign(self, w: Worker, after: int) -> None:
        # A new consumer starts at each partition's end, as auto.offset.reset=latest does.
        partitions = list(range(self.config.partitions))
        w.positions = {p: len(self.topic.logs[p]) for p in partitions}
        op = {"process": w.process, "f": "assign", "value": partitions}
        self.extra.append((after + 1, op | {"type": "invoke"}))
        self.extra.append((after + 2, op | {"type": "ok"}))

    def wants_plant(self) -> bool:
        c = self.config
        return c.plant is not None and self.planted is None and len(self.txns) >= c.txns // 3

    def execute(self, w: Worker, at: int) -> None:
        """Runs the worker's transaction, of random micro-ops and fate, at an instant."""
        txn = self.ran(w, at)
        r = self.rng.random()
        p_abort, p_info = self.config.abort_p, self.config.info_p
        txn.outcome = "fail" if r < p_abort else "info" if r < p_abort + p_info else "ok"
        for _ in range(self.rng.randint(1, self.config.max_mops)):
            if self.rng.random() < 0.5:
                self.send(txn, self.rng.randrange(self.config.partitions))
            else:
                txn.mops.append(["poll"])
                txn.result.append(["poll", self.poll(w)])
        commit = txn.outcome == "ok" or (txn.outcome == "info" and self.rng.random() < 0.5)
        self.end(txn, commit)

    def ran(self, w: Worker, at: int) -> Txn:
        assert w.txn is not None
        w.txn.done = at + self.rng.randint(50_000, 2_000_000)
        self.txns.append(w.txn)
        return w.txn

    def send(self, txn: Txn, p: int) -> int:
        self.values += 1
        offset = self.topic.append(p, self.values, PENDING)
        txn.mops.append(["send", p, self.values])
        txn.result.append(["send", p, [offset, self.values]])
        return offset

    def poll(self, w: Worker) -> dict[str, list[Any]]:
        records = {}
        for p, position in w.positions.items():
            rs, w.positions[p] = self.topic.read(p, position, POLL_MAX)
            if rs:
                records[str(p)] = rs
        return records

    def end(self, txn: Txn, commit: bool) -> None:
        written = sorted({mop[1] for mop in txn.mops if mop[0] == "send"})
        if not commit and txn.outcome == "fail":
            for _, p, (offset, value) in (r for r in txn.result if r[0] == "send"):
                self.aborted.append((p, offset, value, txn.tid))
        for p in written:
            self.topic.end(p, COMMITTED if commit else ABORTED)

    def plant(self, w: Worker, partner: Worker | None, at: int) -> list[Worker]:
        """Plants the configured anomaly at this instant if it can happen here. Returns
        the workers whose transactions ran (none: it could not)."""
        kind = self.config.plant
        concurrent = partner is not None and partner.txn is not None and partner.txn.invoked < at
        if kind in ("G0", "G1c") and (not concurrent or self.config.partitions < 2):
            return []
        if kind == "precommitted-read":
            return self.plant_precommitted(w, at)
        if kind == "G1a":
            return self.plant_aborted_read(w, at)
        assert partner is not None
        ran = [self.ran(w, at), self.ran(partner, at)]
        p, q = self.rng.sample(range(self.config.partitions), 2)
        (self.plant_g0 if kind == "G0" else self.plant_g1c)(ran, (w, partner), p, q)
        self.planted = (str(kind), (ran[0].tid, ran[1].tid))
        return [w, partner]

    def plant_precommitted(self, w: Worker, at: int) -> list[Worker]:
        txn = self.ran(w, at)
        p = self.rng.randrange(self.config.partitions)
        own = self.send(txn, p)
        rs, w.positions[p] = self.topic.read(p, w.positions[p], 0, through=own)
        txn.mops.append(["poll"])
        txn.result.append(["poll", {str(p): rs}])
        self.end(txn, True)
        self.planted = ("precommitted-read", (txn.tid,))
        return [w]

    def plant_aborted_read(self, w: Worker, at: int) -> list[Worker]:
        readable = [a for a in self.aborted if w.positions[a[0]] <= a[1]]
        if not readable:
            return []
        p, offset, _, writer = readable[-1]
        txn = self.ran(w, at)
        rs, w.positions[p] = self.topic.read(p, w.positions[p], 0, through=offset)
        txn.mops.append(["poll"])
        txn.result.append(["poll", {str(p): rs}])
        self.planted = ("G1a", (txn.tid, writer))
        return [w]

    def plant_g0(self, txns: list[Txn], _: tuple[Worker, Worker], p: int, q: int) -> None:
        # In p the first transaction's message comes first, in q the second's.
        for txn, partition in ((txns[0], p), (txns[1], p), (txns[1], q), (txns[0], q)):
            self.send(txn, partition)
        for txn in txns:
            self.end(txn, True)

    def plant_g1c(self, txns: list[Txn], workers: tuple[Worker, Worker], p: int, q: int) -> None:
        # Each polls the other's message, still pending: the lock is not held.
        sent = [(p, self.send(txns[0], p)), (q, self.send(txns[1], q))]
        for txn, w, (partition, offset) in zip(txns, workers, reversed(sent), strict=True):
            value = self.topic.logs[partition][offset][0]
            txn.mops.append(["poll"])
            txn.result.append(["poll", {str(partition): [[offset, value]]}])
            w.positions[partition] = offset + 1
        for txn in txns:
            self.end(txn, True)

    def drain(self, at: int) -> None:
        for p, log in enumerate(self.topic.logs):
            records = [[o, v] for o, (v, state) in enumerate(log) if state == COMMITTED]
            op = {"process": 1_000_000 + p, "f": "drain", "key": p}
            self.extra.append((at + 2 * p, op | {"type": "invoke", "value": None}))
            self.extra.append((at + 2 * p + 1, op | {"type": "ok", "value": records}))

    def events(self) -> tuple[list[Event], dict[int, int]]:
        """Returns the history's events, indexed, in time order, and each transaction's
        op index (its invoke's) by its tid."""
        timed = [(t, e, -1) for t, e in self.extra]
        for txn in self.txns:
            base = {"process": txn.process, "f": _f(txn.mops)}
            timed.append((txn.invoked, base | {"type": "invoke", "value": txn.mops}, txn.tid))
            done = txn.result if txn.outcome == "ok" else txn.mops
            end = base | {"type": txn.outcome, "value": done}
            if txn.outcome != "ok":
                end["error"] = "aborted" if txn.outcome == "fail" else "indeterminate: timeout"
            timed.append((txn.done, end, -1))
        timed.sort(key=lambda te: te[0])  # stable: an op's invoke precedes its completion
        events = [e | {"index": i, "time": t} for i, (t, e, _) in enumerate(timed)]
        index_of = {tid: i for i, (_, _, tid) in enumerate(timed) if tid >= 0}
        return events, index_of


def _f(mops: list[list[Any]]) -> str:
    # Jepsen's tag-rw: an op of polls only is a poll, of sends only a send.
    kinds = {mop[0] for mop in mops}
    return "txn" if len(kinds) > 1 else str(next(iter(kinds)))


def simulate(seed: int, config: TxnSimConfig) -> tuple[list[Event], Planted | None]:
    """Runs one simulation. Returns its events and the anomaly planted (None: none was,
    or it found no moment to happen)."""
    sim = Sim(seed, config)
    sim.run()
    events, index_of = sim.events()
    if sim.planted is None:
        return events, None
    kind, tids = sim.planted
    return events, Planted(kind, tuple(index_of[t] for t in tids))


def write_jsonl(events: list[Event], path: Path) -> None:
    """Writes events as history.jsonl."""
    with path.open("w") as out:
        for e in events:
            out.write(json.dumps(e) + "\n")
