"""How a validity reads and what it exits with: VALID, INVALID, UNKNOWN or INCOMPLETE, and
Jepsen's exit codes 0, 1 and 2. The one place every command and page takes them from."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from harness.exit_codes import EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID

VERDICT_WORDS: dict[Any, str] = {True: "VALID", False: "INVALID"}
UNKNOWN_WORD = "UNKNOWN"
INCOMPLETE_WORD = "INCOMPLETE"
"""A run whose workload did not run its planned time (Jepsen's :incomplete): whatever its
part of a history shows, it says nothing of how often the whole test fails."""
DURATION = "duration"
"""results.json's section saying whether the workload ran its planned time, and if not why."""
TERMINAL_COLOURS = {"VALID": "32", "INVALID": "1;31", "UNKNOWN": "33", INCOMPLETE_WORD: "90"}
"""ANSI colours of the verdict words on a terminal: green, bold red, yellow and grey."""


def verdict_word(valid: Any) -> str:
    """Takes a validity; returns VALID, INVALID or UNKNOWN (anything not True or False)."""
    if valid is True or valid is False:
        return VERDICT_WORDS[valid]
    return UNKNOWN_WORD


def incomplete(results: Mapping[str, Any]) -> bool:
    """Takes results.json's body. Returns whether it says the workload stopped short."""
    duration = results.get(DURATION)
    return isinstance(duration, Mapping) and duration.get("complete") is False


def run_verdict(results: Mapping[str, Any]) -> str:
    """Takes results.json's body. Returns the run's verdict: INVALID whenever a checker
    found the history invalid (an anomaly in part of a run is one all the same), else
    INCOMPLETE when the workload stopped short, else VALID or UNKNOWN."""
    valid = results.get("valid")
    if valid is not False and incomplete(results):
        return INCOMPLETE_WORD
    return verdict_word(valid)


def painted(word: str, terminal: bool) -> str:
    """Takes a verdict word and whether it goes to a terminal. Returns it in its colour
    there (unless NO_COLOR is set), else as it is."""
    colour = TERMINAL_COLOURS.get(word)
    if not terminal or colour is None or os.environ.get("NO_COLOR"):
        return word
    return f"\033[{colour}m{word}\033[0m"


def verdict_exit_code(word: str) -> int:
    """Takes a verdict word (VALID, INVALID, UNKNOWN, INCOMPLETE). Returns Jepsen's exit
    code for it: 0 valid, 1 invalid, 2 for unknown and for INCOMPLETE (whatever part of a
    run was checked, the run says nothing of how often the whole test fails)."""
    if word == VERDICT_WORDS[True]:
        return EXIT_VALID
    return EXIT_INVALID if word == VERDICT_WORDS[False] else EXIT_UNKNOWN


def exit_code(valid: Any) -> int:
    """Takes a merged validity. Returns Jepsen's exit code for it: 0 valid, 1 invalid,
    2 unknown (anything else). Only a checker's False ever gives 1."""
    if valid is True:
        return EXIT_VALID
    return EXIT_INVALID if valid is False else EXIT_UNKNOWN
