"""report.html's Recovery section: per fault, how long the cluster took to name a new
leader and to serve ops again, in lines and in a table of the partitions it took.

Below 60em the table is stacked, as the index's configuration x release table: a block per
partition taken, each cell named by its column (its 11 columns needed a sideways scroll at
800 px)."""

from __future__ import annotations

from typing import Any

from harness.report.page_markup import escaped

RECOVERY_ROWS = 40
RECOVERY_STYLE = """
#recovery td,#recovery th{white-space:normal}
@media (max-width:60em){#recovery,#recovery tbody,#recovery tr,#recovery td{display:block}
#recovery tr.head{display:none}#recovery tr{border-top:1px solid #ccc;padding:.3em 0}
#recovery td{border:none;padding:.1em .6em}
#recovery td::before{content:attr(data-label) ": ";color:#555}}
"""
"""The table's cells wrap; below 60em each row is a block of its cells, each named."""


def seconds_said(value: Any) -> str:
    """Takes a time in seconds or None. Returns it in words ("never" for None)."""
    return "never" if value is None else f"{value:g} s"


def recovery_lines(recovery: dict[str, Any]) -> list[str]:
    """Takes the recovery section. Returns a line per fault: the median and worst time
    to a new leader, to the first ok op, to the first that completed before the heal, and
    to the first ok op after the heal (a time a run's results do not have is left out)."""
    lines = []
    for fault, times in recovery.get("summary", {}).items():
        said = []
        for name, words in (
            ("new_leader_s", "new leader"),
            ("first_ok_s", "first ok op"),
            ("in_fault_s", "served in the fault"),
            ("after_heal_s", "after the heal"),
        ):
            if name not in times:
                continue
            t = times[name]
            never = f", never in {t['never']}" if t.get("never") else ""
            said.append(
                f"{words} {seconds_said(t.get('median'))} "
                f"(worst {seconds_said(t.get('worst'))}{never})"
            )
        lines.append(f"{fault}, {times.get('partitions')} partitions taken: " + "; ".join(said))
    return lines


def recovery_html(results: dict[str, Any]) -> str:
    """Takes results.json's body. Returns the Recovery section ("" when no fault took a
    partition's leader)."""
    recovery = results.get("recovery")
    if not isinstance(recovery, dict) or not recovery.get("partitions"):
        return ""
    rows = [
        (
            f"{r['start']:g}",
            r["fault"],
            r["node"] or "",
            r["partition"],
            f"{r['new_leader'] or ''} {seconds_said(r['new_leader_s'])}",
            seconds_said(r["first_ok_s"]),
            seconds_said(r.get("in_fault_s")),
            ", ".join(f"{p}: {t:g} s" for p, t in r["first_ok_by_client"].items()),
            seconds_said(r["after_heal_s"]),
            r["failed"],
            r["timed_out"],
        )
        for r in recovery["partitions"][:RECOVERY_ROWS]
    ]
    head = [
        "t (s)",
        "fault",
        "broker",
        "partition",
        "new leader after",
        "first ok op after",
        "completed in the fault",
        "each client's first ok op",
        "first ok after the heal",
        "failed",
        "timed out",
    ]
    items = "".join(f"<li>{escaped(line)}</li>" for line in recovery_lines(recovery))
    cells = [
        "<tr>"
        + "".join(
            f'<td data-label="{escaped(h)}">{escaped(c)}</td>'
            for h, c in zip(head, row, strict=True)
        )
        + "</tr>"
        for row in rows
    ]
    table = (
        '<table id="recovery"><tr class="head">'
        + "".join(f"<th>{escaped(h)}</th>" for h in head)
        + "</tr>"
        + "".join(cells)
        + "</table>"
    )
    return (
        "<h2>Recovery</h2><p>For each fault and each partition whose leader it took: the time "
        "from the fault's start until the cluster named another leader, until an op "
        "invoked after the start on that partition succeeded, and from the heal until one "
        f"did again; the ops invoked meanwhile that failed or timed out.</p><ul>{items}</ul>"
        + table
    )
