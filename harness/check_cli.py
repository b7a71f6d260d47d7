"""`harness check PATH...`: checks recorded histories (jsonl, EDN or Jepsen logs, results
folders, folders of them) with no cluster, one line per history and a summary.

Runs the linearizability search for register, cas-register, map and kv-append histories
and for a user's model (`--model FILE.py:NAME`, loaded once before any history is
checked), the lost-acknowledged-writes check for sets, or the Kafka queue catalogue for
queue histories. Exits 255 when checking any history broke (one line; the traceback goes to a
log file), else 254 for bad arguments or when any history is malformed (one line each,
`FILE:LINE: problem`; the others are still checked), else 1 when any history is invalid
(only ever a checker's verdict), else 2 when any is unknown, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TextIO

from checkers.fork_pool import can_fork, forked_map
from checkers.model_loader import ModelLoadError, is_reference
from checkers.result import merge_valid
from harness.argtypes import positive
from harness.check_file import (
    CHECKERS,
    Asked,
    ModelChoice,
    Outcome,
    check_file,
    explain,
    load_user_model,
    one_line,
    write_crash_log,
)
from harness.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_CRASH,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_UNKNOWN,
    EXIT_VALID,
)
from harness.history_paths import drawing_folders, find_histories
from harness.history_source import STDIN


def add_parser(subparsers: Any) -> None:
    """Takes argparse's subparsers; registers `check` with `func(args) -> exit code`."""
    parser = subparsers.add_parser(
        "check",
        help="check recorded histories",
        description="Check histories (history.jsonl, Jepsen history.edn or Jepsen logs, "
        "results folders, folders searched for them, or - for standard input). Prints one "
        "line per history and a summary. Exits 0 all valid, 1 any invalid, 2 any unknown, "
        "254 bad arguments or any malformed history, 255 internal error.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a history file, a results folder, a folder searched recursively for *.jsonl, "
        "*.edn and *.log histories and results folders, or - (stdin, alone)",
    )
    parser.add_argument(
        "--model",
        type=model_argument,
        metavar="MODEL",
        help=f"what each history is checked against: {', '.join(sorted(CHECKERS))}, or a "
        "model of your own, FILE.py:NAME or package.module:NAME (see README); default: "
        "guessed from its operations (queue for poll/drain, kv-append for append, map for "
        "get/put/..., set for add/send, else cas-register)",
    )
    parser.add_argument(
        "--idempotent",
        action="store_true",
        default=None,
        help="queue: the producers were idempotent, so duplicates and decreasing send "
        "offsets are invalid (default: as the run's test.json says, else off)",
    )
    parser.add_argument(
        "--time-limit",
        type=positive(float),
        metavar="S",
        help="seconds of search per key before its verdict is unknown",
    )
    parser.add_argument(
        "--jobs",
        type=positive(int),
        metavar="N",
        help="processes: histories checked in parallel, or one history's keys (default and "
        "at most: the number of cores)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per history instead"
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where counterexample timelines (PNG, HTML) go: DIR for one history, "
        "DIR/<its path>/ for many (default: beside each history)",
    )
    parser.add_argument(
        "--spark",
        action="store_true",
        help="one history: run the per-key checks as Spark tasks (master: "
        "$HARNESS_SPARK_MASTER, default local[*])",
    )
    parser.set_defaults(func=run)


