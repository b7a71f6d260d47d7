"""The word `harness matrix` prints for a finished run, in the verdict words of every other
command: its results.json's verdict, else its exit code's, else UNKNOWN and why."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from harness.exit_codes import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID
from harness.results import RESULTS, RESULTS_SHAPE, read_shaped
from harness.verdicts import DURATION, INCOMPLETE_WORD, UNKNOWN_WORD, VERDICT_WORDS, run_verdict

BY_EXIT = {EXIT_VALID: VERDICT_WORDS[True], EXIT_INVALID: VERDICT_WORDS[False]}
"""The codes that say the verdict alone. 2 does not: UNKNOWN and INCOMPLETE both exit 2."""
REPORT_LINE = re.compile(r"^\s*report: (.+)$", re.MULTILINE)
"""The last line of `harness run`'s summary names the run's report.html."""
TAIL_BYTES = 1 << 16
"""How much of a run's log end is read for that line (the summary is a few lines)."""


def run_folder(log: Path) -> Path | None:
    """Takes a run's log (what `harness run` printed). Returns the folder of the last
    report it names, or None when it names none (the run ended before its report)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - TAIL_BYTES))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    found = REPORT_LINE.findall(tail)
    return Path(found[-1].strip()).parent if found else None


def label(code: int, log: Path) -> str:
    """Takes a run's exit code (negative: killed by that signal, as subprocess says) and
    its log. Returns its verdict as results.json gives it (INCOMPLETE with the reason),
    else as its exit code does (0 VALID, 1 INVALID), else UNKNOWN with why there is
    no verdict; never a word the code only suggests."""
    folder = run_folder(log)
    results = read_shaped(folder / RESULTS, RESULTS_SHAPE)[0] if folder else None
    if isinstance(results, dict):
        word = run_verdict(results)
        if word == INCOMPLETE_WORD:
            return f"{word} ({results[DURATION].get('reason') or 'stopped short'})"
        return word
    if code in BY_EXIT:
        return BY_EXIT[code]
    return f"{UNKNOWN_WORD} ({_why(code)}, see {log})"


def _why(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}, no results.json"
        except ValueError:
            return f"killed by signal {-code}, no results.json"
    if code == EXIT_UNKNOWN:
        return "no results.json"
    if code == EXIT_INTERRUPTED:
        return "interrupted before its results were written"
    return f"ended without a verdict, exit {code}"
