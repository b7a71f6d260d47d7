"""metadata.png: which node led the cluster's metadata over the run (the KRaft quorum's
leader, or the ZooKeeper-mode controller), voters that stopped fetching, and the faults.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.report.plots import save, shade_faults  # sets matplotlib's Agg backend

NONE = "none"
LEADER_COLOUR, BEHIND_COLOUR, NONE_COLOUR = "#2ca02c", "#ff7f0e", "#d62728"


def plot_rows(samples: Sequence[dict[str, Any]]) -> list[str]:
    """Returns the plot's rows, bottom up: every node that led or fell behind, then none."""
    nodes = {s["leader"] for s in samples if s.get("leader")}
    return [*sorted(nodes | {n for s in samples for n in s.get("behind", ())}), NONE]


def metadata_plot(
    samples: Sequence[dict[str, Any]], windows: Sequence[dict[str, Any]], path: Path
) -> Path:
    """Takes metadata.jsonl's samples and the fault windows. Draws a row per node: thick
    where it led, thin where it was a voter not fetching, a row `none` where nobody led;
    the epoch is written where it changed. Returns the file written."""
    import matplotlib.pyplot as plt

    times = [s["time"] / 1e9 for s in samples]
    ends = [*times[1:], times[-1] + 1.0] if times else []
    rows = {n: i for i, n in enumerate(plot_rows(samples))}
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.4 * len(rows)))
    epoch = None
    for s, start, end in zip(samples, times, ends, strict=True):
        leader = s.get("leader") or NONE
        colour = NONE_COLOUR if leader == NONE else LEADER_COLOUR
        ax.hlines(rows[leader], start, end, color=colour, lw=6)
        for node in s.get("behind", ()):
            ax.hlines(rows[node], start, end, color=BEHIND_COLOUR, lw=2)
        if s.get("epoch") is not None and s["epoch"] != epoch:
            epoch = s["epoch"]
            ax.text(start, rows[leader] + 0.25, f"e{epoch}", fontsize=6, va="bottom")
    shade_faults(ax, windows, ends[-1] if ends else 1.0)
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(-0.6, len(rows) - 0.2)
    ax.set_xlabel("time since the test began (s)")
    ax.set_title("Who led the metadata (green), voters not fetching (orange), nobody leading (red)")
    return save(fig, path)
