"""Dependency cycles on histories written by hand, one per kind, each explained edge by
edge; the real-time reduction; the shortest-cycle search."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.txn.cycles import shortest_cycle
from checkers.txn.graph import PROCESS, REALTIME, VIEWS, WR, WW
from checkers.txn.reader import TxnOp
from checkers.txn.realtime import RealtimeOrder
from tests.support.txn_builder import Txns, found, poll, send


def only_cycle(txns: Txns, kind: str) -> dict[str, Any]:
    result = txns.check()
    assert found(result) == {kind: 1}
    case: dict[str, Any] = result["kinds"][kind]["cases"][0]
    assert len(result["kinds"][kind]["cases"]) == 1
    return case


def test_two_transactions_writing_two_partitions_in_opposite_orders_are_g0() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000, 5_000, [send(0, 0, 1), send(1, 1, 4)])
    t2 = txns.add(1, 2_000, 6_000, [send(0, 1, 2), send(1, 0, 3)])
    case = only_cycle(txns, "G0")
    a, b = txns.index(t1), txns.index(t2)
    assert case["indexes"] == [a, b]
    assert case["explanation"] == [
        f"T{a} (op {a}, process 0) sent 1 to partition 0 at offset 0; T{b} sent 2 there at "
        "offset 1, after it (ww)",
        f"T{b} (op {b}, process 1) sent 3 to partition 1 at offset 0; T{a} sent 4 there at "
        "offset 1, after it (ww)",
    ]
    assert [s["type"] for s in case["steps"]] == ["ww", "ww"]


def test_two_transactions_polling_each_others_messages_are_g1c() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000, 5_000, [send(0, 0, 1), poll({1: [[0, 2]]})])
    t2 = txns.add(1, 2_000, 6_000, [send(1, 0, 2), poll({0: [[0, 1]]})])
    case = only_cycle(txns, "G1c")
    a, b = txns.index(t1), txns.index(t2)
    assert case["explanation"] == [
        f"T{a} (op {a}, process 0) sent 1 to partition 0 at offset 0; T{b} polled it (wr)",
        f"T{b} (op {b}, process 1) sent 2 to partition 1 at offset 0; T{a} polled it (wr)",
    ]


def test_a_cycle_of_a_write_and_a_read_is_what_kafka_allows_and_no_g1c() -> None:
    # T1 -ww-> T2 (partition 0) and T2 -wr-> T1 (T1 polled T2's message in partition 1):
    # no write isolation makes this normal (kafka.clj allowed-error-types), so no kind.
    txns = Txns()
    txns.add(0, 1_000, 5_000, [send(0, 0, 1), poll({1: [[0, 2]]})])
    txns.add(1, 2_000, 6_000, [send(0, 1, 3), send(1, 0, 2)])
    assert found(txns.check()) == {}


def test_a_process_whose_later_send_lands_first_is_g0_process() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000, 2_000, [send(0, 1, 2)])
    t2 = txns.add(0, 3_000, 4_000, [send(0, 0, 1)])
    case = only_cycle(txns, "G0-process")
    a, b = txns.index(t1), txns.index(t2)
    assert case["explanation"] == [
        f"T{a} (op {a}, process 0) completed before T{b}, its process's next transaction, "
        "was invoked (process)",
        f"T{b} (op {b}, process 0) sent 1 to partition 0 at offset 0; T{a} sent 2 there at "
        "offset 1, after it (ww)",
    ]


def test_a_send_landing_before_one_that_completed_before_it_began_is_g0_realtime() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000_000, 2_000_000, [send(0, 1, 2)])
    t2 = txns.add(1, 3_000_000, 4_000_000, [send(0, 0, 1)])
    case = only_cycle(txns, "G0-realtime")
    a, b = txns.index(t1), txns.index(t2)
    assert case["explanation"][0] == (
        f"T{a} (op {a}, process 0) completed at 0.002 s, before T{b} was invoked at 0.003 s "
        "(realtime)"
    )
    assert case["steps"][0] == {
        "from": a,
        "to": b,
        "type": "realtime",
        "completed": 2_000_000,
        "invoked": 3_000_000,
    }


def test_a_process_polling_its_next_transactions_message_is_g1c_process() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000, 2_000, [poll({0: [[0, 1]]})])
    t2 = txns.add(0, 3_000, 4_000, [send(0, 0, 1)])
    case = only_cycle(txns, "G1c-process")
    assert set(case["indexes"]) == {txns.index(t1), txns.index(t2)}
    assert [s["type"] for s in case["steps"]] == ["process", "wr"]


def test_polling_a_message_sent_after_the_poll_completed_is_g1c_realtime() -> None:
    txns = Txns()
    t1 = txns.add(0, 1_000, 2_000, [poll({0: [[0, 1]]})])
    t2 = txns.add(1, 3_000, 4_000, [send(0, 0, 1)])
    case = only_cycle(txns, "G1c-realtime")
    assert set(case["indexes"]) == {txns.index(t1), txns.index(t2)}
    assert [s["type"] for s in case["steps"]] == ["realtime", "wr"]


def test_an_aborted_transaction_makes_no_cycle() -> None:
    # The same writes as the G0 above, one of them aborted: an aborted read, never a G0.
    txns = Txns()
    txns.add(0, 1_000, 5_000, [send(0, 0, 1), send(1, 1, 4)])
    txns.add(1, 2_000, 6_000, [send(0, 1, 2), send(1, 0, 3)], outcome="fail")
    txns.add(2, 7_000, 8_000, [poll({0: [[0, 1], [1, 2]], 1: [[0, 3], [1, 4]]})])
    assert found(txns.check()) == {"G1a": 2}


def _intervals(data: st.DataObject) -> list[TxnOp]:
    draw = data.draw
    n = draw(st.integers(1, 12))
    ops = []
    for i in range(n):
        start = draw(st.integers(0, 40))
        length = draw(st.integers(1, 15))
        ok = draw(st.booleans()) or i == 0
        ops.append(TxnOp(i, i, start, "ok" if ok else "info", start + length if ok else None))
    return ops


def _tree(ops: list[TxnOp], lower: dict[int, dict[int, int]] | None = None) -> nx.DiGraph:
    """The real-time order's nodes and edges alone, tree nodes numbered below -1."""
    graph = nx.DiGraph()
    graph.add_nodes_from(op.index for op in ops)
    for u, v, views in RealtimeOrder(ops).edges(lower or {}, VIEWS, -1):
        graph.add_edge(u, v, views=views)
    return graph


