"""Wing-Gong linearizability search with Lowe's just-in-time linearization, for one key.

Takes one key's ops and a model; returns valid, invalid with the deepest dead end, or unknown.

The algorithm (Wing & Gong 1993; Lowe 2017, "Testing for linearizability"):
ok ops become a call entry and a return entry in one doubly linked list sorted by time (calls
before returns at equal times, so touching ops count as concurrent). Walking the list from
its head, every call entry met before the first return entry belongs to an op that may be
linearized next. Linearizing one lifts both its entries out of the list (lift); backtracking
puts them back (unlift). A return entry met first is a dead end: that op had to come next.

Each move linearizes one ok op, possibly preceded by a chain of crashed ops (see
closure.py): crashed ops never constrain others (their return is at +infinity) and
always succeed, so they live apart from the list, sorted by invoke. A crashed op may join a
chain once every ok op that returned before its invoke is linearized. Moves without crashed
ops are all tried first (Knossos orders crashed ops last too): most crashed ops never took
effect. The search succeeds once every ok op is linearized: the crashed ops left over go at
the end, which is the same as never.

Chains of crashed ops are only worked out for a configuration once every ok op has failed
from its state alone. A model with `reaches` (kv-append) also has a configuration dropped
as soon as its state cannot lead to the earliest read still to come (checkers.linearizable.reach).

Memoisation: a configuration is (ok set L, crashed set I, state). A configuration is pruned
when one with the same L and state and a subset of I was already seen: every way to finish
from the larger I also finishes from the smaller one (put the extra crashed ops at the end).
Since every move adds an ok op, the configuration seen first is never an ancestor, so it was
fully explored and failed. Both sets are Python ints used as bitmasks; the ok set is kept
as (z, window): ok ops are numbered in return order, every op below z is linearized and
bit i of window says whether op z + i is. z is also the op whose return entry comes first,
and the cache keys stay small however long the history.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from checkers.linearizable.closure import Closure, CrashedMoves, Exhausted
from checkers.linearizable.crashed import crashed_ops
from checkers.linearizable.models import Inconsistent, Model, State
from checkers.linearizable.reach import next_read
from history import Op

Validity = bool | Literal["unknown"]
# (entry, closure index, state, crashed set, closure, z, window, parent): the search path
Frame = tuple[int, int, State, int, Closure, int, int, Any]
DeadEnd = tuple[Frame | None, int, int, State, int, bool]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one key's search: a time.monotonic() deadline and a cache size in bytes."""

    deadline: float | None = None
    max_cache_bytes: int = 512 * 2**20


@dataclass(slots=True)
class Outcome:
    """What one key's search found. For invalid or unknown: the deepest configuration reached
    (its linearized ops in order, crashed ones included), the op it could not place and the
    states the search saw there."""

    valid: Validity
    cause: str | None = None
    configs: int = 0
    prefix: list[Op] = field(default_factory=list)
    failing: Op | None = None
    states: list[State] = field(default_factory=list)


