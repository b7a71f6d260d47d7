"""Recovery times per configuration and fault, from results.json's `recovery` rows (one
per fault window and partition it took, checkers/recovery.py): median and worst time to a
new leader, to the first ok op, to the first that completed in the fault, and to the first
ok op after the heal, and how often never.
"""

from __future__ import annotations

from typing import Any

from checkers import RECOVERY_TIMES
from harness.pipeline.tables import CONFIG

RECORDED = ("new_leader_s", "first_ok_s", "after_heal_s")
"""The times every results.json's recovery rows have."""


def served_in_fault(first_ok_s: Any, start: Any, stop: Any) -> Any:
    """Returns the column in_fault_s (checkers/recovery.py), made from first_ok_s so that
    runs recorded before that field have it too: the first ok op invoked in the fault is
    the first to complete, so it completed before the heal or none did."""
    from pyspark.sql import functions as F

    done_in_fault = stop.isNull() | (first_ok_s < stop - start)
    return F.when(done_in_fault, first_ok_s).alias("in_fault_s")


def recovery_figures(runs: Any, results: Any) -> Any:
    """Takes the usable runs and results.json. Returns per configuration and fault: runs,
    partitions taken, and for each time its median, worst and `never` count."""
    from pyspark.sql import functions as F

    rows = results.select("run", F.explode("recovery.partitions").alias("r")).select(
        "run",
        F.col("r.fault").alias("fault"),
        *(F.col(f"r.{t}").alias(t) for t in RECORDED),
        served_in_fault(F.col("r.first_ok_s"), F.col("r.start"), F.col("r.stop")),
    )
    joined = rows.join(runs.select("run", *CONFIG), "run")
    figures = []
    for t in RECOVERY_TIMES:
        figures += [
            F.round(F.percentile_approx(t, 0.5, 10_000), 3).alias(f"{t}_median"),
            F.round(F.max(t), 3).alias(f"{t}_worst"),
            F.sum(F.when(F.col(t).isNull(), 1).otherwise(0)).alias(f"{t}_never"),
        ]
    return joined.groupBy(*CONFIG, "fault").agg(
        F.countDistinct("run").alias("runs"), F.count("*").alias("partitions"), *figures
    )
