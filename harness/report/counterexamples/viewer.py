"""Writes a history's linearizability counterexamples as one interactive viewer: a
self-contained HTML file with every invalid key, a switcher between them, and for each
key its ops on compressed time, a lane per process, the prefix's linearization, the
states before and after an op on hover, and the faults. Plain text out, no drawing
library (timeline.py adds a still image per key for a run's report). Porcupine's
visualization.go writes every partition of a history into one page likewise.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.report.counterexamples.layout import BOX_H, FAULT_H, NAME_W, PAD, layout
from harness.report.counterexamples.script import CSS, SCRIPT

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


def viewer_name(history: str | None = None) -> str:
    """Takes the history's file name when viewers of several histories may share a folder.
    Returns the viewer's file name."""
    if history is None:
        return "counterexamples.html"
    return f"{_slug(history) or 'history'}-counterexamples-{_digest(json.dumps(history))}.html"


def key_anchor(key: Any) -> str:
    """Returns the fragment that opens the viewer on key (viewer.html#anchor): unique to
    the key's exact JSON, as file_stem is."""
    exact = json.dumps(key, sort_keys=True)
    return f"key-{_slug(exact) or 'key'}-{_digest(exact)}"


def title(failure: dict[str, Any]) -> str:
    """Takes a failure report. Returns the line that heads its drawings."""
    return f"key {json.dumps(failure['key'])}: {failure.get('message') or 'not linearizable'}"


LEGEND = (
    ("failing", "cannot be linearized (the failing op)"),
    ("prefix", "in the longest linearizable prefix; the line links its ops in order"),
    ("concurrent", "concurrent with the failing op, not linearized"),
    ("crashed", "hatched, no right edge: crashed (info), may take effect later or never"),
    ("fault", "a fault in force (nemesis)"),
)


def _swatch(kind: str) -> str:
    """Returns a small SVG drawn as the viewer draws `kind`."""
    fills = {"failing": "#d62728", "prefix": "#1f77b4", "concurrent": "#c9c9c9"}
    if kind == "crashed":
        body = (
            '<rect width="30" height="14" fill="#1f77b4" fill-opacity=".35" stroke="#333" '
            'stroke-dasharray="30 14 44 0"/><path d="M4,14 L14,0 M14,14 L24,0" '
            'stroke="#1f77b4" stroke-width="3"/>'
        )
    elif kind == "fault":
        body = '<rect width="30" height="14" fill="#f4a261" fill-opacity=".35" stroke="#e76f51"/>'
    else:
        body = f'<rect width="30" height="14" rx="3" fill="{fills[kind]}"/>'
    return f'<svg width="30" height="14">{body}</svg>'


def _notes(failure: dict[str, Any], drawn: dict[str, Any]) -> list[str]:
    notes = [
        "Compressed time: each distinct call or return time has a slot of its own, in "
        "order; the spacing is not to scale. "
        + (
            "Every time here is under 1 ms, so the axis counts the calls and returns in "
            "order instead of seconds."
            if drawn["axis"] == "order"
            else "The axis is in seconds since the test began."
        )
    ]
    if drawn["shown"] < drawn["total"]:
        notes.append(
            f"Showing {drawn['shown']} of {drawn['total']} ops: those nearest the failing "
            "op in time."
        )
    tail, length = len(failure.get("longest_prefix", [])), failure.get("prefix_length", 0)
    if tail < length:
        notes.append(f"The prefix's last {tail} of {length} ops are drawn.")
    return notes


def _section(failure: dict[str, Any], drawn: dict[str, Any], anchor: str, alone: bool) -> str:
    """Returns the heading and sentences of one key's counterexample (hidden until shown),
    with the key's anchor as its id when it is the page's only key (else the switcher's
    link has it: a browser scrolls to the anchor, and the switcher must stay in view)."""
    op = failure["op"]
    states = " or ".join(failure.get("state_descriptions", [])) or "unknown"
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in _notes(failure, drawn))
    named = f'id="{anchor}" ' if alone else ""
    return f"""<section class="key" {named}data-anchor="{anchor}" hidden>
<h2>{html.escape(title(failure))}</h2>
<p>Op {op["index"]} ({html.escape(op.get("text", ""))}) cannot be linearized after the longest
linearizable prefix of {failure.get("prefix_length", 0)} ops. The state could then only have
been: {html.escape(states)}.</p>
{notes}</section>"""


def _switcher(failures: Sequence[dict[str, Any]], anchors: Sequence[str]) -> str:
    """Returns the links between the keys, one per invalid key (none for a single key)."""
    if len(failures) < 2:
        return ""
    links = "".join(
        f'<a id="{a}" href="#{a}" title="{html.escape(title(f))}">'
        f"{html.escape(json.dumps(f['key']))}</a>"
        for f, a in zip(failures, anchors, strict=True)
    )
    return f'<nav id="keys"><b>{len(failures)} invalid keys:</b> {links}</nav>'


def write_html(
    failures: Sequence[dict[str, Any]], path: Path, windows: Sequence[dict[str, Any]] = ()
) -> Path:
    """Takes the invalid keys' failure reports and the run's fault windows. Writes the
    interactive viewer of them all at `path` (one file: the laid-out data as JSON, drawn
    by inline script; path#key_anchor(key) opens it on that key) and returns it."""
    anchors = [key_anchor(f["key"]) for f in failures]
    keys, sections = [], []
    for failure, anchor in zip(failures, anchors, strict=True):
        drawn = layout(failure, windows)
        keys.append(
            {
                "anchor": anchor,
                "title": title(failure),
                "layout": drawn,
                "message": failure.get("message") or "not linearizable",
                "states": " or ".join(failure.get("state_descriptions", [])) or "unknown",
                "prefix_length": failure.get("prefix_length", 0),
            }
        )
        sections.append(_section(failure, drawn, anchor, len(failures) == 1))
    data = {"keys": keys, "box_h": BOX_H, "fault_h": FAULT_H, "pad": PAD, "name_w": NAME_W}
    blob = json.dumps(data).replace("</", "<\\/")  # the blob must not end its script
    legend = "".join(f"<span>{_swatch(k)}{html.escape(t)}</span>" for k, t in LEGEND)
    heading = title(failures[0]) if len(failures) == 1 else f"{len(failures)} invalid keys"
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(heading)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style></head><body>
{_switcher(failures, anchors)}
{"".join(sections)}
<div class="legend">{legend}</div>
<div id="panel"><div id="what"></div><div id="times"></div><div id="before"></div>
<div id="state"></div></div>
<div id="scroll"></div>
<script type="application/json" id="data">{blob}</script>
<script>{SCRIPT}</script>
</body></html>
"""
    path.write_text(page, encoding="utf-8")
    return path


def invalid(failures: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Returns the failure reports of the keys found not linearizable, in order."""
    return [f for f in failures if f.get("valid") is False]


def write_viewer(
    failures: Sequence[dict[str, Any]],
    out_dir: Path,
    history: str | None = None,
    windows: Sequence[dict[str, Any]] = (),
) -> list[Path]:
    """Takes a linearizability result's failure reports, a folder, the history's file name
    when viewers of other histories may share the folder, and the run's fault windows.
    Writes one viewer of every invalid key there, named viewer_name(history), and returns
    its path; returns [] when no key is invalid."""
    if not (found := invalid(failures)):
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    return [write_html(found, out_dir / viewer_name(history), windows)]
