"""Which crashed (info) ops of one key can matter to the search, and who could observe them.

A crashed op may take effect at any time after its invoke or never, so the search could try
it everywhere. Most are writes nobody ever read; this module finds those it may skip.

Why skipping is sound. Let o be a crashed op whose effect, when it takes effect, is to set
the state to v (`Model.effect`). Take any linearization placing o. Every op after o and
before the next blind op (one that sets the state whatever it was) runs on state v. An ok
op there must succeed on v, so it observes v (`Model.observes`); a crashed op there either
observes v or leaves v unchanged. If no op that can still come after o observes v, the ops
between o and the next blind op are crashed no-ops: moving them and o to the very end (where
crashed ops may always go) leaves every ok op reading the same states. So o can be skipped
for the rest of a search as soon as every ok and crashed op observing v is linearized.
Ok ops that returned before o was invoked come before o in every linearization: they never
observe it. Dropping such ops repeatedly (to a fixpoint) is sound because each drop leaves a
problem with the same verdict.

Crashed ops are also compared with each other (`classes`). Most set the state to one value
(their effect) on exactly the states they observe (their trigger) and leave others alone. Of
two such ops with the same effect and the same trigger, once both are invoked, either can
stand for the other: the search uses the earliest unused one. If one's trigger is a strict
subset of the other's, the weaker one is preferred wherever it gives the same state: the
stronger one can do later whatever the weaker one would have done. Ops whose effect is
unknown are only interchangeable with identical ops.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checkers.linearizable.models import UNKNOWN, Model, freeze
from history import Op


@dataclass(frozen=True, slots=True)
class CrashedOps:
    """The crashed ops the search may use, sorted by invoke time, and their observers.

    obs_ok[i]: bitmask of ok op ids (ids follow return order) that may observe op i's
    effect; obs_info[i]: bitmask of crashed op ids that may. classes[i]: op i's class,
    (effect, trigger) with trigger None for every state, or ("op", f, value) when the
    effect is unknown; ops of one class are interchangeable.
    """

    ops: tuple[Op, ...]
    calls: tuple[int, ...]
    obs_ok: tuple[int, ...]
    obs_info: tuple[int, ...]
    classes: tuple[Class, ...]


Class = tuple[Any, ...]


def op_class(op: Op, model: Model) -> Class:
    """Returns the class of a crashed op (see CrashedOps)."""
    effect = model.effect(op)
    if effect is UNKNOWN:
        return ("op", op.f, freeze(op.value))
    trigger = model.observes(op)
    return (effect, trigger or None)  # observing nothing means acting on every state


def weaker(a: Class, b: Class) -> bool:
    """Whether class a does strictly less than class b: the same effect on fewer states."""
    if len(a) != 2 or len(b) != 2 or a[0] != b[0] or a[1] is None:
        return False
    return b[1] is None or bool(a[1] < b[1])


def _observer_masks(
    ops: Sequence[Op], values: set[Any], model: Model
) -> tuple[dict[Any, int], int]:
    """Takes ops in id order and the values of interest. Returns per value the mask of ops
    observing it, and the mask of ops observing every value."""
    by_value: dict[Any, int] = {}
    anything = 0
    for i, op in enumerate(ops):
        seen = model.observes(op)
        if seen is None:
            anything |= 1 << i
            continue
        for v in seen:
            if v in values:
                by_value[v] = by_value.get(v, 0) | (1 << i)
    return by_value, anything


def _info_observers(infos: Sequence[Op], effects: list[Any], model: Model) -> list[int]:
    """Takes crashed ops and their effects. Returns, per op, the mask of other crashed ops
    that observe its effect (all others when the effect is UNKNOWN)."""
    by_value, anything = _observer_masks(infos, {v for v in effects if v is not UNKNOWN}, model)
    everyone = (1 << len(infos)) - 1
    return [
        (everyone if v is UNKNOWN else by_value.get(v, 0) | anything) & ~(1 << i)
        for i, v in enumerate(effects)
    ]


def _ok_masks(
    oks: Sequence[Op], rets: Sequence[float], infos: Sequence[Op], effects: list[Any], model: Model
) -> list[int]:
    """Returns, per crashed op, the ok ops that may observe it: those not returned before it
    was invoked."""
    by_value, anything = _observer_masks(oks, {v for v in effects if v is not UNKNOWN}, model)
    everyone = (1 << len(oks)) - 1
    masks = []
    for op, v in zip(infos, effects, strict=True):
        mask = everyone if v is UNKNOWN else by_value.get(v, 0) | anything
        before = bisect_left(rets, op.call)  # ids below this returned before op's invoke
        masks.append((mask >> before) << before)
    return masks


def crashed_ops(
    oks: Sequence[Op], rets: Sequence[float], infos: Sequence[Op], model: Model
) -> CrashedOps:
    """Takes one key's ok ops in id order (return order) with their return times, and its
    crashed ops. Returns the crashed ops someone may observe, with their observers."""
    if not infos:
        return CrashedOps(ops=(), calls=(), obs_ok=(), obs_info=(), classes=())
    infos = sorted(infos, key=lambda op: op.call)
    effects = [model.effect(op) for op in infos]
    ok_masks = _ok_masks(oks, rets, infos, effects, model)
    info_masks = _info_observers(infos, effects, model)
    keep = _observed_fixpoint(ok_masks, info_masks)
    kept_infos = [infos[i] for i in keep]
    # the same relation among the kept ops, numbered afresh
    obs_info = _info_observers(kept_infos, [effects[i] for i in keep], model)
    return CrashedOps(
        ops=tuple(kept_infos),
        calls=tuple(op.call for op in kept_infos),
        obs_ok=tuple(ok_masks[i] for i in keep),
        obs_info=tuple(obs_info),
        classes=tuple(op_class(op, model) for op in kept_infos),
    )


def _observed_fixpoint(ok_masks: list[int], info_masks: list[int]) -> list[int]:
    """Returns the indexes of crashed ops observed by an ok op or by a kept crashed op."""
    kept = set(range(len(ok_masks)))
    changed = True
    while changed:
        kept_mask = 0
        for i in kept:
            kept_mask |= 1 << i
        dropped = {i for i in kept if not ok_masks[i] and not info_masks[i] & kept_mask}
        kept -= dropped
        changed = bool(dropped)
    return sorted(kept)
