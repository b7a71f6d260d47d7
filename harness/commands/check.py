"""`harness check PATH...`: checks recorded histories (jsonl, EDN or Jepsen logs, results
folders, folders of them) with no cluster, one line per history and a summary.

Runs the linearizability search for register, cas-register, map and kv-append histories
and for a user's model (`--model FILE.py:NAME`, loaded once before any history is
checked), the lost-acknowledged-writes check for sets, the Kafka queue catalogue for
queue histories, or the share group checks for a share workload's. Exits 254 for bad
arguments; else with the worst exit code of its histories (harness.exit_codes.WORST_FIRST):
1 when any history is invalid (only ever a checker's verdict), else 255 when checking any
broke (one line; the traceback goes to a log file), else 254 when any is malformed (one
line each, `FILE:LINE: problem`; the others are still checked), else 2 when any is
unknown or INCOMPLETE (a run folder whose workload stopped short), else 0. A reader that
leaves the output's pipe gives 141 (harness.cli), no crash log.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Generator
from pathlib import Path

from checkers import CHECKERS, ModelChoice, load_user_model
from checkers.linearizable import ModelLoadError
from harness.commands.check_file import Asked, Outcome, check_file, one_line, write_crash_log
from harness.commands.check_output import exit_code, report, say, summary, summary_fields
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH, EXIT_INTERRUPTED
from history import STDIN, drawing_folders, find_histories


def run(args: argparse.Namespace) -> int:
    """Takes parsed `check` arguments; prints a line per history; returns the exit code."""
    try:
        if args.spark and args.model is not None and args.model not in CHECKERS:
            say(
                f"harness check: error: --spark checks built-in models; "
                f"check {args.model} without it",
                sys.stderr,
            )
            return EXIT_BAD_INPUT
        if args.spark:
            from harness.commands.check_spark import run_spark  # Spark: only when asked

            code = run_spark(args)
        else:
            code = _check_all(args)
        sys.stdout.flush()  # a reader that left shows here, as a BrokenPipeError, not at exit
        return code
    except KeyboardInterrupt:
        print("harness check: interrupted (Ctrl-C) before a verdict", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `check ... | head -1`: harness.cli tells the reader's leaving
        raise  # (141, no log) from a socket of ours breaking (a crash)
    except Exception as e:  # a bug of ours: never a verdict, never a page of traceback
        log = write_crash_log(crash_log_dirs(args))
        where = f"traceback in {log}" if log else "no log could be written"
        say(f"harness check: internal error: {one_line(e)} ({where})", sys.stderr)
        return EXIT_CRASH


def _check_all(args: argparse.Namespace) -> int:
    started = time.monotonic()
    if STDIN in args.paths and len(args.paths) > 1:
        print("harness check: error: - (standard input) must be the only PATH", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        model = chosen_model(args.model)
    except ModelLoadError as err:
        say(f"harness check: error: --model {args.model}: {err}", sys.stderr)
        return EXIT_BAD_INPUT
    files, unreadable = find_histories(args.paths)
    outcomes: list[Outcome] = []
    for problem in unreadable:
        outcomes.append({"path": problem.path, "valid": None, "malformed": str(problem)})
        report(outcomes[-1], args.json, lone=False)
    cores = os.cpu_count() or 1
    jobs = min(args.jobs or cores, cores)
    lone = len(files) == 1 and not unreadable
    one = len(files) == 1
    asked = Asked(
        model,
        args.time_limit,
        jobs if one else 1,
        args.sub_via,
        args.ignore,
        args.still,
        args.ww_deps,
    )
    with contextlib.closing(check_files(files, asked, drawings_of(files, args.out), jobs)) as done:
        for outcome in done:  # closed on any exit, so forked workers are stopped at once
            report(outcome, args.json, lone)
            outcomes.append(summary_fields(outcome))
    if not args.json and len(outcomes) > 1:
        say(summary(outcomes, time.monotonic() - started), sys.stdout)
    return exit_code(outcomes)


def chosen_model(argument: str | None) -> ModelChoice | None:
    """Takes the --model argument. Returns it, or the user's model it names, loaded once here
    so that forked workers inherit it. Raises ModelLoadError when that cannot be loaded."""
    if argument is None or argument in CHECKERS:
        return argument
    return load_user_model(argument)


def drawings_of(files: list[str], out: str | None) -> dict[str, Path | None]:
    """Takes the history files and the --out folder (None: beside each history). Returns
    where each file's drawings go (history.drawing_folders): nowhere for standard input
    with no --out, which has no folder of its own, so nothing is written outside --out or
    a history's folder."""
    if out is None and files == [STDIN]:
        return {STDIN: None}
    return dict(drawing_folders(files, out))


def check_files(
    files: list[str], asked: Asked, drawings: dict[str, Path | None], jobs: int
) -> Generator[Outcome, None, None]:
    """Takes history files, what was asked, each file's drawing folder and a number of
    processes. Yields each file's Outcome in order, checked in forked processes when
    there are several files and processes."""
    if len(files) > 1 and jobs > 1 and _can_fork():
        from concurrent.futures.process import BrokenProcessPool

        from checkers import forked_map

        def check_part(i: int) -> Outcome:
            return check_file(files[i], asked, drawings[files[i]])

        results = forked_map(check_part, len(files), jobs)
        for done in range(len(files)):
            try:
                outcome = next(results)
            except (OSError, BrokenProcessPool):  # no processes to be had: the rest here
                files = files[done:]
                break
            yield outcome
        else:
            return
    for file in files:
        yield check_file(file, asked, drawings[file])


def _can_fork() -> bool:
    from checkers import can_fork  # multiprocessing: only for histories checked at once

    return can_fork()


def crash_log_dirs(args: argparse.Namespace) -> list[Path]:
    """Takes parsed `check` arguments. Returns where a crash's traceback may go, best first:
    --out when given (what is written goes there alone), else beside the first history;
    then a temp dir. harness.cli asks it too, for an error that escapes `run`."""
    import tempfile  # a crash's only

    temp = Path(tempfile.gettempdir())
    if getattr(args, "out", None):
        return [Path(args.out), temp]
    paths = [Path(p) for p in getattr(args, "paths", []) if p != STDIN]
    beside = [paths[0] if paths[0].is_dir() else paths[0].parent] if paths else []
    return [*beside, temp]
