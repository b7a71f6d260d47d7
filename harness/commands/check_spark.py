"""What `harness check --spark` does once its arguments are parsed: start a quiet Spark
session, check the history as Spark tasks, and report as the local check does."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from checkers.linearizable import respelled
from harness import signals
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH
from harness.progress import StatusLine
from history import STDIN_NAME, HistoryError

MASTER_VARIABLE = "HARNESS_SPARK_MASTER"


def spark_master() -> str:
    """Returns the Spark master for `check --spark`: $HARNESS_SPARK_MASTER, else local[*]."""
    from harness.pipeline.session import DEFAULT_MASTER

    return os.environ.get(MASTER_VARIABLE) or DEFAULT_MASTER


def run_spark(args: argparse.Namespace) -> int:
    """Takes parsed `check` arguments. Checks the history with Spark; prints the verdict
    as the local path does; returns the exit code."""
    if len(args.paths) != 1:
        print("harness check: error: --spark checks one history at a time", file=sys.stderr)
        return EXIT_BAD_INPUT
    # A folder of its own, new and private (0700): a shared, predictable one could be made
    # first by another user, with links in it that the log would be written through.
    folder = Path(tempfile.mkdtemp(prefix="harness-spark-"))
    kept = False
    try:
        code = _check(args, folder / "spark.log")
        kept = code == EXIT_CRASH  # the log holds the traceback the user is pointed to
        return code
    finally:
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)


def _check(args: argparse.Namespace, log: Path) -> int:
    """Takes parsed `check` arguments and the Spark log file. Checks the one history;
    returns the exit code."""
    from harness.commands import check_file, check_output
    from harness.pipeline.session import spark_session
    from harness.pipeline.spark_check import check_with_spark

    path = args.paths[0]
    line = StatusLine()
    master = spark_master()
    try:
        line.update(f"starting Spark ({master}); its log: {log}")
        with spark_session(master, log) as spark:
            line.update(f"checking {path} as Spark tasks")
            history, result = check_with_spark(spark, path, args.model, args.time_limit)
    except KeyboardInterrupt:
        line.clear()  # or the status would run into the word `interrupted`
        raise
    except (HistoryError, ValueError) as err:
        line.clear()
        print(str(err), file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:  # one line here, the traceback in the log
        # A py4j call in a cleanup (pyspark's call-site reset) fails once ^C has cut the
        # JVM's answer short: the interrupt is what happened.
        interrupt = signals.interrupt_behind(err)
        if interrupt is not None:
            line.clear()
            raise interrupt from None
        with open(log, "a", encoding="utf-8") as f:
            f.write(traceback.format_exc())
        line.say(f"harness check --spark: internal error: {err!r} (traceback in {log})")
        return EXIT_CRASH
    line.clear()
    out_dir = Path(args.out) if args.out else None
    if out_dir is None and history.path != STDIN_NAME:  # stdin has no folder to draw in
        out_dir = Path(history.path).parent
    result = respelled(result, history.format)
    warnings = check_file.reading_warnings(history, result)
    name = Path(history.path).name
    drawn = check_file.draw_counterexamples(result, out_dir, warnings, name, still=args.still)
    outcome = {
        "path": history.path,
        "format": history.format,
        **result,
        "ops": history.invocations,  # as the local check says it: failed ops included
        "seconds": result.get("time", 0.0),
        "counterexamples": drawn,
        "warnings": warnings,
    }
    check_output.report(outcome, args.json, lone=True)
    return check_output.exit_code([outcome])
