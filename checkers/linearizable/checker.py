"""Linearizability checker: prepares a history, splits it by key, searches every key.

Keys are independent (P-compositionality: a history is linearizable iff each key's is), so
they are searched separately, in parallel processes when the history is large enough.

Preparation, in order (Knossos's named steps; `fail` ops are already gone):
1. reject ops the model does not know or cannot read, rather than call them inconsistent;
2. drop crashed reads: they took effect or not, but nobody learnt anything;
3. split by key (`Model.key_of`);
4. per key, in the worker that searches it: freeze values, so that JSON lists compare
   equal to tuples and states stay hashable;
5. rename every written value that no op of the key reads or compares to one token,
   UNREAD: no op can tell such values apart, so the renamed history has the same verdict,
   and states that differ only there merge in the search's cache. Reports show the
   original ops.

An isolated model (a user's) is searched key by key in child processes that are killed
when a key outlasts its time limit (checkers.fork_pool.supervised_map): a hook that exits,
raises anything or never returns makes its key unknown, and the other keys are still
checked. Steps 1 and 3 run its malformed and key_of hooks here, where whatever they raise
is an error of the check's (checkers.linearizable.model_core.contained).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from checkers.linearizable.counterexample import (
    error_report,
    explain,
    failure,
    respelled,
    stopped_report,
)
from checkers.linearizable.model_core import contained, with_value
from checkers.linearizable.models import UNREAD, Model, freeze
from checkers.linearizable.search import Limits, Outcome, Validity, search
from checkers.linearizable.spelling import spell
from history import MalformedOp, Op

if TYPE_CHECKING:  # processes (multiprocessing) load only when keys are searched in them
    from checkers.fork_pool import Extend

__all__ = ["check", "explain", "merge_validity", "reject_unknown_ops", "respelled", "spell"]

PARALLEL_MIN_OPS = 4000  # below this a process pool costs more than it saves
DEFAULT_CACHE_BYTES = 512 * 2**20
REPORT_SEARCH_S = 10.0  # at most this long (and 3x the first search) to redo an invalid
# key without renaming, for a report that names values
KILL_AFTER_S = 1.0  # past its time limit, an isolated key's process is killed: the search's
# own clock answers first whenever the model returns
REPORT_KILL_AFTER_S = REPORT_SEARCH_S + 10.0  # an invalid key's report, once searched

KeyResult = tuple[Any, Validity, dict[str, Any] | None]


def reject_unknown_ops(ops: Sequence[Op], model: Model) -> None:
    """Raises MalformedOp for the first op whose operation the model does not know or whose
    value it cannot read, or ModelError when an isolated model's malformed hook exits."""
    fs, malformed = model.fs, model.malformed
    with _hooks_of(model, "malformed"):
        for op in ops:
            if op.f not in fs:
                raise MalformedOp(
                    op.index,
                    f"{op.f!r} is not an operation of the {model.name} model "
                    f"(it has {', '.join(sorted(fs))})",
                )
            problem = malformed(op)
            if problem is not None:
                raise MalformedOp(op.index, problem, in_value=True)


def _hooks_of(model: Model, hook: str) -> contextlib.AbstractContextManager[None]:
    """Returns what to run a pass over a model's hook in: for an isolated model, a guard
    that turns its exits into errors; for a built-in one, nothing that costs time."""
    return contained(hook) if model.isolated else contextlib.nullcontext()


def drop_crashed_reads(ops: Sequence[Op], model: Model) -> list[Op]:
    """Returns the ops without crashed reads."""
    return [op for op in ops if not (op.type == "info" and op.f in model.reads)]


def freeze_values(ops: Sequence[Op]) -> list[Op]:
    """Returns the ops with hashable values (lists become tuples)."""
    out = []
    for op in ops:
        value = freeze(op.value)
        out.append(op if value is op.value else with_value(op, value))
    return out


def split_by_key(ops: Sequence[Op], model: Model) -> dict[Hashable, list[Op]]:
    """Returns the ops grouped by key, in their original order within each key."""
    groups: dict[Hashable, list[Op]] = {}
    with _hooks_of(model, "key_of"):
        for op in ops:
            groups.setdefault(freeze(model.key_of(op)), []).append(op)
    return groups


