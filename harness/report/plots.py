"""The run's plots: latency.png (every op's latency over time, by outcome) and rate.png
(throughput by outcome), both with the fault windows shaded and labelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from checkers.perf import Sample

OUTCOME_COLOURS = {"ok": "#2ca02c", "fail": "#d62728", "info": "#ff7f0e"}
FAULT_COLOURS = ("#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#1f77b4")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _fault_colour(fault: str, faults: list[str]) -> str:
    return FAULT_COLOURS[faults.index(fault) % len(FAULT_COLOURS)]


def shade_faults(ax: Axes, windows: Sequence[dict[str, Any]], end: float) -> None:
    """Takes an axis and fault windows. Shades each window and labels it at the top; a
    fault made of steps (isr-shrink) gets a dashed line and a label at each step."""
    faults = sorted({w["fault"] for w in windows})
    for w in windows:
        stop = w["stop"] if w["stop"] is not None else end
        colour = _fault_colour(w["fault"], faults)
        ax.axvspan(w["start"], stop, color=colour, alpha=0.15, lw=0)
        for step in w.get("steps", ()):
            ax.axvline(step["time"], color=colour, lw=0.8, ls="--", alpha=0.7)
            ax.text(
                step["time"],
                0.0,
                f" {step['step']}",
                transform=ax.get_xaxis_transform(),
                fontsize=6,
                va="bottom",
                ha="left",
                color=colour,
                rotation=90,
            )
        ax.text(
            w["start"],
            1.0,
            f" {w['fault']}",
            transform=ax.get_xaxis_transform(),
            fontsize=7,
            va="top",
            ha="left",
            color=colour,
            rotation=90,
        )


def latency_plot(samples: Sequence[Sample], windows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Draws each op's latency against the time it was invoked, coloured by outcome and
    marked by f, with the fault windows shaded. Returns the file written."""
    fig, ax = plt.subplots(figsize=(11, 5))
    fs = sorted({s.f for s in samples})
    for i, f in enumerate(fs):
        for outcome, colour in OUTCOME_COLOURS.items():
            picked = [s for s in samples if s.f == f and s.outcome == outcome]
            if picked:
                ax.scatter(
                    [s.time_s for s in picked],
                    [max(s.latency_ms, 0.01) for s in picked],
                    s=6,
                    color=colour,
                    marker=MARKERS[i % len(MARKERS)],
                    alpha=0.6,
                    label=f"{f} {outcome}",
                    linewidths=0,
                )
    shade_faults(ax, windows, _end(samples))
    ax.set_yscale("log")
    ax.set_xlabel("time since the test began (s)")
    ax.set_ylabel("latency (ms)")
    ax.set_title("Latency of every operation")
    if samples:
        ax.legend(fontsize=7, markerscale=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, path)


def rate_plot(
    samples: Sequence[Sample],
    windows: Sequence[dict[str, Any]],
    path: Path,
    recovered: Sequence[dict[str, Any]] = (),
) -> Path:
    """Draws completed ops per second by outcome (one-second buckets by completion time)
    with the fault windows shaded, and when each fault's partitions got a new leader and
    their first ok op (checkers/recovery.py rows). Returns the file written."""
    fig, ax = plt.subplots(figsize=(11, 4))
    end = _end(samples)
    buckets = int(end) + 1
    for outcome, colour in OUTCOME_COLOURS.items():
        counts = [0] * buckets
        for s in samples:
            if s.outcome == outcome:
                counts[min(buckets - 1, int(s.time_s + s.latency_ms / 1000))] += 1
        if any(counts):
            ax.plot(range(buckets), counts, color=colour, label=outcome, lw=1.2)
    shade_faults(ax, windows, end)
    mark_recovery(ax, recovered)
    ax.set_xlabel("time since the test began (s)")
    ax.set_ylabel("operations per second")
    ax.set_title("Throughput by outcome")
    if samples:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, path)


def mark_recovery(ax: Axes, recovered: Sequence[dict[str, Any]]) -> None:
    """Marks, at the foot of the plot, when each partition a fault took got a new leader
    (a black triangle) and its first ok op after the fault began (a green star)."""
    for name, marker, colour, label in (
        ("new_leader_s", "^", "black", "new leader"),
        ("first_ok_s", "*", OUTCOME_COLOURS["ok"], "first ok op after the fault"),
    ):
        times = [r["start"] + r[name] for r in recovered if r.get(name) is not None]
        if times:
            ax.scatter(
                times,
                [0.02] * len(times),
                transform=ax.get_xaxis_transform(),
                marker=marker,
                color=colour,
                s=40,
                label=label,
                zorder=3,
            )


def _end(samples: Sequence[Sample]) -> float:
    return max((s.time_s + s.latency_ms / 1000 for s in samples), default=1.0)


def save(fig: Any, path: Path) -> Path:
    """Saves a figure as every plot of a run is saved; returns the file."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
