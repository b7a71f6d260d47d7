"""The consumer- and share-group acceptance table (issue 23): per release, workload, group
protocol and condition, the runs' verdicts, anomalies, and ok ops per second inside the
fault windows beside outside them, read from each run's folder.

Usage: `.venv/bin/python bench/group_table.py RESULTS_ROOT [ROOT ...]`; every folder under
a root with test.json, results.json and history.jsonl is one run.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NS = 1e9
HISTORY = "history.jsonl"
CHECKED_SECTIONS = ("queue", "groups", "share")
CRASH_MARKS = ("crashed before it began", "crashed after the poll")
"""How a completion says --crash-clients crashed its client: a queue op's error
(workloads/queue_client.py), a share poll's `crashed` (workloads/share_client.py)."""

Cell = tuple[str, str, str, str]
"""Release (with its metadata mode), workload, group protocol, condition."""


@dataclass
class Tally:
    """One cell's sums over its runs."""

    runs: int = 0
    invalid: int = 0
    unknown: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    ok_in: int = 0
    seconds_in: float = 0.0
    ok_out: int = 0
    seconds_out: float = 0.0
    crashes: int = 0
    commits: Counter[str] = field(default_factory=Counter)
    callbacks: Counter[str] = field(default_factory=Counter)


def run_folders(roots: Sequence[Path]) -> Iterator[Path]:
    """Yields every run folder under the roots with a history and its results, in name
    order: a run that broke before its workload (a cluster not up) is no evidence."""
    for root in roots:
        for test in sorted(root.rglob("test.json")):
            if (test.parent / "results.json").is_file() and (test.parent / HISTORY).is_file():
                yield test.parent


def cell(spec: dict[str, Any]) -> Cell:
    """Takes a run's spec. Returns the table cell it belongs to."""
    protocol = "share" if spec["workload"] == "share" else spec.get("group_protocol", "classic")
    condition = ",".join(spec["nemesis"]) or "none"
    if spec.get("crash_clients"):
        condition = "crash-clients" if condition == "none" else f"{condition} + crash-clients"
    return f"{spec['kafka_version']} {spec['metadata']}", spec["workload"], protocol, condition


def ok_times(history: Path) -> tuple[list[float], int]:
    """Takes a history file. Returns the clients' ok completions' times in seconds, and
    how many completions say the client was crashed on purpose."""
    times, crashes = [], 0
    with history.open() as lines:
        for line in lines:
            op = json.loads(line)
            if op.get("process") == "nemesis" or op.get("type") == "invoke":
                continue
            if op.get("f") == "drain":
                continue  # the final reads come after every fault: not the workload's rate
            said = f"{op.get('error', '')} {op.get('crashed', '')}"
            crashes += any(mark in said for mark in CRASH_MARKS)
            if op.get("type") == "ok":
                times.append(op["time"] / NS)
    return times, crashes


def add_run(tally: Tally, folder: Path) -> None:
    """Adds one run's figures to its cell's tally."""
    results = json.loads((folder / "results.json").read_text())
    tally.runs += 1
    tally.invalid += results.get("valid") is False
    tally.unknown += results.get("valid") not in (True, False)
    for section in CHECKED_SECTIONS:
        for kind, found in (results.get(section) or {}).get("kinds", {}).items():
            if isinstance(found, dict) and found.get("count"):
                tally.kinds[f"{section}:{kind}"] += found["count"]
    groups = results.get("groups") or {}
    tally.commits.update(groups.get("commits", {}))
    tally.callbacks.update(groups.get("callbacks", {}))
    times, crashes = ok_times(folder / HISTORY)
    tally.crashes += crashes
    windows = [(w["start"], w["stop"]) for w in results.get("nemesis", {}).get("windows", [])]
    ran = results.get("duration", {}).get("ran_s") or max(times, default=0.0)
    inside = sum(min(stop, ran) - start for start, stop in windows if start < ran)
    is_in = [any(start <= t <= stop for start, stop in windows) for t in times]
    tally.ok_in += sum(is_in)
    tally.ok_out += len(times) - sum(is_in)
    tally.seconds_in += inside
    tally.seconds_out += ran - inside


def rate(ops: int, seconds: float) -> str:
    """Returns ops per second, or "-" over no time."""
    return f"{ops / seconds:.1f}" if seconds > 0 else "-"


def table(cells: dict[Cell, Tally]) -> str:
    """Returns the markdown table, one row per cell."""
    head = (
        "| release | workload | protocol | condition | runs | invalid / unknown | anomalies"
        " (sum) | ok ops/s in faults | ok ops/s outside | client crashes | commits ok / fail"
        " / info | callbacks |"
    )
    lines = [head, "| --- " * 12 + "|"]
    for key, t in sorted(cells.items()):
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(t.kinds.items())) or "none"
        commits = "/".join(str(t.commits.get(k, 0)) for k in ("ok", "fail", "info"))
        callbacks = ", ".join(f"{k} {n}" for k, n in sorted(t.callbacks.items())) or "-"
        lines.append(
            f"| {' | '.join(key)} | {t.runs} | {t.invalid} / {t.unknown} | {kinds} "
            f"| {rate(t.ok_in, t.seconds_in)} | {rate(t.ok_out, t.seconds_out)} "
            f"| {t.crashes} | {commits if t.commits else '-'} | {callbacks} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", type=Path, nargs="+")
    args = parser.parse_args()
    cells: dict[Cell, Tally] = {}
    for folder in run_folders(args.roots):
        spec = json.loads((folder / "test.json").read_text())["spec"]
        add_run(cells.setdefault(cell(spec), Tally()), folder)
    print(table(cells))


if __name__ == "__main__":
    main()