def rename_unread(ops: Sequence[Op], model: Model) -> list[Op]:
    """Takes one key's frozen ops. Returns them with every written value that no op
    mentions replaced by UNREAD (unchanged if the model cannot say what ops mention)."""
    mentions, rename = model.mentions, model.rename_written
    if mentions is None or rename is None:
        return list(ops)
    mentioned: set[Any] = set()
    for op in ops:
        mentioned.update(mentions(op))

    def unread(value: Any) -> Any:
        return value if value is None or value in mentioned else UNREAD

    return [rename(op, unread) for op in ops]


def with_originals(outcome: Outcome, ops: Sequence[Op]) -> Outcome:
    """Takes an outcome of a search over renamed ops and the ops before renaming. Returns
    the outcome naming the original ops."""
    by_index = {op.index: op for op in ops}
    outcome.prefix = [by_index[op.index] for op in outcome.prefix]
    if outcome.failing is not None:
        outcome.failing = by_index[outcome.failing.index]
    return outcome


def prepare(ops: Sequence[Op], model: Model) -> list[Op]:
    """Takes raw paired ops. Returns the ops to split by key (steps 1-2 above)."""
    reject_unknown_ops(ops, model)
    return drop_crashed_reads(ops, model)


def merge_validity(verdicts: Sequence[Validity]) -> Validity:
    """Merges verdicts by priority: False over "unknown" over True."""
    if any(v is False for v in verdicts):
        return False
    if any(v == "unknown" for v in verdicts):
        return "unknown"
    return True


def _nothing() -> None:
    return None


def check_key(
    key: Hashable,
    ops: list[Op],
    model: Model,
    time_limit: float | None,
    max_cache_bytes: int,
    searched: Callable[[], None] = _nothing,
) -> KeyResult:
    """Searches one key. Returns (key, verdict, failure report or None). Calls searched
    once the search proper is over, before the report's work (a supervisor's cue)."""
    started = time.monotonic()
    deadline = None if time_limit is None else started + time_limit
    ops = freeze_values(ops)
    limits = Limits(deadline=deadline, max_cache_bytes=max_cache_bytes)
    outcome = search(rename_unread(ops, model), model, limits)
    searched()
    if outcome.valid is True:
        return key, True, None
    if outcome.valid is False and UNREAD in outcome.states:
        budget = min(REPORT_SEARCH_S, max(0.5, 3 * (time.monotonic() - started)))
        outcome = _search_originals(ops, model, budget, max_cache_bytes) or outcome
    return key, outcome.valid, failure(key, with_originals(outcome, ops), ops, model, time_limit)


def _search_originals(
    ops: list[Op], model: Model, budget: float, max_cache_bytes: int
) -> Outcome | None:
    """Searches the key again without renaming, so that the report can name the values
    that could have been read. Returns None when that does not finish invalid in time."""
    limits = Limits(deadline=time.monotonic() + budget, max_cache_bytes=max_cache_bytes)
    outcome = search(ops, model, limits)
    return outcome if outcome.valid is False else None


def check_key_safely(
    key: Hashable, ops: list[Op], model: Model, time_limit: float | None, max_cache_bytes: int
) -> KeyResult:
    """Like check_key, but an exception (a malformed op value the model cannot read, say)
    makes this key "unknown" with the error, and the other keys are still checked."""
    try:
        return check_key(key, ops, model, time_limit, max_cache_bytes)
    except Exception as exc:  # Jepsen's check-safe, per key
        return key, "unknown", error_report(key, exc)


def _check_batch(
    batch: list[tuple[Hashable, list[Op]]],
    model: Model,
    time_limit: float | None,
    max_cache_bytes: int,
) -> list[KeyResult]:
    return [check_key_safely(k, ops, model, time_limit, max_cache_bytes) for k, ops in batch]


def _batches(groups: dict[Hashable, list[Op]], count: int) -> list[list[tuple[Hashable, list[Op]]]]:
    """Deals keys, largest first, to the currently smallest of `count` batches."""
    batches: list[list[tuple[Hashable, list[Op]]]] = [[] for _ in range(count)]
    sizes = [0] * count
    for key, ops in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        i = sizes.index(min(sizes))
        batches[i].append((key, ops))
        sizes[i] += len(ops)
    return [b for b in batches if b]


