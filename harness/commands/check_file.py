"""One history checked for `harness check`: read it, choose its model, check it, draw its
counterexamples, and return what happened as a plain dict (an Outcome) that crosses
processes and prints as a line or as JSON.

An Outcome always has `path` and `valid`. A checked history adds the checker's result
(`model`, `format`, `ops`, `seconds` and the checker's own fields); a history that cannot
be checked has `valid` None and `malformed` (`PATH:LINE: problem`); a bug of ours has
`valid` None and `crash` (one line; the traceback is in the file `log`).
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkers.faults import windows
from checkers.groups.consumer import check_groups
from checkers.groups.consumer_history import (
    GROUP_ONLY_FS,
    WithoutGroupOps,
    without_commits,
)
from checkers.groups.consumer_history import reject_malformed as reject_malformed_group
from checkers.groups.share import BROKER_DELIVERY_LIMIT
from checkers.groups.share_history import Shaped, ShapeProbe
from checkers.queue.halves import load_queue_halves
from checkers.queue.policy import POLICY, TXN_POLICY, SubVia
from checkers.registry import (
    CHECKERS,
    QUEUE_FS,
    Checker,
    CheckOptions,
    ModelChoice,
    check_history,
    checker_for,
    default_model,
)
from checkers.result import UNKNOWN, Result, check_safe, merge_valid
from harness.results import TEST
from history import History, HistoryError, MalformedOp, OpFound, collector_paused, load
from history.formats import short
from history.paths import CHECK_CRASH_LOG_PREFIX
from history.source import STDIN, STDIN_NAME

Outcome = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Asked:
    """What the command asked of every history: the model (None: guessed per history),
    the checkers' options, and for queue histories how the consumers read (None: as each
    run's test.json says, else as the history shows) and the kinds to ignore (None: as
    each run's test.json says, else none)."""

    model: ModelChoice | None = None
    time_limit: float | None = None
    jobs: int | None = None
    sub_via: SubVia | None = None
    ignore: frozenset[str] | None = None


def check_file(path: str, asked: Asked, drawings: Path) -> Outcome:
    """Takes a history's path, what the command asked, and where drawings go. Returns the
    Outcome. Only an interrupt escapes."""
    started = time.monotonic()
    try:
        outcome = _check(path, asked, drawings)
    except HistoryError as e:
        return {"path": path, "valid": None, "malformed": str(e)}
    except Exception as e:  # a bug of ours: never a verdict, never a page of traceback
        # Where its drawings go: --out when given, else beside the history.
        log = write_crash_log([drawings, Path(tempfile.gettempdir())])
        return {"path": path, "valid": None, "crash": one_line(e), "log": log and str(log)}
    outcome["seconds"] = round(time.monotonic() - started, 6)
    return outcome


def _check(path: str, asked: Asked, drawings: Path) -> Outcome:
    with collector_paused():
        history, model = load_for_check(path, asked.model, asked.jobs or 1)
        # A history holds no cycles: set aside from the collector before it runs again,
        # its millions of containers are never walked by a collection (about 2 s for a
        # million ops), and are freed all the same when it is dropped.
        gc.freeze()
    run_sub_via, run_ignore = run_policy(history)
    options = CheckOptions(
        time_limit=asked.time_limit,
        jobs=asked.jobs,
        sub_via=asked.sub_via or run_sub_via,
        ignore=run_ignore if asked.ignore is None else asked.ignore,
        delivery_limit=run_delivery_limit(history),
    )
    result = check_history(history, model, options)
    result.setdefault("ops", history.invocations - history.fails)
    if model == "queue" and (groups := group_section(history, result)) is not None:
        result["groups"] = groups
        result["valid"] = merge_valid(result["valid"], groups["valid"])
    warnings: list[str] = []
    name = Path(history.path).name
    if model == "share" and options.delivery_limit is None:
        warnings.append(
            f"{history.path}: its run records no delivery limit (test.json's "
            f"delivery_limit): checked against the broker's default, {BROKER_DELIVERY_LIMIT}"
        )
    drawn = draw_counterexamples(result, drawings, warnings, name, windows(history.nemesis))
    return {
        "path": history.path,
        "format": history.format,
        **result,
        "counterexamples": drawn,
        "warnings": warnings,
    }


def load_for_check(
    path: str, model: ModelChoice | None, jobs: int = 1
) -> tuple[History, ModelChoice]:
    """Takes a history's path, the --model asked for (None: guess) and how many processes
    may read it. Returns the History, with its events only when the model's check reads
    them, and the model. Raises HistoryError for a history that cannot be checked:
    malformed, with no client operation, or with an op the model cannot read."""
    if path == STDIN:  # read once: everything a check may need is kept
        history = load(path)
    elif model is not None:
        history = _load_for(path, checker_for(model), jobs)
    else:
        try:
            # The first rule of default_model, decided at the first poll or drain.
            history = load(path, keep_events=False, stop_at=QUEUE_FS)
        except OpFound:
            model = "share" if share_shaped(path) else "queue"
            history = _load_for(path, CHECKERS[model], jobs)
    if history.invocations == 0:
        raise HistoryError(history.path, 0, "no client operations")
    model = model or default_model(history)
    checker = checker_for(model)
    if checker.needs_events and not history.events and history.read is None:
        history = _load_for(path, checker)
    if model == "queue":  # a consumer group's commits are no queue checker's (groups.py)
        history = without_commits(history)
    try:
        checker.reject_malformed(history)
    except MalformedOp as bad:
        raise history.error(bad) from None
    return history, model


