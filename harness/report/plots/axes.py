"""The frame every time plot of a run shares: x from 0 to the test's end at the same left
and right edges, the faults as a strip of coloured bands above the data, named in a legend,
and the workload's end as a dashed line with the final phase after it shaded grey.

Every time plot is FIG_WIDTH wide with its data between LEFT and RIGHT, so that shown at
one width in report.html their x axes line up; legends go in the margin right of RIGHT.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from harness.report.plots.colours import fault_colour
from harness.report.plots.images import FIG_WIDTH, SMALL_FONT, save_figure
from history import Event

LEFT, RIGHT = 0.1, 0.74
"""The data area's edges, as fractions of the width, on every time plot: room at the left
for the y axis's numbers and label, at the right for a legend's longest label."""
# Heights in inches, from the top down: the title, the fault legend's rows, the line
# naming a fault's steps, the strip's lanes, the gap above the data; below, the x label.
TITLE_IN, LEGEND_ROW_IN, STEPS_IN, LANE_IN, GAP_IN = 0.4, 0.22, 0.2, 0.17, 0.06
BETWEEN_IN, BOTTOM_IN = 0.2, 0.55
SHADE_ALPHA = 0.08
"""The faint shading of each fault window over the data, under everything drawn there."""
X_LABEL = "time since the test began (s)"
FINAL_SHADE, FINAL_INK = "#000000", "#555555"
"""The final phase's grey over the data (at SHADE_ALPHA) and its line's and label's ink."""
FINAL_WORDS, FINAL_WORDS_BEFORE = (
    " workload ended; final phase \u2192",
    "workload ended; final phase \u2192 ",
)
"""The words at the dashed line, right of it or, when the final phase is narrow, left."""
AFTER_ALPHA = 0.35
"""A fault band's opacity in the strip past the workload's end: still in force until the
heal, but no longer over the workload's ops."""


@dataclass(frozen=True)
class Frame:
    """A time plot's figure, its data axes top down (sharing x), the fault strip above the
    first (None without faults), the test's end (s): the x range is 0 to end, and the
    workload's end (s; None when not known or not before the test's end)."""

    fig: Figure
    axes: list[Axes]
    strip: Axes | None
    end: float
    workload_end: float | None = None


def run_end(events: Sequence[Event], windows: Sequence[dict[str, Any]] = ()) -> float:
    """Takes a history's events and its fault windows. Returns the test's end in seconds
    since it began: its last event, or a window's end if later (at least 1 s)."""
    times = [float(e["time"]) / 1e9 for e in events if isinstance(e.get("time"), int | float)]
    edges = [float(w["stop"] if w.get("stop") is not None else w["start"]) for w in windows]
    return max([1.0, *times, *edges])


def workload_end(results: dict[str, Any]) -> float | None:
    """Takes results.json's body. Returns when the workload stopped invoking ops (s since
    the test began, whose clock starts with the workload): its time limit. What follows
    is the final phase: the ops in flight return, the faults are healed and the final
    reads run. None when the results do not say (a history checked alone) or the
    workload was cut short: no final phase ran, the plots end where it stopped."""
    duration = results.get("duration")
    if not isinstance(duration, dict) or duration.get("complete") is False:
        return None
    planned = duration.get("planned_s")
    return float(planned) if isinstance(planned, int | float) and planned > 0 else None


