"""The queue workload's plots of consumers falling behind, the two Jepsen's Kafka analysis
draws: realtime-lag.svg (each consumer's lag over time, as checkers/queue/lag.py defines
it) and unseen.svg (acknowledged sends no poll had received yet, over time), in the frame
of every time plot (time_axes). matplotlib is imported only to draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkers.queue import LagPoint, Process, process_order, worst_lags
from harness.report.plots.images import SMALL_FONT

UNSEEN_COLOUR = "#ff7f0e"  # the colour of "not known yet" (info) in every plot
OTHERS_COLOUR = "#c7c7c7"
# The consumers drawn in colour and named, worst first; the rest are drawn grey.
# Dark2's colours: deeper than the pale fault shading, and none red, which means lost.
NAMED_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")
BUCKETS = 1500
"""At most this many points per consumer: the worst of each slice of the run."""
HEADROOM = 1.08
"""The y range over the data's highest value."""


def draw_lag(
    points: Sequence[LagPoint],
    windows: Sequence[dict[str, Any]],
    out: Path,
    end: float | None = None,
    workload_end: float | None = None,
) -> Path:
    """Takes LagPoints, fault windows, a file, the test's end (s; None: the last point's or
    window's) and the workload's end (axes.workload_end). Draws lag (s) above and offsets
    behind below, a line per consumer, the worst ones named. Returns the file written."""
    from matplotlib.ticker import MaxNLocator

    from harness.report.plots import axes as time_axes  # brings matplotlib (Agg): only when drawing

    ranked = sorted(worst_lags(points).values(), key=lambda p: -p.lag)
    if end is None:
        edges = [w["stop"] or w["start"] for w in windows]
        end = max([p.time / 1e9 for p in points] + edges + [1.0])
    frame = time_axes.time_figure([2.2, 2.2], windows, end, _lag_title(ranked), workload_end)
    lag_ax, behind_ax = frame.axes
    _draw_consumers((lag_ax, behind_ax), points, ranked, end)
    lag_ax.set_ylabel("lag (s)")
    behind_ax.set_ylabel("offsets behind the newest known")
    behind_ax.set_xlabel("poll invoked (s since the test began)")
    behind_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    top_lag = max((p.lag / 1e9 for p in points), default=0.0)
    top_behind = max((p.behind for p in points), default=0)
    for ax, top in ((lag_ax, top_lag), (behind_ax, float(top_behind))):
        ax.set_ylim(0, (top or 1.0) * HEADROOM)
    return time_axes.save(frame, out)


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
        axes[0].legend(
            handles,
            labels,
            fontsize=SMALL_FONT,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0,
        )


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


def unseen_plot(
    queue: dict[str, Any],
    windows: Sequence[dict[str, Any]],
    out: Path,
    end: float | None = None,
    workload_end: float | None = None,
) -> Path:
    """Takes the queue checker's result (its `unseen_over_time`), fault windows, a file, the
    test's end (s; None: the last count's or window's) and the workload's end. Draws how
    many acknowledged sends no poll had received yet, over time. Returns the file."""
    from harness.report.plots import axes as time_axes  # brings matplotlib (Agg): only when drawing

    series = [(0.0, 0)] + [(t / 1e9, count) for t, count in queue.get("unseen_over_time", [])]
    times, counts = [t for t, _ in series], [c for _, c in series]
    if end is None:
        end = max([times[-1]] + [w["stop"] or w["start"] for w in windows] + [1.0])
    peak = max(series, key=lambda point: point[1])
    title = f"Unseen messages: {counts[-1]:,} at the end, at most {peak[1]:,} (at {peak[0]:.1f} s)"
    frame = time_axes.time_figure([2.4], windows, end, title, workload_end)
    (ax,) = frame.axes
    ax.plot(times, counts, color=UNSEEN_COLOUR, lw=1.2, label="not yet polled")
    ax.fill_between(times, counts, color=UNSEEN_COLOUR, alpha=0.25, lw=0)
    ax.set_ylabel("unseen messages")
    ax.set_ylim(0, (peak[1] or 1) * HEADROOM)
    time_axes.side_legend(ax)
    return time_axes.save(frame, out)
