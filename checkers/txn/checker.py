"""The transaction checker's core: every transaction anomaly kind found in a TxnHistory,
as plain JSON-able data, to be merged into the queue checker's result.

The kinds, Jepsen's names (jepsen.tests.kafka `analysis`): G1a (aborted read),
precommitted-read and int-send-skip (checkers/txn/reads.py); G0, G1c and their -process
and -realtime variants (dependency cycles: checkers/txn/graph.py, txn_cycles.py). Which
of them make a history invalid is for the verdict policy to say, not this module. Layout:

    {"transactions": {"committed", "aborted", "unknown", "info_committed"},
     "kinds": {kind: {"count", "cases": the first CASES_KEPT, and for a cycle kind
               "unresolved": components where no cycle was found, checkers/txn/cycles.py}},
     "graph": {"transactions", "ww", "wr", "process", "realtime"}: nodes and edges
              (real-time ones as the pairs of its transitive reduction),
     "time": s}

An op index in a case is the index of the op's invoke event; a cycle's cases come
shortest first.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from checkers.queue.policy import TXN_KINDS, counts_against
from checkers.result import merge_valid
from checkers.txn.cycles import CYCLE_KINDS, Found, find_cycles
from checkers.txn.explain import Case, cycle_case
from checkers.txn.graph import LABELS, REALTIME, Deps, dependency_graph
from checkers.txn.reader import TxnHistory
from checkers.txn.reads import aborted_read_cases, int_send_skip_cases, precommitted_read_cases
from checkers.txn.versions import committed, version_orders, writers

CASES_KEPT = 20
READ_KINDS = ("G1a", "precommitted-read", "int-send-skip")


def check_txns(history: TxnHistory) -> dict[str, Any]:
    """Takes a TxnHistory. Returns every transaction anomaly in it, laid out as the
    module docstring says."""
    started = time.monotonic()
    read_cases, deps, found = find_txn_cases(history)
    return txn_result(history, read_cases, deps, found, time.monotonic() - started)


def find_txn_cases(
    history: TxnHistory,
) -> tuple[dict[str, list[Case]], Deps, dict[str, Found]]:
    """Takes a TxnHistory. Returns the cases of the kinds needing no graph, the
    dependency graph, and its cycles of each kind."""
    q = history.queue
    writer_of = writers(q)
    every = {op.index: op for op in history.ops}
    committed_ops = committed(history, writer_of)
    orders = version_orders(q, committed_ops)
    read_cases = {
        "G1a": aborted_read_cases(q, writer_of, every),
        "precommitted-read": precommitted_read_cases(q, every),
        "int-send-skip": int_send_skip_cases(q, writer_of, orders, every),
    }
    deps = dependency_graph(q, committed_ops, writer_of, orders)
    return read_cases, deps, find_cycles(deps)


def txn_result(
    history: TxnHistory,
    read_cases: dict[str, list[Case]],
    deps: Deps,
    found: dict[str, Found],
    seconds: float,
) -> dict[str, Any]:
    """Takes a TxnHistory, its cases, dependency graph and cycles, and the time taken.
    Returns the result, laid out as the module docstring says."""
    names = history.queue.names
    kinds: dict[str, Any] = {}
    for kind in READ_KINDS:
        cases = read_cases[kind]
        kept = [_spelled(c, names) for c in cases[:CASES_KEPT]]
        kinds[kind] = {"count": len(cases), "cases": kept}
    for cycle_kind in CYCLE_KINDS:
        cycles = sorted(found[cycle_kind.name].cycles, key=len)
        kinds[cycle_kind.name] = {
            "count": len(cycles),
            "cases": [cycle_case(deps, c, names) for c in cycles[:CASES_KEPT]],
            "unresolved": found[cycle_kind.name].unresolved,
        }
    return {
        "transactions": _outcomes(history, deps),
        "kinds": kinds,
        "graph": _graph_size(deps),
        "time": seconds,
    }


def _outcomes(history: TxnHistory, deps: Deps) -> dict[str, int]:
    counts = {"ok": 0, "fail": 0, "info": 0}
    for op in history.ops:
        counts[op.outcome] = counts.get(op.outcome, 0) + 1
    return {
        "committed": counts["ok"],
        "aborted": counts["fail"],
        "unknown": counts["info"],
        "info_committed": sum(1 for op in deps.ops.values() if op.outcome == "info"),
    }


def _graph_size(deps: Deps) -> dict[str, int]:
    transactions = deps.graph.number_of_nodes() - len(deps.tree_nodes)
    size = {"transactions": transactions} | {name: 0 for name in LABELS.values()}
    for _, _, bits in deps.graph.edges(data="rels"):
        for label, name in LABELS.items():
            if bits & label and label != REALTIME:
                size[name] += 1
    # Real-time order is drawn through a tree (checkers/txn/realtime.py): its pairs, as
    # Elle's edges, are counted instead.
    return size | {"realtime": deps.realtime_pairs}


def _spelled(case: Case, names: dict[int, str]) -> Case:
    # A partition the history named by EDN keyword is shown as it was named (`:x`).
    if not names or "partition" not in case:
        return case
    return case | {"partition": names.get(case["partition"], case["partition"])}


def with_transactions(
    queue_result: dict[str, Any], section: dict[str, Any], ignore: Collection[str]
) -> dict[str, Any]:
    """Takes the queue checker's result on a history, check_txns' result on it and the
    kinds ignored. Returns the queue result with the transaction kinds among its kinds,
    each judged by the policy (checkers/queue/policy.py TXN_POLICY), the transactions'
    counts with the graph's size and the time under `transactions`, and the validity of
    both."""
    kinds = dict(queue_result["kinds"])
    for kind in TXN_KINDS:
        entry = section["kinds"][kind]
        invalidating = counts_against(kind, "assign", ignore)  # sub_via: queue kinds' only
        kinds[kind] = entry | {"invalidating": invalidating, "ignored": kind in ignore}
    broken = any(kinds[k]["count"] and kinds[k]["invalidating"] for k in TXN_KINDS)
    ignored = [k for k in TXN_KINDS if k in ignore]
    return queue_result | {
        "valid": merge_valid(queue_result["valid"], not broken),
        "kinds": kinds,
        "ignored": queue_result["ignored"] + ignored,
        "transactions": section["transactions"]
        | {"graph": section["graph"], "time": section["time"]},
    }
