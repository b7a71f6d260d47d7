"""The index's first table: every configuration against every Kafka release, each cell the
runs' count, how many were INVALID and the newest run's verdict linked to its report, so a
page of hundreds of runs is read at a glance before its groups are opened.

A cell says its count first and names the newest run's verdict as such ("10 of 19 INVALID;
newest VALID"): a badge before the count read as the cell's verdict ("VALID 10 of 19
INVALID", a contradiction)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from harness.report.page_markup import VERDICT_COLOURS

CONFIG = ("workload", "store", "nemesis", "config")
"""A row: what ran and under which faults and settings (index.GROUP_BY without the release)."""
RELEASE = ("kafka", "metadata")
"""A column: the release and its metadata mode."""
GLANCE_STYLE = """
#glance td,#glance th{white-space:normal}#glance td[data-release]{min-width:7em}
@media (max-width:60em){#glance,#glance tbody,#glance tr,#glance td{display:block}
#glance tr.head{display:none}#glance tr{border-top:1px solid #ccc;padding:.3em 0}
#glance td{border:none;padding:.1em .6em;white-space:normal}#glance td:empty{display:none}
#glance td:first-child{font-weight:600}#glance td[data-release]{display:inline-block}
#glance td[data-release]::before{content:attr(data-release) ": ";color:#555}
#glance caption{display:block;caption-side:top;margin-bottom:.3em}}
"""
"""The table's cells wrap (7 releases' columns did not fit at 1400 px unwrapped); below
60em (a page 800 px wide held 2 of the 7, the rest a sideways scroll away) each
configuration is stacked: its name, then its releases' cells in a line that wraps, each
named, the empty ones left out."""


def newest_first(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Takes run entries. Returns them newest first (run folders are named by start time;
    the index lists each verdict's runs in this order too)."""
    return sorted(entries, key=lambda e: (e["run"].split("/", 1)[-1], e["run"]), reverse=True)


def glance_table(entries: Sequence[dict[str, Any]], rank: dict[str, int]) -> str:
    """Takes run entries and the verdicts' listing order (worst first). Returns the table's
    HTML: a row per configuration, worst first, and a column per release, oldest first;
    empty when there is no run."""
    if not entries:
        return ""
    cells: dict[tuple[str, ...], dict[tuple[str, ...], list[dict[str, Any]]]] = {}
    for entry in newest_first(entries):
        row = cells.setdefault(tuple(entry[k] for k in CONFIG), {})
        row.setdefault(tuple(entry[k] for k in RELEASE), []).append(entry)
    releases = sorted({r for row in cells.values() for r in row}, key=_release_order)

    def worst(config: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
        runs = [e for found in cells[config].values() for e in found]
        return min(rank.get(e["verdict"], len(rank)) for e in runs), config

    head = '<tr class="head"><th>configuration</th>' + "".join(
        f"<th>{_e(' '.join(r for r in release if r))}</th>" for release in releases
    )
    rows = [
        f"<tr><td>{_e(' · '.join(c for c in config if c))}</td>"
        + "".join(_cell(cells[config].get(release, []), release) for release in releases)
        + "</tr>"
        for config in sorted(cells, key=worst)
    ]
    caption = "<caption>each cell: the runs, then the newest run's verdict (its report)</caption>"
    table = f'<table id="glance">{caption}{head}</tr>{"".join(rows)}</table>'
    return f'<div class="scroll">{table}</div>'


def newest_line(entries: Sequence[dict[str, Any]]) -> str:
    """Takes run entries. Returns a line naming the newest run with its verdict, linked
    (its group may be closed further down); empty when there is no run."""
    if not entries:
        return ""
    newest = newest_first(entries)[0]
    what = " · ".join(newest[k] for k in (*CONFIG, *RELEASE) if newest[k])
    return f"<p>Newest: {_badge(newest)} {_e(what)}, {_e(newest['run'])}</p>"


def _cell(runs: Sequence[dict[str, Any]], release: tuple[str, ...]) -> str:
    if not runs:
        return "<td></td>"
    named = _e(" ".join(r for r in release if r))
    invalid = sum(1 for e in runs if e["verdict"] == "INVALID")
    counted = (
        f"{invalid} of {len(runs)} INVALID"
        if invalid
        else f"{len(runs)} run" + ("s" if len(runs) != 1 else "")
    )
    return f'<td data-release="{named}">{_e(counted)}; newest {_badge(runs[0])}</td>'


def _badge(entry: dict[str, Any]) -> str:
    word = entry["verdict"]
    colour = VERDICT_COLOURS.get(word, "#7f7f7f")
    return (
        f'<a class="v" href="{_e(entry["report"])}" style="background:{colour}" '
        f'title="the newest run: {_e(entry["run"])}">{_e(word)}</a>'
    )


def _release_order(release: tuple[str, ...]) -> tuple[Any, ...]:
    version = tuple(int(n) for n in re.findall(r"\d+", release[0])) if release else ()
    return (version, release)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)