def time_figure(
    heights: Sequence[float],
    windows: Sequence[dict[str, Any]],
    end: float,
    title: str,
    workload_end: float | None = None,
) -> Frame:
    """Takes the data axes' heights (inches, top down), the fault windows (checkers.faults:
    "fault", "start", "stop" in s, None if never healed, "steps"), the test's end, a title
    and the workload's end (None: not drawn). Returns a Frame: the axes laid out at
    LEFT..RIGHT with x from 0 to end, each fault window shaded faintly up to the
    workload's end, a strip of bands above them (faded past it) and a legend naming them;
    past the workload's end a dashed line and the final phase, shaded grey and named."""
    if workload_end is not None and workload_end >= end:
        workload_end = None  # nothing after it to tell apart
    lanes = _lanes(windows)
    kinds = list(dict.fromkeys(w["fault"] for w in windows))
    handles = [_fault_handle(kind, windows) for kind in kinds]
    steps = step_names(windows)
    columns = _columns([str(h.get_label()) for h in handles])
    legend_in = LEGEND_ROW_IN * math.ceil(len(kinds) / columns)
    strip_in = LANE_IN * (max(lanes, default=-1) + 1)
    top_in = TITLE_IN + legend_in + (STEPS_IN if steps else 0) + strip_in + GAP_IN * bool(kinds)
    height = top_in + sum(heights) + BETWEEN_IN * (len(heights) - 1) + BOTTOM_IN
    fig = plt.figure(figsize=(FIG_WIDTH, height))
    axes: list[Axes] = []
    bottom = height - top_in
    for h in heights:
        bottom -= h
        rect = (LEFT, bottom / height, RIGHT - LEFT, h / height)
        axes.append(fig.add_axes(rect, sharex=axes[0] if axes else None))
        bottom -= BETWEEN_IN
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel(X_LABEL)
    # The shading over the data stops at the workload's end: past it no workload op was
    # invoked, and a band running on read as if the workload had run on under the fault.
    shade_to = end if workload_end is None else workload_end
    for ax in axes:
        for w in windows:
            stop = min(w["stop"] if w.get("stop") is not None else end, shade_to)
            colour = fault_colour(w["fault"])
            if stop > w["start"]:
                ax.axvspan(w["start"], stop, color=colour, alpha=SHADE_ALPHA, lw=0, zorder=0)
    if workload_end is not None:
        _draw_final_phase(axes, workload_end, end)
    fig.text((LEFT + RIGHT) / 2, 1 - 0.08 / height, title, ha="center", va="top", fontsize=12)
    strip = None
    if kinds:
        strip_bottom = (height - top_in + GAP_IN) / height
        strip = fig.add_axes((LEFT, strip_bottom, RIGHT - LEFT, strip_in / height), sharex=axes[0])
        _draw_strip(strip, windows, lanes, end, steps, workload_end)
        legend_bottom = (height - TITLE_IN - legend_in) / height
        fig.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(LEFT, legend_bottom),
            ncol=columns,
            fontsize=SMALL_FONT,
            frameon=False,
            borderaxespad=0,
            borderpad=0.1,
            handlelength=1.5,
            columnspacing=1.5,
        )
        if steps:
            said = ", ".join(f"{n} {name}" for n, name in enumerate(steps, 1))
            fig.text(
                LEFT, legend_bottom - 0.03 / height, f"steps: {said}", va="top", fontsize=SMALL_FONT
            )
    axes[0].set_xlim(0, end)
    return Frame(fig, axes, strip, end, workload_end)


def _draw_final_phase(axes: Sequence[Axes], workload_end: float, end: float) -> None:
    # A dashed line at the workload's end on every data axis, the rest shaded grey, and
    # on the top axis the words, boxed so that data under them does not hide them.
    for ax in axes:
        ax.axvspan(workload_end, end, color=FINAL_SHADE, alpha=SHADE_ALPHA, lw=0, zorder=0)
        ax.axvline(workload_end, color=FINAL_INK, ls="--", lw=1, zorder=1)
    room_after = end - workload_end > 0.3 * end  # else the words go left of the line
    axes[0].text(
        workload_end,
        0.98,
        FINAL_WORDS if room_after else FINAL_WORDS_BEFORE,
        transform=axes[0].get_xaxis_transform(),
        ha="left" if room_after else "right",
        va="top",
        fontsize=SMALL_FONT - 1,
        color=FINAL_INK,
        bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1},
        zorder=5,
        clip_on=True,
    )


def side_legend(ax: Axes, handles: Sequence[Any] | None = None, **style: Any) -> None:
    """Puts ax's legend (its labelled artists, or handles) in the margin right of the data,
    where every time plot has room for it."""
    options: dict[str, Any] = {
        "fontsize": SMALL_FONT,
        "loc": "upper left",
        "bbox_to_anchor": (1.01, 1.0),
    }
    if handles is not None:
        options["handles"] = list(handles)
    ax.legend(borderaxespad=0, **(options | style))


