"""The dependency graph over committed transactions, with networkx: write-write edges from
each partition's offset order, write-read edges from polls, and process and real-time
order for the strong variants of the cycles (checkers/txn/cycles.py finds them).

Edges, as jepsen.tests.kafka draws them (`ww-graph`, `wr-graph`, `graph`) and Elle adds
orders to them (elle/core.clj `process-graph`, `realtime-graph`):

- ww: in one partition, T1 -> T2 when T2's message is the next one after T1's in the
  version order whose writer is another committed transaction (kafka.clj: `previous-value`
  in the version order, "ignoring gaps in the offsets, which we assume are due to
  transaction metadata messages"). A message seen only by polls counts: its writer is
  known by the message, whatever became of the send.
- wr: T1 -> T2 when a poll of T2 received a message T1 sent. kafka.clj's docstring speaks
  of a transaction's highest read only, but its `wr-graph` links the writer of every
  value read to its readers, as this does: the extra edges change no cycle's existence.
- rw: none. kafka.clj's `graph` combines ww-graph and wr-graph and leaves `rw-graph`
  commented out: a poll's range of offsets says nothing of what it did not read, so no
  anti-dependency is drawn, and the G-single and G2 kinds do not arise.
- process: each process's successive committed transactions (elle `process-graph`).
- realtime: T1 -> T2 when T1 completed ok before T2 was invoked, as Elle's transitive
  reduction (elle `realtime-graph`), drawn through a segment tree's nodes so that it
  takes O(n log n) edges even where n transactions run at once and n more follow them
  all (checkers/txn/realtime.py); a pair with a ww, wr or process edge is that edge to
  a kind that may use it, as Elle explains it, never real-time order.

Only committed transactions are nodes (ok ones, and info ones whose messages were read:
checkers/txn_versions.committed). An aborted or failed transaction never happened: its
messages must be invisible, and one that was read is an aborted read (G1a), reported as
such. Ordering its writes would place a transaction that did not commit in the
serialization order and make cycles through it, reporting one aborted read a second
time as G0 or G1c. An info transaction nothing read may never have committed either.
An info transaction never completed, so it is never a real-time predecessor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx

from checkers.queue.reader import Message, QueueHistory
from checkers.txn.reader import TxnOp
from checkers.txn.realtime import RealtimeOrder
from checkers.txn.versions import VersionOrder, Writers, reads

WW, WR, PROCESS, REALTIME = 1, 2, 4, 8
"""Edge labels, as bits of an edge's `rels`; a lower bit explains an edge first, as Elle's
explainers are tried data dependencies first (kafka.clj `cycles!`)."""
LABELS = {WW: "ww", WR: "wr", PROCESS: "process", REALTIME: "realtime"}
VIEWS: dict[int, int] = {WW | PROCESS: 16, WR | PROCESS: 32}
"""Per set of labels a real-time kind may use besides real-time order (G0-realtime's and
G1c-realtime's: checkers/txn/cycles.py), the bit its view's real-time edges carry beside
REALTIME (checkers/txn/realtime.py): a pair one of those labels explains is no real-time
edge to that kind."""

WwWhy = tuple[int, int, Message, int, Message]
"""Why T1 -> T2 is ww: (partition, T1's offset and message, T2's offset and message)."""
WrWhy = tuple[int, int, Message]
"""Why T1 -> T2 is wr: (partition, offset and message T1 sent and T2 polled)."""


@dataclass(slots=True)
class Deps:
    """The dependency graph: committed transactions by index, the networkx DiGraph over
    their indexes (each edge's `rels` holds its labels' bits), and, per ww and wr edge,
    the first evidence found for it."""

    ops: dict[int, TxnOp]
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    ww: dict[tuple[int, int], WwWhy] = field(default_factory=dict)
    wr: dict[tuple[int, int], WrWhy] = field(default_factory=dict)
    tree_nodes: frozenset[int] = frozenset()
    """The real-time order's tree nodes (checkers/txn/realtime.py), none a transaction."""
    realtime_pairs: int = 0
    """The pairs real-time order's transitive reduction holds (Elle's real-time edges)."""


def dependency_graph(
    history: QueueHistory,
    committed_ops: dict[int, TxnOp],
    writer_of: Writers,
    orders: dict[int, VersionOrder],
) -> Deps:
    """Takes a QueueHistory, its committed transactions, Writers and version orders.
    Returns their dependency graph, with every kind of edge."""
    deps = Deps(committed_ops)
    rels: dict[int, dict[int, int]] = {}
    _add(rels, ww_edges(orders, writer_of, committed_ops, deps.ww), WW)
    _add(rels, wr_edges(history, writer_of, committed_ops, deps.wr), WR)
    _add(rels, process_edges(committed_ops.values()), PROCESS)
    realtime = RealtimeOrder(committed_ops.values())
    into: dict[int, dict[int, int]] = {}
    for u, out in rels.items():
        for v, bits in out.items():
            into.setdefault(v, {})[u] = bits
    first = min(committed_ops, default=0)
    for u, v, views in realtime.edges(into, VIEWS, first):
        out = rels.setdefault(u, {})
        out[v] = out.get(v, 0) | REALTIME | views
    deps.tree_nodes = frozenset(range(first - len(realtime.order) + 1, first))
    deps.realtime_pairs = realtime.pairs()
    deps.graph.add_nodes_from(committed_ops)
    deps.graph.add_edges_from(
        (u, v, {"rels": bits}) for u, out in rels.items() for v, bits in out.items()
    )
    return deps


def _add(rels: dict[int, dict[int, int]], edges: Iterable[tuple[int, int]], label: int) -> None:
    for u, v in edges:
        out = rels.setdefault(u, {})
        out[v] = out.get(v, 0) | label


def ww_edges(
    orders: dict[int, VersionOrder],
    writer_of: Writers,
    committed_ops: dict[int, TxnOp],
    why: dict[tuple[int, int], WwWhy],
) -> list[tuple[int, int]]:
    """Takes the version orders, Writers, committed transactions, and the dict to note
    each edge's evidence in. Returns the ww edges: per partition, each committed writer to
    the next other committed writer in offset order."""
    edges = []
    for p, order in orders.items():
        before: tuple[int, int, Message] | None = None  # (writer, offset, message)
        for offset, m in zip(order.offsets, order.messages, strict=True):
            s = writer_of.get((p, m))
            if s is None or s.index not in committed_ops:
                continue  # unexpected, or an aborted read: reported as such, never ordered
            if before is not None and before[0] != s.index:
                edge = (before[0], s.index)
                if edge not in why:
                    why[edge] = (p, before[1], before[2], offset, m)
                    edges.append(edge)
            before = (s.index, offset, m)
    return edges


def wr_edges(
    history: QueueHistory,
    writer_of: Writers,
    committed_ops: dict[int, TxnOp],
    why: dict[tuple[int, int], WrWhy],
) -> list[tuple[int, int]]:
    """Takes a QueueHistory, its Writers, the committed transactions, and the dict to note
    each edge's evidence in. Returns the wr edges: each committed writer to each committed
    transaction that polled a message of it (a transaction reading its own is a
    precommitted read, never an edge)."""
    edges = []
    for poll, p, offset, m in reads(history):
        if poll.index not in committed_ops:
            continue
        s = writer_of.get((p, m))
        if s is None or s.index == poll.index or s.index not in committed_ops:
            continue
        edge = (s.index, poll.index)
        if edge not in why:
            why[edge] = (p, offset, m)
            edges.append(edge)
    return edges


def process_edges(ops: Iterable[TxnOp]) -> list[tuple[int, int]]:
    """Takes committed transactions. Returns each process's successive ones, in invoke
    order: a process runs one op at a time."""
    last: dict[int | str, int] = {}
    edges = []
    for op in sorted(ops, key=lambda o: o.index):
        before = last.get(op.process)
        if before is not None:
            edges.append((before, op.index))
        last[op.process] = op.index
    return edges
