"""Finds the run folders under a results directory (results/<test>/<stamp>/) and sets
aside, with the reason, those that cannot be analysed: no test.json, no history, no
results.json (still running, or stopped before its check).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

TEST, HISTORY, RESULTS = "test.json", "history.jsonl", "results.json"
RUN_FILES = (TEST, HISTORY, RESULTS)
IN_PROGRESS_S = 600.0
"""A history written to this recently, with no results.json yet, is a run still going."""


@dataclass(frozen=True, slots=True)
class Broken:
    """A run folder left out of the analysis, and why."""

    run: str
    reason: str


@dataclass(frozen=True, slots=True)
class Listing:
    """The run folders with all three files (by run id, `<test>/<stamp>`), and the rest."""

    root: Path
    complete: list[str]
    broken: list[Broken]

    def files(self, name: str) -> list[str]:
        """Returns the path of file `name` in every complete run folder."""
        return [str(self.root / run / name) for run in self.complete]


def run_folders(root: Path, skip: Path | None = None) -> list[str]:
    """Takes a results directory. Returns the run ids of its run folders (a folder two
    levels down holding any run file), sorted; symbolic links and `skip` are left out."""
    found = []
    skipped = skip.resolve() if skip is not None else None
    for test in _subdirs(root):
        if skipped is not None and test.resolve() == skipped:
            continue
        for run in _subdirs(test):
            if any((run / name).is_file() for name in RUN_FILES):
                found.append(f"{test.name}/{run.name}")
    return sorted(found)


def _subdirs(folder: Path) -> list[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
    ]


def missing_reason(folder: Path, now: float) -> str | None:
    """Takes a run folder. Returns why it cannot be analysed from its files' presence
    alone, or None when test.json, history.jsonl and results.json are all there."""
    has = {name: (folder / name).is_file() for name in RUN_FILES}
    if has[RESULTS] and has[HISTORY] and has[TEST]:
        return None
    if not has[TEST]:
        return "no test.json"
    if not has[HISTORY]:
        return "no history.jsonl (the run stopped before its workload started)"
    age = now - (folder / HISTORY).stat().st_mtime
    if age < IN_PROGRESS_S:
        return f"in progress (history written {age:.0f} s ago, no results.json yet)"
    return "no results.json (the run stopped before its check)"


def list_runs(root: Path, skip: Path | None = None) -> Listing:
    """Takes a results directory (and a folder under it to leave out, the output's).
    Returns its run folders split into complete and broken."""
    now = time.time()
    complete, broken = [], []
    for run in run_folders(root, skip):
        reason = missing_reason(root / run, now)
        if reason is None:
            complete.append(run)
        else:
            broken.append(Broken(run, reason))
    return Listing(root, complete, broken)
