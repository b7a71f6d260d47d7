"""The run's plots: latency.svg (every op's latency over time, by outcome) and rate.svg
(throughput by outcome), in the frame of every time plot, with the anomalies marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from checkers import Sample
from harness.report.plots import axes as time_axes
from harness.report.plots.axes import Frame, side_legend, time_figure
from harness.report.plots.images import save_figure
from harness.report.plots.marks import Mark, draw_on_latency, draw_on_rate

OUTCOME_COLOURS = {"ok": "#2ca02c", "fail": "#d62728", "info": "#ff7f0e"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
MARK_ROOM = 1.2
"""The rate plot's y range over its highest count when anomalies are marked near the top."""


def latency_figure(
    samples: Sequence[Sample],
    windows: Sequence[dict[str, Any]],
    end: float | None = None,
    marks: Sequence[Mark] = (),
    workload_end: float | None = None,
) -> Frame:
    """Takes the ops' samples, the fault windows, the test's end (s; None: the last
    sample's or window's), the anomalies and the workload's end (axes.workload_end).
    Returns the latency plot's Frame: each op at its invocation and latency, coloured by
    outcome and shaped by f, the anomalies ringed."""
    title = "Latency of every operation"
    frame = time_figure([3.3], windows, _end(samples, windows, end), title, workload_end)
    (ax,) = frame.axes
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
                    linewidths=0,
                )
    draw_on_latency(ax, marks)
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms)")
    if samples:
        # Colour says the outcome and shape the f: a key of each, not of every pair.
        outcomes = sorted({s.outcome for s in samples}, key=list(OUTCOME_COLOURS).index)
        handles = [_dot(OUTCOME_COLOURS[o], "o", o) for o in outcomes]
        handles += [_dot("#555555", MARKERS[i % len(MARKERS)], f) for i, f in enumerate(fs)]
        side_legend(ax, handles + ax.get_legend_handles_labels()[0])
    return frame


def latency_plot(
    samples: Sequence[Sample],
    windows: Sequence[dict[str, Any]],
    path: Path,
    end: float | None = None,
    marks: Sequence[Mark] = (),
    workload_end: float | None = None,
) -> Path:
    """Draws latency_figure into path. Returns the file written."""
    return time_axes.save(latency_figure(samples, windows, end, marks, workload_end), path)


def rate_figure(
    samples: Sequence[Sample],
    windows: Sequence[dict[str, Any]],
    recovered: Sequence[dict[str, Any]] = (),
    end: float | None = None,
    marks: Sequence[Mark] = (),
    workload_end: float | None = None,
) -> Frame:
    """Takes what latency_figure does and the recovery rows (checkers/recovery.py).
    Returns the rate plot's Frame: completed ops per second by outcome (one-second buckets
    by completion time), when each fault's partitions got a new leader and their first ok
    op, and the anomalies (marks.draw_on_rate)."""
    title = "Throughput by outcome"
    frame = time_figure([2.5], windows, _end(samples, windows, end), title, workload_end)
    (ax,) = frame.axes
    buckets = int(frame.end) + 1
    top = 0
    for outcome, colour in OUTCOME_COLOURS.items():
        counts = [0] * buckets
        for s in samples:
            if s.outcome == outcome:
                counts[min(buckets - 1, int(s.time_s + s.latency_ms / 1000))] += 1
        if any(counts):
            ax.plot(range(buckets), counts, color=colour, label=outcome, lw=1.2)
            top = max(top, *counts)
    mark_recovery(ax, recovered)
    top = max(top, draw_on_rate(ax, marks))
    if marks:
        ax.set_ylim(0, max(top, 1) * MARK_ROOM)
    ax.set_ylabel("operations per second")
    if samples:
        side_legend(ax)
    return frame


def rate_plot(
    samples: Sequence[Sample],
    windows: Sequence[dict[str, Any]],
    path: Path,
    recovered: Sequence[dict[str, Any]] = (),
    end: float | None = None,
    marks: Sequence[Mark] = (),
    workload_end: float | None = None,
) -> Path:
    """Draws rate_figure into path. Returns the file written."""
    figure = rate_figure(samples, windows, recovered, end, marks, workload_end)
    return time_axes.save(figure, path)


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


def _dot(colour: str, marker: str, label: str) -> Line2D:
    return Line2D([], [], color=colour, marker=marker, ls="", ms=5, label=label)


def _end(samples: Sequence[Sample], windows: Sequence[dict[str, Any]], end: float | None) -> float:
    if end is not None:
        return end
    last = max((s.time_s + s.latency_ms / 1000 for s in samples), default=1.0)
    return max([last, *(float(w["stop"] or w["start"]) for w in windows)])


def save(fig: Figure, path: Path) -> Path:
    """Saves a plot that is not a time plot (tightly laid out). Returns the file."""
    return save_figure(fig, path, tight=True)
