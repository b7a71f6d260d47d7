"""The queue workload's plots: lost-acks.svg (acknowledged sends over time, the lost ones
marked, in the frame of every time plot) and offsets-<partition>.svg for each partition
with an anomaly (the message at each offset as each observer saw it, zoomed around the
anomalies). matplotlib is imported only to draw.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from checkers.queue import (
    DRAIN,
    POLL,
    SEND,
    QueueHistory,
    Send,
    inconsistent_offset_cases,
    index_observations,
    observations,
    observed_batches,
)
from harness.report.plots.images import FIG_WIDTH, SMALL_FONT

ACKED_COLOUR, LOST_COLOUR = "#7f7f7f", "#d62728"
# How each observer is drawn in the offsets plot: colour, marker, size.
OBSERVER_STYLE = {
    SEND: ("#1f77b4", "o", 14, "send acknowledged"),
    POLL: ("#2ca02c", "+", 22, "poll received"),
    DRAIN: ("#000000", "x", 12, "final drain held"),
}


def lost_acks_plot(
    history: QueueHistory,
    result: dict[str, Any],
    fault_windows: Sequence[dict[str, Any]],
    out_path: Path,
    end: float | None = None,
    workload_end: float | None = None,
) -> Path:
    """Takes a queue history's records, the queue checker's result on it, the run's fault
    windows (checkers.faults: "fault", "start", "stop" in s since the test began, stop None
    if never healed, and the steps of a fault made of steps), a file, the test's end (s;
    None: the last send's or window's) and the workload's end (axes.workload_end). Draws
    acknowledged and lost sends per second above, and each acknowledged send by partition
    below, the lost ones marked. Returns the file."""
    from harness.report.plots import axes as time_axes  # brings matplotlib (Agg): only when drawing

    acked = [s for s in history.sends if s.acked is not None]
    lost = set(result["lost_messages"])
    lost_sends = [s for s in acked if s.value in lost]
    if end is None:
        edges = [w["stop"] or 0 for w in fault_windows]
        end = max([_seconds(s) for s in acked] + edges + [1.0])
    fraction = 100 * result["lost_fraction"]
    share = f"{fraction:.1f}%" if fraction >= 0.1 or not fraction else f"{fraction:.2g}%"
    title = f"{result['acknowledged']:,} acknowledged, {result['lost']:,} lost ({share})"
    frame = time_axes.time_figure([1.8, 2.4], fault_windows, end, title, workload_end)
    rate, where = frame.axes
    _draw_rates(rate, acked, lost_sends, end)
    _draw_by_partition(where, acked, lost_sends)
    return time_axes.save(frame, out_path)


def _draw_rates(ax: Any, acked: list[Send], lost: list[Send], end: float) -> None:
    from harness.report.plots.axes import side_legend

    buckets = int(end) + 1
    for sends, colour, label in (
        (acked, ACKED_COLOUR, "acknowledged"),
        (lost, LOST_COLOUR, "lost"),
    ):
        counts = [0] * buckets
        for s in sends:
            counts[min(buckets - 1, int(_seconds(s)))] += 1
        ax.plot(range(buckets), counts, color=colour, lw=1.2, label=f"{label} ({len(sends):,})")
    ax.set_ylabel("sends per second")
    side_legend(ax)


def _draw_by_partition(ax: Any, acked: list[Send], lost: list[Send]) -> None:
    from harness.report.plots.axes import side_legend

    for sends, colour, marker, size, label in (
        (acked, ACKED_COLOUR, "|", 4, "acknowledged"),
        (lost, LOST_COLOUR, "x", 18, "lost"),
    ):
        ax.scatter(
            [_seconds(s) for s in sends],
            [s.partition for s in sends],
            s=size,
            marker=marker,
            color=colour,
            linewidths=0.8,
            label=label,
        )
    ax.set_ylabel("partition")
    ax.set_xlabel("time acknowledged (s since the test began)")
    ax.yaxis.get_major_locator().set_params(integer=True)
    side_legend(ax)


ZOOM_CONTEXT = 10
"""The fewest offsets shown either side of a partition's anomalies (a quarter of their
span when that is more): enough to see the log run on as it should around them."""


def anomaly_offsets(history: QueueHistory, result: dict[str, Any]) -> dict[Any, list[int]]:
    """Takes a queue history's records and the queue checker's result on it. Returns, for
    each partition with an anomaly that counts against the run, the offsets involved: every
    lost send's, and those the kept cases of the other invalidating kinds name."""
    found: dict[Any, list[int]] = {}
    kinds = result.get("kinds", {})
    for kind, entry in kinds.items():
        if entry.get("invalidating") and kind != "lost-write":
            for case in entry.get("cases", []):
                for partition, offset in case_offsets(case):
                    found.setdefault(partition, []).append(offset)
    lost = set(result.get("lost_messages") or ())
    if lost and kinds.get("lost-write", {}).get("invalidating", True):
        for s in history.sends:
            if s.value in lost and s.offset is not None and s.acked is not None:
                found.setdefault(s.partition, []).append(s.offset)
    return {p: sorted(set(offsets)) for p, offsets in found.items()}


