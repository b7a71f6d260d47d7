"""The guard over bench/bench_porcupine.py's figures: each is compared with the figure
committed in bench/guard.json, and one worse by more than the file's tolerance is named.

Every figure is "lower is better": ours/Porcupine's time on a corpus, or seconds of our
start-up over Python's own. The committed file also says when and under what load its
figures were taken, so whoever reads a failure can judge it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GUARD = Path(__file__).resolve().parent / "guard.json"


@dataclass(frozen=True, slots=True)
class Committed:
    """bench/guard.json: the figures, the share by which one may worsen, and a note saying
    how they were measured (the machine, its load, the command)."""

    figures: dict[str, float]
    tolerance: float
    measured: str


def load_guard(path: Path = GUARD) -> Committed:
    """Takes the guard file's path. Returns what it holds; raises ValueError for a file
    that is not a guard's."""
    data: Any = json.loads(path.read_text())
    try:
        figures = {str(name): float(value) for name, value in data["figures"].items()}
        committed = Committed(figures, float(data["tolerance"]), str(data["measured"]))
    except (KeyError, TypeError, AttributeError, ValueError) as err:
        raise ValueError(f"{path}: not a guard file ({err!r})") from None
    if not all(value > 0 for value in figures.values()) or committed.tolerance < 0:
        raise ValueError(f"{path}: figures must be positive, and the tolerance not negative")
    return committed


def save_guard(committed: Committed, path: Path = GUARD) -> None:
    """Writes committed to path, figures rounded to 3 significant digits and sorted."""
    data = {
        "measured": committed.measured,
        "tolerance": committed.tolerance,
        "figures": {
            name: float(f"{value:.3g}") for name, value in sorted(committed.figures.items())
        },
    }
    path.write_text(json.dumps(data, indent=2) + "\n")


def regressions(committed: Committed, measured: dict[str, float]) -> list[str]:
    """Takes the committed figures and this run's. Returns a line for each figure worse by
    more than the tolerance (above committed x (1 + tolerance)), and for each figure only
    one side has: an empty list when the guard passes."""
    problems = []
    limit = 1 + committed.tolerance
    for name in sorted(committed.figures.keys() | measured.keys()):
        if name not in measured:
            problems.append(f"{name}: committed {committed.figures[name]:.3g}, not measured")
        elif name not in committed.figures:
            problems.append(f"{name}: measured {measured[name]:.3g}, no committed figure")
        elif measured[name] > committed.figures[name] * limit:
            was, now = committed.figures[name], measured[name]
            problems.append(
                f"{name}: {now:.3g} against {was:.3g} committed, {now / was - 1:+.0%} "
                f"(more than {committed.tolerance:.0%} worse)"
            )
    return problems
