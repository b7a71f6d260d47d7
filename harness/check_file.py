"""One history checked for `harness check`: read it, choose its model, check it, draw its
counterexamples, and return what happened as a plain dict (an Outcome) that crosses
processes and prints as a line or as JSON.

An Outcome always has `path` and `valid`. A checked history adds the checker's result
(`model`, `format`, `ops`, `seconds` and the checker's own fields); a history that cannot
be checked has `valid` None and `malformed` (`PATH:LINE: problem`); a bug of ours has
`valid` None and `crash` (one line; the traceback is in the file `log`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import checkers.queue as queue_checker
from checkers import linearizable, lost_acks
from checkers.model_loader import ModelLoadError, load_model
from checkers.models import MODELS, Model
from checkers.result import check_safe
from harness.history import History, HistoryError, MalformedOp, OpFound, Reader, load
from harness.history_formats import short
from harness.history_source import STDIN

MAP_FS = frozenset({"get", "put", "put-if-absent", "replace", "remove"})
SET_FS = frozenset({"add", "send", "read"})
QUEUE_FS = frozenset({"poll", "drain"})
Result = dict[str, Any]
Outcome = dict[str, Any]
ModelChoice = str | Model
"""A built-in model's name, or a user's Model (see load_user_model)."""


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What every checker may be told: seconds of search per key, processes to use."""

    time_limit: float | None = None
    jobs: int | None = None
    idempotent: bool = False
    """Queue histories: whether the producers were idempotent (duplicates then count)."""


@dataclass(frozen=True, slots=True)
class Asked:
    """What the command asked of every history: the model (None: guessed per history),
    the checkers' options, and idempotence (None: as each run's test.json says)."""

    model: ModelChoice | None = None
    time_limit: float | None = None
    jobs: int | None = None
    idempotent: bool | None = None


def _reads_anything(history: History) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Checker:
    """How one --model is checked. check(history, options) returns a result with `valid`;
    explain(result) the lines a person reads; reject_malformed(history) raises MalformedOp
    for an op the check cannot read; needs_events: whether check reads history.events;
    reader(path), if any, makes the Reader that reads a history file as it is loaded,
    into history.read, which check then reads instead of the events."""

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
    if history.read is not None:
        return queue_checker.check_read(history.read, idempotent=options.idempotent)
    return queue_checker.check(history.events, idempotent=options.idempotent)


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
        _queue, queue_checker.explain, needs_events=True, reader=queue_checker.QueueStream
    ),
}


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


def check_file(path: str, asked: Asked, drawings: Path) -> Outcome:
    """Takes a history's path, what the command asked, and where drawings go. Returns the
    Outcome. Only an interrupt escapes."""
    started = time.monotonic()
    try:
        outcome = _check(path, asked, drawings)
    except HistoryError as e:
        return {"path": path, "valid": None, "malformed": str(e)}
    except Exception as e:  # a bug of ours: never a verdict, never a page of traceback
        log = write_crash_log([drawings, Path(path).parent, Path(tempfile.gettempdir())])
        return {"path": path, "valid": None, "crash": one_line(e), "log": log and str(log)}
    outcome["seconds"] = round(time.monotonic() - started, 6)
    return outcome


def _check(path: str, asked: Asked, drawings: Path) -> Outcome:
    history, model = load_for_check(path, asked.model)
    idempotent = asked.idempotent if asked.idempotent is not None else run_idempotence(history)
    options = CheckOptions(time_limit=asked.time_limit, jobs=asked.jobs, idempotent=idempotent)
    result = check_history(history, model, options)
    result.setdefault("ops", history.invocations - history.fails)
    warnings: list[str] = []
    drawn = draw_counterexamples(result, drawings, warnings)
    return {
        "path": history.path,
        "format": history.format,
        **result,
        "counterexamples": drawn,
        "warnings": warnings,
    }


def check_history(
    history: History, model: ModelChoice, options: CheckOptions | None = None
) -> Result:
    """Takes a history and a model (a built-in's name or a user's Model). Returns the
    checker's result with `model` (its name); a checker or a model that raises gives
    `valid: "unknown"` with the error."""
    name = model if isinstance(model, str) else model.name
    result = check_safe(checker_for(model).check, history, options or CheckOptions())
    return {"model": name, **result}


def load_for_check(path: str, model: ModelChoice | None) -> tuple[History, ModelChoice]:
    """Takes a history's path and the --model asked for (None: guess). Returns the History,
    with its events only when the model's check reads them, and the model. Raises
    HistoryError for a history that cannot be checked: malformed, with no client operation,
    or with an op the model cannot read."""
    if path == STDIN:  # read once: everything a check may need is kept
        history = load(path)
    elif model is not None:
        history = _load_for(path, checker_for(model))
    else:
        try:
            # The first rule of default_model, decided at the first poll or drain.
            history = load(path, keep_events=False, stop_at=QUEUE_FS)
        except OpFound:
            history = _load_for(path, CHECKERS["queue"])
    if history.invocations == 0:
        raise HistoryError(history.path, 0, "no client operations")
    model = model or default_model(history)
    checker = checker_for(model)
    if checker.needs_events and not history.events and history.read is None:
        history = _load_for(path, checker)
    try:
        checker.reject_malformed(history)
    except MalformedOp as bad:
        raise history.error(bad) from None
    return history, model


def _load_for(path: str, checker: Checker) -> History:
    if checker.reader is not None:
        return load(path, keep_events=False, reader=checker.reader(path))
    return load(path, keep_events=checker.needs_events)


def default_model(history: History) -> str:
    """Takes a history; returns the model its operation names suggest."""
    fs = history.fs
    if fs & QUEUE_FS:
        return "queue"
    if "append" in fs:
        return "kv-append"
    if fs & MAP_FS:
        return "map"
    lists_read = any(op.f == "read" and isinstance(op.value, list) for op in history.ops)
    if fs and fs <= SET_FS and (fs & {"add", "send"} or lists_read):
        return "set"
    return "cas-register"


def run_idempotence(history: History) -> bool:
    """Returns whether the run that recorded history had idempotent producers, as the
    test.json beside it says (False when there is none)."""
    try:
        test = json.loads((Path(history.path).parent / "test.json").read_text())
        return test["spec"]["idempotence"] is True
    except (OSError, ValueError, KeyError, TypeError):
        return False


def draw_counterexamples(result: Result, out_dir: Path, warnings: list[str]) -> list[str]:
    """Takes a linearizability result; draws each invalid key's timeline into out_dir and
    returns the files written. A drawing that fails adds a warning: the verdict stands."""
    failures = result.get("failures", [])
    if not any(f.get("valid") is False for f in failures):
        return []
    from checkers.timeline import render_counterexample  # matplotlib: only for drawings

    written: list[str] = []
    for failure in failures:
        try:
            written += [str(p) for p in render_counterexample(failure, out_dir)]
        except Exception as err:  # the drawing is a convenience, the verdict is the point
            key = short(failure.get("key"), 40)
            warnings.append(
                f"could not draw the counterexample of key {key} in {out_dir}: {one_line(err)}"
            )
    return written


def write_crash_log(dirs: list[Path]) -> Path | None:
    """Takes candidate folders. Writes the current exception's traceback into the first
    that takes it; returns the file, or None when none does."""
    text = traceback.format_exc()
    for folder in dirs:
        try:
            fd, name = tempfile.mkstemp(prefix="harness-check-crash-", suffix=".log", dir=folder)
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
