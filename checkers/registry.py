"""The checkers as one registry: every checker has one shape, check(history, options) ->
Checked, and `harness check`, `harness run` and `check --spark` all find it here.

CHECKERS holds a checker per model a history is checked against (a linearizability model,
`set` for lost acknowledged writes, `queue` for Kafka's queue anomalies with, for a
consumer group's history, the group checks, `share` for a share group's); RUN_CHECKERS
the sections every run adds (stats, perf, nemesis windows), composed as Jepsen's
`checker/compose` composes (jepsen/src/jepsen/checker.clj). A user's model is checked by
the linearizability search (checker_for). A check hands back what it read (a Reading),
so that the report draws from it and never reads the history again: Jepsen's kafka.clj
builds its analysis once and draws every plot from it.

A family is imported when its checker is first used, not with the registry: a check of a
register history never loads the queue's, the groups' or the transactions' checkers (a
tenth of a second of a short `harness check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from checkers import faults, lost_store, perf, stats
from checkers.linearizable import checker as linearizable
from checkers.linearizable.model_loader import ModelLoadError, load_model
from checkers.linearizable.models import MODELS, Model
from checkers.names import LINEARIZABLE_MODELS
from checkers.result import UNKNOWN, Result, Validity, check_safe, merge_valid
from history import (
    STDIN_NAME,
    History,
    HistoryError,
    MalformedOp,
    Reader,
    load,
    read_strictly,
)

if TYPE_CHECKING:
    from checkers.groups.consumer_history import GroupHistory
    from checkers.groups.share_history import ShareHistory
    from checkers.perf import Sample
    from checkers.queue.policy import SubVia
    from checkers.queue.reader import QueueHistory
    from checkers.txn import TxnHistory

ModelChoice = str | Model
"""A built-in model's name, or a user's Model (see load_user_model)."""


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What every checker may be told: seconds of search per key, processes to use, and
    for queue and share histories what their run says of its consumers (from_spec)."""

    time_limit: float | None = None
    jobs: int | None = None
    sub_via: SubVia | None = None
    """Queue histories: how the consumers read, assign or subscribe (None: as the history
    shows, subscribe if any consumer subscribed)."""
    ignore: frozenset[str] = frozenset()
    """Queue histories: anomaly kinds reported but never counted against validity."""
    consumer_group: bool = False
    """Queue histories: the consumers subscribed in one group outside transactions, so the
    group checks (checkers/groups/consumer.py) judge it; a history with the group's own
    ops (commits) is judged so anyway."""
    auto_commit: bool = False
    """Queue histories in a group: librdkafka committed the positions (else commit ops)."""
    delivery_limit: int | None = None
    """Share histories: the group's delivery count limit as the run recorded it (None: the
    run does not say, so the broker's default, share.BROKER_DELIVERY_LIMIT)."""
    ww_deps: bool = False
    """Queue histories: ww edges join G1c's cycles (kafka.clj `:ww-deps`; --ww-deps)."""
    group_protocol: str | None = None
    """Queue histories in a group: classic or consumer (KIP-848), as the run says."""
    offset_reset: str = "earliest"
    """Queue and share histories: where the group starts in a partition it has no offset
    (or share state) for; the expansion check judges by it."""
    grown: bool = False
    """The run's topic grew (add-partitions): a streamed queue history is read again for
    the expansion check (checkers/groups/expansion.py); a history's events say it anyway."""

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], **asked: Any) -> CheckOptions:
        """Takes a run's spec as test.json keeps it (TestSpec.to_json; {} for a history
        with no run) and options asked for besides. Returns the options a check of that
        run's history takes: the same for `harness run` and for `harness check` of its
        folder. A spec is input like any other: a value of the wrong type is left out."""
        said: dict[str, Any] = {}
        if type(spec.get("consumer_group")) is bool:
            grouped = spec["consumer_group"]
            said["sub_via"] = "subscribe" if grouped else "assign"
            said["consumer_group"] = grouped and spec.get("txn") is not True
            said["auto_commit"] = spec.get("auto_commit") is True
            ignored = spec.get("ignore")
            if isinstance(ignored, list):  # only kinds the checkers know
                from checkers.queue.policy import POLICY, TXN_POLICY

                known = POLICY.keys() | TXN_POLICY.keys()
                said["ignore"] = frozenset(k for k in ignored if isinstance(k, str) and k in known)
        if spec.get("ww_deps") is True:
            said["ww_deps"] = True
        if spec.get("group_protocol") in ("classic", "consumer"):
            said["group_protocol"] = spec["group_protocol"]
        reset = spec.get(
            "share_auto_offset_reset" if spec.get("workload") == "share" else "auto_offset_reset"
        )
        if reset in ("earliest", "latest"):
            said["offset_reset"] = reset
        nemesis = spec.get("nemesis")
        said["grown"] = isinstance(nemesis, list) and "add-partitions" in nemesis
        limit = spec.get("delivery_limit")
        if type(limit) is int and limit > 0:
            said["delivery_limit"] = limit
        elif limit is None and spec.get("workload") == "share":
            said["delivery_limit"] = LIMIT_BEFORE_THE_OPTION
        known = {f.name for f in fields(cls)}
        return cls(**said | {k: v for k, v in asked.items() if k in known and v is not None})


