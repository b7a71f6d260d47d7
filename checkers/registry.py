"""The checkers as one registry: every checker has one shape, check(history, options) ->
Result, and `harness check`, `harness run` and `check --spark` all find it here.

CHECKERS holds a checker per model a history is checked against (a linearizability model,
`set` for lost acknowledged writes, `queue` for Kafka's queue anomalies, `share` for a
share group's, checkers/groups/share.py); RUN_CHECKERS
the sections every run adds (stats, perf, nemesis windows). A user's model is checked
by the linearizability search (checker_for).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import checkers.queue.checker as queue_checker
from checkers import faults, lost_acks, perf, stats
from checkers.groups import share, share_history
from checkers.linearizable import checker as linearizable
from checkers.linearizable.model_loader import ModelLoadError, load_model
from checkers.linearizable.models import MODELS, Model
from checkers.queue.policy import SubVia
from checkers.result import Result, check_safe
from checkers.txn.reader import TxnHistory, TxnStream, read_txn_history
from history import History, HistoryError, MalformedOp, Reader, load

MAP_FS = frozenset({"get", "put", "put-if-absent", "replace", "remove"})
SET_FS = frozenset({"add", "send", "read"})
QUEUE_FS = frozenset({"poll", "drain", "txn"})
ModelChoice = str | Model
"""A built-in model's name, or a user's Model (see load_user_model)."""


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What every checker may be told: seconds of search per key, processes to use, and
    for queue histories the policy's inputs (checkers/queue/policy.py)."""

    time_limit: float | None = None
    jobs: int | None = None
    sub_via: SubVia | None = None
    """Queue histories: how the consumers read, assign or subscribe (None: as the history
    shows, subscribe if any consumer subscribed)."""
    ignore: frozenset[str] = frozenset()
    """Queue histories: anomaly kinds reported but never counted against validity."""
    delivery_limit: int | None = None
    """Share histories: the group's delivery count limit as the run recorded it (None: the
    run does not say, so the broker's default, share.BROKER_DELIVERY_LIMIT)."""


def _reads_anything(history: History) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Checker:
    """A checker, Jepsen's one-method role: check(history, options) returns a Result with
    `valid` (True, False or "unknown"); explain(result) the lines a person reads about it;
    reject_malformed(history) raises MalformedOp, or a HistoryError naming its line, for an
    op the check cannot read;
    needs_events: whether check reads history.events; reader(path), if any, makes the
    Reader that reads a history file as it is loaded, into history.read, which check then
    reads instead of the events."""

    check: Callable[[History, CheckOptions], Result]
    explain: Callable[[Result], list[str]]
    reject_malformed: Callable[[History], None] = _reads_anything
    needs_events: bool = False
    reader: Callable[[str], Reader] | None = None


def _linearizable(model: Model) -> Checker:
    def check(history: History, options: CheckOptions) -> Result:
        return linearizable.check(
            history.ops, model, time_limit=options.time_limit, jobs=options.jobs
        )

    def reject_malformed(history: History) -> None:
        linearizable.reject_unknown_ops(history.ops, model)

    return Checker(check, linearizable.explain, reject_malformed)


def _lost_acks(history: History, options: CheckOptions) -> Result:
    return lost_acks.check(history.events)


def _queue(history: History, options: CheckOptions) -> Result:
    sub_via, ignore, jobs = options.sub_via, options.ignore, options.jobs or 1
    if history.read is not None:
        result = queue_checker.check_read(history.read, sub_via=sub_via, ignore=ignore, jobs=jobs)
    else:
        result = queue_checker.check(history.events, sub_via=sub_via, ignore=ignore, jobs=jobs)
    if not result.get("txn_ops"):  # no transaction of several micro-ops: none to order
        return result
    from checkers.txn.checker import check_txns, with_transactions  # networkx: only here

    return with_transactions(result, check_txns(_transactions(history)), ignore)


def _transactions(history: History) -> TxnHistory:
    """Takes a queue history with txn ops. Returns its TxnHistory: from its events, or
    read again from its file when it was streamed (a history without transactions, the
    common case, never pays for the transactions' records)."""
    if history.events:
        return read_txn_history(history.events)
    read = load(history.path, keep_events=False, reader=TxnStream(history.path)).read
    if isinstance(read, HistoryError):
        raise read
    assert isinstance(read, TxnHistory)
    return read


def _share(history: History, options: CheckOptions) -> Result:
    limit = options.delivery_limit or share.BROKER_DELIVERY_LIMIT
    return share.check_share(history.events, share.ShareRules(delivery_limit=limit))