def model_argument(text: str) -> str:
    """Takes a --model argument. Returns it if it names a built-in model or has the shape
    of a user's model (loaded only when checking); raises ArgumentTypeError otherwise."""
    if text in CHECKERS or is_reference(text):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a model: choose from {', '.join(sorted(CHECKERS))}, "
        "or give FILE.py:NAME or package.module:NAME"
    )


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
            from harness.pipeline.check_command import run_spark  # Spark: only when asked

            return run_spark(args)
        return _check_all(args)
    except KeyboardInterrupt:
        print("harness check: interrupted (Ctrl-C) before a verdict", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # a bug of ours: never a verdict, never a page of traceback
        log = write_crash_log(_crash_log_dirs(args))
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
    asked = Asked(model, args.time_limit, jobs if len(files) == 1 else 1, args.idempotent)
    for outcome in check_files(files, asked, drawing_folders(files, args.out), jobs):
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


def check_files(
    files: list[str], asked: Asked, drawings: dict[str, Path], jobs: int
) -> Iterator[Outcome]:
    """Takes history files, what was asked, each file's drawing folder and a number of
    processes. Yields each file's Outcome in order, checked in forked processes when
    there are several files and processes."""
    if len(files) > 1 and jobs > 1 and can_fork():

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


def summary_fields(outcome: Outcome) -> Outcome:
    """Returns what the summary and the exit code need of an Outcome (a history's full
    result can be large, and there may be many)."""
    return {k: outcome[k] for k in ("path", "valid", "malformed", "crash") if k in outcome}


def report(outcome: Outcome, as_json: bool, lone: bool) -> None:
    """Prints one history's Outcome: a JSON line, or its line (with the checker's
    explanation when it is the lone history or not valid) and its problems on stderr."""
    for warning in outcome.get("warnings", []):
        say(f"harness check: {warning}", sys.stderr)
    if as_json:
        say(json.dumps(outcome, default=_jsonable), sys.stdout)
    if "malformed" in outcome:
        say(outcome["malformed"], sys.stderr)
    elif "crash" in outcome:
        where = f"traceback in {outcome['log']}" if outcome["log"] else "no log could be written"
        say(
            f"harness check: internal error on {outcome['path']}: {outcome['crash']} ({where})",
            sys.stderr,
        )
    elif not as_json:
        say("\n".join(render(outcome, detailed=lone or outcome["valid"] is not True)), sys.stdout)


def say(text: str, stream: TextIO) -> None:
    """Prints a line of text. A character the stream cannot encode (a lone surrogate from a
    file name or a JSON string) is printed as its escape, never a crash."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding), file=stream)


def render(outcome: Outcome, detailed: bool) -> list[str]:
    """Takes a checked history's Outcome. Returns its line (verdict, path, model, format,
    ops, keys, seconds) and, when detailed, the checker's explanation below it."""
    over = "partition" if "partitions" in outcome else "key"
    keys = outcome.get("partitions", outcome.get("keys", 0))
    lines = [
        f"{verdict_word(outcome['valid']):<7} {outcome['path']}: {outcome['model']} model, "
        f"{outcome['format']}, {outcome['ops']} ops over {keys} {over}{'s' if keys != 1 else ''}"
        f", {outcome['seconds']:.2f} s"
    ]
    if "error" in outcome:
        return [*lines, f"  the checker failed: {outcome['error']}"]
    if detailed:
        lines.extend("  " + line for line in explain(outcome))
    lines.extend(f"  timeline: {path}" for path in outcome.get("counterexamples", []))
    return lines


def summary(outcomes: list[Outcome], seconds: float) -> str:
    """Takes every history's Outcome. Returns the summary line: how many of each verdict."""
    counts = {"valid": 0, "invalid": 0, "unknown": 0, "malformed": 0, "crashed": 0}
    for outcome in outcomes:
        if "malformed" in outcome:
            counts["malformed"] += 1
        elif "crash" in outcome:
            counts["crashed"] += 1
        else:
            counts[verdict_word(outcome["valid"]).lower()] += 1
    shown = ", ".join(f"{n} {word}" for word, n in counts.items() if n or word != "crashed")
    return f"{len(outcomes)} histories in {seconds:.2f} s: {shown}"


def verdict_word(valid: Any) -> str:
    """Takes a validity; returns VALID, INVALID or UNKNOWN."""
    return {True: "VALID", False: "INVALID"}.get(valid, "UNKNOWN")


def exit_code(outcomes: list[Outcome]) -> int:
    """Takes every history's Outcome. Returns 255 if checking any broke, else 254 if any was
    malformed, else Jepsen's code for the merged verdict (0 valid, 1 invalid, 2 unknown)."""
    if any("crash" in o for o in outcomes):
        return EXIT_CRASH
    if any("malformed" in o for o in outcomes):
        return EXIT_BAD_INPUT
    valid = merge_valid(*(o["valid"] for o in outcomes))
    if valid is True:
        return EXIT_VALID
    return EXIT_INVALID if valid is False else EXIT_UNKNOWN


def _crash_log_dirs(args: argparse.Namespace) -> list[Path]:
    """Where a crash's traceback may go, best first: --out, beside the first history, a
    temp dir."""
    dirs = [Path(args.out)] if getattr(args, "out", None) else []
    paths = [p for p in getattr(args, "paths", []) if p != STDIN]
    if paths:
        first = Path(paths[0])
        dirs.append(first if first.is_dir() else first.parent)
    return [*dirs, Path(tempfile.gettempdir())]


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)
