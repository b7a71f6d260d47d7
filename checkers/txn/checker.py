"""The transaction checker's core: every transaction anomaly kind found in a TxnHistory,
as plain JSON-able data, to be merged into the queue checker's result.

The kinds, Jepsen's names (jepsen.tests.kafka `analysis`): G1a (aborted read),
precommitted-read and int-send-skip (checkers/txn/reads.py); G0, G1c and their -process
and -realtime variants (dependency cycles: checkers/txn/graph.py, txn_cycles.py). Which
of them make a history invalid is for the verdict policy to say, not this module. Layout:

    {"transactions": {"committed", "aborted", "unknown", "info_committed"},
     "kinds": {kind: {"count", "cases": the first CASES_KEPT, and for a cycle kind
               "unresolved": components where no cycle was found, checkers/txn/cycles.py;
               with --ww-deps, for a G1c kind "wr_only": its cycles of reads alone}},
     "graph": {"transactions", "ww", "wr", "process", "realtime"}: nodes and edges
              (real-time ones as the pairs of its transitive reduction),
     "time": s}

An op index in a case is the index of the op's invoke event; a cycle's cases come
shortest first.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection
from typing import Any

from checkers.queue.policy import TXN_KINDS, counts_against
from checkers.result import UNKNOWN, merge_valid
from checkers.txn.cycles import CYCLE_KINDS, G1C_KINDS, Found, cycle_kinds, find_cycles
from checkers.txn.explain import Case, cycle_case
from checkers.txn.graph import LABELS, REALTIME, VIEWS, WW_DEPS_VIEWS, Deps, dependency_graph
from checkers.txn.reader import TxnHistory
from checkers.txn.reads import aborted_read_cases, int_send_skip_cases, precommitted_read_cases
from checkers.txn.versions import committed, graph_nodes, reads, version_orders, writers
from history import collector_paused

CASES_KEPT = 20
READ_KINDS = ("G1a", "precommitted-read", "int-send-skip")


def check_txns(
    history: TxnHistory, ww_deps: bool = False, ignore: Collection[str] = ()
) -> dict[str, Any]:
    """Takes a TxnHistory, whether ww edges join G1c's cycles (--ww-deps, kafka.clj
    `:ww-deps`) and the kinds ignored (they prune no kind they imply: cycles.find_cycles).
    Returns every transaction anomaly in it, laid out as the module docstring says."""
    started = time.monotonic()
    # Millions of small containers (the records, the edges) and no cycles: the collector
    # would walk them all again and again, for nothing (collector_paused).
    with collector_paused():
        read_cases, deps, found = find_txn_cases(history, ww_deps, ignore)
    result = txn_result(history, read_cases, deps, found, time.monotonic() - started)
    if ww_deps:
        # Jepsen allows every G1c under :ww-deps (kafka.clj allowed-error-types); a cycle
        # of reads alone is an anomaly at read_committed whatever was asked, so those
        # are counted apart, for the verdict (with_transactions).
        reads_alone = find_cycles(deps, G1C_KINDS, ignore)
        for kind in G1C_KINDS:
            alone = reads_alone[kind.name]
            entry = result["kinds"][kind.name]
            entry["wr_only"], entry["wr_only_unresolved"] = len(alone.cycles), alone.unresolved
        result["ww_deps"] = True
    return result


def find_txn_cases(
    history: TxnHistory, ww_deps: bool = False, ignore: Collection[str] = ()
) -> tuple[dict[str, list[Case]], Deps, dict[str, Found]]:
    """Takes a TxnHistory, whether ww edges join G1c's cycles and the kinds ignored.
    Returns the cases of the kinds needing no graph, the dependency graph, and its
    cycles of each kind."""
    q = history.queue
    writer_of = writers(q)
    records = reads(q)
    every = {op.index: op for op in history.ops}
    committed_ops = committed(history, writer_of, records)
    orders = version_orders(q, committed_ops, records)
    read_cases = {
        "G1a": aborted_read_cases(q, writer_of, every, records),
        "precommitted-read": precommitted_read_cases(q, every, records),
        "int-send-skip": int_send_skip_cases(q, writer_of, orders, every),
    }
    views = WW_DEPS_VIEWS if ww_deps else VIEWS
    nodes = graph_nodes(history, writer_of, committed_ops, records)
    deps = dependency_graph(records, nodes, writer_of, orders, views)
    deps.committed_info = sum(1 for op in committed_ops.values() if op.outcome == "info")
    return read_cases, deps, find_cycles(deps, cycle_kinds(ww_deps), ignore)


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
        "info_committed": deps.committed_info,
    }


def _graph_size(deps: Deps) -> dict[str, int]:
    # Every edge joins two transactions of deps.ops or tree nodes: the nodes are those.
    size = {"transactions": len(deps.ops)} | {name: 0 for name in LABELS.values()}
    labelled = Counter(bits for out in deps.succ.values() for bits in out.values())
    for bits, edges in labelled.items():
        for label, name in LABELS.items():
            if bits & label and label != REALTIME:
                size[name] += edges
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
    both. Under --ww-deps, a G1c kind all of whose cycles need a ww edge is allowed, as
    kafka.clj's allowed-error-types allows G1c then; one of reads alone still counts.
    A component where the search of a kind that counts gave up (`unresolved`) may hold
    one unfound: the verdict is then unknown, with why in `unknown`, as Elle's
    cycle-search-timeout makes its own."""
    kinds = dict(queue_result["kinds"])
    unknown = list(queue_result.get("unknown", []))
    for kind in TXN_KINDS:
        entry = section["kinds"][kind]
        counts = counts_against(kind, "assign", ignore)  # sub_via: queue kinds' only
        invalidating, unresolved = counts, entry.get("unresolved", 0)
        if "wr_only" in entry:  # --ww-deps: only a cycle of reads alone counts
            invalidating = counts and entry["wr_only"] > 0
            unresolved = entry["wr_only_unresolved"]
        if counts and unresolved:
            unknown.append(
                f"{kind}: the cycle search gave up on {unresolved} strongly connected "
                "component(s) of the transaction graph (Elle's cycle-search-timeout): "
                "such a cycle may be there, unfound"
            )
        kinds[kind] = entry | {"invalidating": invalidating, "ignored": kind in ignore}
    broken = any(kinds[k]["count"] and kinds[k]["invalidating"] for k in TXN_KINDS)
    ignored = [k for k in TXN_KINDS if k in ignore]
    return queue_result | {
        "valid": merge_valid(queue_result["valid"], not broken, UNKNOWN if unknown else True),
        "unknown": unknown,
        "kinds": kinds,
        "ignored": queue_result["ignored"] + ignored,
        "transactions": section["transactions"]
        | {"graph": section["graph"], "time": section["time"]}
        | ({"ww_deps": True} if section.get("ww_deps") else {}),
    }
