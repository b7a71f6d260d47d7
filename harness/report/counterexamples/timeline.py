"""Draws each linearizability counterexample as a small still timeline beside the
interactive viewer of them all (viewer.py), for a run's report, which shows the stills.

Both on compressed time, a lane per process. The still shows the ops, in the image format
of every plot (plots/images.py: SVG, sharp at any width); the viewer (one self-contained
HTML file) adds the prefix's linearization, states on hover, the faults.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from harness.report.counterexamples.layout import BOX_H, NAME_W, PAD, layout
from harness.report.counterexamples.viewer import file_stem, invalid, title, write_viewer
from harness.report.plots.images import IMAGE, save_figure

COLOURS = {"failing": "#d62728", "prefix": "#1f77b4", "concurrent": "#7f7f7f"}
PX_PER_INCH = 100  # the still is drawn at the viewer's pixel layout, one px per px
LABEL_PT = 8.6  # the viewer's 12 px monospace labels, at PX_PER_INCH


PREFIX_SHOWN = 6
"""The prefix's last ops the still draws: enough context; the viewer shows the rest."""


def _recent(failure: dict[str, Any]) -> dict[str, Any]:
    """Returns the failure with only the last PREFIX_SHOWN ops of its prefix (and their
    states, kept aligned with them)."""
    tail = failure.get("longest_prefix", [])
    states = failure.get("prefix_states") or []
    kept = states[-PREFIX_SHOWN:] if len(states) == len(tail) else []
    return failure | {"longest_prefix": tail[-PREFIX_SHOWN:], "prefix_states": kept}


def still_file(key: Any, history: str | None = None) -> str:
    """Returns the name of a key's still counterexample (beside the viewer, named after
    the history too when given), e.g. counterexample-0-5feceb66ff.svg."""
    return f"{file_stem(key, history)}{IMAGE}"


def draw_still(failure: dict[str, Any], path: Path) -> Path:
    """Takes a failure report. Writes its timeline at `path` (a file named in IMAGE) on
    the viewer's compressed time (gaps squeezed, order kept, every label inside its box)
    and returns the path: the failing op red, the prefix's ops blue, the others grey."""
    drawn = layout(_recent(failure), ())
    width, height = drawn["width"] + NAME_W / 2, drawn["height"] + 40
    fig = plt.figure(figsize=(width / PX_PER_INCH, height / PX_PER_INCH), dpi=PX_PER_INCH)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # y grows downwards, as in the viewer's layout
    ax.axis("off")
    ax.text(PAD, 14, title(failure), fontsize=LABEL_PT + 1, va="center")
    shift = 26  # the title's row
    for lane in drawn["lanes"]:
        ax.text(PAD, lane["y"] + shift, lane["name"], fontsize=LABEL_PT, va="center")
    crashed = False
    for op in drawn["ops"]:
        open_ = op["ret_s"] is None
        crashed |= open_
        ax.add_patch(
            Rectangle(
                (op["x0"], op["y"] + shift),
                max(op["x1"] - op["x0"], 2),
                BOX_H,
                facecolor=COLOURS[op["role"]],
                alpha=0.45 if open_ else 0.85,
                hatch="//" if open_ else None,
                edgecolor=COLOURS[op["role"]],
            )
        )
        ax.text(
            op["x0"] + PAD,
            op["y"] + shift + BOX_H / 2,
            op["label"],
            fontsize=LABEL_PT,
            family="monospace",
            va="center",
            color="white" if not open_ else "black",
        )
    axis_y = drawn["axis_y"] + shift
    ax.plot([NAME_W, drawn["width"]], [axis_y, axis_y], color="black", linewidth=0.8)
    for tick in drawn["ticks"]:
        ax.plot([tick["x"], tick["x"]], [axis_y, axis_y + 4], color="black", linewidth=0.8)
        if tick["label"]:
            ax.text(tick["x"], axis_y + 14, tick["label"], fontsize=LABEL_PT - 1, ha="center")
    said = drawn["axis_caption"]
    if crashed:
        said += "; hatched: crashed, may take effect later or never"
    ax.text(NAME_W, axis_y + 30, said, fontsize=LABEL_PT - 1)
    return save_figure(fig, path)


def render_counterexamples(
    failures: Sequence[dict[str, Any]],
    out_dir: Path,
    history: str | None = None,
    windows: Sequence[dict[str, Any]] = (),
) -> dict[str, list[Path]]:
    """Takes a linearizability result's failure reports, a folder, the history's file name
    when drawings of other histories may share the folder, and the run's fault windows.
    Writes a still timeline per invalid key (named still_file(key, history)) and the one
    interactive viewer of them all there. Returns each invalid key's drawings, by the
    key's text: its still, then the viewer (viewer.key_anchor opens it on the key)."""
    found = invalid(failures)
    out_dir.mkdir(parents=True, exist_ok=True)
    viewer = write_viewer(found, out_dir, history, windows)
    return {
        str(f["key"]): [draw_still(f, out_dir / still_file(f["key"], history)), *viewer]
        for f in found
    }
