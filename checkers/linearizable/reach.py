"""Pruning by the next read: a configuration whose state can no longer satisfy a read still
to come is dead as soon as it is reached, not when that read's return is met.

Some models' states only grow between blind ops (kv-append: appends extend the string, gets
leave it, only a put sets it whatever it was). Such a model gives `Model.reaches(state, g)`:
False only when read g fails after `state` followed by any sequence of non-blind ops.

Why pruning is sound. Take a configuration (ok ops L linearized, crashed ops I used, state
s) and a read g not in L. In any linearization extending it, the ops between s and g are
ok ops not in L and crashed ops not in I, each invoked no later than g returned (an op
invoked after g returned comes after g). If none of those that are blind remains, every op
between s and g is non-blind, so when reaches(s, g) is False, g fails in every extension
and the configuration has none. The search only ever leaves out crashed ops that cannot
change the verdict (checkers.linearizable.crashed), so counting the crashed ops it still offers is
enough. Touching ops count as concurrent here, as in the search: "no later" includes equal.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence

from checkers.linearizable.crashed import CrashedOps
from checkers.linearizable.models import Model, State
from history import Op


class NextRead:
    """Decides, for one key's search, whether a configuration is dead by the earliest read
    still to come. Ok ops are numbered in return order and the linearized set given as
    (z, window), as in checkers.linearizable.search."""

    def __init__(
        self,
        oks: Sequence[Op],
        rets: Sequence[float],
        crashed: CrashedOps,
        model: Model,
        reaches: Callable[[State, Op], bool],
    ) -> None:
        n = len(oks)
        self.oks, self.rets, self.n, self.reaches = oks, rets, n, reaches
        self.next_read = [n] * (n + 1)  # the first read numbered i or more; n if none
        for i in range(n - 1, -1, -1):
            self.next_read[i] = i if oks[i].f in model.reads else self.next_read[i + 1]
        blind = [_blind(op, model) for op in oks]
        self.blind_ok = sum(1 << i for i, b in enumerate(blind) if b)
        # the earliest invoke among blind ok ops numbered i or more
        self.blind_call_from = [math.inf] * (n + 1)
        for i in range(n - 1, -1, -1):
            call = oks[i].call if blind[i] else math.inf
            self.blind_call_from[i] = min(call, self.blind_call_from[i + 1])
        self.crashed_calls = crashed.calls
        self.blind_crashed = sum(1 << o for o, op in enumerate(crashed.ops) if _blind(op, model))

    def unreachable(self, state: State, z: int, window: int, used: int) -> int:
        """Returns the earliest read not yet linearized when no extension of the
        configuration (z, window, used, state) can linearize it, else -1."""
        g = self._earliest_read(z, window)
        if g == self.n or self.reaches(state, self.oks[g]):
            return -1
        return -1 if self._blind_may_precede(g, z, window, used) else g

    def bounding_read(self, z: int, window: int, used: int) -> int:
        """Returns the earliest read not yet linearized when no blind op may come before it
        (so every state until it must reach it: see `reaches_read`), else -1."""
        g = self._earliest_read(z, window)
        if g == self.n or self._blind_may_precede(g, z, window, used):
            return -1
        return g

    def reaches_read(self, state: State, g: int) -> bool:
        """Whether state may still lead to read g (a bounding_read) succeeding."""
        return self.reaches(state, self.oks[g])

    def _earliest_read(self, z: int, window: int) -> int:
        """Returns the earliest read (in return order) not yet linearized, or n."""
        g, width, next_read = self.next_read[z], window.bit_length(), self.next_read
        while g < z + width and window >> (g - z) & 1:
            g = next_read[g + 1]
        return g

    def _blind_may_precede(self, g: int, z: int, window: int, used: int) -> bool:
        """Whether a blind op not yet linearized (ok) or used (crashed) was invoked by the
        time read g returned."""
        ret, width = self.rets[g], window.bit_length()
        if self.blind_call_from[min(z + width, self.n)] <= ret:
            return True  # beyond the window nothing is linearized
        pending = self.blind_ok >> z & ~window & ((1 << width) - 1)
        while pending:
            low = pending & -pending
            if self.oks[z + low.bit_length() - 1].call <= ret:
                return True
            pending ^= low
        invoked = bisect_right(self.crashed_calls, ret)
        return bool(self.blind_crashed & ~used & ((1 << invoked) - 1))


def _blind(op: Op, model: Model) -> bool:
    """Whether op observes nothing: it leaves every state in the same one."""
    seen = model.observes(op)
    return seen is not None and not seen


def next_read(
    oks: Sequence[Op], rets: Sequence[float], crashed: CrashedOps, model: Model
) -> NextRead | None:
    """Returns the pruning for one key's search, or None when the model gives no reaches."""
    if model.reaches is None:
        return None
    return NextRead(oks, rets, crashed, model, model.reaches)
