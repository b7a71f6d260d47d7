"""One history checked for `harness check`: read it, choose its model, check it, draw its
counterexamples, and return what happened as a plain dict (an Outcome) that crosses
processes and prints as a line or as JSON.

An Outcome always has `path` and `valid`. A checked history adds the checker's result
(`model`, `format`, `ops`, `seconds` and the checker's own fields), and the `duration`
section of the results.json beside it when that says the workload stopped short (its
verdict is then INCOMPLETE, harness.verdicts.run_verdict); a history that cannot be
checked has `valid` None and `malformed` (`PATH:LINE: problem`); a bug of ours has
`valid` None and `crash` (one line; the traceback is in the file `log`).
"""

from __future__ import annotations

import gc
import json
import os
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checkers import (
    CHECKERS,
    QUEUE_FS,
    Checker,
    CheckOptions,
    ModelChoice,
    Result,
    check_history,
    checker_for,
    default_model,
    fault_windows,
)
from checkers.linearizable import respelled
from harness.results import RESULTS, TEST
from harness.verdicts import DURATION, incomplete
from history import (
    CHECK_CRASH_LOG_PREFIX,
    STDIN,
    STDIN_NAME,
    History,
    HistoryError,
    MalformedOp,
    OpFound,
    collector_paused,
    load,
    short,
)

if TYPE_CHECKING:  # the queue's and the groups' checkers load only for their histories
    from checkers.queue import SubVia

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
    still: bool = False
    """Draw each counterexample as a still image too (matplotlib), not only its viewer."""
    ww_deps: bool | None = None
    """Queue histories: ww edges join G1c's cycles (None: as each run's test.json says,
    else not)."""


def check_file(path: str, asked: Asked, drawings: Path | None) -> Outcome:
    """Takes a history's path, what the command asked, and where drawings go (None: none
    are drawn). Returns the Outcome. Only an interrupt escapes."""
    started = time.monotonic()
    try:
        outcome = _check(path, asked, drawings)
    except HistoryError as e:
        return {"path": path, "valid": None, "malformed": str(e)}
    except Exception as e:  # a bug of ours: never a verdict, never a page of traceback
        # Where its drawings go: --out when given, else beside the history.
        import tempfile  # a crash's only

        beside = [] if drawings is None else [drawings]
        log = write_crash_log([*beside, Path(tempfile.gettempdir())])
        return {"path": path, "valid": None, "crash": one_line(e), "log": log and str(log)}
    outcome["seconds"] = round(time.monotonic() - started, 6)
    return outcome


def _check(path: str, asked: Asked, drawings: Path | None) -> Outcome:
    with collector_paused():
        history, model = load_for_check(path, asked.model, asked.jobs or 1)
        # A history holds no cycles: set aside from the collector before it runs again,
        # its millions of containers are never walked by a collection (about 2 s for a
        # million ops), and are freed all the same when it is dropped.
        gc.freeze()
    options = CheckOptions.from_spec(
        run_spec(history),
        time_limit=asked.time_limit,
        jobs=asked.jobs,
        sub_via=asked.sub_via,
        ignore=asked.ignore,
        ww_deps=asked.ww_deps,
    )
    result = respelled(check_history(history, model, options), history.format)
    # One count of a history's ops, the stats checker's that the report shows: every client
    # op invoked, completed or not, failed ones too (checkers/stats.py).
    result["ops"] = history.invocations
    warnings = reading_warnings(history, result)
    name = Path(history.path).name
    if model == "share" and options.delivery_limit is None:
        from checkers.groups import BROKER_DELIVERY_LIMIT

        warnings.append(
            f"{history.path}: its run records no delivery limit (test.json's "
            f"delivery_limit): checked against the broker's default, {BROKER_DELIVERY_LIMIT}"
        )
    faults = fault_windows(history.nemesis)
    drawn = draw_counterexamples(result, drawings, warnings, name, faults, still=asked.still)
    stopped = run_duration(history)
    return {
        "path": history.path,
        "format": history.format,
        **result,
        **({"guessed": True} if asked.model is None else {}),
        **({DURATION: stopped} if stopped is not None else {}),
        "counterexamples": drawn,
        "warnings": warnings,
    }


def reading_warnings(history: History, result: Result) -> list[str]:
    """Takes a history and its check's result. Returns, each naming the history, what its
    reading and its check read as Jepsen's analysis reads it though ours would refuse it
    (History.warnings, a queue check's `warnings`, which it takes out of the result)."""
    noted = [*history.warnings, *result.pop("warnings", [])]
    return [f"{history.path}: {warning}" for warning in noted]


