"""The explicit Spark schemas of a run folder's files: history.jsonl, test.json and
results.json, each reading only what the pipeline uses (other fields are ignored).

`key` and `value` are strings: Spark keeps a number, list or object there as its JSON
text. `valid` is a string too ("true", "false" or "unknown"). A line or file that is not
JSON lands in `_corrupt_record`, which is how a truncated history is told apart.
"""

from __future__ import annotations

from typing import Any

from harness.results import LOST_ACKS_SECTIONS
from harness.verdicts import DURATION

CORRUPT = "_corrupt_record"
VERSIONS = ("kafka", "python", "librdkafka", "confluent_kafka", "kafka_clients", "harness")
"""What test.json's `versions` says that the pipeline reads."""


def _types() -> Any:
    from pyspark.sql import types

    return types


def history_schema() -> Any:
    """Returns the schema of one history.jsonl line."""
    t = _types()
    return t.StructType(
        [
            t.StructField("index", t.LongType()),
            t.StructField("time", t.LongType()),
            t.StructField("process", t.StringType()),
            t.StructField("type", t.StringType()),
            t.StructField("f", t.StringType()),
            t.StructField("key", t.StringType()),
            t.StructField("value", t.StringType()),
            t.StructField("error", t.StringType()),
            t.StructField(CORRUPT, t.StringType()),
        ]
    )


def test_schema() -> Any:
    """Returns the schema of test.json (harness.results.write_test_json)."""
    t = _types()
    spec = t.StructType(
        [
            t.StructField("name", t.StringType()),
            t.StructField("workload", t.StringType()),
            t.StructField("store", t.StringType()),
            t.StructField("nemesis", t.ArrayType(t.StringType())),
            t.StructField("kafka_config", t.StringType()),
            t.StructField("kafka_version", t.StringType()),
            t.StructField("metadata", t.StringType()),
            t.StructField("seed", t.LongType()),
            t.StructField("time_limit", t.DoubleType()),
            t.StructField("concurrency", t.LongType()),
            t.StructField("rate", t.DoubleType()),
            t.StructField("txn", t.BooleanType()),
            t.StructField("consumer_group", t.BooleanType()),
            t.StructField("group_protocol", t.StringType()),
            t.StructField("crash_clients", t.DoubleType()),
            t.StructField("client", t.StringType()),
            t.StructField("db", t.StringType()),
            t.StructField("nats_version", t.StringType()),
            t.StructField("nats_sync", t.StringType()),
        ]
    )
    versions = t.StructType([t.StructField(name, t.StringType()) for name in VERSIONS])
    return t.StructType(
        [
            t.StructField("spec", spec),
            t.StructField("versions", versions),
            t.StructField("started", t.StringType()),
            t.StructField(CORRUPT, t.StringType()),
        ]
    )


def _lost_acks() -> Any:
    t = _types()
    counts = ("ack_count", "lost_count", "recovered_count", "unexpected_count", "duplicated_count")
    return t.StructType(
        [t.StructField("valid", t.StringType())]
        + [t.StructField(name, t.LongType()) for name in counts]
    )


def _queue() -> Any:
    """The queue checker's section: its transactions' outcomes and its anomaly counts."""
    t = _types()
    outcomes = t.StructType(
        [t.StructField(name, t.LongType()) for name in ("committed", "aborted", "unknown")]
    )
    kind = t.StructType([t.StructField("count", t.LongType())])
    return t.StructType(
        [
            t.StructField("transactions", outcomes),
            t.StructField("kinds", t.MapType(t.StringType(), kind)),
        ]
    )


def _recovery() -> Any:
    """The recovery section: one row per fault window and partition it took."""
    t = _types()
    row = t.StructType(
        [t.StructField("fault", t.StringType())]
        + [
            t.StructField(name, t.DoubleType())
            for name in ("start", "stop", "new_leader_s", "first_ok_s", "after_heal_s")
        ]
    )
    return t.StructType([t.StructField("partitions", t.ArrayType(row))])


def results_schema() -> Any:
    """Returns the schema of results.json (harness.run.verdict.check_run's sections)."""
    t = _types()
    failure = t.StructType(
        [
            t.StructField("key", t.StringType()),
            t.StructField("valid", t.StringType()),
            t.StructField("message", t.StringType()),
        ]
    )
    linearizable = t.StructType(
        [
            t.StructField("valid", t.StringType()),
            t.StructField("keys", t.LongType()),
            t.StructField("failures", t.ArrayType(failure)),
        ]
    )
    window = t.StructType(
        [
            t.StructField("fault", t.StringType()),
            t.StructField("start", t.DoubleType()),
            t.StructField("stop", t.DoubleType()),
        ]
    )
    nemesis = t.StructType([t.StructField("windows", t.ArrayType(window))])
    duration = t.StructType(
        [
            t.StructField("planned_s", t.DoubleType()),
            t.StructField("ran_s", t.DoubleType()),
            t.StructField("complete", t.BooleanType()),
        ]
    )
    transactions = t.StructType([t.StructField("protocol", t.StringType())])
    release = t.StructType([t.StructField("transactions", transactions)])
    return t.StructType(
        [
            t.StructField("valid", t.StringType()),
            t.StructField("error", t.StringType()),
            t.StructField("release", release),
            t.StructField("linearizable", linearizable),
            t.StructField("nemesis", nemesis),
            t.StructField(DURATION, duration),
            t.StructField("queue", _queue()),
            t.StructField("recovery", _recovery()),
            *(t.StructField(name, _lost_acks()) for name in LOST_ACKS_SECTIONS),
            t.StructField(CORRUPT, t.StringType()),
        ]
    )