LIMIT_BEFORE_THE_OPTION = 3
"""The delivery limit every share run had before --delivery-limit (2026-11-26): the
workload set it on the group, and test.json did not record it."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What checks read of a history, for the report to draw from: the queue records, the
    consumer group's and the share group's histories, the ops' latency samples; None
    where no check read such a thing."""

    queue: QueueHistory | None = None
    groups: GroupHistory | None = None
    share: ShareHistory | None = None
    samples: Sequence[Sample] | None = None

    def joined(self, other: Reading) -> Reading:
        """Returns this reading with every part `other` read."""
        found = {f.name: getattr(other, f.name) for f in fields(other)}
        return replace(self, **{name: part for name, part in found.items() if part is not None})


@dataclass(frozen=True, slots=True)
class Checked:
    """A check's outcome: its result, the sections it checked besides (a consumer group's
    checks beside the queue's), each with its own `valid`, and what it read (Reading)."""

    result: Result
    reading: Reading = Reading()
    sections: Mapping[str, Result] = field(default_factory=dict)

    @property
    def valid(self) -> Validity:
        """The worst of the result's validity and its sections'."""
        return merge_valid(self.result["valid"], *(s["valid"] for s in self.sections.values()))

    def merged(self) -> Result:
        """Returns the result with each section under its name and `valid` the worst of
        all: what `harness check` reports of one history."""
        return {**self.result, **self.sections, "valid": self.valid}


def _reads_anything(history: History) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Checker:
    """A checker, Jepsen's one-method role: check(history, options) returns a Checked
    whose result has `valid` (True, False or "unknown"); explain(result) the lines a
    person reads about it; reject_malformed(history) raises MalformedOp, or a HistoryError
    naming its line, for an op the check cannot read;
    needs_events: whether check reads history.events; reader(path), if any, makes the
    Reader that reads a history file as it is loaded, into history.read, which check then
    reads instead of the events."""

    check: Callable[[History, CheckOptions], Checked]
    explain: Callable[[Result], list[str]]
    reject_malformed: Callable[[History], None] = _reads_anything
    needs_events: bool = False
    reader: Callable[[str], Reader] | None = None


def _linearizable(model: Model) -> Checker:
    def check(history: History, options: CheckOptions) -> Checked:
        result = linearizable.check(
            history.ops, model, time_limit=options.time_limit, jobs=options.jobs
        )
        # A read that found the store itself gone: its acknowledged writes went with it,
        # which the model sees only where a read happens to contradict one.
        gone = lost_store.check(history.ops)
        return Checked(result, sections={} if gone is None else {"lost-store": gone})

    def reject_malformed(history: History) -> None:
        linearizable.reject_unknown_ops(history.ops, model)

    return Checker(check, linearizable.explain, reject_malformed)


def _lost_acks(history: History, options: CheckOptions) -> Checked:
    from checkers import lost_acks

    return Checked(lost_acks.check(history.events, strictly=read_strictly(history.format)))


def _lost_acks_explain(result: Result) -> list[str]:
    from checkers import lost_acks

    return lost_acks.explain(result)


def _lost_acks_screen(history: History) -> None:
    from checkers import lost_acks

    lost_acks.reject_malformed(history.ops)


