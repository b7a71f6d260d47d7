"""The argparse types of the command line's options, and --ignore's help, in a module that
imports little: a command's --help builds its options with them without loading the
workloads or the checkers (the queue checker's kinds load only when --ignore is parsed).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """Takes int or float. Returns an argparse type accepting only finite numbers above zero
    (NaN compares false with everything, so it would pass a bare `<= 0` test)."""

    def parse(text: str) -> int | float:
        try:
            number = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(number) or number <= 0:
            raise argparse.ArgumentTypeError(f"must be a finite number above zero: {text!r}")
        return number

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def probability(text: str) -> float:
    """An argparse type accepting only a number from 0 to 1."""
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= number <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1: {text!r}")
    return number


def anomaly_kinds(text: str) -> frozenset[str]:
    """Takes --ignore's comma list. Returns the queue and transaction anomaly kinds it
    names; refuses a name that is none, naming the kinds there are."""
    from checkers.queue import parse_kinds  # the queue checker's: loaded when --ignore is given

    try:
        return parse_kinds(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


IGNORE_HELP = "queue: anomaly kinds (a comma list) to report without counting them against validity"
