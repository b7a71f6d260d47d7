"""The analysis job behind `harness analyze`: a PySpark job over every run folder under a
results directory, writing per-run and per-configuration tables, fault-window figures, trend
plots and summary.md; broken run folders are listed with the reason, never fatal.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.pipeline.frames import readable
from harness.progress import StatusLine
from harness.results import TEST, TEST_SHAPE, Listing, list_runs, read_shaped


@dataclass(frozen=True, slots=True)
class Analysis:
    """What an analysis found: runs used, configurations, invalid runs, folders left out,
    and what is new."""

    out: Path
    runs: int
    configurations: int
    invalid: int
    broken: list[dict[str, Any]]
    news: str
    """What is new since the last analysis into the same folder, in one line."""


Release = tuple[str, str | None]
"""A Kafka version and the metadata mode it ran in (None: any)."""


def analyze(
    root: Path,
    out: Path,
    master: str,
    line: StatusLine,
    releases: Collection[Release] = (),
) -> Analysis:
    """Takes a results directory, the output folder, a Spark master, a status line and the
    releases to analyse (none: every run's). Writes every output; returns what was found."""
    from harness.pipeline.session import shuffle_partitions_for, spark_session

    line.update(f"starting Spark ({master})")
    with spark_session(master, out / "spark.log", shuffle_partitions_for(master)) as spark:
        return analyze_with(spark, root, out, line, releases)


def of_releases(listing: Listing, releases: Collection[Release]) -> Listing:
    """Takes run folders and releases. Returns the folders whose test.json names one of the
    releases (a run from before KRaft ran 3.9 on ZooKeeper), and the broken ones that name
    none other; every folder when no release is given."""
    if not releases:
        return listing

    def ran_on(run: str) -> Release | None:
        test = read_shaped(listing.root / run / TEST, TEST_SHAPE)[0]
        if not isinstance(test, dict):
            return None
        spec = test["spec"]
        if spec.get("db") == "nats":  # never one of the Kafka releases asked for
            return (str(spec.get("nats_version")), "nats")
        version = spec.get("kafka_version") or test.get("versions", {}).get("kafka")
        return None if version is None else (version, spec.get("metadata") or "zookeeper")

    def wanted(found: Release | None, unknown: bool) -> bool:
        if found is None:
            return unknown
        return any(found[0] == v and m in (None, found[1]) for v, m in releases)

    return replace(
        listing,
        complete=[r for r in listing.complete if wanted(ran_on(r), unknown=False)],
        broken=[b for b in listing.broken if wanted(ran_on(b.run), unknown=True)],
    )


def analyze_with(
    spark: Any, root: Path, out: Path, line: StatusLine, releases: Collection[Release] = ()
) -> Analysis:
    """Like analyze, on a running SparkSession."""
    from harness.pipeline import run_links
    from harness.pipeline.summary import render
    from harness.report.index import write_index

    listing = readable(of_releases(list_runs(root, skip=out), releases))
    found = _tables(spark, listing, out, line)
    broken = [{"run": b.name, "reason": b.reason} for b in listing.broken] + found["broken"]
    broken.sort(key=lambda b: b["run"])
    line.update("writing the tables")
    _write_broken(spark, broken, out)
    aggregates, figures, runs = found["aggregates"], found["figures"], found["run_rows"]
    recovery = found["recovery"]
    previous = run_links.read_previous(out)
    about_runs = run_links.new_section(runs, previous, root, out)
    about_runs += run_links.invalid_section(runs, root, out)
    summary = render(
        found["runs"], aggregates, figures, recovery, broken, about_runs, found["trends"]
    )
    (out / "summary.md").write_text(summary, encoding="utf-8")
    # Recorded once summary.md says what was new: an analysis that broke off marks nothing seen.
    run_links.write_previous(out, runs, datetime.datetime.now(datetime.UTC))
    write_index(root, analysis=out)
    return Analysis(
        out=out,
        runs=found["runs"],
        configurations=len(aggregates),
        invalid=sum(r["invalid"] for r in aggregates),
        broken=broken,
        news=run_links.new_line(runs, previous),
    )


SUMMARY_COLUMNS = ("verdict", "lost", "nonlinearizable_keys", "anomalies")
"""What summary.md says of a single run beside its configuration (run_links)."""


def _tables(spark: Any, listing: Listing, out: Path, line: StatusLine) -> dict[str, Any]:
    """Builds, writes and plots every table; returns the small ones as rows."""
    from pyspark.sql import functions as F

    from harness.pipeline import tables, trend_plots, windows
    from harness.pipeline.outputs import write_table
    from harness.pipeline.recovery import recovery_figures

    if not listing.complete:
        return {
            "runs": 0,
            "aggregates": [],
            "figures": [],
            "recovery": [],
            "broken": [],
            "run_rows": [],
            "trends": trend_plots.draw([], [], out),
        }
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
    line.update("recovery per fault")
    recovery = recovery_figures(runs, results).orderBy(*tables.CONFIG, "fault")
    recovery = write_table(recovery, out, "recovery")
    line.update("trend plots")
    by_config, by_workload = windows.trends(tables.rated(runs), completions)
    run_rows = _collect(runs.select("run", *tables.CONFIG, *SUMMARY_COLUMNS))
    return {
        "runs": len(run_rows),
        "aggregates": _collect(aggregates.orderBy(*tables.CONFIG)),
        "figures": _collect(figures.orderBy(*tables.CONFIG, "fault")),
        "recovery": _collect(recovery),
        "broken": bad,
        "run_rows": run_rows,
        "trends": trend_plots.draw(_collect(by_config), _collect(by_workload), out),
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