def save(frame: Frame, path: Path) -> Path:
    """Saves a time plot at its laid out size (no tight layout: it would move the edges
    that line the plots up) with x from 0 to the test's end. Returns the file."""
    frame.axes[0].set_xlim(0, frame.end)  # a collection added late may have widened it
    return save_figure(frame.fig, path)


def step_names(windows: Sequence[dict[str, Any]]) -> list[str]:
    """Returns the names of the steps the faults recorded (isr-shrink's), in the order
    first met: the strip numbers each step by its place here."""
    return list(dict.fromkeys(s["step"] for w in windows for s in w.get("steps", ())))


def _lanes(windows: Sequence[dict[str, Any]]) -> list[int]:
    # Each window's lane in the strip: the first whose last window ended before it began,
    # so that faults in force at once are drawn one above the other, not over each other.
    ends: list[float] = []
    lanes = []
    for w in windows:
        free = [i for i, stop in enumerate(ends) if stop <= w["start"]]
        lane = free[0] if free else len(ends)
        if lane == len(ends):
            ends.append(0.0)
        ends[lane] = math.inf if w.get("stop") is None else w["stop"]
        lanes.append(lane)
    return lanes


def _columns(labels: Sequence[str]) -> int:
    # The most legend columns whose widths add up to no more than the data's: matplotlib
    # splits the entries into columns as numpy.array_split does, and a column is as wide
    # as its widest label. At SMALL_FONT a character is about 0.07 in; a handle and the
    # space after it about 0.55 in.
    room = (RIGHT - LEFT) * FIG_WIDTH
    for columns in range(len(labels), 1, -1):
        size, longer = divmod(len(labels), columns)
        widths, first = [], 0
        for c in range(columns):
            last = first + size + (c < longer)
            widths.append(0.55 + 0.07 * max(len(label) for label in labels[first:last]))
            first = last
        if sum(widths) <= room:
            return columns
    return 1


def _fault_handle(kind: str, windows: Sequence[dict[str, Any]]) -> Patch:
    never = any(w["fault"] == kind and w.get("stop") is None for w in windows)
    label = f"{kind} (never healed)" if never else kind
    return Patch(facecolor=fault_colour(kind), edgecolor="none", label=label)


def _draw_strip(
    strip: Axes,
    windows: Sequence[dict[str, Any]],
    lanes: Sequence[int],
    end: float,
    steps: Sequence[str],
    workload_end: float | None,
) -> None:
    count = max(lanes) + 1
    cut = end if workload_end is None else workload_end
    for w, lane in zip(windows, lanes, strict=True):
        stop = w["stop"] if w.get("stop") is not None else end
        colour = fault_colour(w["fault"])
        row = count - 1 - lane  # lane 0 on top
        # In force until healed, in the final phase too, but faded there.
        for left, right, alpha in (
            (w["start"], min(stop, cut), 1.0),
            (max(w["start"], cut), stop, AFTER_ALPHA),
        ):
            if right > left:
                strip.add_patch(
                    Rectangle((left, row + 0.1), right - left, 0.8, color=colour, alpha=alpha)
                )
        ink = _ink(colour)
        last = -math.inf
        for step in w.get("steps", ()):
            strip.vlines(step["time"], row + 0.1, row + 0.9, color=ink, lw=1)
            # A number needs about 2 % of the width; one that would touch the last is left
            # out (the tick stays): two steps a moment apart share a place.
            if step["time"] - last > 0.025 * end:
                number = steps.index(step["step"]) + 1
                strip.text(
                    step["time"],
                    row + 0.5,
                    f" {number}",
                    color=ink,
                    fontsize=SMALL_FONT - 1,
                    va="center",
                    ha="left",
                    clip_on=True,
                )
                last = step["time"]
    if workload_end is not None:
        strip.axvline(workload_end, color=FINAL_INK, ls="--", lw=1)
    strip.set_ylim(0, count)
    strip.set_yticks([])
    strip.tick_params(axis="x", bottom=False, labelbottom=False)
    for spine in strip.spines.values():
        spine.set_color("#cccccc")


def _ink(colour: str) -> str:
    # Black on a light band, white on a dark one (relative luminance, roughly).
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"
