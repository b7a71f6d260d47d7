"""Which history files a `harness check PATH...` names, and where each one's drawings go.

A file is taken as it is, whatever its name. A folder holding history.jsonl or
history.edn is a results folder and stands for that history alone (its node logs are not
histories). Any other folder is searched recursively for results folders and for files
named like a history of a supported format (*.jsonl, *.edn, Jepsen's *.log); hidden
entries and links to folders are not followed, so `results/latest` is not read twice, and
the harness's own crash logs (`harness-check-crash-*.log`) are never taken for Jepsen's.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Final

from history.formats import HistoryError
from history.source import HISTORY_FILES, STDIN

HISTORY_SUFFIXES: Final = (".jsonl", ".edn", ".log")
CHECK_CRASH_LOG_PREFIX: Final = "harness-check-crash-"
"""How `harness check` names the traceback of a crash, which it may leave among histories."""
OWN_LOG_PREFIXES: Final = (CHECK_CRASH_LOG_PREFIX, "harness-crash-")


def find_histories(paths: list[str]) -> tuple[list[str], list[HistoryError]]:
    """Takes the PATHs given. Returns (the history files, in the order given and sorted
    within each folder, each once; a `PATH:0: problem` error for each folder that holds
    none or cannot be read)."""
    found: list[str] = []
    unreadable: list[HistoryError] = []
    seen: set[str] = set()
    for path in paths:
        files, problems = _histories_in(path)
        unreadable += problems
        for file in files:
            real = file if file == STDIN else os.path.realpath(file)
            if real not in seen:
                seen.add(real)
                found.append(file)
    return found, unreadable


def _histories_in(path: str) -> tuple[list[str], list[HistoryError]]:
    if path == STDIN or not os.path.isdir(path):
        return [path], []  # a file, or what the reader will refuse with its reason
    results_history = _results_history(path)
    if results_history is not None:
        return [results_history], []
    problems: list[HistoryError] = []

    def refused(err: OSError) -> None:
        problems.append(
            HistoryError(err.filename or path, 0, f"cannot read: {err.strerror or err}")
        )

    files: list[str] = []
    for folder, dirs, names in os.walk(path, onerror=refused):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        held = _results_history(folder, names)
        if held is not None:
            files.append(held)
            dirs.clear()
            continue
        files += [os.path.join(folder, n) for n in sorted(names) if _may_be_history(n)]
    if not files and not problems:
        problems.append(HistoryError(path, 0, "no history files in this folder"))
    return files, problems


def _may_be_history(name: str) -> bool:
    """Whether a folder search takes a file of this name for a history."""
    if name.startswith(".") or name.startswith(OWN_LOG_PREFIXES):
        return False
    return name.endswith(HISTORY_SUFFIXES)


def _results_history(folder: str, names: list[str] | None = None) -> str | None:
    """Returns the history a results folder holds, or None when folder is not one."""
    present = set(names) if names is not None else None
    for name in HISTORY_FILES:
        candidate = os.path.join(folder, name)
        if (name in present) if present is not None else os.path.isfile(candidate):
            return candidate
    return None


def drawing_folders(files: list[str], out: str | None) -> dict[str, Path]:
    """Takes the history files of one command and the --out folder (None: beside each
    history). Returns where each file's drawings go, never one folder for two files.

    Without --out: the history's folder, or its folder/<stem>/ when that folder holds
    other histories of the command too. With --out: --out itself for a lone history, else
    --out/<stem>/, the stem being the history's path below the histories' common folder.
    A stem is the path without its suffix (a results folder's path for its history; the
    whole name when what is left would be `.` or `..`, as of `...jsonl`, so that nothing is
    drawn outside), with a count added where two would meet (x.log and x.edn)."""
    if out is None:
        shared = Counter(Path(f).parent for f in files)
        folders: dict[str, Path] = {}
        taken: set[Path] = set()
        for file in files:
            parent = Path(file).parent
            alone = shared[parent] == 1
            folders[file] = parent if alone else _unique(parent / _stem(Path(file).name), taken)
        return folders
    if len(files) == 1:
        return {files[0]: Path(out)}
    real = {f: os.path.realpath(f) for f in files}
    common = os.path.commonpath([os.path.dirname(r) for r in real.values()])
    taken = set()
    return {f: _unique(Path(out) / _stem(os.path.relpath(real[f], common)), taken) for f in files}


def _stem(relative: str) -> Path:
    path = Path(relative)
    if path.name in HISTORY_FILES and path.parent != Path("."):
        return path.parent
    stem = path.with_suffix("")
    # `...jsonl` less its suffix is `..`, the folder above: such a name keeps its suffix.
    return path if stem.name in ("", ".", "..") else stem


def _unique(folder: Path, taken: set[Path]) -> Path:
    """Returns folder, or folder-2, folder-3... the first not taken yet; takes it."""
    candidate, count = folder, 1
    while candidate in taken:
        count += 1
        candidate = folder.with_name(f"{folder.name}-{count}")
    taken.add(candidate)
    return candidate
