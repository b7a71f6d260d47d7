"""The command line of `harness check` (check.py), declared apart from the command: parsing
it, and `harness check --help`, loads no reader and no checker (a tenth of a second and
more); they load when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from checkers import MODEL_NAMES, SUB_VIA
from harness.commands import SUMMARIES
from workloads.argtypes import IGNORE_HELP, anomaly_kinds, positive


def add_parser(subparsers: Any) -> None:
    """Takes argparse's subparsers; registers `check` with `func(args) -> exit code`."""
    parser = subparsers.add_parser(
        "check",
        help=SUMMARIES["check"],
        description="Check histories (history.jsonl, Jepsen history.edn or Jepsen logs, "
        "results folders, folders searched for them, or - for standard input). Prints one "
        "line per history and a summary. Exits 1 if any is invalid, else 255 if checking "
        "any broke, else 254 for bad arguments or any malformed history, else 2 if any is "
        "unknown or INCOMPLETE, else 0.",
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
        help=f"what each history is checked against: {', '.join(sorted(MODEL_NAMES))}, or a "
        "model of your own, FILE.py:NAME or package.module:NAME (see README); default: "
        "guessed from its operations (queue for poll/drain/txn and Jepsen's Kafka ops, "
        "share when polls carry a share group's rounds, kv-append for append, map for "
        "get/put/..., set for add/send, else cas-register)",
    )
    parser.add_argument(
        "--sub-via",
        choices=SUB_VIA,
        help="queue: how the consumers read; under subscribe a rebalance explains poll-skip "
        "and nonmonotonic-poll (default: as the run's test.json says, else subscribe if "
        "the history has an ok subscribe op)",
    )
    parser.add_argument(
        "--ww-deps",
        action="store_const",
        const=True,
        help="queue: the transaction checks order writes by offset too (Jepsen's "
        ":ww-deps), so that a G1c may join a ww edge to a wr one, allowed as Jepsen "
        "allows it (default: as the run's test.json says, else not)",
    )
    parser.add_argument(
        "--ignore",
        type=anomaly_kinds,
        metavar="KIND,...",
        help=f"{IGNORE_HELP} (default: as the run's test.json says, else none)",
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
        help="processes: histories checked in parallel, or one history's keys, or two parts "
        "of one long queue history's check (default and at most: the number of cores)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per history instead"
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where counterexample viewers (HTML) go: DIR for one history, "
        "DIR/<its path>/ for many (default: beside each history; none for - without it)",
    )
    parser.add_argument(
        "--still",
        action="store_true",
        help="draw each counterexample as a still image too, an SVG as every plot "
        "(matplotlib: about 0.1 s each)",
    )
    # Its old name, from when the still was a PNG: scripts that pass it still run.
    parser.add_argument("--png", action="store_true", dest="still", help=argparse.SUPPRESS)
    parser.add_argument(
        "--spark",
        action="store_true",
        help="one history: run the per-key checks as Spark tasks (master: "
        "$HARNESS_SPARK_MASTER, default local[*])",
    )
    parser.set_defaults(func=run, crash_log_dirs=crash_log_dirs)


def model_argument(text: str) -> str:
    """Takes a --model argument. Returns it if it names a built-in model or has the shape
    of a user's model (loaded only when checking); raises ArgumentTypeError otherwise."""
    from checkers.linearizable import is_reference  # the model loader's rule: only now

    if text in MODEL_NAMES or is_reference(text):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a model: choose from {', '.join(sorted(MODEL_NAMES))}, "
        "or give FILE.py:NAME or package.module:NAME"
    )


def run(args: argparse.Namespace) -> int:
    """Takes parsed `check` arguments. Runs the command (check.run), imported only now."""
    from harness.commands import check

    return check.run(args)


def crash_log_dirs(args: argparse.Namespace) -> list[Path]:
    """Takes parsed `check` arguments. Returns where a crash's traceback goes
    (check.crash_log_dirs)."""
    from harness.commands import check

    return check.crash_log_dirs(args)
