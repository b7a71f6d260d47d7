"""The queue workload's plots of consumers falling behind, the two Jepsen's Kafka analysis
draws: realtime-lag.png (each consumer's lag over time, as checkers/queue_lag.py defines
it) and unseen.png (acknowledged sends no poll had received yet, over time). Fault
windows are shaded as in every plot of a run. matplotlib is imported only to draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkers.queue_history import read_queue_history
from checkers.queue_lag import (
    LagPoint,
    Process,
    poll_invocations,
    process_order,
    realtime_lag,
    worst_lags,
)
from history import Event

LAG_FILE, UNSEEN_FILE = "realtime-lag.png", "unseen.png"
UNSEEN_COLOUR = "#ff7f0e"  # the colour of "not known yet" (info) in every plot
OTHERS_COLOUR = "#c7c7c7"
# The consumers drawn in colour and named, worst first; the rest are drawn grey.
# Dark2's colours: deeper than the pale fault shading, and none red, which means lost.
NAMED_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")
BUCKETS = 1500
"""At most this many points per consumer: the worst of each slice of the run."""
LABEL_ROOM = 1.8
"""The y range over the data's highest value, so that the fault labels drawn down from
the top of the axis (plots.shade_faults) fall above the data, not across it."""
STEP_ROOM = 0.3
"""The share of the y range below zero when a fault has steps: their labels go there."""


def realtime_lag_plot(
    events: Sequence[Event], windows: Sequence[dict[str, Any]], out: Path
) -> Path:
    """Takes a queue history's events, the run's fault windows (checkers.faults) and a file.
    Draws each consumer's realtime lag and offsets behind over time. Returns the file."""
    history = read_queue_history(events)
    return draw_lag(realtime_lag(history, poll_invocations(events, history)), windows, out)


def draw_lag(points: Sequence[LagPoint], windows: Sequence[dict[str, Any]], out: Path) -> Path:
    """Takes LagPoints, fault windows and a file. Draws lag (s) above and offsets behind
    below, a line per consumer, the worst ones named. Returns the file written."""
    import matplotlib.pyplot as plt

    from harness.report import plots  # brings matplotlib (Agg): only when drawing

    ranked = sorted(worst_lags(points).values(), key=lambda p: -p.lag)
    end = max([p.time / 1e9 for p in points] + [w["stop"] or w["start"] for w in windows] + [1.0])
    fig, (lag_ax, behind_ax) = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True)
    _draw_consumers((lag_ax, behind_ax), points, ranked, end)
    lag_ax.set_title(_lag_title(ranked))
    lag_ax.set_ylabel("lag (s)")
    behind_ax.set_ylabel("offsets behind the newest known")
    behind_ax.set_xlabel("poll invoked (s since the test began)")
    behind_ax.yaxis.get_major_locator().set_params(integer=True)
    top_lag = max((p.lag / 1e9 for p in points), default=0.0)
    top_behind = max((p.behind for p in points), default=0)
    for ax, top in ((lag_ax, top_lag), (behind_ax, float(top_behind))):
        plots.shade_faults(ax, windows, end)
        leave_room_for_labels(ax, top, windows)
        ax.set_xlim(0, end)
    return plots.save(fig, out)