def _queue(history: History, options: CheckOptions) -> Checked:
    """The queue checks of one reading: Jepsen's anomalies, the transactions' when the
    history has any, and a consumer group's checks when its history is a group's."""
    from checkers.queue import checker as queue_checker
    from checkers.queue.reader import GROUP_ONLY_FS, QueueHistory, read_queue_history

    if history.read is not None:
        read = history.read
        if isinstance(read, HistoryError):
            raise read
    else:
        read = read_queue_history(history.events, strictly=read_strictly(history.format))
    assert isinstance(read, QueueHistory)
    warnings = queue_checker.judge_reading(read, history)
    jobs = options.jobs or 1
    result = queue_checker.check_read(
        read, sub_via=options.sub_via, ignore=options.ignore, jobs=jobs
    )
    if warnings:
        result["warnings"] = warnings
    # Transactions of several micro-ops, or one-message ops whose graph may hold a cycle
    # (checkers/queue/acyclic.py): their order to check, as Elle checks every history.
    if result.pop("acyclic", True) is False:
        from checkers.txn import check_txns, with_transactions  # loaded only for transactions

        section = check_txns(_transactions(history), options.ww_deps, options.ignore)
        result = with_transactions(result, section, options.ignore)
    subscribed = options.sub_via == "subscribe" or (
        options.sub_via is None and "subscribe" in history.fs
    )
    expansion = _expansion(history, options, "group" if subscribed else "assign")
    if not (options.consumer_group or history.fs & GROUP_ONLY_FS):
        return Checked(result, Reading(queue=read), expansion)
    group, section = _groups(history, result.get("lost_records", []), options)
    sections = {"groups": section, **expansion}
    return Checked(result, Reading(queue=read, groups=group), sections)


def _expansion(history: History, options: CheckOptions, readers: str) -> dict[str, Result]:
    """Returns the expansion section (checkers/groups/expansion.py) under its name when
    the run's topic grew, else nothing. A streamed history is read again from its file
    when the run says it grew (never stdin, read once)."""
    from checkers.groups.expansion import Readers, check_expansion

    events = history.events
    if not events and history.read is not None and options.grown:
        if history.path == STDIN_NAME:
            return {"expansion": {"valid": UNKNOWN, "error": "it reads the file again: not stdin"}}
        events = load(history.path).events
    who = Readers(readers, options.group_protocol, options.offset_reset)
    try:
        found = check_expansion(events, who) if events else None
    except Exception as err:  # a checker bug must not cost the run its other results
        found = check_safe(_raise, err)
    return {"expansion": found} if found is not None else {}


def _groups(
    history: History, lost: Sequence[Any], options: CheckOptions
) -> tuple[GroupHistory | None, Result]:
    """Returns a consumer group's history and its checks' section (checkers/groups/
    consumer.py); they need the group's own ops, which a streamed reading leaves out, so
    those read the file again (never stdin, read once). Raises HistoryError for a group
    value the checks cannot read: malformed input, never a verdict."""
    from checkers.groups import consumer as groups_checker
    from checkers.groups.consumer_history import read_located

    loaded = history
    if not history.events and history.read is not None:
        if history.path == STDIN_NAME:
            error = "they read the history file again: not from stdin"
            return None, {"valid": UNKNOWN, "error": error}
        loaded = load(history.path)
    group = read_located(loaded)
    check = groups_checker.check_groups
    latest = options.offset_reset == "latest"
    return group, check_safe(check, loaded.events, lost, options.auto_commit, group, latest)


def _raise(err: Exception) -> Result:
    raise err


def _transactions(history: History) -> TxnHistory:
    """Takes a queue history with txn ops. Returns its TxnHistory: from its events, or
    read again from its file when it was streamed (a history without transactions, the
    common case, never pays for the transactions' records)."""
    from checkers.txn import TxnHistory, TxnStream, read_txn_history

    if history.events:
        return read_txn_history(history.events, strictly=read_strictly(history.format))
    read = load(history.path, keep_events=False, reader=TxnStream(history.path)).read
    if isinstance(read, HistoryError):
        raise read
    assert isinstance(read, TxnHistory)
    return read


def _queue_explain(result: Result) -> list[str]:
    from checkers.queue import checker as queue_checker

    return queue_checker.explain(result)


def _queue_screen(history: History) -> None:
    from checkers.queue import checker as queue_checker

    queue_checker.reject_malformed(history)


