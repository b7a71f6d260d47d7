"""What an explanation is made of: a Point (one thing said, its details under it), the
shape of the results it reads and how many of a thing it names; shared by explain.py and
loss_story.py, which tells a queue run's loss for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Section = dict[str, Any]
KEYS_SHOWN = 3
"""The most keys, faults or transactions a point names before it says how many more."""
VALUES_SHOWN = 5
"""The most sent values a partition's loss names."""


@dataclass(frozen=True)
class Point:
    """One thing the explanation says, and the details under it: a fault's steps, the
    partitions a loss struck, the anomaly kinds that follow from it."""

    text: str
    under: tuple[str, ...] = ()
