"""How a validity reads and what it exits with: VALID, INVALID or UNKNOWN, and Jepsen's
exit codes 0, 1 and 2. The one place every command and page takes them from."""

from __future__ import annotations

from typing import Any

from harness.exit_codes import EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID

VERDICT_WORDS: dict[Any, str] = {True: "VALID", False: "INVALID"}
UNKNOWN_WORD = "UNKNOWN"


def verdict_word(valid: Any) -> str:
    """Takes a validity; returns VALID, INVALID or UNKNOWN (anything not True or False)."""
    if valid is True or valid is False:
        return VERDICT_WORDS[valid]
    return UNKNOWN_WORD


def exit_code(valid: Any) -> int:
    """Takes a merged validity. Returns Jepsen's exit code for it: 0 valid, 1 invalid,
    2 unknown (anything else). Only a checker's False ever gives 1."""
    if valid is True:
        return EXIT_VALID
    return EXIT_INVALID if valid is False else EXIT_UNKNOWN
