"""`harness analyze [RESULTS_DIR]`: a PySpark job over every run folder under a results
directory, writing per-run and per-configuration tables, fault-window figures, trend
plots and summary.md; broken run folders are listed with the reason, never fatal.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH, EXIT_OK
from harness.pipeline.folders import Listing, list_runs
from harness.pipeline.session import DEFAULT_MASTER
from harness.progress import StatusLine

LOG = logging.getLogger("harness.analyze")


@dataclass(frozen=True, slots=True)
class Analysis:
    """What an analysis found: runs used, configurations, invalid runs, folders left out."""

    out: Path
    runs: int
    configurations: int
    invalid: int
    broken: list[dict[str, Any]]


def add_parser(subparsers: Any) -> None:
    """Takes argparse's subparsers; registers `analyze` with `func(args) -> exit code`."""
    parser = subparsers.add_parser(
        "analyze",
        help="analyse every run under a results directory with Spark",
        description="Read every run folder (test.json, results.json, history.jsonl) with "
        "Spark and write per-run and per-configuration tables (Parquet and CSV), "
        "fault-window figures, trend plots, summary.md and results/index.html.",
    )
    parser.add_argument("results", nargs="?", default="results", help="default: results")
    parser.add_argument(
        "--spark-master", default=DEFAULT_MASTER, metavar="URL", help="default: local[*]"
    )
    parser.add_argument("--out", metavar="DIR", help="default: RESULTS_DIR/analysis")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Takes parsed `analyze` arguments; runs the job; returns the exit code."""
    root = Path(args.results)
    if not root.is_dir():
        print(f"harness analyze: {root}: no such directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else root / "analysis"
    line = StatusLine()
    try:
        out.mkdir(parents=True, exist_ok=True)
        found = analyze(root, out, args.spark_master, line)
    except Exception as err:  # one line here, the traceback in the log
        log = out / "analyze.log"
        with open(log, "a", encoding="utf-8") as f:
            f.write(traceback.format_exc())
        line.say(f"harness analyze: internal error: {err!r} (traceback in {log})")
        return EXIT_CRASH
    line.clear()
    for text in report_lines(found):
        line.say(text)
    return EXIT_OK


def report_lines(found: Analysis) -> list[str]:
    """Returns the few lines printed at the end of an analysis."""
    lines = [
        f"{found.runs} runs in {found.configurations} configurations, {found.invalid} invalid; "
        f"{len(found.broken)} run folders left out",
    ]
    lines += [f"  left out {b['run']}: {b['reason']}" for b in found.broken[:5]]
    if len(found.broken) > 5:
        lines.append(f"  ... and {len(found.broken) - 5} more (see summary.md)")
    lines.append(f"summary: {found.out / 'summary.md'}")
    return lines


def analyze(root: Path, out: Path, master: str, line: StatusLine) -> Analysis:
    """Takes a results directory, the output folder, a Spark master and a status line.
    Writes every output; returns what was found."""
    from harness.pipeline.session import shuffle_partitions_for, spark_session

    line.update(f"starting Spark ({master})")
    with spark_session(master, out / "spark.log", shuffle_partitions_for(master)) as spark:
        return analyze_with(spark, root, out, line)


def analyze_with(spark: Any, root: Path, out: Path, line: StatusLine) -> Analysis:
    """Like analyze, on a running SparkSession."""
    from harness.pipeline.summary import render
    from harness.report.index import write_index

    listing = list_runs(root, skip=out)
    found = _tables(spark, listing, out, line)
    broken = [{"run": b.run, "reason": b.reason} for b in listing.broken] + found["broken"]
    broken.sort(key=lambda b: b["run"])
    line.update("writing the tables")
    _write_broken(spark, broken, out)
    aggregates, figures = found["aggregates"], found["figures"]
    summary = render(found["runs"], aggregates, figures, broken)
    (out / "summary.md").write_text(summary, encoding="utf-8")
    write_index(root, analysis=out)
    return Analysis(
        out=out,
        runs=found["runs"],
        configurations=len(aggregates),
        invalid=sum(r["invalid"] for r in aggregates),
        broken=broken,
    )


def _tables(spark: Any, listing: Listing, out: Path, line: StatusLine) -> dict[str, Any]:
    """Builds, writes and plots every table; returns the small ones as rows."""
    from pyspark.sql import functions as F

    from harness.pipeline import tables, trend_plots, windows
    from harness.pipeline.outputs import write_table

    if not listing.complete:
        trend_plots.config_trends([], out)
        trend_plots.latency_trends([], out)
        return {"runs": 0, "aggregates": [], "figures": [], "broken": []}
    results, completions, rows = _read(spark, listing, line)
    bad = [
        {"run": r["run"], "reason": r["broken"]}
        for r in _collect(rows.filter("broken IS NOT NULL"))
    ]
    runs = rows.filter(F.col("broken").isNull())
    write_table(runs.select(*tables.RUN_COLUMNS).orderBy("start_time", "run"), out, "runs")
    line.update("aggregates per configuration")
    aggregates = write_table(tables.aggregates(runs, completions), out, "aggregates")
    line.update("fault windows")
    figures = windows.window_figures(runs, completions, windows.fault_windows(runs, results))
    figures = write_table(figures, out, "fault_windows")
    line.update("trend plots")
    by_config, by_nemesis = windows.trends(runs, completions)
    trend_plots.config_trends(_collect(by_config), out)
    trend_plots.latency_trends(_collect(by_nemesis), out)
    return {
        "runs": runs.count(),
        "aggregates": _collect(aggregates.orderBy(*tables.CONFIG)),
        "figures": _collect(figures.orderBy(*tables.CONFIG, "fault")),
        "broken": bad,
    }


def _read(spark: Any, listing: Listing, line: StatusLine) -> tuple[Any, Any, Any]:
    """Reads the complete runs' files. Returns (results.json, completions, per-run rows),
    each computed once and kept, since every table after them uses them again."""
    from harness.pipeline import frames, tables

    line.update(f"reading {len(listing.complete)} runs' test.json, results.json, history.jsonl")
    tests = frames.read_tests(spark, listing)
    results = _kept(frames.read_results(spark, listing))
    events = _kept(frames.read_events(spark, listing).select(*frames.EVENT_COLUMNS))
    counts = _kept(frames.history_counts(events))
    line.update("pairing invokes with their completions")
    completions = _kept(frames.completions(events, counts))
    events.unpersist()
    line.update("per-run table")
    latency = tables.latency_quantiles(completions, "run")
    rows = _kept(tables.run_rows(tests, results, counts.drop("path"), latency))
    return results, completions, rows


def _kept(df: Any) -> Any:
    """Takes a DataFrame. Returns it cached and already computed: left lazy, the first
    actions that use it run side by side and each computes (and parses) it again."""
    kept = df.persist()
    kept.count()
    return kept


def _collect(df: Any) -> list[dict[str, Any]]:
    return [row.asDict() for row in df.collect()]


def _write_broken(spark: Any, broken: list[dict[str, Any]], out: Path) -> None:
    from harness.pipeline.outputs import write_table

    rows = [(b["run"], b["reason"]) for b in broken]
    write_table(spark.createDataFrame(rows, "run string, reason string"), out, "broken")