def case_offsets(case: Any, partition: Any = None) -> Iterator[tuple[Any, int]]:
    """Takes a queue or transaction case (any of checkers.queue.checker's and checkers.txn.reads's
    shapes). Yields each (partition, offset) it names, its steps' and observations' too."""
    if isinstance(case, list):
        for item in case:
            yield from case_offsets(item, partition)
        return
    if not isinstance(case, dict):
        return
    partition = case.get("partition", partition)
    for key in ("offset", "prior_offset"):
        if isinstance(case.get(key), int) and partition is not None:
            yield partition, case[key]
    for key in ("offsets", "skipped"):
        for item in case.get(key) or ():
            if isinstance(item, int) and partition is not None:
                yield partition, item
    for pair in case.get("positions") or ():
        if isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[1], int):
            yield pair[0], pair[1]
    for key in ("observed", "steps", "skipped"):
        if isinstance(case.get(key), list):
            yield from case_offsets([i for i in case[key] if isinstance(i, dict)], partition)


def zoom(offsets: Sequence[int]) -> tuple[int, int]:
    """Takes a partition's anomalous offsets. Returns the first and last offset to draw."""
    low, high = min(offsets), max(offsets)
    context = max(ZOOM_CONTEXT, (high - low) // 4)
    return max(0, low - context), high + context


def offsets_plot(
    history: QueueHistory,
    result: dict[str, Any],
    partition: int,
    out_path: Path,
    shown: tuple[int, int] | None = None,
) -> Path:
    """Takes a queue history's records, the queue checker's result on it, a partition, a
    file and the offsets to draw (first, last; None: all). Draws the message at each of
    those offsets as each observer (send acknowledgement, poll, final drain) saw it,
    marking offsets seen holding different messages and the acknowledged sends that were
    lost. Returns the file written."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from harness.report.plots import perf as plots  # brings matplotlib (Agg): only when drawing

    everything = [o for o in observations(history) if o[0] == partition]
    low, high = shown if shown is not None else (-1, float("inf"))
    if shown is not None and everything:
        # Context past the partition's last offset would be empty: stop at the log's end.
        shown = (low, int(min(high, max(o[1] for o in everything) + 1)))
        high = shown[1]
    mine = [o for o in everything if low <= o[1] <= high]
    fig, ax = plt.subplots(figsize=(FIG_WIDTH, 5))
    for by, (colour, marker, size, label) in OBSERVER_STYLE.items():
        seen = sorted({(o[1], o[2]) for o in mine if o[3] == by and isinstance(o[2], int)})
        if seen:
            _mark(
                ax,
                seen,
                s=size,
                marker=marker,
                color=colour,
                linewidths=0.8,
                alpha=0.7,
                label=f"{label} ({len(seen):,})",
            )
    batches = (b for b in observed_batches(history) if b[0] == partition)
    conflicts = [
        c
        for c in inconsistent_offset_cases(index_observations(batches))
        if low <= c["offset"] <= high
    ]
    for case in conflicts:
        ax.axvline(case["offset"], color=LOST_COLOUR, lw=0.8, alpha=0.4)
    held = [(c["offset"], v) for c in conflicts for v in c["values"] if isinstance(v, int)]
    if held:
        _mark(
            ax,
            held,
            s=50,
            marker="D",
            facecolors="none",
            edgecolors=LOST_COLOUR,
            label=f"messages at an inconsistent offset ({len(conflicts):,} offsets)",
        )
    lost = set(result["lost_messages"])
    gone = [
        (s.offset, s.value)
        for s in history.sends
        if s.partition == partition
        and s.offset is not None
        and s.value in lost
        and low <= s.offset <= high
    ]
    if gone:
        _mark(
            ax,
            gone,
            s=70,
            marker="o",
            facecolors="none",
            edgecolors=LOST_COLOUR,
            linewidths=1.2,
            label=f"lost acknowledged send ({len(gone):,})",
        )
    ax.set_xlabel("offset")
    ax.set_ylabel("message")
    where = "" if shown is None else f"\noffsets {shown[0]} to {shown[1]}, around its anomalies"
    ax.set_title(f"Partition {partition}: the message at each offset, by observer{where}")
    if shown is not None:
        ax.set_xlim(shown[0] - 0.5, shown[1] + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if mine:  # below the data, which keeps the plot's width
        ax.legend(fontsize=SMALL_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    return plots.save(fig, out_path)


def _mark(ax: Any, points: Sequence[tuple[int, Any]], **style: Any) -> None:
    offsets, values = zip(*points, strict=True)
    ax.scatter(offsets, values, **style)


def _seconds(s: Send) -> float:
    return (s.acked or 0) / 1e9
