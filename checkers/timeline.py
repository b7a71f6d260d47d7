"""Draws a linearizability counterexample as a small timeline: a PNG and a standalone HTML.

One lane per process, a bar from each op's invoke to its return; crashed ops run off the
right edge; the op that cannot be linearized is red, the prefix's ops blue, the rest grey.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
import matplotlib.pyplot as plt

COLOURS = {"failing": "#d62728", "prefix": "#1f77b4", "concurrent": "#7f7f7f"}
Bar = tuple[dict[str, Any], str]  # (op dict, role)


PREFIX_SHOWN = 6  # the prefix's last few ops give enough context


def _bars(failure: dict[str, Any]) -> list[Bar]:
    """Returns each op of the counterexample once, with its role."""
    bars: dict[int, Bar] = {}
    for op in failure.get("concurrent", []):
        bars[op["index"]] = (op, "concurrent")
    for op in failure.get("longest_prefix", [])[-PREFIX_SHOWN:]:
        bars[op["index"]] = (op, "prefix")
    bars[failure["op"]["index"]] = (failure["op"], "failing")
    return sorted(bars.values(), key=lambda b: (b[0]["call"], b[0]["index"]))


def _span(bars: Sequence[Bar]) -> tuple[int, int]:
    """Returns the window to draw, in ns: from the first invoke to the last return of the
    ops that returned. Crashed ops invoked earlier are clipped at its left edge."""
    finished = [op for op, _ in bars if op["ret"] is not None] or [op for op, _ in bars]
    start = min(op["call"] for op in finished)
    end = max(op["ret"] if op["ret"] is not None else op["call"] for op in finished)
    return start, max(end, start + 1)


def _lanes(bars: Sequence[Bar]) -> dict[str, int]:
    processes = sorted(
        {str(op["process"]) for op, _ in bars},
        key=lambda p: (not p.isdigit(), int(p) if p.isdigit() else 0, p),
    )
    return {p: i for i, p in enumerate(processes)}


def _label(op: dict[str, Any]) -> str:
    value = json.dumps(op["value"])
    return f"{op['index']}: {op['f']} {value}"


SLUG_CHARS = 40  # of the key's text (and the history's name) in a file name; a hash follows


def file_stem(key: Any, history: str | None = None) -> str:
    """Takes a report's key and, when drawings of several histories may share a folder, the
    history's file name. Returns a file name stem unique to both and bounded in length: a
    readable prefix of each, then a hash of the key's exact JSON and the name (so 1 and "1",
    "a/b" and "a b", or a.log and a.jsonl, never share a file)."""
    exact = json.dumps(key, sort_keys=True)
    readable = _slug(exact) or "key"
    if history is None:
        return f"counterexample-{readable}-{_digest(exact)}"
    named = _slug(history) or "history"
    return f"{named}-counterexample-{readable}-{_digest(json.dumps([history, exact]))}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:SLUG_CHARS]


def _digest(text: str) -> str:
    # surrogatepass: a file name that is not UTF-8 reaches here as lone surrogates
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _title(failure: dict[str, Any]) -> str:
    return f"key {json.dumps(failure['key'])}: {failure.get('message') or 'not linearizable'}"


def draw_png(failure: dict[str, Any], path: Path) -> Path:
    """Takes a failure report. Writes its timeline as a PNG at `path` and returns the path."""
    bars = _bars(failure)
    start, end = _span(bars)
    lanes = _lanes(bars)
    width = (end - start) / 1e6
    right = width * 1.2  # room for crashed ops to run off
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.55 * len(lanes)))
    for op, role in bars:
        x0 = max(op["call"] - start, 0) / 1e6
        x1 = right if op["ret"] is None else (op["ret"] - start) / 1e6
        y = lanes[str(op["process"])]
        crashed = op["ret"] is None
        ax.barh(
            y,
            max(x1 - x0, right / 400),
            left=x0,
            height=0.6,
            color=COLOURS[role],
            alpha=0.45 if crashed else 0.85,
            hatch="//" if crashed else None,
            edgecolor="black",
            linewidth=2 if role == "failing" else 0.5,
        )
        ax.text(x0, y, " " + _label(op), va="center", ha="left", fontsize=7, clip_on=True)
    ax.set_yticks(list(lanes.values()), [f"process {p}" for p in lanes])
    ax.set_xlim(0, right)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms); hatched: crashed, may take effect later or never")
    ax.set_title(_title(failure), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


_CSS = """
body { font: 13px sans-serif; margin: 1.5em; color: #222; }
.lane { position: relative; height: 28px; border-bottom: 1px solid #eee; }
.name { position: absolute; left: 0; width: 90px; top: 6px; color: #555; }
.track { position: absolute; left: 100px; right: 10px; top: 0; bottom: 0; }
.op { position: absolute; top: 4px; height: 20px; border-radius: 3px; overflow: hidden;
      white-space: nowrap; font-size: 11px; line-height: 20px; padding-left: 3px;
      color: #fff; box-sizing: border-box; min-width: 4px; }
.failing { background: #d62728; outline: 2px solid #000; }
.prefix { background: #1f77b4; }
.concurrent { background: #7f7f7f; }
.crashed { opacity: .55; border-right: 3px dashed #000; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; color: #fff; }
"""


def _html_bar(op: dict[str, Any], role: str, start: int, scale: float) -> str:
    left = max(op["call"] - start, 0) * scale
    crashed = op["ret"] is None
    width = 100 - left if crashed else max((op["ret"] - start) * scale - left, 0.3)
    classes = f"op {role}" + (" crashed" if crashed else "")
    tip = html.escape(op.get("text", _label(op)))
    return (
        f'<div class="{classes}" style="left:{left:.3f}%;width:{width:.3f}%" '
        f'title="{tip}">{html.escape(_label(op))}</div>'
    )


def write_html(failure: dict[str, Any], path: Path) -> Path:
    """Takes a failure report. Writes a standalone HTML timeline at `path`, returns it."""
    bars = _bars(failure)
    start, end = _span(bars)
    scale = 100 / ((end - start) * 1.15)
    lanes = _lanes(bars)
    rows = []
    for process in lanes:
        cells = "".join(
            _html_bar(op, role, start, scale) for op, role in bars if str(op["process"]) == process
        )
        rows.append(
            f'<div class="lane"><div class="name">process {html.escape(process)}'
            f'</div><div class="track">{cells}</div></div>'
        )
    states = " or ".join(failure.get("state_descriptions", [])) or "unknown"
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(_title(failure))}</title>
<style>{_CSS}</style></head><body>
<h2>{html.escape(_title(failure))}</h2>
<p>Op {failure["op"]["index"]} ({html.escape(failure["op"].get("text", ""))}) cannot be
linearized after the longest linearizable prefix of {failure.get("prefix_length", 0)} ops.
The state could then only have been: {html.escape(states)}.</p>
<p class="legend"><span class="failing">cannot be linearized</span><span class="prefix">in
the longest prefix</span><span class="concurrent">concurrent</span> dashed right edge:
crashed, may take effect at any later time or never</p>
{"".join(rows)}
</body></html>
"""
    path.write_text(page, encoding="utf-8")
    return path


def render_counterexample(
    failure: dict[str, Any], out_dir: Path, history: str | None = None
) -> list[Path]:
    """Takes an invalid key's failure report, a folder and the history's file name when
    drawings of other histories may share the folder. Writes the timeline as PNG and HTML
    there, named after both (file_stem), and returns both paths; returns [] for a key that
    is not invalid."""
    if failure.get("valid") is not False:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = file_stem(failure["key"], history)
    return [
        draw_png(failure, out_dir / f"{stem}.png"),
        write_html(failure, out_dir / f"{stem}.html"),
    ]
