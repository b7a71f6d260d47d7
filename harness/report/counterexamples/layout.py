"""Lays out a counterexample's timeline in pixels: compressed time, lanes, linearization, faults.

Each distinct call or return time gets a slot, in order; a slot sits just far enough right
of the earlier ones that every op's label fits inside its box, so no two labels overlap
(Porcupine's visualization/index.js places its boxes by the same left-to-right scan). The
axis counts the slots instead of seconds when every time is under ORDER_BELOW_NS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

Op = dict[str, Any]

MAX_OPS = 120  # beyond this the page would be too wide to read; the nearest to the failure
LABEL_CHARS = 30  # of an op's text on its box; the whole text shows on hover
FONT_PX = 12
CHAR_PX = 7.4  # a 12 px monospace glyph is 6.6-7.2 px wide: an upper bound keeps labels apart
PAD = 6  # between a box's edge and its label
MIN_GAP = 12  # between two slots, so that every distinct time stays visible
NAME_W = 120  # the process names' column
FIRST_TICK = 36  # from that column to the first slot: room for half its time's label
LANE_H = 30
BOX_H = 22
FAULT_H = 20
AXIS_H = 50  # the ticks' labels, then the line that says what the axis counts
ORDER_BELOW_NS = 1_000_000  # every time under 1 ms: not a clock (a test's, or op indices)
PROCESS = re.compile(r"^process \S+ ")
OPEN_TAIL = 60  # how far past the last slot a crashed op's box runs


def text_px(text: str) -> float:
    """Returns the width a label of text takes, at most (in px)."""
    return len(text) * CHAR_PX


def label_of(op: Op) -> str:
    """Returns the text on an op's box: its index and description without the process,
    cut to LABEL_CHARS."""
    said = op.get("text") or f"{op['f']} {json.dumps(op['value'])}"
    text = f"{op['index']}: {PROCESS.sub('', said)}"  # the lane names the process
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def select_ops(failure: dict[str, Any]) -> tuple[list[Op], int]:
    """Takes a failure report. Returns the ops to draw (each once, the failing op always,
    at most MAX_OPS: those nearest the failing op's call) in call order, and how many
    there were."""
    ops: dict[int, Op] = {}
    for op in [*failure.get("concurrent", []), *failure.get("longest_prefix", [])]:
        ops[op["index"]] = op
    failing = failure["op"]
    ops.pop(failing["index"], None)
    others = sorted(ops.values(), key=lambda o: abs(o["call"] - failing["call"]))
    nearest = [failing, *others[: MAX_OPS - 1]]
    return sorted(nearest, key=lambda o: (o["call"], o["index"])), len(ops) + 1


def slots(ops: Sequence[Op]) -> list[int]:
    """Returns the distinct call and return times of ops, in order (ns)."""
    return sorted({op["call"] for op in ops} | {op["ret"] for op in ops if op["ret"] is not None})


def slot_positions(ops: Sequence[Op], times: Sequence[int]) -> list[float]:
    """Returns each slot's x, left to right: MIN_GAP past the one before, and far enough
    right of each op's call slot that the op's label fits between its call and return."""
    index = {t: i for i, t in enumerate(times)}
    ending: dict[int, list[Op]] = {}
    for op in ops:
        if op["ret"] is not None:
            ending.setdefault(index[op["ret"]], []).append(op)
    xs: list[float] = []
    for i in range(len(times)):
        x = xs[-1] + MIN_GAP if xs else float(NAME_W + FIRST_TICK)
        for op in ending.get(i, []):
            x = max(x, xs[index[op["call"]]] + text_px(label_of(op)) + 2 * PAD)
        xs.append(x)
    return xs


def lanes(ops: Sequence[Op]) -> list[tuple[str, list[Op]]]:
    """Returns the lanes, one per process in process order, and more for a process whose
    ops overlap (a crashed op runs on forever), each with its ops."""

    def order(p: str) -> tuple[bool, int, str]:
        return (not p.isdigit(), int(p) if p.isdigit() else 0, p)

    found: list[tuple[str, list[Op]]] = []
    for process in sorted({str(op["process"]) for op in ops}, key=order):
        own: list[list[Op]] = []
        for op in (o for o in ops if str(o["process"]) == process):
            free = [lane for lane in own if _end(lane[-1]) <= op["call"]]
            if free:
                free[0].append(op)
            else:
                own.append([op])
        for n, lane in enumerate(own):
            found.append((f"process {process}" + (f" ({n + 1})" if n else ""), lane))
    return found


def _end(op: Op) -> float:
    return float("inf") if op["ret"] is None else float(op["ret"])


def x_at(t_ns: float, times: Sequence[int], xs: Sequence[float]) -> float:
    """Returns the x of a time between slots, linearly between its two neighbours."""
    if t_ns <= times[0]:
        return xs[0]
    for i in range(1, len(times)):
        if t_ns <= times[i]:
            part = (t_ns - times[i - 1]) / (times[i] - times[i - 1])
            return xs[i - 1] + part * (xs[i] - xs[i - 1])
    return xs[-1]


def fault_bands(
    windows: Sequence[dict[str, Any]], times: Sequence[int], xs: Sequence[float], right: float
) -> list[dict[str, Any]]:
    """Takes the nemesis windows (in test seconds) and the slots. Returns a band for each
    window that overlaps the shown span, in rows such that no two labels overlap."""
    bands: list[dict[str, Any]] = []
    row_ends: list[float] = []
    for w in windows:
        start, stop = w["start"] * 1e9, None if w["stop"] is None else w["stop"] * 1e9
        if start > times[-1] or (stop is not None and stop < times[0]):
            continue
        x0 = x_at(start, times, xs)
        x1 = right if stop is None or stop > times[-1] else x_at(stop, times, xs)
        until = "never healed" if w["stop"] is None else f"{w['stop']:.3f} s"
        label = f"{w['fault']} {w['start']:.3f} s → {until}"
        end = max(x1, x0 + PAD + text_px(label))
        row = next((r for r, e in enumerate(row_ends) if e + PAD <= x0), len(row_ends))
        if row == len(row_ends):
            row_ends.append(end)
        row_ends[row] = end
        bands.append(
            {
                "label": label,
                "x0": x0,
                "x1": max(x1, x0 + 2),
                "row": row,
                "open_left": start < times[0],
                "open_right": stop is None or stop > times[-1],
            }
        )
    return bands


def quiet_note(windows: Sequence[dict[str, Any]], start_ns: int) -> str:
    """Returns what the nemesis row says when no fault overlaps the shown span: when the
    last fault before it ended, if one did."""
    ended = [w for w in windows if w["stop"] is not None and w["stop"] * 1e9 < start_ns]
    if not ended:
        return "no fault in force here"
    last = max(ended, key=lambda w: w["stop"])
    before = start_ns / 1e9 - last["stop"]
    return (
        f"no fault in force here; {last['fault']} ended at {last['stop']:.3f} s, "
        f"{before:.3f} s before"
    )


def by_order(times: Sequence[int]) -> bool:
    """Returns whether the axis counts the slots rather than seconds: when every time is
    under ORDER_BELOW_NS, where seconds to three places would all read 0.000."""
    return times[-1] < ORDER_BELOW_NS


def axis_caption(times: Sequence[int]) -> str:
    """Returns the line under the axis that says what it counts."""
    if by_order(times):
        return (
            "calls and returns in order, 1 for the first: every time here is under 1 ms, "
            "too close to tell apart in seconds"
        )
    return "test seconds, compressed: each call or return has a slot, in order; not to scale"


def ticks(times: Sequence[int], xs: Sequence[float]) -> list[dict[str, Any]]:
    """Returns a tick per slot, labelled where the label has room: in test seconds, or by
    the slot's place in order when by_order."""
    found: list[dict[str, Any]] = []
    last_end = float("-inf")
    ordered = by_order(times)
    for n, (t, x) in enumerate(zip(times, xs, strict=True), 1):
        label = str(n) if ordered else f"{t / 1e9:.3f}"
        half = text_px(label) / 2
        room = x - half >= last_end + PAD
        said = f"{n} of {len(times)}, at {t} ns" if ordered else f"{t / 1e9:.6f} s"
        found.append({"x": x, "label": label if room else None, "title": said})
        if room:
            last_end = x + half
    return found


def lin_points(prefix: Sequence[Op], place: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Takes the prefix's ops in linearization order and each drawn op's box. Returns a
    point in each drawn op's box, left to right in that order (the linearization points)."""
    points: list[dict[str, Any]] = []
    last = float("-inf")
    for op in prefix:
        box = place.get(op["index"])
        if box is None:
            continue
        # Just inside the box, never left of the point before: past the box's end by at
        # most 3 px, only where the op before was called when this one returned.
        x = max(last, min(box["x0"] + 3, box["x1"]))
        last = x
        points.append({"index": op["index"], "x": x, "y": box["y"] + BOX_H})
    return points


def layout(failure: dict[str, Any], windows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Takes an invalid key's failure report and the run's fault windows. Returns what the
    viewer draws, in px: each op's box and label with its times and the states before and
    after it, the linearization points in order, the fault bands, the axis ticks and what
    they count, and the size."""
    ops, total = select_ops(failure)
    times = slots(ops)
    xs = slot_positions(ops, times)
    at = {t: x for t, x in zip(times, xs, strict=True)}
    slot_of = {t: n for n, t in enumerate(times, 1)}
    crashed_ends = [at[o["call"]] + text_px(label_of(o)) + 2 * PAD for o in ops if o["ret"] is None]
    right = max([xs[-1] + OPEN_TAIL, *crashed_ends])
    bands = fault_bands(windows, times, xs, right)
    top = FAULT_H * (1 + max((b["row"] for b in bands), default=0)) + 6
    tail = failure.get("longest_prefix", [])
    in_tail: dict[Any, int] = {}  # each op's place in the tail, the first if twice
    for k, o in enumerate(tail):
        in_tail.setdefault(o["index"], k)
    drawn: list[dict[str, Any]] = []
    names: list[dict[str, Any]] = []
    for n, (name, lane) in enumerate(lanes(ops)):
        y = top + n * LANE_H + (LANE_H - BOX_H) / 2
        names.append({"name": name, "y": y + BOX_H / 2})
        for op in lane:
            x1 = right if op["ret"] is None else at[op["ret"]]
            slot = {"call_n": slot_of[op["call"]], "ret_n": slot_of.get(op["ret"])}
            box = {"x0": at[op["call"]], "x1": x1, "y": y, **slot}
            drawn.append(box | _described(op, failure, in_tail.get(op["index"])))
    place = {o["index"]: o for o in drawn}
    return {
        "ops": drawn,
        "lanes": names,
        "lin": lin_points(tail, place),
        "attempt": lin_points([*tail, failure["op"]], place)[-1],
        "faults": bands,
        "fault_note": None if bands else quiet_note(windows, times[0]),
        "ticks": ticks(times, xs),
        "axis": "order" if by_order(times) else "seconds",
        "axis_caption": axis_caption(times),
        "axis_y": top + len(names) * LANE_H,
        "width": right + PAD,
        "height": top + len(names) * LANE_H + AXIS_H,
        "shown": len(ops),
        "total": total,
    }


def state_before(k: int, failure: dict[str, Any]) -> str | None:
    """Takes the place of an op in the report's tail of the prefix. Returns the state the
    op was applied to: the state after the op before it, the model's initial state for
    the prefix's first op, or None when the report did not keep it (Porcupine's tooltip
    says "Previous state" and "New state": visualization/index.js)."""
    states = failure.get("prefix_states") or []
    tail = failure.get("longest_prefix", [])
    if k > 0:
        return states[k - 1] if k - 1 < len(states) else None
    whole = failure.get("prefix_length", len(tail)) == len(tail)
    return "the model's initial state" if whole else None


def _described(op: Op, failure: dict[str, Any], k: int | None) -> dict[str, Any]:
    """Takes an op, the failure report and the op's place in the report's tail of the
    prefix (None when not in it). Returns what the viewer says of the op: its label and
    text, its role, its times in test seconds and, for an op of the prefix, its place in
    it and the states before and after it; for the failing op, the states it could have
    been applied to."""
    tail = failure.get("longest_prefix", [])
    states = failure.get("prefix_states") or []
    before: str | None = None
    if op["index"] == failure["op"]["index"]:
        role = "failing"
        before = " or ".join(failure.get("state_descriptions", [])) or None
    else:
        role = "concurrent" if k is None else "prefix"
        before = None if k is None else state_before(k, failure)
    label = label_of(op)
    return {
        "index": op["index"],
        "label": label,
        "text": PROCESS.sub("", op.get("text") or label),
        "process": op["process"],
        "type": op["type"],
        "role": role,
        "call_s": round(op["call"] / 1e9, 6),
        "ret_s": None if op["ret"] is None else round(op["ret"] / 1e9, 6),
        # its place in the whole prefix, of which the report keeps the tail
        "lin": None if k is None else failure.get("prefix_length", len(tail)) - len(tail) + k + 1,
        "before": before,
        "state": states[k] if k is not None and k < len(states) else None,
    }
