"""The plots' files: the one image format every plot of a run and of `analyze` is written
in (IMAGE), each plot's file name in it, and the one function that writes a figure.

SVG, not PNG: a vector image stays sharp at whatever width the page gives it, on any
screen and at any zoom (its text is drawn as outlines, so no font is needed). Measured
on four real run folders (2026-11-28, load 9-27), the same plots took 35 to 40 % less
room as SVG than as PNG at twice the density: 1,473 kB against 2,323 kB (a queue run
with loss, 14 plots), 407 against 633 and 369 against 547 (queue runs, 4 plots), 212
against 322 (a kv run, 3 plots). Axes that draw more than RASTER_ABOVE points have
them embedded as a picture inside the SVG, drawn at RASTER_DPI, so that the file stays
small at any op count.
Nothing here imports matplotlib: the report's pages read the names alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

IMAGE = ".svg"
"""The suffix of every plot file; matplotlib writes the format the suffix names."""
RASTER_ABOVE = 1000
"""Axes whose lines and scatters draw more points than this in all have them drawn as a
picture inside the vector image (the axes, ticks, text and fault bands stay vector)."""
RASTER_DPI = 200
"""The density of such a picture (dots per inch of the figure)."""
FIG_WIDTH = 8.5
"""Every plot's width (inches): 816 px in a browser, shown at that width on a wide page
and at 736 px (0.9 of it) on a page 800 px wide, where text of SMALL_FONT is 11 px high."""
SMALL_FONT = 9
"""The smallest text of any plot (pt): legends, the fault steps, the numbers in a band."""

LATENCY_FILE = f"latency{IMAGE}"
RATE_FILE = f"rate{IMAGE}"
LOST_ACKS_FILE = f"lost-acks{IMAGE}"
METADATA_FILE = f"metadata{IMAGE}"
LAG_FILE = f"realtime-lag{IMAGE}"
UNSEEN_FILE = f"unseen{IMAGE}"
GROUPS_FILE = f"groups{IMAGE}"
SHARE_FILE = f"share-deliveries{IMAGE}"
RUN_PLOTS = (LATENCY_FILE, RATE_FILE, LOST_ACKS_FILE, METADATA_FILE)
"""The run's plots report.html shows under Plots, in order."""
OFFSETS_GLOB = f"offsets-*{IMAGE}"
TREND_PLOTS = (f"invalid-rate{IMAGE}", f"lost-writes{IMAGE}", f"latency-*{IMAGE}")
"""The trend plots `analyze` draws, in the order the index shows them; the last is one
per workload."""


def offsets_file(partition: Any) -> str:
    """Returns the name of a partition's offsets plot, e.g. offsets-3.svg."""
    return f"offsets-{partition}{IMAGE}"


def save_figure(fig: Any, path: Path, *, tight: bool = False) -> Path:
    """Takes a matplotlib figure and a file named in IMAGE. Writes the figure there (laid
    out tightly when asked; a time plot never is, it would move the edges that line the
    plots up), closes it and returns the file. The file holds no date, so the same plot
    drawn twice is the same file."""
    import matplotlib
    import matplotlib.pyplot as plt

    if tight:
        fig.tight_layout()
    for ax in fig.axes:
        dense = [artist for artist in ax.get_children() if _points(artist)]
        if sum(_points(artist) for artist in dense) > RASTER_ABOVE:
            for artist in dense:
                artist.set_rasterized(True)
    # A fixed salt for the ids the SVG writer makes (random otherwise).
    with matplotlib.rc_context({"svg.hashsalt": path.name}):
        fig.savefig(path, dpi=RASTER_DPI, metadata={"Date": None})
    plt.close(fig)
    return path


def _points(artist: Any) -> int:
    # How many points a data artist draws: a line's, a scatter's, a collection of lines'.
    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.lines import Line2D

    if isinstance(artist, Line2D):
        return int(np.size(artist.get_xdata()))
    if isinstance(artist, LineCollection):
        return sum(len(segment) for segment in artist.get_segments())
    if isinstance(artist, PathCollection):
        return int(np.shape(artist.get_offsets())[0])
    return 0