def load_for_check(
    path: str, model: ModelChoice | None, jobs: int = 1
) -> tuple[History, ModelChoice]:
    """Takes a history's path, the --model asked for (None: guess) and how many processes
    may read it. Returns the History, with its events only when the model's check reads
    them, and the model. Raises HistoryError for a history that cannot be checked:
    malformed, with no client operation, or with an op the model cannot read (saying
    guess_hint too when the model was guessed and does not know the op's name)."""
    guessed = model is None
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
    try:
        checker.reject_malformed(history)
    except MalformedOp as bad:
        error = history.error(bad)
        if guessed and not bad.in_value:
            name = model if isinstance(model, str) else model.name
            problem = f"{error.problem}: {guess_hint(name)}"
            error = HistoryError(error.path, error.line, problem)
        raise error from None
    return history, model


def guess_hint(model: str) -> str:
    """Takes the name of a model guessed for a history that it could not check, or
    checked as UNKNOWN. Returns what to say of it: guessed, and how to name another."""
    return (
        f"the {model} model was guessed from the history's operations; name the model with "
        "--model (queue for Jepsen's Kafka histories)"
    )


def share_shaped(path: str) -> bool:
    """Takes a history file with polls or drains. Returns whether the first that carries a
    value is a share workload's (checkers/groups/share_history.py), reading no further."""
    from checkers.groups import Shaped, ShapeProbe

    try:
        load(path, keep_events=False, reader=ShapeProbe())
    except Shaped as shaped:
        return shaped.share
    return False


def _load_for(path: str, checker: Checker, jobs: int = 1) -> History:
    if checker.reader is not None:
        if checker is CHECKERS["queue"]:
            from checkers.queue import load_queue_halves

            halves = load_queue_halves(path, jobs)  # a long one, on two cores
            if halves is not None:
                return halves
        return load(path, keep_events=False, reader=checker.reader(path))
    return load(path, keep_events=checker.needs_events)


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


def run_duration(history: History) -> dict[str, Any] | None:
    """Returns the duration section of the results.json beside the history when it says
    the run's workload stopped short (Jepsen's :incomplete), else None: a history with no
    run folder (stdin, a file of its own) or a run that ran its time."""
    if history.path == STDIN_NAME:
        return None
    try:
        results = json.loads((Path(history.path).parent / RESULTS).read_text())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(results, dict) or not incomplete(results):
        return None
    return dict(results[DURATION])


def draw_counterexamples(
    result: Result,
    out_dir: Path | None,
    warnings: list[str],
    history: str | None = None,
    faults: Sequence[dict[str, Any]] = (),
    *,
    still: bool = False,
) -> list[str]:
    """Takes a linearizability result, a folder (None: no drawing, for standard input with
    no --out), the history's file name, its fault windows and whether to draw stills;
    writes one viewer of every invalid key (and with still a still image per key, SVG)
    into the folder, named
    after the history too when given (the next history checked there must not draw over
    it), and returns the files written. A drawing that fails, or is not made, adds a
    warning: the verdict stands. The viewer alone costs a millisecond; a still a tenth of
    a second and matplotlib's import, more than checking a small history."""
    failures = result.get("failures", [])
    if not any(f.get("valid") is False for f in failures):
        return []
    if out_dir is None:
        warnings.append(
            "standard input has no folder of its own: no counterexample drawings were made "
            "(give --out DIR for them)"
        )
        return []
    from harness.report.counterexamples.viewer import invalid, write_viewer

    written: list[str] = []
    if still:
        from harness.report.counterexamples.timeline import draw_still, still_file

        for failure in invalid(failures):
            try:
                out_dir.mkdir(parents=True, exist_ok=True)
                drawn = draw_still(failure, out_dir / still_file(failure["key"], history))
                written.append(str(drawn))
            except Exception as err:  # the drawing is a convenience, the verdict is the point
                key = short(failure.get("key"), 40)
                warnings.append(
                    f"could not draw the counterexample of key {key} in {out_dir}: {one_line(err)}"
                )
    try:
        written += [str(p) for p in write_viewer(failures, out_dir, history, faults)]
    except Exception as err:  # nor is the viewer
        warnings.append(f"could not write the counterexample viewer in {out_dir}: {one_line(err)}")
    return written


def write_crash_log(dirs: list[Path]) -> Path | None:
    """Takes candidate folders. Writes the current exception's traceback into the first
    that takes it, made if missing; returns the file, or None when none does."""
    import tempfile  # a crash's only

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
