"""Recovery times per configuration and fault, from results.json's `recovery` rows (one
per fault window and partition it took, checkers/recovery.py): median and worst time to a
new leader, to the first ok op, and to the first ok op after the heal, and how often never.
"""

from __future__ import annotations

from typing import Any

from harness.pipeline.tables import CONFIG

TIMES = ("new_leader_s", "first_ok_s", "after_heal_s")


def recovery_figures(runs: Any, results: Any) -> Any:
    """Takes the usable runs and results.json. Returns per configuration and fault: runs,
    partitions taken, and for each time its median, worst and `never` count."""
    from pyspark.sql import functions as F

    rows = results.select("run", F.explode("recovery.partitions").alias("r")).select(
        "run", F.col("r.fault").alias("fault"), *(F.col(f"r.{t}").alias(t) for t in TIMES)
    )
    joined = rows.join(runs.select("run", *CONFIG), "run")
    figures = []
    for t in TIMES:
        figures += [
            F.round(F.percentile_approx(t, 0.5, 10_000), 3).alias(f"{t}_median"),
            F.round(F.max(t), 3).alias(f"{t}_worst"),
            F.sum(F.when(F.col(t).isNull(), 1).otherwise(0)).alias(f"{t}_never"),
        ]
    return joined.groupBy(*CONFIG, "fault").agg(
        F.countDistinct("run").alias("runs"), F.count("*").alias("partitions"), *figures
    )
