"""summary.md's sections on single runs: every INVALID run linked to its report.html, and
the runs new since the previous analysis of the same output folder, which STATE records."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.pipeline.trend_plots import config_label
from harness.verdicts import VERDICT_WORDS

Row = dict[str, Any]
STATE = "last-analysis.json"
"""Beside summary.md: when the last analysis ran and the run ids it analysed."""
NEW_SHOWN = 50
"""New runs listed one a line; the rest are counted (runs.csv has them all)."""
INVALID = VERDICT_WORDS[False]


@dataclass(frozen=True, slots=True)
class Previous:
    """What the last analysis of an output folder saw: when it ran, and its runs' ids."""

    at: str
    runs: frozenset[str]


def read_previous(out: Path) -> Previous | None:
    """Takes the output folder. Returns what its last analysis recorded, or None when
    there was none (or its record cannot be read: then every run is taken as seen first
    now, and the next analysis compares with this one)."""
    try:
        body = json.loads((out / STATE).read_text(encoding="utf-8"))
        return Previous(str(body["at"]), frozenset(map(str, body["runs"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_previous(out: Path, runs: Sequence[Row], now: datetime.datetime) -> None:
    """Takes the output folder, the runs analysed and the time. Records them in STATE
    (written whole, then renamed: never half a record)."""
    body = {
        "at": now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "runs": sorted(str(r["run"]) for r in runs),
    }
    tmp = out / f".{STATE}.{os.getpid()}"
    tmp.write_text(json.dumps(body, indent=0) + "\n", encoding="utf-8")
    tmp.replace(out / STATE)


def report_url(root: Path, out: Path, run: str) -> str:
    """Takes the results directory, the output folder and a run id. Returns the relative
    URL of the run's report.html from summary.md, percent-encoded as index.html does."""
    rel = Path(os.path.relpath(root / run / "report.html", out)).as_posix()
    return quote(rel.encode("utf-8", "surrogateescape"), safe="/")


def _what(row: Row) -> str:
    found = []
    if row.get("lost"):
        found.append(f"{row['lost']} lost")
    if row.get("nonlinearizable_keys"):
        found.append(f"{row['nonlinearizable_keys']} non-linearizable keys")
    if row.get("anomalies"):
        found.append(str(row["anomalies"]))
    return f" ({', '.join(found)})" if found else ""


def _item(row: Row, root: Path, out: Path) -> str:
    # A run id's brackets would end the link text early.
    text = str(row["run"]).replace("[", "\\[").replace("]", "\\]")
    link = f"[{text}]({report_url(root, out, str(row['run']))})"
    return f"- {link} {row['verdict']}: {config_label(row)}{_what(row)}"


def _newest_first(rows: Sequence[Row]) -> list[Row]:
    # A run folder is named by its start time, under its test's folder.
    by_run = sorted(rows, key=lambda r: str(r["run"]))
    return sorted(by_run, key=lambda r: str(r["run"]).rsplit("/", 1)[-1], reverse=True)


def invalid_section(runs: Sequence[Row], root: Path, out: Path) -> list[str]:
    """Takes the runs analysed (run, verdict, configuration, lost, nonlinearizable_keys,
    anomalies), the results directory and the output folder. Returns summary.md's list
    of every INVALID run, newest first, each linked to its report."""
    invalid = _newest_first([r for r in runs if r["verdict"] == INVALID])
    if not invalid:
        return ["## INVALID runs", "", f"None of the {len(runs)} runs is INVALID.", ""]
    return [
        "## INVALID runs",
        "",
        f"{len(invalid)} of {len(runs)} runs, newest first, each linked to its report:",
        "",
        *(_item(r, root, out) for r in invalid),
        "",
    ]


def new_runs(runs: Sequence[Row], previous: Previous | None) -> list[Row]:
    """Takes the runs analysed and what the last analysis saw. Returns the runs it did
    not analyse, newest first (none when there was no last analysis to compare with)."""
    if previous is None:
        return []
    return _newest_first([r for r in runs if str(r["run"]) not in previous.runs])


def new_line(runs: Sequence[Row], previous: Previous | None) -> str:
    """Returns the line `harness analyze` prints about the runs new since the last
    analysis of the output folder."""
    if previous is None:
        return "first analysis into this folder: no run marked new"
    new = new_runs(runs, previous)
    invalid = sum(r["verdict"] == INVALID for r in new)
    return f"{len(new)} new since the last analysis ({previous.at}), {invalid} of them INVALID"


def new_section(runs: Sequence[Row], previous: Previous | None, root: Path, out: Path) -> list[str]:
    """Takes the runs analysed, what the last analysis of this output folder saw (None:
    none did), the results directory and the output folder. Returns summary.md's section
    on the runs analysed now that it did not analyse: the INVALID ones, then all of them."""
    head = ["## New since the last analysis", ""]
    if previous is None:
        return [
            *head,
            f"First analysis of this output folder (no {STATE} here): no run is marked new; "
            "the next analysis lists the runs analysed after this one.",
            "",
        ]
    new = new_runs(runs, previous)
    since = f"the last analysis ({previous.at}, {len(previous.runs)} runs)"
    if not new:
        return [*head, f"No new run since {since}.", ""]
    invalid = [r for r in new if r["verdict"] == INVALID]
    lines = [*head, f"{len(new)} new runs since {since}, {len(invalid)} of them INVALID.", ""]
    if invalid:
        lines += ["New INVALID runs:", "", *(_item(r, root, out) for r in invalid), ""]
    lines += ["New runs:", "", *(_item(r, root, out) for r in new[:NEW_SHOWN])]
    if len(new) > NEW_SHOWN:
        lines.append(f"- ... and {len(new) - NEW_SHOWN} more (runs.csv)")
    return [*lines, ""]
