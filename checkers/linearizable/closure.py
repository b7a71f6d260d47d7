"""The moves crashed ops offer the search: which may come next, and where chains of them lead.

Before each ok op the search may place a chain of crashed ops; this module lists the states
such chains reach, each with the minimal sets of crashed ops that reach it.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence

from checkers.linearizable.crashed import Class, CrashedOps, weaker
from checkers.linearizable.models import Inconsistent, Model, State
from checkers.linearizable.reach import NextRead

# (state, crashed ops used as a bitmask, the order they were applied in)
Closure = tuple[tuple[State, int, tuple[int, ...]], ...]
MEMO_LIMIT = 2_000_000  # memoised ints/entries kept before a memo is dropped


class Exhausted(Exception):
    """Raised when a time or memory bound is hit; `cause` is "timeout" or "memory"."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class CrashedMoves:
    """Chains of crashed ops for one key's search. Ok ops are numbered in return order; the
    linearized set is given as (z, window): every ok op below z is linearized, and bit i of
    window says whether ok op z + i is."""

    def __init__(
        self,
        crashed: CrashedOps,
        rets: Sequence[float],
        model: Model,
        deadline: float | None,
        next_read: NextRead | None = None,
    ) -> None:
        self.crashed = crashed
        self.next_read = next_read
        self.rets = rets
        self.step = model.step
        self.deadline = deadline
        self.last_ok = [mask.bit_length() - 1 for mask in crashed.obs_ok]
        self._candidates: dict[int, list[int]] = {}
        self._candidate_keys: list[int] = []
        self._candidate_size = 0
        self._closures: dict[tuple[State, tuple[int, ...], int], Closure] = {}

    def _alive(self, o: int, z: int) -> bool:
        return self.last_ok[o] >= z or bool(self.crashed.obs_info[o])

    def candidates(self, z: int) -> list[int]:
        """Takes z. Returns the crashed ops invoked by the return of ok op z (so they may
        come before it) that some ok op from z on or some crashed op may observe, in
        invoke order. Memoised, and derived from the nearest smaller z seen."""
        found = self._candidates.get(z)
        if found is not None:
            return found
        ready = bisect_right(self.crashed.calls, self.rets[z])
        below = bisect_left(self._candidate_keys, z) - 1
        if below >= 0:
            z0 = self._candidate_keys[below]
            start = bisect_right(self.crashed.calls, self.rets[z0])
            found = [o for o in self._candidates[z0] if self._alive(o, z)]
            found += [o for o in range(start, ready) if self._alive(o, z)]
        else:
            found = [o for o in range(ready) if self._alive(o, z)]
        if self._candidate_size > MEMO_LIMIT:
            self._candidates.clear()
            self._candidate_keys.clear()
            self._candidate_size = 0
        self._candidates[z] = found
        insort(self._candidate_keys, z)
        self._candidate_size += len(found) + 1
        return found

    def _relevant(self, o: int, used: int, z: int, window: int, width: int) -> bool:
        """Whether crashed op o may still be observed: by a crashed op not yet used, or by
        an ok op not yet linearized."""
        if self.crashed.obs_info[o] & ~used:
            return True
        last = self.last_ok[o]
        if last < z:
            return False
        if last >= z + width:
            return True  # beyond the window nothing is linearized yet
        return bool(self.crashed.obs_ok[o] >> z & ~window)

    def closure(self, state: State, used: int, z: int, window: int) -> Closure:
        """Returns the states reachable from `state` by chains of crashed ops that may come
        before ok op z and are not in `used`, each with a minimal set of ops (and their
        order). The first element is `state` itself, reached by no op. With a next read that
        no blind op may precede (reach.py), chains through a state that cannot reach
        it are left out: whatever follows them before that read is not blind either."""
        width = window.bit_length()
        avail = tuple(
            o
            for o in self.candidates(z)
            if not used >> o & 1 and self._relevant(o, used, z, window, width)
        )
        if not avail:
            return ((state, 0, ()),)
        g = -1 if self.next_read is None else self.next_read.bounding_read(z, window, used)
        key = (state, avail, g)
        found = self._closures.get(key)
        if found is None:
            found = self._chains(state, avail, g)
            if len(self._closures) > MEMO_LIMIT // 20:
                self._closures.clear()
            self._closures[key] = found
        return found

    def _chains(self, state: State, avail: tuple[int, ...], g: int) -> Closure:
        """Breadth first over chains of the crashed ops `avail`: returns each reachable state
        with every minimal set of ops reaching it (a superset reaches nothing new: the
        extra ops can go at the end instead), leaving out states that cannot reach read g
        (if g is not -1)."""
        ops, classes, step = self.crashed.ops, self.crashed.classes, self.step
        cut = None if g < 0 or self.next_read is None else self.next_read.reaches_read
        members: dict[Class, list[int]] = {}
        for o in avail:
            members.setdefault(classes[o], []).append(o)
        result: list[tuple[State, int, tuple[int, ...]]] = [(state, 0, ())]
        minimal: dict[State, list[int]] = {state: [0]}
        frontier = list(result)
        while frontier:
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise Exhausted("timeout")
            if len(result) > MEMO_LIMIT // 20:
                raise Exhausted("memory")
            grown = []
            for st, chain, order in frontier:
                firsts = {c: _first_unused(ms, chain) for c, ms in members.items()}
                for c, o in firsts.items():
                    if o < 0:
                        continue
                    st2 = step(st, ops[o])
                    if st2.__class__ is Inconsistent or st2 == st:
                        continue
                    if cut is not None and not cut(st2, g):
                        continue  # dead: see closure
                    if any(
                        w >= 0 and weaker(classes[w], c) and step(st, ops[w]) == st2
                        for w in firsts.values()
                    ):
                        continue  # a weaker op does the same here and keeps o for later
                    chain2 = chain | 1 << o
                    sets = minimal.setdefault(st2, [])
                    if any(x & ~chain2 == 0 for x in sets):
                        continue
                    sets.append(chain2)
                    grown.append((st2, chain2, (*order, o)))
            result.extend(grown)
            frontier = grown
        return tuple(result)


def _first_unused(members: list[int], chain: int) -> int:
    """Returns the earliest of a class's ops not in chain, or -1: it stands for them all."""
    for o in members:
        if not chain >> o & 1:
            return o
    return -1
