"""Checker results: Jepsen's three-valued validity and its merge, and crash-safe checking.

A composed verdict is the worst of its parts: False over "unknown" over True.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any, Literal

Validity = bool | Literal["unknown"]
Result = dict[str, Any]

UNKNOWN: Literal["unknown"] = "unknown"
# Lower rank wins the merge: one invalid part makes the whole invalid.
_RANK: dict[Any, int] = {False: 0, UNKNOWN: 1, True: 2}


def merge_valid(*vals: Validity) -> Validity:
    """Takes validities; returns the worst (False > "unknown" > True), True when none.

    Raises ValueError for anything that is not a validity.
    """
    worst: Validity = True
    for val in vals:
        if not _is_validity(val):
            raise ValueError(f"not a validity: {val!r}")
        if _RANK[val] < _RANK[worst]:
            worst = val
    return worst


def _is_validity(val: object) -> bool:
    return val is True or val is False or val == UNKNOWN


def check_safe(fn: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """Takes a checker and its arguments; returns its result, or, if it raised,
    `{"valid": "unknown", "error": "...", "trace": "..."}` so the run still reports.
    """
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # a checker bug must not cost the run its other results
        return {
            "valid": UNKNOWN,
            "error": f"{type(e).__name__}: {e}",
            "trace": traceback.format_exc(),
        }


def error_line(err: BaseException) -> str:
    """Takes an exception, a user's maybe. Returns its type and message on one line of at
    most about 200 characters, e.g. `SystemExit: 1`; never raises, even when the exception
    cannot print itself (only a KeyboardInterrupt gets through, an interrupt's maybe)."""
    try:
        text = " ".join(str(err).split())[:200]
    except KeyboardInterrupt:
        raise
    except BaseException:  # its own __str__ broke, or exited: the type says what it was
        text = ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
