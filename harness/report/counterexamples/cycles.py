"""A transaction dependency cycle drawn as inline SVG for report.html: its transactions on
a ring, one arrow per edge, each labelled with its kind and evidence, as Elle draws them.

The input is a cycle case as checkers/txn_explain.cycle_case makes it (indexes,
processes, steps); SVG needs nothing installed and prints as sharply as the page.
"""

from __future__ import annotations

import html
import math
from typing import Any

EDGE_COLOURS = {"ww": "#d62728", "wr": "#1f77b4", "process": "#2ca02c", "realtime": "#7f7f7f"}
ALLOWED_COLOUR = "#8a8a8a"
"""Every edge of a cycle whose kind the run allows (G0 under Kafka): grey, dashed, since
red is kept for what makes a history invalid."""
NODE_W, NODE_H = 150, 34
SIDE = 220.0
"""The distance between neighbouring transactions on the ring, in pixels."""
BEND = 0.25
"""How far an arrow bows off the straight line, as a share of its length: the two edges
of a two-transaction cycle must not lie on top of each other."""
CHAR_W = 6.6
"""About how wide a character of a 12-pixel label is, to leave room for the labels."""
LABEL_GAP = 8.0


def cycle_svg(case: dict[str, Any], *, allowed: bool = False) -> str | None:
    """Takes a cycle case and whether its kind is allowed (counts nothing against the
    run). Returns it as an <svg> element, its edges grey and dashed when allowed, or None
    when the case holds no steps to draw (a read kind's case, or an older results.json)."""
    steps = case.get("steps")
    indexes = case.get("indexes")
    if not isinstance(steps, list) or not isinstance(indexes, list) or not steps:
        return None
    processes = case.get("processes") or [None] * len(indexes)
    n = len(indexes)
    radius = SIDE / (2 * math.sin(math.pi / n)) if n > 1 else 0.0
    widest = max((len(edge_label(step)) for step in steps), default=0) * CHAR_W
    margin_x, margin_y = NODE_W / 2 + widest + LABEL_GAP, NODE_H / 2 + 60
    width, height = 2 * (radius + margin_x), 2 * (radius + margin_y)
    if n == 2:  # side by side, a label's width apart: the labels go above and below
        radius = (NODE_W + widest) / 2
        width, height = 2 * radius + NODE_W + 20, 2 * margin_y
    centres = [_on_ring(i, n, radius, width / 2, height / 2) for i in range(n)]
    place = {index: i for i, index in enumerate(indexes)}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="dependency cycle">',
        _arrowheads(),
        '<g stroke-dasharray="6 4" opacity=".8" class="allowed">' if allowed else "<g>",
    ]
    for step in steps:
        if step.get("from") in place and step.get("to") in place:
            ends = centres[place[step["from"]]], centres[place[step["to"]]]
            parts.append(_edge(step, *ends, allowed=allowed))
    parts.append("</g>")  # the edges: the transactions' boxes stay solid
    for (x, y), index, process in zip(centres, indexes, processes, strict=False):
        parts.append(_node(x, y, index, process))
    parts.append("</svg>")
    return "".join(parts)


def _on_ring(i: int, n: int, radius: float, cx: float, cy: float) -> tuple[float, float]:
    # Clockwise from the top (from the left for two), so every arrow bows outwards.
    angle = (math.pi if n == 2 else -math.pi / 2) + 2 * math.pi * i / n
    return cx + radius * math.cos(angle), cy + radius * math.sin(angle)


def _arrowheads() -> str:
    colours = {**EDGE_COLOURS, "allowed": ALLOWED_COLOUR}
    markers = "".join(
        f'<marker id="head-{kind}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        for kind, colour in colours.items()
    )
    return f"<defs>{markers}</defs>"


def _node(x: float, y: float, index: Any, process: Any) -> str:
    label = f"T{index}" + (f" (process {process})" if process is not None else "")
    return (
        f'<rect x="{x - NODE_W / 2:.1f}" y="{y - NODE_H / 2:.1f}" width="{NODE_W}" '
        f'height="{NODE_H}" rx="6" fill="#fff" stroke="#333"/>'
        f'<text x="{x:.1f}" y="{y + 5:.1f}" text-anchor="middle" font-size="13">'
        f"{html.escape(label)}</text>"
    )


def _edge(
    step: dict[str, Any], start: tuple[float, float], end: tuple[float, float], *, allowed: bool
) -> str:
    kind = str(step.get("type"))
    colour = ALLOWED_COLOUR if allowed else EDGE_COLOURS.get(kind, "#333")
    (x0, y0), (x1, y1) = _clipped(start, end), _clipped(end, start)
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy) or 1.0
    nx, ny = dy / length, -dx / length  # the arrow's left: outwards on the ring
    # The control point sits off the midpoint, to the arrow's left: opposite edges part.
    cx, cy = (x0 + x1) / 2 + BEND * length * nx, (y0 + y1) / 2 + BEND * length * ny
    mx, my = (x0 + 2 * cx + x1) / 4, (y0 + 2 * cy + y1) / 4  # the curve's midpoint
    # A label below its arrow moves down by its height: text stands on its baseline.
    lx, ly = mx + LABEL_GAP * nx, my + LABEL_GAP * ny + (12 if ny > 0.3 else 0)
    anchor = "start" if nx > 0.3 else "end" if nx < -0.3 else "middle"
    head = "head-allowed" if allowed else f"head-{kind}" if kind in EDGE_COLOURS else "head-ww"
    return (
        f'<path d="M{x0:.1f},{y0:.1f} Q{cx:.1f},{cy:.1f} {x1:.1f},{y1:.1f}" fill="none" '
        f'stroke="{colour}" stroke-width="2" marker-end="url(#{head})"/>'
        f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" font-size="12" '
        f'fill="{colour}" paint-order="stroke" stroke="#fff" stroke-width="4">'
        f"{html.escape(edge_label(step))}</text>"
    )


def _clipped(point: tuple[float, float], towards: tuple[float, float]) -> tuple[float, float]:
    """Returns where the line from point to towards leaves point's box."""
    (x, y), (tx, ty) = point, towards
    dx, dy = tx - x, ty - y
    if dx == 0 and dy == 0:
        return point
    scale = min(
        (NODE_W / 2 + 4) / abs(dx) if dx else math.inf,
        (NODE_H / 2 + 4) / abs(dy) if dy else math.inf,
    )
    return x + dx * scale, y + dy * scale


def edge_label(step: dict[str, Any]) -> str:
    """Takes a cycle's step. Returns its arrow's label: the edge's kind and its evidence
    (partition and offsets for ww, partition, offset and value for wr)."""
    kind = str(step.get("type"))
    if kind == "ww":
        low, high = (step.get("offsets") or [None, None])[:2]
        return f"ww: partition {step.get('partition')}, offsets {low} then {high}"
    if kind == "wr":
        return (
            f"wr: partition {step.get('partition')} offset {step.get('offset')} "
            f"(value {step.get('value')})"
        )
    if kind == "process":
        return f"process {step.get('process')}: next"
    return "realtime: completed before invoked" if kind == "realtime" else kind
