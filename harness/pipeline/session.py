"""A quiet SparkSession: the JVM's output and Spark's logs go to a log file, not the terminal.

The JVM is launched with its stdout and stderr on that file (its Python workers inherit
them), with a log4j2 configuration that keeps only warnings and errors; py4j's Python
logging goes there too while the session is open. The workers run this interpreter with
the project on their path, wherever the command was started from.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_MASTER = "local[*]"
CLUSTER_SHUFFLE_PARTITIONS = 8
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""What harness.signals turns into KeyboardInterrupt."""
PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding history/, checkers/ and harness/: what a worker must import."""
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
        .set("spark.executorEnv.PYTHONPATH", str(PROJECT_ROOT))
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
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log4j = log_path.with_name("log4j2.properties")
    log4j.write_text(LOG4J2.format(log=log_path.resolve()))
    # Without it, Spark warns at start that the host name resolves to a loopback address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Else the workers run the `python3` on PATH, which may not have the project or its
    # packages; a cluster whose workers have the project elsewhere sets its own.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = _conf(master, log4j.resolve(), shuffle_partitions)
    with _python_logs_to(log_path):
        session = _start(conf, log_path)
        try:
            yield session
        except BaseException:
            # A JVM cut off by ^C may fail to stop: the exception on its way out says what
            # happened, and an error of the stop would replace it.
            with contextlib.suppress(Exception):
                session.stop()
            raise
        session.stop()


def _start(conf: Any, log_path: Path) -> Any:
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    gateway = SparkContext._gateway  # a JVM this process launched before is reused
    if gateway is None:
        # Cut off, the launch removes the file the JVM is to write its address to, and
        # that JVM then waits forever: a first ^C waits for it to be up (it exits with
        # this process then), a second one does not.
        with _interrupts_deferred(), open(log_path, "ab") as log:
            gateway = launch_gateway(  # type: ignore[no-untyped-call]
                conf, popen_kwargs={"stdout": log, "stderr": log}
            )
    with _own_interrupt_handler():
        context = SparkContext(conf=conf, gateway=gateway)
    context.setLogLevel("WARN")
    return SparkSession(context)


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    # The first SIGINT, SIGTERM or SIGHUP raises KeyboardInterrupt at the end of the block,
    # a second one at once; outside the main thread, signals are not ours to handle.
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def defer(signum: int, _frame: object) -> None:
        received.append(signum)
        if len(received) > 1:
            raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, defer) for sig in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        raise KeyboardInterrupt(signal.Signals(received[0]).name)


@contextlib.contextmanager
def _own_interrupt_handler() -> Iterator[None]:
    # SparkContext installs a SIGINT handler that calls the JVM from inside the signal:
    # on the connection the interrupted call is using, which py4j reports with a page of
    # traceback. The command's own handler (harness.signals) is put back: ^C raises
    # KeyboardInterrupt like SIGTERM, and stopping the session cancels the jobs.
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _python_logs_to(log_path: Path) -> Iterator[None]:
    # py4j logs a call cut off by ^C through the root logger, which with no handler of
    # its own prints the traceback on the terminal: while the session is open, the root
    # logger writes to the Spark log instead.
    handler = logging.FileHandler(log_path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
