"""The dependency graph over transactions, as plain adjacency: write-write edges from
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

The nodes are Elle's, every completion that wrote or read (checkers/txn/versions.py
graph_nodes): the committed transactions (ok ones, and info ones an ok poll or a drain
read a message of), the info ones any poll read a message of, and the info or failed
ones that polled a record, as readers; so two info transactions that read each other's
messages are a G1c, as Jepsen's analysis finds it. A failed transaction's writes never
happened: its messages must be invisible, and one that was read is an aborted read (G1a),
reported as such; ordering them would place a transaction that did not commit in the
serialization order and report one aborted read a second time as G0 or G1c, so a failed
transaction is never a writer here. An info transaction nothing read may never have
committed, and writes nothing here either. Only an ok transaction completed, so only it
precedes another in real-time or process order (elle `realtime-graph`, `process-graph`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from checkers.queue.reader import Message
from checkers.txn.reader import TxnOp
from checkers.txn.realtime import RealtimeOrder
from checkers.txn.versions import Read, VersionOrder, Writers

WW, WR, PROCESS, REALTIME = 1, 2, 4, 8
"""Edge labels, as bits of an edge's `rels`; a lower bit explains an edge first, as Elle's
explainers are tried data dependencies first (kafka.clj `cycles!`)."""
LABELS = {WW: "ww", WR: "wr", PROCESS: "process", REALTIME: "realtime"}
VIEWS: dict[int, int] = {WW | PROCESS: 16, WR | PROCESS: 32}
"""Per set of labels a real-time kind may use besides real-time order (G0-realtime's and
G1c-realtime's: checkers/txn/cycles.py), the bit its view's real-time edges carry beside
REALTIME (checkers/txn/realtime.py): a pair one of those labels explains is no real-time
edge to that kind."""
WW_DEPS_VIEWS = VIEWS | {WW | WR | PROCESS: 64}
"""VIEWS with G1c-realtime's when ww edges join G1c's (--ww-deps: cycles.cycle_kinds)."""

WwWhy = tuple[int, int, Message, int, Message]
"""Why T1 -> T2 is ww: (partition, T1's offset and message, T2's offset and message)."""
WrWhy = tuple[int, int, Message]
"""Why T1 -> T2 is wr: (partition, offset and message T1 sent and T2 polled)."""


@dataclass(slots=True)
class Deps:
    """The dependency graph: committed transactions by index, the edges out of each node
    (a transaction's index or a tree node) with their labels' bits, and, per ww and wr
    edge, the first evidence found for it. The edges are dicts, not a networkx DiGraph:
    at 100,000 transactions (1.3 million edges) building one took a third of the check."""

    ops: dict[int, TxnOp]
    succ: dict[int, dict[int, int]] = field(default_factory=dict)
    ww: dict[tuple[int, int], WwWhy] = field(default_factory=dict)
    wr: dict[tuple[int, int], WrWhy] = field(default_factory=dict)
    tree_nodes: frozenset[int] = frozenset()
    """The real-time order's tree nodes (checkers/txn/realtime.py), none a transaction."""
    realtime_pairs: int = 0
    """The pairs real-time order's transitive reduction holds (Elle's real-time edges)."""
    views: dict[int, int] = field(default_factory=lambda: VIEWS)
    """The views real-time edges were drawn for (VIEWS or WW_DEPS_VIEWS)."""
    committed_info: int = 0
    """The info transactions among the nodes proven committed (versions.committed)."""


def dependency_graph(
    records: list[Read],
    nodes: dict[int, TxnOp],
    writer_of: Writers,
    orders: dict[int, VersionOrder],
    views: dict[int, int] = VIEWS,
) -> Deps:
    """Takes every record polled (versions.reads), the graph's transactions
    (versions.graph_nodes), Writers, version orders and the views of real-time order the
    kinds searched read (VIEWS, WW_DEPS_VIEWS). Returns their dependency graph, with every
    kind of edge."""
    deps = Deps(nodes, views=views)
    rels: dict[int, dict[int, int]] = {}
    _add(rels, ww_edges(orders, writer_of, nodes, deps.ww), WW)
    _add(rels, wr_edges(records, writer_of, nodes, deps.wr), WR)
    _add(rels, process_edges(nodes.values()), PROCESS)
    realtime = RealtimeOrder(nodes.values())
    into: dict[int, dict[int, int]] = {}
    for u, out in rels.items():
        for v, bits in out.items():
            into.setdefault(v, {})[u] = bits
    first = min(nodes, default=0)
    for u, v, bits in realtime.edges(into, views, first):
        out = rels.setdefault(u, {})
        out[v] = out.get(v, 0) | REALTIME | bits
    deps.tree_nodes = frozenset(range(first - len(realtime.order) + 1, first))
    deps.realtime_pairs = realtime.pairs()
    deps.succ = rels
    return deps


def _add(rels: dict[int, dict[int, int]], edges: Iterable[tuple[int, int]], label: int) -> None:
    for u, v in edges:
        out = rels.setdefault(u, {})
        out[v] = out.get(v, 0) | label


def ww_edges(
    orders: dict[int, VersionOrder],
    writer_of: Writers,
    nodes: dict[int, TxnOp],
    why: dict[tuple[int, int], WwWhy],
) -> list[tuple[int, int]]:
    """Takes the version orders, Writers, the graph's transactions, and the dict to note
    each edge's evidence in. Returns the ww edges: per partition, each writer among them
    (never a failed one) to the next other such writer in offset order."""
    edges = []
    for p, order in orders.items():
        before: tuple[int, int, Message] | None = None  # (writer, offset, message)
        for offset, m in zip(order.offsets, order.messages, strict=True):
            s = writer_of.get((p, m))
            if s is None or s.index not in nodes or s.outcome == "fail":
                continue  # unexpected, or an aborted read: reported as such, never ordered
            if before is not None and before[0] != s.index:
                edge = (before[0], s.index)
                if edge not in why:
                    why[edge] = (p, before[1], before[2], offset, m)
                    edges.append(edge)
            before = (s.index, offset, m)
    return edges


def wr_edges(
    records: list[Read],
    writer_of: Writers,
    nodes: dict[int, TxnOp],
    why: dict[tuple[int, int], WrWhy],
) -> list[tuple[int, int]]:
    """Takes every record polled (versions.reads), Writers, the graph's transactions, and
    the dict to note each edge's evidence in. Returns the wr edges: each writer among
    them (never a failed one) to each of them that polled a message of it (a transaction
    reading its own is a precommitted read, never an edge)."""
    edges = []
    for poll, p, offset, m in records:
        if poll.index not in nodes:
            continue
        s = writer_of.get((p, m))
        if s is None or s.index == poll.index or s.index not in nodes or s.outcome == "fail":
            continue
        edge = (s.index, poll.index)
        if edge not in why:
            why[edge] = (p, offset, m)
            edges.append(edge)
    return edges


def process_edges(ops: Iterable[TxnOp]) -> list[tuple[int, int]]:
    """Takes the graph's transactions. Returns, per process, an edge from each ok one to
    each that follows it until its next ok one, in invoke order: a process runs one op
    at a time, and only an ok one is known to have ended (Jepsen's process may go on
    after an info op, which may take effect later)."""
    last: dict[int | str, int] = {}
    edges = []
    for op in sorted(ops, key=lambda o: o.index):
        before = last.get(op.process)
        if before is not None:
            edges.append((before, op.index))
        if op.outcome == "ok":
            last[op.process] = op.index
    return edges
