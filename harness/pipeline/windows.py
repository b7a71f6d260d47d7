"""Throughput and errors inside each fault's windows against outside any window, per
configuration, from the histories' completions and results.json's fault windows.

A completion counts inside a window when its time falls in [start, stop); a window never
healed ends with the run's last client event. Error rate is (fail + info) / completions;
throughput is ok completions per second of window (or of the rest of the run).
"""

from __future__ import annotations

from typing import Any

from harness.pipeline.tables import CONFIG, latency_quantiles


def _f() -> Any:
    from pyspark.sql import functions

    return functions


def fault_windows(runs: Any, results: Any) -> Any:
    """Takes the usable runs and results.json. Returns one row per fault window: run,
    fault, start, stop (clipped to the run's client ops), seconds."""
    F = _f()
    exploded = results.select("run", F.explode("nemesis.windows").alias("w")).select(
        "run", "w.fault", F.col("w.start").alias("start"), F.col("w.stop").alias("stop")
    )
    spans = runs.select("run", "start_s", "end_s")
    clipped = exploded.join(spans, "run").select(
        "run",
        "fault",
        F.greatest("start", "start_s").alias("start"),
        F.least(F.coalesce("stop", "end_s"), "end_s").alias("stop"),
    )
    return clipped.withColumn("seconds", F.greatest(F.lit(0.0), F.col("stop") - F.col("start")))


def _rates(ok: Any, errors: Any, total: Any, seconds: Any, where: str) -> list[Any]:
    F = _f()
    return [
        F.round(seconds, 1).alias(f"seconds_{where}"),
        F.round(F.try_divide(ok, seconds), 2).alias(f"ok_per_s_{where}"),
        F.round(F.try_divide(errors, total), 4).alias(f"error_rate_{where}"),
    ]


def _tally(df: Any, *group: str) -> Any:
    F = _f()
    return df.groupBy(*group).agg(
        F.count("*").alias("n"),
        F.sum(F.when(F.col("type") == "ok", 1).otherwise(0)).alias("ok_n"),
        F.sum(F.when(F.col("type") != "ok", 1).otherwise(0)).alias("err_n"),
    )


def window_figures(runs: Any, completions: Any, windows: Any) -> Any:
    """Takes the usable runs, completions and fault windows. Returns per configuration and
    fault: windows, seconds, ok/s and error rate inside, and the same outside any window."""
    F = _f()
    config = runs.select("run", *CONFIG)
    ops = completions.join(config, "run")
    inside_cond = (
        (ops["run"] == windows["run"])
        & (ops["t_s"] >= windows["start"])
        & (ops["t_s"] < windows["stop"])
    )
    inside_ops = ops.join(windows, inside_cond).select(*[ops[c] for c in ops.columns], "fault")
    inside = _tally(inside_ops, *CONFIG, "fault")
    window_time = (
        windows.join(config, "run")
        .groupBy(*CONFIG, "fault")
        .agg(F.count("*").alias("windows"), F.sum("seconds").alias("sec"))
    )
    outside_ops = ops.join(windows, inside_cond, "left_anti")
    outside = _tally(outside_ops, *CONFIG).withColumnsRenamed(
        {"n": "out_n", "ok_n": "out_ok", "err_n": "out_err"}
    )
    run_time = runs.groupBy(*CONFIG).agg(F.sum(F.col("end_s") - F.col("start_s")).alias("span"))
    faulted = windows.join(config, "run").groupBy(*CONFIG).agg(F.sum("seconds").alias("faulted"))
    outside_time = run_time.join(faulted, list(CONFIG), "left").select(
        *CONFIG,
        F.greatest(F.lit(0.0), F.col("span") - F.coalesce("faulted", F.lit(0.0))).alias("out_sec"),
    )
    joined = (
        window_time.join(inside, [*CONFIG, "fault"], "left")
        .join(outside, list(CONFIG), "left")
        .join(outside_time, list(CONFIG), "left")
        .fillna(0, subset=["n", "ok_n", "err_n", "out_n", "out_ok", "out_err"])
    )
    return joined.select(
        *CONFIG,
        "fault",
        "windows",
        *_rates(F.col("ok_n"), F.col("err_n"), F.col("n"), F.col("sec"), "inside"),
        *_rates(F.col("out_ok"), F.col("out_err"), F.col("out_n"), F.col("out_sec"), "outside"),
    )


def trends(runs: Any, completions: Any) -> tuple[Any, Any]:
    """Takes the usable runs and completions. Returns (per configuration and day: runs,
    invalid_rate, lost_mean; per workload, nemesis and day: the ok latency quantiles)."""
    F = _f()
    dated = runs.withColumn("day", F.to_date("start_time"))
    by_config = (
        dated.groupBy(*CONFIG, "day")
        .agg(
            F.count("*").alias("runs"),
            F.avg(F.when(F.col("verdict") == "INVALID", 1.0).otherwise(0.0)).alias("invalid_rate"),
            F.avg("lost").alias("lost_mean"),
        )
        .orderBy("day")
    )
    # Per workload: a queue's sends and a kv store's reads take times of other orders.
    ops = completions.join(dated.select("run", "workload", "nemesis", "day"), "run")
    by_workload = latency_quantiles(ops, "workload", "nemesis", "day").orderBy("day")
    return by_config, by_workload
