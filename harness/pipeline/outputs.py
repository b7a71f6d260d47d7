"""Writes an analysis table twice, as Parquet (a folder, for Spark and pandas) and as one
CSV file (for a person or a spreadsheet), both under the output folder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from harness.results import glob_literal


def write_table(df: Any, out: Path, name: str) -> Any:
    """Takes a DataFrame, the output folder and a table name. Writes out/<name>.parquet/
    and out/<name>.csv (one file with a header), replacing older ones. Returns the table
    read back from the Parquet, so that later uses do not compute it again."""
    parquet = str(out / f"{name}.parquet")
    df.write.mode("overwrite").parquet(parquet)
    written = df.sparkSession.read.parquet(glob_literal(parquet))
    staging = out / f".{name}.csv.parts"
    # A quote doubled inside a quoted field, as RFC 4180 and spreadsheets read it (Spark
    # would write \" by default).
    csv = written.coalesce(1).write.mode("overwrite").option("header", True)
    csv.option("escape", '"').csv(str(staging))
    (part,) = staging.glob("part-*.csv")
    part.replace(out / f"{name}.csv")
    shutil.rmtree(staging)
    return written