LINEARIZABLE_MODELS = ("cas-register", "register", "map", "kv-append")
"""The models checked by the per-key linearizability search (`check --spark` too)."""

CHECKERS: dict[str, Checker] = {
    **{name: _linearizable(MODELS[name]) for name in LINEARIZABLE_MODELS},
    "set": Checker(
        _lost_acks,
        lost_acks.explain,
        lambda history: lost_acks.reject_malformed(history.ops),
        needs_events=True,
    ),
    "queue": Checker(
        _queue,
        queue_checker.explain,
        queue_checker.reject_malformed,
        needs_events=True,
        reader=queue_checker.QueueStream,
    ),
    "share": Checker(_share, share.share_lines, share_history.reject_malformed, needs_events=True),
}


def _no_lines(result: Result) -> list[str]:
    return []


def _on_events(check: Callable[[Any], Result]) -> Checker:
    """Returns a checker of a history's events that has nothing to explain."""
    return Checker(lambda history, options: check(history.events), _no_lines, needs_events=True)


RUN_CHECKERS: dict[str, Checker] = {
    "stats": _on_events(stats.check),
    "perf": _on_events(perf.check),
    "nemesis": _on_events(faults.check),
}
"""The sections every run adds to its workload's: counts, latencies and fault windows."""


def run_checker(checker: Checker, history: History, options: CheckOptions) -> Result:
    """Takes a checker, a history and the options. Returns the checker's result; one that
    raises gives `valid: "unknown"` with the error, never a crash."""
    return check_safe(checker.check, history, options)


def load_user_model(reference: str) -> Model:
    """Takes FILE.py:NAME or package.module:NAME. Returns that model. Raises ModelLoadError
    when it cannot be loaded, or when it is named like a built-in model (whose explanation
    its results would get)."""
    model = load_model(reference)
    if model.name in CHECKERS:
        raise ModelLoadError(f"its name {model.name!r} is a built-in model's; name it otherwise")
    return model


def checker_for(model: ModelChoice) -> Checker:
    """Returns how a model is checked; a user's by the linearizability search."""
    if isinstance(model, str):
        return CHECKERS[model]
    return replace(_linearizable(model), reject_malformed=_user_model_screen(model))


def _user_model_screen(model: Model) -> Callable[[History], None]:
    """Returns reject_malformed for a user's model: an error its malformed hook raises is
    left to the check, which meets it again and answers unknown with it."""

    def reject_malformed(history: History) -> None:
        # Unknown operations first, so that their refusal never hides behind such an error.
        linearizable.reject_unknown_ops([op for op in history.ops if op.f not in model.fs], model)
        try:
            linearizable.reject_unknown_ops(history.ops, model)
        except MalformedOp:
            raise
        except Exception:  # the model's own error, reported by the check
            return

    return reject_malformed


def explain(result: Result) -> list[str]:
    """Takes a checker's result. Returns the lines a person reads about it; a model not
    built in is a user's, checked for linearizability."""
    checker = CHECKERS.get(result["model"])
    return checker.explain(result) if checker else linearizable.explain(result)


def check_history(
    history: History, model: ModelChoice, options: CheckOptions | None = None
) -> Result:
    """Takes a history and a model (a built-in's name or a user's Model). Returns the
    checker's result with `model` (its name); a checker or a model that raises gives
    `valid: "unknown"` with the error."""
    name = model if isinstance(model, str) else model.name
    result = run_checker(checker_for(model), history, options or CheckOptions())
    return {"model": name, **result}


def default_model(history: History) -> str:
    """Takes a history; returns the model its operation names suggest (and for polls, their
    values: a share workload's rounds, else a queue's; for sends, theirs: micro-ops are a
    queue's)."""
    fs = history.fs
    if fs & QUEUE_FS:
        return "share" if share_history.share_events(history.events) else "queue"
    # Jepsen's micro-op sends ([[send, key, value] ...], or as [key value] when two), a set's
    # sends of plain values: a queue history of sends alone.
    if any(
        op.f == "send" and (isinstance(op.value, list | tuple) or isinstance(op.key, tuple))
        for op in history.ops
    ):
        return "queue"
    if "append" in fs:
        return "kv-append"
    if fs & MAP_FS:
        return "map"
    # A set read is a list in jsonl and a set (#{...}) in EDN.
    lists_read = any(
        op.f == "read" and isinstance(op.value, list | frozenset) for op in history.ops
    )
    if fs and fs <= SET_FS and (fs & {"add", "send"} or lists_read):
        return "set"
    return "cas-register"