def _reduction(ops: list[TxnOp]) -> set[tuple[int, int]]:
    """Elle's transitive reduction of real-time order, pair by pair (the oracle): at each
    invoke, the ops completed and not yet followed by one invoked after them that
    completed; at one instant invokes come first."""
    events = sorted(
        [(op.invoked, 0, op.index) for op in ops]
        + [(op.completed, 1, op.index) for op in ops if op.completed is not None]
    )
    frontier: dict[int, None] = {}
    before: dict[int, tuple[int, ...]] = {}
    pairs = set()
    for _, completion, index in events:
        if not completion:
            before[index] = tuple(frontier)
            pairs |= {(a, index) for a in before[index]}
            continue
        for a in before.pop(index, ()):
            frontier.pop(a, None)
        frontier[index] = None
    return pairs


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_tree_reaches_exactly_real_time_order(data: st.DataObject) -> None:
    ops = _intervals(data)
    indexes = {op.index for op in ops}
    closure = {(a, b) for a, b in nx.transitive_closure_dag(_tree(ops)).edges if {a, b} <= indexes}
    precedes = {
        (a.index, b.index)
        for a, b in itertools.permutations(ops, 2)
        if a.completed is not None and a.completed < b.invoked
    }
    assert closure == precedes


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_each_transaction_is_preceded_by_elles_reduction_in_one_run(data: st.DataObject) -> None:
    ops = _intervals(data)
    order = RealtimeOrder(ops)
    runs = {
        (order.order[p], index)
        for index, (low, high) in order.runs.items()
        for p in range(low, high)
    }
    assert runs == _reduction(ops)
    assert order.pairs() == len(runs)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_view_reaches_no_pair_an_edge_it_may_use_explains(data: st.DataObject) -> None:
    # Elle explains a step by ww, wr or process before real-time order: to the kind that
    # may use such an edge, the pair is that edge. A wr edge is no ww view's explanation.
    ops = _intervals(data)
    pairs = sorted(_reduction(ops))
    if not pairs:
        return
    explained = data.draw(st.sets(st.sampled_from(pairs)))
    lower: dict[int, dict[int, int]] = {}
    for u, v in explained:
        lower.setdefault(v, {})[u] = WR
    graph = _tree(ops, lower)
    tree = [n for n in graph if n < 0]
    for (u, v), (labels, bit) in itertools.product(pairs, VIEWS.items()):
        # a hop from u to v through tree nodes alone, the last edge of the view's
        hop = graph.subgraph([*tree, u, v]).copy()
        hop.remove_edges_from(
            [(a, b) for a, b, views in hop.edges(data="views") if not views & bit]
        )
        reached = nx.has_path(hop, u, v)
        assert reached == (not ((u, v) in explained and labels & WR)), (u, v, labels)


def test_the_tree_grows_with_the_ops_not_their_square() -> None:
    # Four processes, each running ops back to back: every op completed earlier precedes
    # each new one.
    rng = random.Random(7)
    ops, clock = [], [0, 0, 0, 0]
    for i in range(4_000):
        p = i % 4
        start = clock[p] + rng.randint(1, 50)
        clock[p] = start + rng.randint(1, 200)
        ops.append(TxnOp(i, p, start, "ok", clock[p]))
    assert _tree(ops).number_of_edges() <= 2 * len(ops) * math.log2(len(ops))


def test_ops_running_at_once_then_ops_after_them_all_take_n_log_n_edges() -> None:
    # n ops at once, then n more: each of the first precedes each of the second, n^2
    # pairs of Elle's reduction that no pair implies.
    n = 1_000
    ops = [TxnOp(i, i, i, "ok", 2 * n + i) for i in range(n)]
    ops += [TxnOp(n + i, n + i, 4 * n + i, "ok", 5 * n + i) for i in range(n)]
    assert RealtimeOrder(ops).pairs() == n * n
    assert _tree(ops).number_of_edges() <= 2 * len(ops) * math.log2(len(ops))


def test_the_shortest_cycle_through_a_component_is_found() -> None:
    part = {1: [(2, WW)], 2: [(3, WW)], 3: [(1, WW), (4, WW)], 4: [(3, WW)]}
    assert shortest_cycle(part, 0) == [(3, 4, WW), (4, 3, WW)]


def test_a_cycle_must_use_every_required_label() -> None:
    # The 2-cycle of ww alone is shorter, but lacks wr and real-time order.
    part = {1: [(2, WW)], 2: [(1, WW), (3, WR)], 3: [(1, REALTIME)]}
    assert shortest_cycle(part, WR | REALTIME) == [(1, 2, WW), (2, 3, WR), (3, 1, REALTIME)]
    assert shortest_cycle(part, PROCESS) is None
