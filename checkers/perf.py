"""Latency and throughput of the client ops, from the history's times alone.

Reports latency quantiles (ms) per f and outcome and the mean rate; finds no anomaly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checkers import gone
from history import Event, pair_invocations

QUANTILES = (0.5, 0.95, 0.99, 1.0)


@dataclass(frozen=True, slots=True)
class Sample:
    """One completed op: when it was invoked (s), how long it took (ms), and its outcome
    (checkers.gone.outcome: a read that found the store gone failed)."""

    f: str
    time_s: float
    latency_ms: float
    outcome: str


def samples(events: Sequence[Event]) -> list[Sample]:
    """Takes a history's events. Returns one sample per completed client op, in invoke order."""
    invocations, _ = pair_invocations(events)
    return [
        Sample(
            str(inv.invoke["f"]),
            inv.invoke["time"] / 1e9,
            (inv.completion["time"] - inv.invoke["time"]) / 1e6,
            gone.outcome(inv.completion),
        )
        for inv in invocations
        if inv.completion is not None
    ]


def quantiles(values: Sequence[float]) -> dict[str, float]:
    """Takes numbers. Returns their p50, p95, p99 and max (nearest rank), rounded."""
    if not values:
        return {}
    ordered = sorted(values)
    last = len(ordered) - 1
    return {
        ("max" if q == 1.0 else f"p{round(q * 100)}"): round(ordered[round(q * last)], 3)
        for q in QUANTILES
    }


def check(events: Sequence[Event]) -> dict[str, Any]:
    """Takes a history's events. Returns the summary of their samples."""
    return summary(samples(events))


def summary(found: Sequence[Sample]) -> dict[str, Any]:
    """Takes the ops' samples. Returns {"valid": True, "latency_ms": {f: {outcome:
    quantiles}}, "all_ok_latency_ms", "ok_rate": ok ops per second over the span of the
    ops}."""
    latency: dict[str, dict[str, dict[str, float]]] = {}
    for f in sorted({s.f for s in found}):
        for outcome in sorted({s.outcome for s in found if s.f == f}):
            values = [s.latency_ms for s in found if s.f == f and s.outcome == outcome]
            latency.setdefault(f, {})[outcome] = quantiles(values)
    span = (max(s.time_s for s in found) - min(s.time_s for s in found)) if found else 0.0
    oks = sum(s.outcome == "ok" for s in found)
    return {
        "valid": True,
        "latency_ms": latency,
        "all_ok_latency_ms": quantiles([s.latency_ms for s in found if s.outcome == "ok"]),
        "ok_rate": round(oks / span, 2) if span > 0 else 0.0,
    }
