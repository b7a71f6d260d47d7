"""Draws each linearizability counterexample as a small still timeline beside the
interactive viewer of them all (viewer.py), for a run's report, which shows the stills.

Both on compressed time, a lane per process. The still shows the ops, in the image format
of every plot (plots/images.py: SVG, sharp at any width); the viewer (one self-contained
HTML file) adds the prefix's linearization, states on hover, the faults.

Each still has a narrow twin for pages under 60em wide (report.html picks it there): the
ops nearest the failing one that fit NARROW_PX, title and caption wrapped. Shrinking the
full still to fit 800 px made its 12 px labels 7 px; a sideways scroll hid the failing op.
"""

from __future__ import annotations

import textwrap
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
NARROW_PX = 736
"""The narrow still's width at most: a page 800 px wide less report.html's 2em margins."""
TITLE_CHAR_PX = 7.4  # of the title's proportional glyphs, an upper bound at LABEL_PT + 1


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


def narrow_file(still: Path) -> Path:
    """Takes a still's path. Returns its narrow twin's, beside it (…-narrow.svg)."""
    return still.with_name(f"{still.stem}-narrow{still.suffix}")


def _nearest(failure: dict[str, Any], count: int) -> dict[str, Any]:
    """Returns the failure with only the `count` ops nearest the failing op's call among
    its concurrent ops and its prefix (the prefix's states kept aligned)."""
    call = failure["op"]["call"]
    others = {o["index"]: o for o in [*failure.get("concurrent", []), *failure["longest_prefix"]]}
    others.pop(failure["op"]["index"], None)
    near = sorted(others.values(), key=lambda o: abs(o["call"] - call))[:count]
    kept = {o["index"] for o in near}
    prefix, states = failure["longest_prefix"], failure["prefix_states"]
    pairs = zip(prefix, states, strict=True) if len(states) == len(prefix) else ()
    return failure | {
        "concurrent": [o for o in failure.get("concurrent", []) if o["index"] in kept],
        "longest_prefix": [o for o in prefix if o["index"] in kept],
        "prefix_states": [s for o, s in pairs if o["index"] in kept],
    }


def _narrowed(failure: dict[str, Any]) -> dict[str, Any]:
    """Returns the failure with the most ops nearest the failing one whose still is at
    most NARROW_PX wide (the failing op alone at least)."""
    recent = _recent(failure)
    count = len(recent.get("concurrent", [])) + len(recent["longest_prefix"])
    while count > 0 and _still_px(layout(_nearest(recent, count), ())) > NARROW_PX:
        count -= 1
    return _nearest(recent, count)


def _still_px(drawn: dict[str, Any]) -> float:
    return float(drawn["width"] + NAME_W / 2)


def draw_still(failure: dict[str, Any], path: Path, narrow: bool = False) -> Path:
    """Takes a failure report. Writes its timeline at `path` (a file named in IMAGE) on
    the viewer's compressed time (gaps squeezed, order kept, every label inside its box)
    and returns the path: the failing op red, the prefix's ops blue, the others grey.
    narrow: only the ops nearest the failing one that fit NARROW_PX, the text wrapped."""
    shown = _narrowed(failure) if narrow else _recent(failure)
    drawn = layout(shown, ())
    width = max(_still_px(drawn), NARROW_PX) if narrow else _still_px(drawn)
    chars = int((width - 2 * PAD) / TITLE_CHAR_PX) if narrow else 10_000
    heading = textwrap.wrap(title(failure), chars) or [""]
    said = drawn["axis_caption"]
    if narrow:
        near = drawn["shown"] - 1
        said += f"; the failing op and the {near} nearest it (the viewer has every op)"
    if any(op["ret_s"] is None for op in drawn["ops"]):
        said += "; hatched: crashed, may take effect later or never"
    caption = textwrap.wrap(said, chars) or [""]
    shift = 26 + 16 * (len(heading) - 1)  # the title's rows
    height = drawn["height"] + 40 + shift - 26 + 14 * (len(caption) - 1) - (20 if narrow else 0)
    fig = plt.figure(figsize=(width / PX_PER_INCH, height / PX_PER_INCH), dpi=PX_PER_INCH)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # y grows downwards, as in the viewer's layout
    ax.axis("off")
    if len(heading) == 1:
        ax.text(PAD, 14, heading[0], fontsize=LABEL_PT + 1, va="center")
    else:
        ax.text(PAD, 6, "\n".join(heading), fontsize=LABEL_PT + 1, va="top", linespacing=1.3)
    for lane in drawn["lanes"]:
        ax.text(PAD, lane["y"] + shift, lane["name"], fontsize=LABEL_PT, va="center")
    for op in drawn["ops"]:
        open_ = op["ret_s"] is None
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
    if narrow:
        ax.text(PAD, axis_y + 20, "\n".join(caption), fontsize=LABEL_PT - 1, va="top")
    else:
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
    interactive viewer of them all there, each still with its narrow twin (narrow_file).
    Returns each invalid key's drawings, by the key's text: its still, then the viewer
    (viewer.key_anchor opens it on the key)."""
    found = invalid(failures)
    out_dir.mkdir(parents=True, exist_ok=True)
    viewer = write_viewer(found, out_dir, history, windows)
    drawings = {}
    for f in found:
        still = draw_still(f, out_dir / still_file(f["key"], history))
        draw_still(f, narrow_file(still), narrow=True)
        drawings[str(f["key"])] = [still, *viewer]
    return drawings
