"""`harness analyze [RESULTS_DIR]`: runs the analysis job (harness.pipeline.analyze) over
every run folder under a results directory and prints what it found in a few lines.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from harness import signals
from harness.cluster.releases import release_problem, version_problem
from harness.commands import SUMMARIES
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH, EXIT_OK
from harness.pipeline.analyze import Analysis, analyze
from harness.pipeline.session import DEFAULT_MASTER
from harness.progress import StatusLine


def add_parser(subparsers: Any) -> None:
    """Takes argparse's subparsers; registers `analyze` with `func(args) -> exit code`."""
    parser = subparsers.add_parser(
        "analyze",
        help=SUMMARIES["analyze"],
        description="Read every run folder (test.json, results.json, history.jsonl) with "
        "Spark and write per-run and per-configuration tables (Parquet and CSV), "
        "fault-window figures, trend plots (when the runs span two days or more), "
        "summary.md (the runs new since the last analysis into the same folder, every "
        "INVALID run linked to its report) and results/index.html.",
    )
    parser.add_argument("results", nargs="?", default="results", help="default: results")
    parser.add_argument(
        "--spark-master", default=DEFAULT_MASTER, metavar="URL", help="default: local[*]"
    )
    parser.add_argument("--out", metavar="DIR", help="default: RESULTS_DIR/analysis")
    parser.add_argument(
        "--kafka",
        nargs="+",
        type=release,
        default=[],
        metavar="VERSION[:MODE]",
        help="only the runs on these releases (a version alone: in any metadata mode; "
        "default: every run)",
    )
    parser.set_defaults(func=run)


def release(text: str) -> tuple[str, str | None]:
    """An argparse type for VERSION or VERSION:MODE, a release the harness runs."""
    version, _, mode = text.partition(":")
    problem = release_problem(version, mode) if mode else version_problem(version)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return version, mode or None


def run(args: argparse.Namespace) -> int:
    """Takes parsed `analyze` arguments; runs the job; returns the exit code."""
    root = Path(args.results)
    if not root.is_dir():
        print(f"harness analyze: {root}: no such directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else root / "analysis"
    problem = output_problem(out)
    if problem is not None:
        print(f"harness analyze: {out}: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    line = StatusLine()
    try:
        found = analyze(root, out, args.spark_master, line, args.kafka)
    except KeyboardInterrupt:
        line.clear()  # or the status would run into the word `interrupted`
        raise
    except Exception as err:  # one line here, the traceback in the log
        # A py4j call in a cleanup (pyspark's call-site reset) fails once ^C has cut the
        # JVM's answer short: the interrupt is what happened.
        interrupt = signals.interrupt_behind(err)
        if interrupt is not None:
            line.clear()
            raise interrupt from None
        log = out / "analyze.log"
        with open(log, "a", encoding="utf-8") as f:
            f.write(traceback.format_exc())
        line.say(f"harness analyze: internal error: {err!r} (traceback in {log})")
        return EXIT_CRASH
    line.clear()
    for text in report_lines(found):
        line.say(text)
    return EXIT_OK


def output_problem(out: Path) -> str | None:
    """Takes the output folder. Makes it when missing; returns why it cannot hold the
    analysis (not a folder, not writable), or None when it can."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "not a folder"
    except OSError as err:
        return f"cannot make the output folder ({err.strerror})"
    if not os.access(out, os.W_OK | os.X_OK):
        return "the output folder is not writable"
    return None


def report_lines(found: Analysis) -> list[str]:
    """Returns the few lines printed at the end of an analysis."""
    lines = [
        f"{found.runs} runs in {found.configurations} configurations, {found.invalid} invalid; "
        f"{len(found.broken)} run folders left out",
    ]
    lines += [f"  left out {b['run']}: {b['reason']}" for b in found.broken[:5]]
    if len(found.broken) > 5:
        lines.append(f"  ... and {len(found.broken) - 5} more (see summary.md)")
    lines.append(found.news)
    lines.append(f"summary: {found.out / 'summary.md'}")
    return lines
