"""A quiet SparkSession: the JVM's output and Spark's logs go to a log file, not the terminal.

The JVM is launched with its stdout and stderr on that file (its Python workers inherit
them), with a log4j2 configuration that keeps only warnings and errors.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_MASTER = "local[*]"
CLUSTER_SHUFFLE_PARTITIONS = 8
LOCAL_MASTER = re.compile(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?")
LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


def _conf(master: str, log4j: Path, shuffle_partitions: int) -> Any:
    from pyspark import SparkConf

    java_options = f"-Dlog4j2.configurationFile=file:{log4j}"
    return (
        SparkConf()
        .setMaster(master)
        .setAppName("kafka-harness")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", str(shuffle_partitions))
        # Reading 3 files a run folder, Spark would list more than 32 paths with a job of its
        # own per reader; a stat a file on the driver costs far less than a job.
        .set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(2**31 - 1))
        .set("spark.driver.extraJavaOptions", java_options)
        .set("spark.executor.extraJavaOptions", java_options)
        .set("spark.sql.session.timeZone", "UTC")
    )


def shuffle_partitions_for(master: str) -> int:
    """Takes a Spark master URL. Returns the shuffle partitions for it: the cores of a local
    master (more only add tasks waiting for a core), else CLUSTER_SHUFFLE_PARTITIONS."""
    local = LOCAL_MASTER.fullmatch(master.strip())
    if local is None:
        return CLUSTER_SHUFFLE_PARTITIONS
    cores = local.group(1)
    if cores is None:
        return 1
    if cores == "*":
        return os.cpu_count() or 1
    return max(1, int(cores))


@contextlib.contextmanager
def spark_session(master: str, log_path: Path, shuffle_partitions: int = 8) -> Iterator[Any]:
    """Takes a Spark master URL and the log file. Yields a SparkSession whose JVM writes
    only to that file; stops it on the way out."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    log_path.parent.mkdir(parents=True, exist_ok=True)
    log4j = log_path.with_name("log4j2.properties")
    log4j.write_text(LOG4J2.format(log=log_path.resolve()))
    # Without it, Spark warns at start that the host name resolves to a loopback address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = _conf(master, log4j.resolve(), shuffle_partitions)
    gateway = SparkContext._gateway  # a JVM this process launched before is reused
    if gateway is None:
        with open(log_path, "ab") as log:
            gateway = launch_gateway(  # type: ignore[no-untyped-call]
                conf, popen_kwargs={"stdout": log, "stderr": log}
            )
    context = SparkContext(conf=conf, gateway=gateway)
    context.setLogLevel("WARN")
    session = SparkSession(context)
    try:
        yield session
    finally:
        session.stop()
