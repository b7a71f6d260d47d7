"""The anomalies a run found, as marks at their times on the latency and rate plots: each
lost send, the op no order explains on each non-linearizable key, each dependency cycle.

A mark stands at its op's invocation (test seconds) and, on the latency plot, at the op's
latency, so that it rings the op's own point; a cycle stands at its first transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from checkers.queue import QueueHistory
from history import Event, pair_invocations

if TYPE_CHECKING:
    from matplotlib.axes import Axes  # drawn on only by the plots, which bring matplotlib

LOST, NONLINEAR, CYCLE, ALLOWED_CYCLE = (
    "lost send",
    "non-linearizable op",
    "cycle",
    "allowed cycle",
)
"""Short: a legend's line fits the margin right of a time plot's data in about 26
characters."""
LABEL_KINDS = 22
"""The most characters of the checker's kinds a label's second line names before it says
`...`."""
STYLES: dict[str, dict[str, Any]] = {
    LOST: {"marker": "o", "edgecolors": "#d62728", "s": 90},
    NONLINEAR: {"marker": "s", "edgecolors": "#a50f15", "s": 110},
    CYCLE: {"marker": "D", "edgecolors": "#000000", "s": 80},
    ALLOWED_CYCLE: {"marker": "D", "edgecolors": "#969696", "s": 60},
}
"""How each kind is drawn: hollow, so that the op's own point shows inside the mark."""
TOP = 0.95
"""Where a mark with no latency to stand at is drawn: this far up the axis."""
COUNT_ABOVE = 20
"""The most marks of a kind the rate plot draws one by one; more are a count per second
(406 lost sends' lines made a solid block)."""


@dataclass(frozen=True)
class Mark:
    """One anomaly on the plots: its kind (a key of STYLES), its op's invocation (s since
    the test began), the op's latency (ms; None if it never completed) and the checker's
    kinds behind it (a cycle's G0, G1c, ...)."""

    kind: str
    time: float
    latency_ms: float | None
    found_as: str = ""


def anomaly_marks(
    results: dict[str, Any], events: Sequence[Event], queue_history: QueueHistory | None
) -> list[Mark]:
    """Takes a run's results (results.json), its history's events and, for a queue
    history, its records as the check read them. Returns a Mark per lost send, per
    non-linearizable key and per dependency cycle the results keep, in time order."""
    marks = _nonlinear(results.get("linearizable"))
    queue = results.get("queue")
    if isinstance(queue, dict) and "error" not in queue and queue_history is not None:
        marks += _lost(queue, queue_history) + _cycles(queue, events)
    return sorted(marks, key=lambda m: m.time)


def _nonlinear(section: Any) -> list[Mark]:
    if not isinstance(section, dict):
        return []
    marks = []
    for failure in section.get("failures", []):
        op = failure.get("op")
        if failure.get("valid") is False and isinstance(op, dict) and op.get("call") is not None:
            ret = op.get("ret")
            latency = None if ret is None else (ret - op["call"]) / 1e6
            marks.append(Mark(NONLINEAR, op["call"] / 1e9, latency))
    return marks


def _lost(queue: dict[str, Any], history: QueueHistory) -> list[Mark]:
    # Every lost send, from the history: the results keep only the first cases of a kind.
    lost = set(queue.get("lost_messages") or ())
    if not lost:
        return []
    return [
        Mark(LOST, s.invoked / 1e9, (s.acked - s.invoked) / 1e6)
        for s in history.sends
        if s.acked is not None and s.value in lost
    ]


def _cycles(queue: dict[str, Any], events: Sequence[Event]) -> list[Mark]:
    found = [
        (kind, entry, case)
        for kind, entry in queue.get("kinds", {}).items()
        for case in entry.get("cases", [])
        if isinstance(case, dict) and case.get("indexes")
    ]
    if not found:
        return []
    invocations, _ = pair_invocations(events)
    times = {
        inv.invoke["index"]: (
            inv.invoke["time"],
            None if inv.completion is None else inv.completion["time"],
        )
        for inv in invocations
    }
    marks = []
    for kind, entry, case in found:
        known = [times[i] for i in case["indexes"] if i in times]
        if known:
            invoked, completed = min(known, key=lambda t: t[0])
            latency = None if completed is None else (completed - invoked) / 1e6
            drawn_as = CYCLE if entry.get("invalidating") else ALLOWED_CYCLE
            marks.append(Mark(drawn_as, invoked / 1e9, latency, kind))
    return marks


