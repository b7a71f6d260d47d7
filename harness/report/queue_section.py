"""report.html's Queue section: the queue checker's counts and anomaly kinds in lines,
the lag and unseen plots with their captions, and the per-partition offsets plots."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from checkers.queue import effect, follows_from_loss
from harness.report.page_markup import escaped
from harness.report.plots.images import LAG_FILE, OFFSETS_GLOB, UNSEEN_FILE

LAG_PLOTS = (
    (
        LAG_FILE,
        "realtime lag",
        "Per consumer, how long its polls were behind the log: from when the first offset "
        "it had not read was known to exist to the poll's invocation (Jepsen's realtime "
        "lag, a lower bound); below, by how many offsets.",
    ),
    (UNSEEN_FILE, "unseen messages", "Acknowledged sends no poll had received yet."),
)


def queue_lines(queue: dict[str, Any]) -> list[str]:
    """Takes the queue checker's section. Returns "N acknowledged, M lost (P%)", a line per
    anomaly kind found, with its count and what it does to the verdict, and one for the
    kinds not found."""
    if "error" in queue:
        return [f"the queue checker failed: {queue['error']}"]
    acked, lost = queue.get("acknowledged", 0), queue.get("lost", 0)
    share = f"{100 * lost / acked:.1f}%" if acked else "n/a"
    lines = [f"{acked} acknowledged, {lost} lost ({share})"]
    if isinstance(txns := queue.get("transactions"), dict):
        lines.append(
            f"transactions: {txns.get('committed')} committed, {txns.get('aborted')} aborted, "
            f"{txns.get('unknown')} unknown"
        )
    kinds = queue.get("kinds", {})
    found = {kind: entry for kind, entry in kinds.items() if entry.get("count")}
    following = following_kinds(queue)
    for kind, entry in found.items():
        said = effect(
            kind,
            invalidating=bool(entry.get("invalidating")),
            ignored=bool(entry.get("ignored")),
        )
        cause = f"; follows from the lost writes: {following[kind]}" if kind in following else ""
        lines.append(f"{kind}: {entry['count']} ({said}{cause})")
    if len(kinds) > len(found):
        other = "other " if found else ""
        lines.append(f"no case of the {len(kinds) - len(found)} {other}anomaly kinds")
    return lines


def following_kinds(queue: dict[str, Any]) -> dict[str, str]:
    """Takes the queue checker's section. Returns the kinds found that follow from the lost
    writes, each with how; none for a section of an older shape."""
    try:
        return follows_from_loss(queue)
    except Exception:
        return {}


def queue_html(results: dict[str, Any], folder: Path) -> str:
    """Takes results.json's body and the run folder. Returns the Queue section ("" when
    the run has no queue checker's section)."""
    queue = results.get("queue")
    if not isinstance(queue, dict):
        return ""
    items = "".join(f"<li>{escaped(line)}</li>" for line in queue_lines(queue))
    drawn = sorted(folder.glob(OFFSETS_GLOB))
    plots = "".join(f'<img src="{html.escape(p.name)}" alt="{html.escape(p.stem)}">' for p in drawn)
    return (
        f"<h2>Queue</h2><ul>{items}</ul>"
        + "".join(
            f'<h3>{escaped(title)}</h3><img src="{name}" alt="{name}"><p>{escaped(caption)}</p>'
            for name, title, caption in LAG_PLOTS
            if (folder / name).exists()
        )
        + offsets_line(queue, len(drawn))
        + plots
    )


def offsets_line(queue: dict[str, Any], drawn: int) -> str:
    """Takes the queue checker's section and how many offsets plots the run drew (one per
    partition with an anomaly). Returns a heading and a line saying how many partitions
    had none and so are not drawn ("" when the section does not count its partitions)."""
    total = queue.get("partitions")
    if not isinstance(total, int) or "error" in queue:
        return ""
    none = total - drawn
    if not drawn:
        said = f"No offsets plot: none of the {total} partitions had an anomaly that counts"
        return f"<h3>offsets</h3><p>{said} against the run.</p>"
    which = "the partition" if drawn == 1 else f"each of the {drawn} partitions"
    rest = "" if none <= 0 else f"; the other {none} had none and are not drawn"
    said = (
        f"The message at each offset, for {which} with an anomaly that counts against the "
        f"run, zoomed around its anomalies{rest}."
    )
    return f"<h3>offsets</h3><p>{escaped(said)}</p>"
