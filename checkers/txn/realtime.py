"""Real-time order over committed transactions, as Elle's transitive reduction draws it
(elle/core.clj `realtime-graph`: "we only need a transitive reduction of that graph"),
in O(n log n) edges however many transactions run at once.

T1 precedes T2 in the reduction when T1 completed ok before T2 was invoked and no
transaction ran entirely between (invoked after T1 completed, completed before T2 was
invoked). With the ok transactions in order of completion, T2's predecessors are one run
of them: from the first that completed at or after g, the latest invoke among those
completed before T2's invoke, to the last that completed before it (at one instant an
invoke comes first: an op completing then does not precede it). Elle draws each pair as
an edge, which is quadratic where n transactions run at once and n more begin after them
all: here each run is reached through the nodes of a segment tree over the completion
order, O(log n) of them per run, each tree node reached from the transactions it covers
(Deps.tree_nodes: numbered below every transaction's index, never one).

Elle explains each step of a cycle by the first explainer that works, data dependencies
and process order before real-time order: a pair the reduction holds that also has an
edge a kind may use (ww, wr or process) is that edge to the kind, never real-time order.
So each view (the lower labels a kind may use, graph.VIEWS) reaches T2 only from the run less
the transactions with such an edge into T2, through tree nodes that hold none of them;
each edge into T2 carries the bits of the views that may read it. A path of tree nodes
from T1 to T2 exists in a view exactly when the pair is in the reduction and no edge of
the view explains it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping

from checkers.txn.reader import TxnOp

Edge = tuple[int, int, int]
"""An edge: (from, to, the bits of the views that may read it)."""


class RealtimeOrder:
    """The reduction of real-time order over committed transactions: the ok ones in order
    of completion, and per transaction the run of them that precede it."""

    def __init__(self, ops: Iterable[TxnOp]) -> None:
        self.ops = list(ops)
        done = sorted(
            (op.completed, op.index, op.invoked) for op in self.ops if op.completed is not None
        )
        self.order = [index for _, index, _ in done]
        self.place = {index: i for i, index in enumerate(self.order)}
        completed = [at for at, _, _ in done]
        latest: list[int | None] = [None]  # per prefix of `done`, its latest invoke
        for _, _, invoked in done:
            top = latest[-1]
            latest.append(invoked if top is None else max(top, invoked))
        self.runs: dict[int, tuple[int, int]] = {}
        for op in self.ops:
            high = bisect_left(completed, op.invoked)
            g = latest[high]
            low = 0 if g is None else bisect_left(completed, g)
            if low < high:
                self.runs[op.index] = (low, high)

    def pairs(self) -> int:
        """Returns how many pairs the reduction holds (Elle's edges)."""
        return sum(high - low for low, high in self.runs.values())

    def edges(
        self, lower: Mapping[int, Mapping[int, int]], views: Mapping[int, int], below: int
    ) -> list[Edge]:
        """Takes, per transaction, the labels of each edge into it (by its source), the
        views (per set of labels a kind may use besides real-time order, the bit its
        real-time edges carry: graph.VIEWS) and the number the tree nodes are numbered
        below (1 less, 2 less...). Returns the edges: each tree node's from its two
        children (for every view), and per transaction, for each view, those from the
        tree nodes covering its run less the transactions whose edge into it the view may
        use."""
        m = len(self.order)
        every = sum(views.values())

        def node(position: int) -> int:  # leaves are the transactions themselves
            return self.order[position - m] if position >= m else below - position

        edges: list[Edge] = [(node(p), node(p // 2), every) for p in range(2, 2 * m)]
        for index, (low, high) in self.runs.items():
            into = lower.get(index, {})
            covers: dict[int, int] = {}
            for labels, view in views.items():
                kept = sorted(
                    self.place[u] for u, bits in into.items() if bits & labels and u in self.place
                )
                for start, stop in _gaps(low, high, kept):
                    for p in _cover(start + m, stop + m):
                        covers[p] = covers.get(p, 0) | view
            edges += [(node(p), index, views) for p, views in covers.items()]
        return edges


def _gaps(low: int, high: int, kept: list[int]) -> Iterable[tuple[int, int]]:
    """Yields the runs of [low, high) between the places kept out (sorted)."""
    start = low
    for p in kept:
        if low <= p < high:
            if start < p:
                yield start, p
            start = max(start, p + 1)
    if start < high:
        yield start, high


def _cover(low: int, high: int) -> Iterable[int]:
    """Yields the tree positions whose leaves together are exactly [low, high) (leaf
    positions): O(log n) of them, as a bottom-up segment tree's query takes them."""
    while low < high:
        if low & 1:
            yield low
            low += 1
        if high & 1:
            high -= 1
            yield high
        low //= 2
        high //= 2