def _queue_stream(path: str) -> Reader:
    from checkers.queue import checker as queue_checker

    return queue_checker.QueueStream(path)


def _share(history: History, options: CheckOptions) -> Checked:
    from checkers.groups import share
    from checkers.groups.share_history import read_share_history

    limit = options.delivery_limit or share.BROKER_DELIVERY_LIMIT
    read = read_share_history(history.events)
    rules = share.ShareRules(delivery_limit=limit, from_latest=options.offset_reset == "latest")
    result = share.check_share(history.events, rules, read)
    return Checked(result, Reading(share=read), _expansion(history, options, "share"))


def _share_lines(result: Result) -> list[str]:
    from checkers.groups import share

    return share.share_lines(result)


def _share_screen(history: History) -> None:
    from checkers.groups.share_history import reject_malformed

    reject_malformed(history)


CHECKERS: dict[str, Checker] = {
    **{name: _linearizable(MODELS[name]) for name in LINEARIZABLE_MODELS},
    "set": Checker(_lost_acks, _lost_acks_explain, _lost_acks_screen, needs_events=True),
    "queue": Checker(
        _queue, _queue_explain, _queue_screen, needs_events=True, reader=_queue_stream
    ),
    "share": Checker(_share, _share_lines, _share_screen, needs_events=True),
}

SECTIONS: dict[str, str] = {"queue": "queue", "set": "lost-acks", "share": "share"}
"""The results.json section a run writes each model's result under; any other model's,
a linearizability search's, goes under `linearizable`."""


def section_of(model: str) -> str:
    """Takes a model's name. Returns the results.json section its result goes under."""
    return SECTIONS.get(model, "linearizable")


def _no_lines(result: Result) -> list[str]:
    return []


def _on_events(check: Callable[[Any], Result]) -> Checker:
    """Returns a checker of a history's events that has nothing to explain."""
    return Checker(
        lambda history, options: Checked(check(history.events)), _no_lines, needs_events=True
    )


def _perf(history: History, options: CheckOptions) -> Checked:
    samples = perf.samples(history.events)
    return Checked(perf.summary(samples), Reading(samples=samples))


RUN_CHECKERS: dict[str, Checker] = {
    "stats": _on_events(stats.check),
    "perf": Checker(_perf, _no_lines, needs_events=True),
    "nemesis": _on_events(faults.check),
}
"""The sections every run adds to its workload's: counts, latencies and fault windows."""


def run_checker(checker: Checker, history: History, options: CheckOptions) -> Checked:
    """Takes a checker, a history and the options. Returns the checker's Checked; one that
    raises gives `valid: "unknown"` with the error, never a crash. Raises the HistoryError
    of a value the check cannot read (malformed input)."""
    try:
        return checker.check(history, options)
    except HistoryError:  # malformed input: refused by the caller, never a verdict
        raise
    except Exception as err:  # a checker bug must not cost the run its other results
        return Checked(check_safe(_raise, err))


def compose(checkers: Mapping[str, Checker], history: History, options: CheckOptions) -> Checked:
    """Jepsen's checker/compose: takes named checkers, a history and the options. Returns
    each checker's result under its name (each crash-safe), `valid` the worst of theirs,
    and every reading joined."""
    results: dict[str, Result] = {}
    reading = Reading()
    for name, checker in checkers.items():
        checked = run_checker(checker, history, options)
        results |= {name: checked.result, **checked.sections}
        reading = reading.joined(checked.reading)
    valid = merge_valid(*(r["valid"] for r in results.values()))
    return Checked({"valid": valid, **results}, reading)


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


def analyse(history: History, model: ModelChoice, options: CheckOptions | None = None) -> Checked:
    """Takes a history and a model (a built-in's name or a user's Model). Returns the
    check's Checked, its result with `model` (its name); a checker or a model that raises
    gives `valid: "unknown"` with the error."""
    name = model if isinstance(model, str) else model.name
    checked = run_checker(checker_for(model), history, options or CheckOptions())
    return replace(checked, result={"model": name, **checked.result})


def check_history(
    history: History, model: ModelChoice, options: CheckOptions | None = None
) -> Result:
    """Takes what analyse takes. Returns the result with its sections (Checked.merged)."""
    return analyse(history, model, options).merged()
