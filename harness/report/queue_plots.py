"""The queue workload's plots: lost-acks.png (acknowledged sends over time, the lost ones
marked, fault windows shaded) and offsets-<partition>.png (the message at each offset as
each observer saw it, inconsistencies marked). matplotlib is imported only to draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkers.queue_cases import inconsistent_offset_cases, index_observations
from checkers.queue_history import (
    DRAIN,
    POLL,
    SEND,
    Send,
    observations,
    observed_batches,
    read_queue_history,
)
from history import Event

ACKED_COLOUR, LOST_COLOUR = "#7f7f7f", "#d62728"
# How each observer is drawn in the offsets plot: colour, marker, size.
OBSERVER_STYLE = {
    SEND: ("#1f77b4", "o", 14, "send acknowledged"),
    POLL: ("#2ca02c", "+", 22, "poll received"),
    DRAIN: ("#000000", "x", 12, "final drain held"),
}


def lost_acks_plot(
    events: Sequence[Event],
    result: dict[str, Any],
    fault_windows: Sequence[dict[str, Any]],
    out_path: Path,
) -> Path:
    """Takes a queue history's events, the queue checker's result on it, the run's fault
    windows (checkers.faults: "fault", "start", "stop" in s since the test began, stop
    None if never healed, and the steps of a fault made of steps) and a file. Draws
    acknowledged and lost sends per second above, and each acknowledged send by
    partition below, the lost ones marked, with the faults shaded. Returns the file."""
    import matplotlib.pyplot as plt

    from harness.report import plots  # brings matplotlib (Agg): only when drawing

    acked = [s for s in read_queue_history(events).sends if s.acked is not None]
    lost = set(result["lost_messages"])
    lost_sends = [s for s in acked if s.value in lost]
    end = max([_seconds(s) for s in acked] + [w["stop"] or 0 for w in fault_windows] + [1.0])
    fig, (rate, where) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True, height_ratios=(1, 1.4))
    _draw_rates(rate, acked, lost_sends, end)
    fraction = 100 * result["lost_fraction"]
    rate.set_title(
        f"{result['acknowledged']:,} acknowledged, {result['lost']:,} lost ({fraction:.1f}%)"
    )
    _draw_by_partition(where, acked, lost_sends)
    for ax in (rate, where):
        plots.shade_faults(ax, fault_windows, end)
    return plots.save(fig, out_path)


def _draw_rates(ax: Any, acked: list[Send], lost: list[Send], end: float) -> None:
    buckets = int(end) + 1
    for sends, colour, label in (
        (acked, ACKED_COLOUR, "acknowledged"),
        (lost, LOST_COLOUR, "lost"),
    ):
        counts = [0] * buckets
        for s in sends:
            counts[int(_seconds(s))] += 1
        ax.plot(range(buckets), counts, color=colour, lw=1.2, label=f"{label} ({len(sends):,})")
    ax.set_ylabel("sends per second")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _draw_by_partition(ax: Any, acked: list[Send], lost: list[Send]) -> None:
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
            rasterized=len(sends) > 5000,
            label=label,
        )
    ax.set_ylabel("partition")
    ax.set_xlabel("time acknowledged (s since the test began)")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def offsets_plot(
    events: Sequence[Event], result: dict[str, Any], partition: int, out_path: Path
) -> Path:
    """Takes a queue history's events, the queue checker's result on it, a partition and a
    file. Draws the message at each offset of the partition as each observer (send
    acknowledgement, poll, final drain) saw it, marking offsets seen holding different
    messages and the acknowledged sends that were lost. Returns the file written."""
    import matplotlib.pyplot as plt

    from harness.report import plots  # brings matplotlib (Agg): only when drawing

    history = read_queue_history(events)
    mine = [o for o in observations(history) if o[0] == partition]
    fig, ax = plt.subplots(figsize=(11, 5.5))
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
                rasterized=len(seen) > 5000,
            )
    batches = (b for b in observed_batches(history) if b[0] == partition)
    conflicts = inconsistent_offset_cases(index_observations(batches))
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
        if s.partition == partition and s.offset is not None and s.value in lost
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
    ax.set_title(f"Partition {partition}: the message at each offset, by observer")
    if mine:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return plots.save(fig, out_path)


def _mark(ax: Any, points: Sequence[tuple[int, Any]], **style: Any) -> None:
    offsets, values = zip(*points, strict=True)
    ax.scatter(offsets, values, **style)


def _seconds(s: Send) -> float:
    return (s.acked or 0) / 1e9