def share_shaped(path: str) -> bool:
    """Takes a history file with polls or drains. Returns whether the first that carries a
    value is a share workload's (checkers/groups/share_history.py), reading no further."""
    try:
        load(path, keep_events=False, reader=ShapeProbe())
    except Shaped as shaped:
        return shaped.share
    return False


def _load_for(path: str, checker: Checker, jobs: int = 1) -> History:
    if checker.reader is not None:
        reader = checker.reader(path)
        if checker is CHECKERS["queue"]:  # a consumer group's commits: not the queue's ops
            halves = load_queue_halves(path, jobs)  # a long one, on two cores
            if halves is not None:
                return halves
            reader = WithoutGroupOps(reader)
        return load(path, keep_events=False, reader=reader)
    return load(path, keep_events=checker.needs_events)


def group_section(history: History, queue: Result) -> Result | None:
    """Takes a queue history and its queue result. Returns the group checks' section
    (checkers/groups/consumer.py) when the history is a consumer group's (it has commit ops, or its
    run's test.json says its consumers subscribed outside transactions), else None. The
    file is read again with its events: the queue checker's copy has no commit ops.
    Raises HistoryError for a group value the checks cannot read."""
    spec = run_spec(history)
    grouped = spec.get("consumer_group") is True and spec.get("txn") is not True
    if not (history.fs & GROUP_ONLY_FS or grouped) or "error" in queue:
        return None
    if history.path == STDIN_NAME:  # read once, and without its commits: say so, judge nothing
        return {"valid": UNKNOWN, "error": "they read the history file again: not from stdin"}
    grouped_history = load(history.path)
    reject_malformed_group(grouped_history)  # a group value it cannot read: 254, not unknown
    lost = queue.get("lost_records", [])
    return check_safe(check_groups, grouped_history.events, lost, spec.get("auto_commit") is True)


def run_spec(history: History) -> dict[str, Any]:
    """Returns the spec in the test.json beside the history, or {} when there is none
    (a history read from stdin has no folder: the one it was run in is not its)."""
    if history.path == STDIN_NAME:
        return {}
    try:
        spec = json.loads((Path(history.path).parent / TEST).read_text())["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return spec if isinstance(spec, dict) else {}


LIMIT_BEFORE_THE_OPTION = 3
"""The delivery limit every share run had before --delivery-limit (2026-11-26): the
workload set it on the group, and test.json did not record it."""


def run_delivery_limit(history: History) -> int | None:
    """Returns the share group's delivery count limit as the test.json beside the history
    records it (its spec's delivery_limit; a share run's from before the option, 3), or
    None when there is no run's test.json to say."""
    spec = run_spec(history)
    limit = spec.get("delivery_limit")
    if limit is None and spec.get("workload") == "share":
        return LIMIT_BEFORE_THE_OPTION
    return limit if type(limit) is int and limit > 0 else None


def run_policy(history: History) -> tuple[SubVia | None, frozenset[str]]:
    """Returns how the consumers of the run that recorded history read (subscribe with
    --consumer-group, else assign) and the queue and transaction kinds it ignored, as the
    test.json beside it says; (None, no kinds) when there is none."""
    spec = run_spec(history)
    if "consumer_group" not in spec:
        return None, frozenset()
    sub_via: SubVia = "subscribe" if spec["consumer_group"] is True else "assign"
    ignored = spec.get("ignore", [])
    if not isinstance(ignored, list):
        return sub_via, frozenset()
    # Only kinds this checker knows: a test.json is input like any other.
    known = POLICY.keys() | TXN_POLICY.keys()
    return sub_via, frozenset(k for k in ignored if isinstance(k, str) and k in known)


def draw_counterexamples(
    result: Result,
    out_dir: Path,
    warnings: list[str],
    history: str | None = None,
    faults: Sequence[dict[str, Any]] = (),
) -> list[str]:
    """Takes a linearizability result, a folder, the history's file name and its fault
    windows; draws each invalid key's timeline into the folder, named after the history
    too when given (the next history checked there must not draw over it), and returns the
    files written. A drawing that fails adds a warning: the verdict stands."""
    failures = result.get("failures", [])
    if not any(f.get("valid") is False for f in failures):
        return []
    from harness.report.counterexamples.timeline import (
        render_counterexample,  # matplotlib: only for drawings
    )

    written: list[str] = []
    for failure in failures:
        try:
            drawn = render_counterexample(failure, out_dir, history, faults)
            written += [str(p) for p in drawn]
        except Exception as err:  # the drawing is a convenience, the verdict is the point
            key = short(failure.get("key"), 40)
            warnings.append(
                f"could not draw the counterexample of key {key} in {out_dir}: {one_line(err)}"
            )
    return written


def write_crash_log(dirs: list[Path]) -> Path | None:
    """Takes candidate folders. Writes the current exception's traceback into the first
    that takes it, made if missing; returns the file, or None when none does."""
    text = traceback.format_exc()
    for folder in dirs:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=CHECK_CRASH_LOG_PREFIX, suffix=".log", dir=folder)
            with os.fdopen(fd, "w") as log:
                log.write(text)
            return Path(name)
        except OSError:
            continue
    return None


def one_line(err: BaseException) -> str:
    """Takes an exception. Returns its type and message on one line of at most about 200
    characters."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:200]}" if text else type(err).__name__
