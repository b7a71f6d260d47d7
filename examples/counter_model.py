"""A counter: `add` (value n) adds n, `read` (ok value: the count) reads it; it starts at 0.

harness check history.jsonl --model examples/counter_model.py:COUNTER
"""

from __future__ import annotations

from checkers.linearizable import Inconsistent, Model
from history import Op


def step(count: int, op: Op) -> int | Inconsistent:
    # A crashed add reaches step too, with its invoke value: it adds when it takes effect.
    value: int = op.value
    if op.f == "add":
        return count + value
    if value == count:
        return count
    return Inconsistent("read {} but the count is {}", value, count)


def malformed(op: Op) -> str | None:
    # Checked on every op before the search, so step may assume integers; a crashed read
    # carries no value, and is dropped because "read" is in reads.
    carries_value = op.type == "ok" or op.f == "add"
    if carries_value and type(op.value) is not int:  # not bool: true is not 1 in a history
        return f"a counter {op.f} value must be an integer, not {op.value!r}"
    return None


COUNTER = Model(
    name="counter",
    init=0,
    step=step,
    fs=frozenset({"add", "read"}),
    reads=frozenset({"read"}),
    malformed=malformed,
)