def label(kind: str, marks: Sequence[Mark]) -> str:
    """Returns the legend's words for the marks of one kind: the kind and how many, and
    on a second line the checker's kinds behind it."""
    said = f"{kind}: {len(marks)}"
    behind = list(dict.fromkeys(m.found_as for m in marks if m.found_as))
    if not behind:
        return said
    kinds = ", ".join(behind)
    if len(kinds) > LABEL_KINDS:
        kinds = f"{behind[0]}, ..."
    return f"{said}\n({kinds})"


def _by_kind(marks: Sequence[Mark]) -> dict[str, list[Mark]]:
    grouped: dict[str, list[Mark]] = {}
    for m in marks:
        grouped.setdefault(m.kind, []).append(m)
    return grouped


def draw_on_latency(ax: Axes, marks: Sequence[Mark]) -> None:
    """Rings each anomaly's op on a latency plot (log y): at its invocation and latency,
    or near the top when it never completed."""
    for kind, mine in _by_kind(marks).items():
        style: dict[str, Any] = {"facecolors": "none", "linewidths": 1.6, "zorder": 4} | STYLES[
            kind
        ]
        done = [m for m in mine if m.latency_ms is not None]
        never = [m.time for m in mine if m.latency_ms is None]
        named: dict[str, Any] = {"label": label(kind, mine)}
        if done:
            ax.scatter(
                [m.time for m in done],
                [max(m.latency_ms or 0.0, 0.01) for m in done],
                **(style | named),
            )
            named = {}
        if never:
            top = ax.get_xaxis_transform()
            ax.scatter(never, [TOP] * len(never), transform=top, **(style | named))


def draw_on_rate(ax: Axes, marks: Sequence[Mark]) -> int:
    """Marks the anomalies on a rate plot: a few of a kind as a faint line at each time
    and a mark near the top, where the caller has left room; more than COUNT_ABOVE as a
    step of how many began in each second (a line each would fill the plot solid).
    Returns the highest count drawn as a step (0 if none), for the caller's y range."""
    highest = 0
    for kind, mine in _by_kind(marks).items():
        style = STYLES[kind]
        times = [m.time for m in mine]
        if len(mine) > COUNT_ABOVE:
            highest = max(highest, _draw_counts(ax, times, style["edgecolors"], label(kind, mine)))
            continue
        ax.vlines(
            times,
            0,
            TOP,
            transform=ax.get_xaxis_transform(),
            color=style["edgecolors"],
            lw=0.8,
            alpha=0.35,
            zorder=1,
        )
        ax.scatter(
            times,
            [TOP] * len(times),
            transform=ax.get_xaxis_transform(),
            facecolors="none",
            linewidths=1.6,
            zorder=4,
            label=label(kind, mine),
            **style,
        )
    return highest


def per_second(times: Sequence[float]) -> list[int]:
    """Takes times (s). Returns how many fall in each one-second bucket from 0 to the
    last, as the rate plot counts its ops."""
    counts = [0] * (int(max(times, default=0.0)) + 1)
    for t in times:
        counts[max(0, int(t))] += 1
    return counts


def _draw_counts(ax: Axes, times: Sequence[float], colour: str, words: str) -> int:
    counts = per_second(times)
    edges = list(range(len(counts) + 1))
    ax.stairs(counts, edges, color=colour, lw=1.4, zorder=4, label=f"{words}\n(per second sent)")
    ax.stairs(counts, edges, fill=True, color=colour, alpha=0.15, lw=0, zorder=1)
    return max(counts)