class Search:
    """The search over one key's ops. Build once, then call `run()`."""

    def __init__(self, ops: list[Op], model: Model, limits: Limits) -> None:
        oks = [op for op in ops if op.type == "ok"]
        oks.sort(key=_ret_call)
        self.model = model
        self.limits = limits
        self.oks = oks
        rets = [_ret(op) for op in oks]
        crashed = crashed_ops(oks, rets, [op for op in ops if op.type != "ok"], model)
        self.crashed_ops = crashed.ops
        self.next_read = next_read(oks, rets, crashed, model)
        self.moves = CrashedMoves(crashed, rets, model, limits.deadline, self.next_read)
        self._build_list()
        per_entry = 250 + len(crashed.ops) // 8  # dict slot, key tuple, ints, the used set
        self.max_entries = max(1, limits.max_cache_bytes // per_entry)
        self.configs = 0
        # the deepest dead end: (frame, z, window, state, op that had to come next, whether
        # it was cut by the next read, which only that state failed)
        self.best: DeadEnd = (None, 0, 0, model.init, -1, False)

    def _build_list(self) -> None:
        """Builds the entry list: entry 0 is the head, the last entry a tail after all."""
        events = sorted(
            [(op.call, 0, i) for i, op in enumerate(self.oks)]
            + [(_ret(op), 1, i) for i, op in enumerate(self.oks)]
        )
        size = len(events) + 2
        self.is_call = [False] * size
        self.ent_op = [-1] * size
        self.match = [0] * size
        call_entry: dict[int, int] = {}
        for e, (_, kind, i) in enumerate(events, start=1):
            self.ent_op[e] = i
            if kind == 0:
                self.is_call[e] = True
                call_entry[i] = e
            else:
                self.match[call_entry[i]] = e
        self.nxt = [*range(1, size), 0]
        self.prv = [0, *range(0, size - 1)]

    def run(self) -> Outcome:
        """Searches for a linearization. Returns the outcome; never raises on a bound."""
        if not self.oks:
            return Outcome(valid=True)
        try:
            return self._search()
        except Exhausted as exc:
            return Outcome(
                valid="unknown",
                cause=exc.cause,
                configs=self.configs,
                prefix=self._path(self.best[0]),
            )

    def _search(self) -> Outcome:
        nxt, prv, is_call, match = self.nxt, self.prv, self.is_call, self.match
        ent_op, oks, step = self.ent_op, self.oks, self.model.step
        closure = self.moves.closure if self.crashed_ops else None
        unreachable = None if self.next_read is None else self.next_read.unreachable
        deadline, max_entries, n = self.limits.deadline, self.max_entries, len(oks)
        cache: dict[tuple[int, int, State], Any] = {}
        z = window = used = 0
        state = self.model.init
        top: Frame | None = None
        depth, ci, tick, configs, best_depth = 0, 0, 0, 0, -1
        clo: Closure | None = None
        e = nxt[0]
        while True:
            tick += 1
            if not tick & 1023 and deadline is not None and time.monotonic() > deadline:
                self.configs = configs
                raise Exhausted("timeout")
            if is_call[e]:
                if clo is None:
                    clo = ((state, 0, ()),)  # chains of crashed ops only once this fails
                st, chain, _ = clo[ci]
                i = ent_op[e]
                st2 = step(st, oks[i])
                if st2.__class__ is Inconsistent:
                    e = nxt[e]
                    continue
                window2 = window | 1 << (i - z)
                z2 = z
                if window2 & 1:  # the lowest op is now linearized: slide the window on
                    ones = (~window2 & (window2 + 1)).bit_length() - 1
                    window2 >>= ones
                    z2 += ones
                used2 = used | chain
                g = -1 if unreachable is None else unreachable(st2, z2, window2, used2)
                if g >= 0:
                    if depth >= best_depth:  # a dead end one op deeper, where read g fails
                        best_depth = depth + 1
                        frame = (e, ci, state, used, clo, z, window, top)
                        self.best = (frame, z2, window2, st2, g, True)
                    e = nxt[e]
                    continue
                key = (z2, window2, st2)
                seen = cache.get(key)
                if seen is None:
                    cache[key] = used2
                elif seen.__class__ is int:
                    if seen & ~used2 == 0:
                        e = nxt[e]  # a configuration with fewer crashed ops failed already
                        continue
                    cache[key] = [seen, used2]
                elif any(x & ~used2 == 0 for x in seen):
                    e = nxt[e]
                    continue
                else:
                    seen.append(used2)
                configs += 1
                if configs > max_entries:
                    self.configs = configs
                    raise Exhausted("memory")
                top = (e, ci, state, used, clo, z, window, top)
                depth += 1
                r = match[e]  # lift e and its return entry out of the list
                nxt[prv[e]] = nxt[e]
                prv[nxt[e]] = prv[e]
                nxt[prv[r]] = nxt[r]
                prv[nxt[r]] = prv[r]
                z, window, used, state, clo, ci = z2, window2, used2, st2, None, 0
                if z == n:
                    return Outcome(valid=True, configs=configs)
                e = nxt[0]
            elif clo is not None and ci + 1 < len(clo):
                ci += 1  # every ok op failed after this chain: try the next one
                e = nxt[0]
            elif (
                ci == 0 and closure is not None and len(full := closure(state, used, z, window)) > 1
            ):
                clo, ci = full, 1  # every ok op failed from this state: let crashed ops go first
                e = nxt[0]
            else:
                if depth > best_depth:
                    best_depth = depth
                    self.best = (top, z, window, state, ent_op[e], False)
                if top is None:
                    self.configs = configs
                    return self._invalid(cache)
                c, ci, state, used, clo, z, window, top = top
                depth -= 1
                r = match[c]  # unlift: put both entries back, in the reverse order
                nxt[prv[r]] = r
                prv[nxt[r]] = r
                nxt[prv[c]] = c
                prv[nxt[c]] = c
                e = nxt[c]

    def _path(self, top: Frame | None) -> list[Op]:
        """Takes the deepest frame. Returns the ops linearized to reach it, in order."""
        steps: list[Op] = []
        while top is not None:
            e, ci, _, _, clo, _, _, parent = top
            steps.append(self.oks[self.ent_op[e]])
            steps.extend(self.crashed_ops[o] for o in reversed(clo[ci][2]))
            top = parent
        steps.reverse()
        return steps

    def _invalid(self, cache: dict[tuple[int, int, State], Any]) -> Outcome:
        """Builds the outcome of a failed search from its deepest dead end: the states are
        those of every configuration seen with the same ok ops linearized."""
        top, z, window, state, blocked, cut = self.best
        states = dict.fromkeys([state])
        if not cut:
            states.update(dict.fromkeys(st for (z2, w2, st) in cache if z2 == z and w2 == window))
        return Outcome(
            valid=False,
            configs=self.configs,
            prefix=self._path(top),
            failing=self.oks[blocked],
            states=list(states),
        )


def _ret(op: Op) -> float:
    return math.inf if op.ret is None else op.ret


def _ret_call(op: Op) -> tuple[float, int]:
    return (math.inf if op.ret is None else op.ret), op.call


def search(ops: list[Op], model: Model, limits: Limits) -> Outcome:
    """Takes one key's ops (crashed reads dropped, values frozen), a model and limits.
    Returns whether some linearization explains every ok op."""
    return Search(ops, model, limits).run()