def _draw_consumers(
    axes: tuple[Any, Any], points: Sequence[LagPoint], ranked: Sequence[LagPoint], end: float
) -> None:
    # A line per consumer on both axes: the worst in colour, named in the legend, worst
    # first; the others grey and named together, one collection per axis (a run that
    # retires processes has thousands, and an artist each would take minutes to draw).
    from matplotlib.collections import LineCollection

    named = {p.process: NAMED_COLOURS[i] for i, p in enumerate(ranked[: len(NAMED_COLOURS)])}
    by_process: dict[Process, list[LagPoint]] = {}
    for p in points:
        by_process.setdefault(p.process, []).append(p)
    lines = {process: _thin(mine, end) for process, mine in by_process.items()}
    others = [lines[pr] for pr in sorted(lines, key=process_order) if pr not in named]
    legend: list[tuple[Any, str]] = []
    if others:
        for ax, series in zip(axes, (1, 2), strict=True):
            grey = LineCollection(
                [list(zip(line[0], line[series], strict=True)) for line in others],
                colors=OTHERS_COLOUR,
                linewidths=0.7,
            )
            ax.add_collection(grey)
            # Dots too: a consumer that polled once has no line.
            ax.scatter(
                [t for line in others for t in line[0]],
                [y for line in others for y in line[series]],
                s=2,
                color=OTHERS_COLOUR,
                linewidths=0,
            )
            if series == 1:
                legend.append((grey, f"other consumers ({len(others)})"))
    for rank, worst in enumerate(ranked[: len(NAMED_COLOURS)]):
        times, lags, behind = lines[worst.process]
        style = {"color": named[worst.process], "lw": 1.1, "marker": ".", "ms": 2}
        (line,) = axes[0].plot(times, lags, zorder=3 + len(named) - rank, **style)
        axes[1].plot(times, behind, zorder=3 + len(named) - rank, **style)
        legend.insert(rank, (line, f"process {worst.process}: worst {worst.lag / 1e9:.2f} s"))
    if legend:
        handles, labels = zip(*legend, strict=True)
        axes[0].legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _lag_title(ranked: Sequence[LagPoint]) -> str:
    if not ranked:
        return "Realtime lag: no ok poll by a consumer that had received a record"
    w = ranked[0]
    return (
        f"Realtime lag of {len(ranked)} consumers: worst {w.lag / 1e9:.2f} s "
        f"(process {w.process}, partition {w.partition}, poll at {w.time / 1e9:.1f} s)"
    )


def _thin(points: Sequence[LagPoint], end: float) -> tuple[list[float], list[float], list[int]]:
    # One consumer's points, at most one per slice of the run: the worst lag in it (and the
    # most offsets behind), so that a spike is never thinned away.
    width = max(end, 1e-9) / BUCKETS
    slices: dict[int, tuple[LagPoint, int]] = {}
    for p in points:
        key = int(p.time / 1e9 / width)
        kept = slices.get(key)
        if kept is None:
            slices[key] = (p, p.behind)
        else:
            slices[key] = (p if p.lag > kept[0].lag else kept[0], max(kept[1], p.behind))
    ordered = [slices[k] for k in sorted(slices)]
    return (
        [p.time / 1e9 for p, _ in ordered],
        [p.lag / 1e9 for p, _ in ordered],
        [behind for _, behind in ordered],
    )


def unseen_plot(queue: dict[str, Any], windows: Sequence[dict[str, Any]], out: Path) -> Path:
    """Takes the queue checker's result (its `unseen_over_time`), fault windows and a file.
    Draws how many acknowledged sends no poll had received yet, over time. Returns the file."""
    import matplotlib.pyplot as plt

    from harness.report import plots  # brings matplotlib (Agg): only when drawing

    series = [(0.0, 0)] + [(t / 1e9, count) for t, count in queue.get("unseen_over_time", [])]
    times, counts = [t for t, _ in series], [c for _, c in series]
    end = max([times[-1]] + [w["stop"] or w["start"] for w in windows] + [1.0])
    fig, ax = plt.subplots(figsize=(11, 4))
    ax.plot(times, counts, color=UNSEEN_COLOUR, lw=1.2, label="acknowledged, not yet polled")
    ax.fill_between(times, counts, color=UNSEEN_COLOUR, alpha=0.25, lw=0)
    peak = max(series, key=lambda point: point[1])
    ax.set_title(
        f"Unseen messages: {counts[-1]:,} at the end, at most {peak[1]:,} (at {peak[0]:.1f} s)"
    )
    ax.set_ylabel("unseen messages")
    ax.set_xlabel("time since the test began (s)")
    plots.shade_faults(ax, windows, end)
    leave_room_for_labels(ax, float(peak[1]), windows)
    ax.set_xlim(0, end)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return plots.save(fig, out)


def leave_room_for_labels(ax: Any, top: float, windows: Sequence[dict[str, Any]]) -> None:
    """Takes an axis, its data's highest value and the fault windows drawn on it. Sets the
    y range so that the fault labels fall clear of the data; ticks only where data can be."""
    top = top or 1.0
    upper = top * (LABEL_ROOM if windows else 1.08)
    lower = -upper * STEP_ROOM if any(w.get("steps") for w in windows) else 0.0
    ax.set_ylim(lower, upper)
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= top * 1.05])
    ax.set_ylim(lower, upper)  # set_yticks may widen the range to its ticks
