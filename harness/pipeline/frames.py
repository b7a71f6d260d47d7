"""The run folders' files as Spark DataFrames, read with Spark's own JSON reader and the
explicit schemas, each row tagged with its run id (`<test>/<stamp>`, from the file path).

From the histories: one row per completed client op, paired with its invoke by process
(an invoke and the next event of the same process), with its latency. A history line
carries its file's path, and the run id is worked out once per file, from the per-run
counts: decoding the path on each of a million lines cost twice as much as parsing them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.pipeline.schemas import CORRUPT, history_schema, results_schema, test_schema
from harness.results import HISTORY, RESULTS, TEST, Broken, Listing, glob_literal

EVENT_COLUMNS = ("path", "client", "process", "index", "type", "f", "time", CORRUPT)
"""The history columns the analysis uses."""
CLIENT_PROCESS = r"^-?[0-9]+$"
"""Client processes are integers; the nemesis and other named actors are not."""


UNREADABLE = "Spark cannot read it: a path with one of [ ] { } * ? \\ and a : in a folder name"


def readable(listing: Listing) -> Listing:
    """Takes a listing. Returns it with the runs Spark cannot read moved to the broken: a
    path with a glob character is expanded folder by folder, and Hadoop takes a folder
    named `x:y` there for a URL of scheme `x`."""
    folders = {run: str(listing.root.resolve() / run) for run in listing.complete}
    unreadable = [
        run for run, folder in folders.items() if glob_literal(folder) != folder and ":" in folder
    ]
    return replace(
        listing,
        complete=[run for run in listing.complete if run not in unreadable],
        broken=listing.broken + [Broken(run, UNREADABLE) for run in unreadable],
    )


def file_path() -> Any:
    """Returns the column holding the path (a URI) of the file a row came from."""
    from pyspark.sql import functions as F

    return F.col("_metadata.file_path")


def run_id(path: Any) -> Any:
    """Takes a column of file paths. Returns the column of their run ids."""
    from pyspark.sql import functions as F

    folder = F.regexp_extract(path, r"([^/]+/[^/]+)/[^/]+$", 1)
    # The path is a URI: decode it, keeping a literal '+' (a URL decoder makes it a space).
    return F.url_decode(F.regexp_replace(folder, r"\+", "%2B"))


def _reader(spark: Any, schema: Any, *, whole_file: bool) -> Any:
    return (
        spark.read.schema(schema)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT)
        .option("multiLine", whole_file)
    )


def read_tests(spark: Any, listing: Listing) -> Any:
    """Returns test.json of every complete run: run, spec, versions, started, corrupt."""
    df = _reader(spark, test_schema(), whole_file=True).json(listing.files(TEST))
    return df.withColumn("run", run_id(file_path()))


def read_results(spark: Any, listing: Listing) -> Any:
    """Returns results.json of every complete run, one row each."""
    df = _reader(spark, results_schema(), whole_file=True).json(listing.files(RESULTS))
    return df.withColumn("run", run_id(file_path()))


def read_events(spark: Any, listing: Listing) -> Any:
    """Returns every line of every complete run's history: the schema's columns, `path`
    (the history's), and `client` (whether the line is a client op's event)."""
    from pyspark.sql import functions as F

    df = _reader(spark, history_schema(), whole_file=False).json(listing.files(HISTORY))
    return df.withColumn("path", file_path()).withColumn(
        "client", F.col("process").rlike(CLIENT_PROCESS)
    )


def completions(events: Any, counts: Any) -> Any:
    """Takes the events and history_counts' rows (for each path's run id). Returns one row
    per client completion that follows an invoke of its process: run, f, type (ok, fail,
    info), t_s (completion time, s), latency_ms."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_process = Window.partitionBy("path", "process").orderBy("index")
    paired = (
        events.filter(F.col("client"))
        .select("path", "process", "index", "type", "f", "time")
        .withColumn("invoke_type", F.lag("type").over(by_process))
        .withColumn("invoke_time", F.lag("time").over(by_process))
    )
    completed = paired.filter((F.col("type") != "invoke") & (F.col("invoke_type") == "invoke"))
    # One row a run: a hash lookup a completion, where a shuffle join would move them all.
    with_run = completed.join(F.broadcast(counts.select("path", "run")), "path")
    return with_run.select(
        "run",
        "f",
        "type",
        (F.col("time") / 1e9).alias("t_s"),
        ((F.col("time") - F.col("invoke_time")) / 1e6).alias("latency_ms"),
    )


def history_counts(events: Any) -> Any:
    """Takes the events. Returns per history: path, run, ops (client invokes), ok, fail,
    info (an invoke never completed counts as info), start_s and end_s of the client ops,
    bad_lines."""
    from pyspark.sql import functions as F

    client = F.col("client")

    def count_of(kind: str) -> Any:
        return F.sum(F.when(client & (F.col("type") == kind), 1).otherwise(0))

    counted = events.groupBy("path").agg(
        count_of("invoke").alias("ops"),
        count_of("ok").alias("ok"),
        count_of("fail").alias("fail"),
        F.min(F.when(client, F.col("time"))).alias("first_ns"),
        F.max(F.when(client, F.col("time"))).alias("last_ns"),
        F.count(CORRUPT).alias("bad_lines"),
    )
    return counted.select(
        "path",
        run_id(F.col("path")).alias("run"),
        "ops",
        "ok",
        "fail",
        (F.col("ops") - F.col("ok") - F.col("fail")).alias("info"),
        (F.col("first_ns") / 1e9).alias("start_s"),
        (F.col("last_ns") / 1e9).alias("end_s"),
        "bad_lines",
    )
