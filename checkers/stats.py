"""Counts of every client op by f and outcome (ok, fail, info), as Jepsen's stats checker.

It finds no anomaly: a run with no ok op at all tested nothing, so its verdict is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkers.result import UNKNOWN
from history import Event, pair_invocations

OUTCOMES = ("ok", "fail", "info")


def check(events: Sequence[Event]) -> dict[str, Any]:
    """Takes a history's events. Returns {"valid", "count", "ok", "fail", "info", "by_f"};
    an invoke never completed counts as info."""
    invocations, _ = pair_invocations(events)
    by_f: dict[str, dict[str, int]] = {}
    for inv in invocations:
        outcome = "info" if inv.completion is None else inv.completion["type"]
        counts = by_f.setdefault(str(inv.invoke["f"]), dict.fromkeys(OUTCOMES, 0))
        counts[outcome] += 1
    totals = {o: sum(c[o] for c in by_f.values()) for o in OUTCOMES}
    return {
        "valid": True if totals["ok"] else UNKNOWN,
        "count": len(invocations),
        **totals,
        "by_f": dict(sorted(by_f.items())),
    }