def _picklable(model: Model) -> bool:
    import pickle  # only when keys are to go to other processes

    try:
        pickle.dumps(model)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def _run_keys(
    groups: dict[Hashable, list[Op]],
    model: Model,
    time_limit: float | None,
    jobs: int,
    max_cache_bytes: int,
) -> list[KeyResult]:
    """Searches every key, in a process pool when it pays off, each in a supervised child
    process for an isolated model. Returns the keys' results in the groups' order."""
    total = sum(len(ops) for ops in groups.values())
    if model.isolated:
        workers = jobs if total >= PARALLEL_MIN_OPS else 1
        return _run_isolated(groups, model, time_limit, workers, max_cache_bytes)
    if jobs <= 1 or len(groups) <= 1 or total < PARALLEL_MIN_OPS:
        return _check_batch(list(groups.items()), model, time_limit, max_cache_bytes)
    from concurrent.futures.process import BrokenProcessPool

    from checkers.fork_pool import can_fork

    if not can_fork() or not _picklable(model):
        return _check_batch(list(groups.items()), model, time_limit, max_cache_bytes)
    batches = _batches(groups, jobs * 4)
    try:
        results = _run_pool(batches, model, time_limit, jobs, max_cache_bytes)
    except (OSError, BrokenProcessPool):  # no processes to be had here: do it in this one
        return _check_batch(list(groups.items()), model, time_limit, max_cache_bytes)
    order = {key: i for i, key in enumerate(groups)}  # batches are dealt largest first
    return sorted(results, key=lambda r: order[r[0]])


def _run_pool(
    batches: list[list[tuple[Hashable, list[Op]]]],
    model: Model,
    time_limit: float | None,
    jobs: int,
    max_cache_bytes: int,
) -> list[KeyResult]:
    """Searches the batches in `jobs` forked processes, which inherit the ops."""
    from checkers.fork_pool import forked_map

    def check_batch(i: int) -> list[KeyResult]:
        return _check_batch(batches[i], model, time_limit, max_cache_bytes)

    return [r for results in forked_map(check_batch, len(batches), jobs) for r in results]


def _run_isolated(
    groups: dict[Hashable, list[Op]],
    model: Model,
    time_limit: float | None,
    jobs: int,
    max_cache_bytes: int,
) -> list[KeyResult]:
    """Searches each key in one of `jobs` supervised child processes, killed when the key
    outlasts its time limit (its report given time of its own once searched)."""
    from checkers.fork_pool import Stopped, supervised_map

    keys = list(groups.items())

    def check_isolated(i: int, extend: Extend) -> list[Any]:
        key, ops = keys[i]
        try:
            _, valid, report = check_key(
                key, ops, model, time_limit, max_cache_bytes, lambda: extend(REPORT_KILL_AFTER_S)
            )
        except BaseException as exc:  # in a process of its own, every exit is the model's
            return ["unknown", error_report(key, exc)]
        return [valid, report]

    limit = None if time_limit is None else time_limit + KILL_AFTER_S
    done = supervised_map(check_isolated, len(keys), jobs, limit)
    return [
        (key, "unknown", stopped_report(key, d.cause, d.detail, time_limit))
        if isinstance(d, Stopped)
        else (key, d[0], d[1])
        for (key, _), d in zip(keys, done, strict=True)
    ]


def check(
    ops: Sequence[Op],
    model: Model,
    *,
    time_limit: float | None = None,
    jobs: int | None = None,
    max_cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> dict[str, Any]:
    """Takes paired ops (no `fail` ops) and a model; time_limit in seconds per key, jobs
    processes (default and at most: one per core), max_cache_bytes per key. Returns {"valid", "ops",
    "keys", "time", "failures"}, all JSON-serialisable; a key that hits a bound is
    "unknown" with its cause. Raises MalformedOp (a ValueError) for ops the model does not
    know or cannot read."""
    started = time.monotonic()
    prepared = prepare(ops, model)
    groups = split_by_key(prepared, model)
    cores = os.cpu_count() or 1
    results = _run_keys(groups, model, time_limit, min(jobs or cores, cores), max_cache_bytes)
    return {
        "valid": merge_validity([v for _, v, _ in results]),
        "model": model.name,
        "ops": len(prepared),
        "keys": len(groups),
        "time": round(time.monotonic() - started, 6),
        "failures": [f for _, _, f in results if f is not None],
    }
