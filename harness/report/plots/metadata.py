"""metadata.svg: which node led the cluster's metadata over the run (the KRaft quorum's
leader, or the ZooKeeper-mode controller), voters that stopped fetching, and the faults.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.report.plots import axes as time_axes  # sets matplotlib's Agg backend
from harness.report.plots.images import SMALL_FONT

NONE = "none"
LEADER_COLOUR, BEHIND_COLOUR, NONE_COLOUR = "#2ca02c", "#ff7f0e", "#d62728"


def plot_rows(samples: Sequence[dict[str, Any]]) -> list[str]:
    """Returns the plot's rows, bottom up: every node that led or fell behind, then none."""
    nodes = {s["leader"] for s in samples if s.get("leader")}
    return [*sorted(nodes | {n for s in samples for n in s.get("behind", ())}), NONE]


def steady_leader(samples: Sequence[dict[str, Any]]) -> str | None:
    """Returns the node that led the metadata in every sample when none fell behind, so a
    plot would show one flat line (say it in words instead); None when there is more to
    show, or nothing."""
    leaders = {s.get("leader") for s in samples}
    if len(leaders) != 1 or any(s.get("behind") for s in samples):
        return None
    (leader,) = leaders
    return str(leader) if leader else None


def metadata_plot(
    samples: Sequence[dict[str, Any]],
    windows: Sequence[dict[str, Any]],
    path: Path,
    end: float | None = None,
    workload_end: float | None = None,
) -> Path:
    """Takes metadata.jsonl's samples, the fault windows, the test's end (s; None: a second
    after the last sample) and the workload's end (axes.workload_end). Draws a row per node:
    thick where it led, thin where it was a voter not fetching, a row `none` where nobody
    led; the epoch is written where it changed. Returns the file written."""
    times = [s["time"] / 1e9 for s in samples]
    ends = [*times[1:], times[-1] + 1.0] if times else []
    rows = {n: i for i, n in enumerate(plot_rows(samples))}
    if end is None:
        end = max([*ends[-1:], *(w["stop"] or w["start"] for w in windows), 1.0])
    title = "Who led the metadata (green), voters not fetching (orange), nobody leading (red)"
    frame = time_axes.time_figure([0.3 + 0.4 * len(rows)], windows, end, title, workload_end)
    (ax,) = frame.axes
    epoch = None
    for s, start, stop in zip(samples, times, ends, strict=True):
        leader = s.get("leader") or NONE
        colour = NONE_COLOUR if leader == NONE else LEADER_COLOUR
        ax.hlines(rows[leader], start, min(stop, end), color=colour, lw=6)
        for node in s.get("behind", ()):
            ax.hlines(rows[node], start, min(stop, end), color=BEHIND_COLOUR, lw=2)
        if s.get("epoch") is not None and s["epoch"] != epoch:
            epoch = s["epoch"]
            ax.text(start, rows[leader] + 0.25, f"e{epoch}", fontsize=SMALL_FONT - 1, va="bottom")
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(-0.6, len(rows) - 0.2)
    return time_axes.save(frame, path)
