"""The analysis tables, as Spark DataFrames: one row per run, aggregates per
configuration, throughput and errors inside fault windows against outside, and trends.

A configuration is (workload, store, nemesis, kafka_config). Latencies are of ok ops.
"""

from __future__ import annotations

from typing import Any

from harness.pipeline.schemas import CORRUPT
from harness.results import LOST_ACKS_SECTIONS
from harness.verdicts import DURATION, INCOMPLETE_WORD, UNKNOWN_WORD, VERDICT_WORDS
from workloads.names import STORED_WORKLOADS

CONFIG = ("kafka_version", "metadata", "workload", "store", "nemesis", "kafka_config")
"""What makes runs comparable: the Kafka release and its metadata mode first, so 3.9.1 on
ZooKeeper and 4.4.0 on KRaft sit side by side, then what the test ran. A NATS run
(`--db nats`) has its nats-server release there, metadata `nats` and its sync profile as
its config."""
TXN_OUTCOMES = ("txn_committed", "txn_aborted", "txn_unknown")
"""Transactions committed, aborted and ending unknown: per run, summed per configuration."""
QUANTILES = (0.5, 0.95, 0.99)
QUANTILE_NAMES = ("p50_ms", "p95_ms", "p99_ms")
ACCURACY = 10_000  # percentile_approx's: rank error at most 1/10,000 of the ops
Z95 = 1.959964


def _f() -> Any:
    from pyspark.sql import functions

    return functions


def latency_quantiles(completions: Any, *group: str) -> Any:
    """Takes completions. Returns p50_ms, p95_ms and p99_ms of the ok ops' latency per group."""
    F = _f()
    q = F.percentile_approx("latency_ms", list(QUANTILES), ACCURACY)
    grouped = completions.filter(F.col("type") == "ok").groupBy(*group).agg(q.alias("q"))
    return grouped.select(
        *group, *(F.round(F.col("q")[i], 3).alias(n) for i, n in enumerate(QUANTILE_NAMES))
    )


def _section_count(name: str) -> Any:
    F = _f()
    return F.coalesce(*(F.col(f"`{s}`.{name}") for s in LOST_ACKS_SECTIONS))


def _keys_with(verdict: str) -> Any:
    F = _f()
    failures = F.coalesce(F.col("linearizable.failures"), F.array())
    return F.size(F.filter(failures, lambda x: x["valid"] == verdict))


def verdict_column(valid: Any, complete: Any) -> Any:
    """Takes a `valid` string column ("true", "false", other) and the boolean column saying
    whether the workload ran its planned time (null: not recorded, an older run). Returns
    the verdict as harness.verdicts.run_verdict gives it: INVALID, else INCOMPLETE when the
    workload stopped short, else VALID or UNKNOWN."""
    F = _f()
    return (
        F.when(valid == "false", VERDICT_WORDS[False])
        .when(complete == F.lit(False), INCOMPLETE_WORD)
        .when(valid == "true", VERDICT_WORDS[True])
        .otherwise(UNKNOWN_WORD)
    )


def rated(runs: Any) -> Any:
    """Takes runs. Returns those that count in the rates: all but the INCOMPLETE, whose
    part of a workload says nothing of how often the whole test fails."""
    F = _f()
    return runs.filter(F.col("verdict") != INCOMPLETE_WORD)


def _started(tests: Any) -> Any:
    F = _f()
    stamp = F.regexp_extract(F.col("run"), r"/(\d{8}T\d{6})", 1)
    return F.coalesce(
        F.try_to_timestamp(F.col("started"), F.lit("yyyy-MM-dd'T'HH:mm:ssZ")),
        F.try_to_timestamp(stamp, F.lit("yyyyMMdd'T'HHmmss")),
    )


def _workload() -> Any:
    # Queue runs in transactions are another test than plain ones, the Java client's
    # another than librdkafka's, and a consumer group's another per group protocol: never
    # averaged together (the index names them the same way: harness.report.index).
    F = _f()
    java = F.when(F.col("spec.client") == "java", F.lit("-java")).otherwise(F.lit(""))
    txn = F.when(F.col("spec.txn"), F.concat(F.lit("-txn"), java)).otherwise(F.lit(""))
    protocol = F.coalesce(F.col("spec.group_protocol"), F.lit("classic"))
    group = F.when(F.col("spec.consumer_group"), F.concat(F.lit("-group-"), protocol))
    return F.concat(F.col("spec.workload"), txn, F.coalesce(group, F.lit("")))


def _store() -> Any:
    # Only kv and register run on a store; the others' recorded default says nothing.
    F = _f()
    stored = F.col("spec.workload").isin(*STORED_WORKLOADS)
    return F.when(stored, F.coalesce(F.col("spec.store"), F.lit(""))).otherwise(F.lit(""))


def _nemesis() -> Any:
    # Clients crashed on purpose are a fault of the run, beside the nemesis's.
    F = _f()
    crashes = F.when(F.col("spec.crash_clients").isNotNull(), F.lit("crash-clients"))
    faults = F.concat_ws(",", F.col("spec.nemesis"), crashes)
    return F.when(faults != "", faults).otherwise("none")


def _system() -> tuple[Any, Any, Any]:
    """Returns the columns kafka_version, metadata and kafka_config: a Kafka run's release
    (runs from before KRaft record neither it nor the mode: they ran 3.9 on ZooKeeper),
    metadata mode and profile; a NATS run's nats-server release, `nats` and its sync
    profile, for the Kafka fields its spec leaves at their defaults say nothing of it."""
    F = _f()
    nats = F.col("spec.db") == "nats"
    kafka = F.coalesce(F.col("spec.kafka_version"), F.col("versions.kafka"))
    return (
        F.when(nats, F.col("spec.nats_version")).otherwise(kafka).alias("kafka_version"),
        F.when(nats, F.lit("nats"))
        .otherwise(F.coalesce(F.col("spec.metadata"), F.lit("zookeeper")))
        .alias("metadata"),
        F.when(nats, F.col("spec.nats_sync"))
        .otherwise(F.col("spec.kafka_config"))
        .alias("kafka_config"),
    )


def _client() -> tuple[Any, Any]:
    """Returns the columns of the client library a run's workload went through and its
    version: kafka-clients with --client java, nats-py on NATS (test.json does not record
    its version), else confluent-kafka (over librdkafka)."""
    F = _f()
    java = F.col("spec.client") == "java"
    nats = F.col("spec.db") == "nats"
    name = (
        F.when(nats, F.lit("nats-py"))
        .when(java, F.lit("kafka-clients"))
        .otherwise(F.lit("confluent-kafka"))
    )
    version = (
        F.when(nats, F.lit(None).cast("string"))
        .when(java, F.col("versions.kafka_clients"))
        .otherwise(F.col("versions.confluent_kafka"))
    )
    return name.alias("client"), version.alias("client_version")


def _anomalies() -> Any:
    """Returns the column of the queue anomaly kinds found, "G0:3 G1a:1" (sorted), or null."""
    F = _f()
    found = F.map_filter(F.col("queue.kinds"), lambda _, v: v["count"] > 0)
    named = F.transform(
        F.map_entries(found),
        lambda e: F.concat(e["key"], F.lit(":"), e["value"]["count"].cast("string")),
    )
    return F.when(F.size(named) > 0, F.concat_ws(" ", F.array_sort(named)))


def run_rows(tests: Any, results: Any, counts: Any, latency: Any) -> Any:
    """Takes test.json, results.json, history counts and per-run latency quantiles.
    Returns one row per run, with `broken` saying why a run cannot be used (else null)."""
    F = _f()
    t = tests.select(
        "run",
        F.col("spec.name").alias("test"),
        _started(tests).alias("start_time"),
        _workload().alias("workload"),
        _store().alias("store"),
        _nemesis().alias("nemesis"),
        F.col("spec.seed").alias("seed"),
        *_system(),
        F.col("versions.librdkafka").alias("librdkafka_version"),
        *_client(),
        F.col("versions.harness").alias("harness_version"),
        F.col(CORRUPT).alias("test_corrupt"),
    )
    r = results.select(
        "run",
        verdict_column(F.col("valid"), F.col(f"{DURATION}.complete")).alias("verdict"),
        _section_count("ack_count").alias("acknowledged"),
        _section_count("lost_count").alias("lost"),
        _section_count("recovered_count").alias("recovered"),
        _section_count("unexpected_count").alias("unexpected"),
        _section_count("duplicated_count").alias("duplicated"),
        _keys_with("false").alias("nonlinearizable_keys"),
        _keys_with("unknown").alias("unknown_keys"),
        F.col("queue.transactions.committed").alias("txn_committed"),
        F.col("queue.transactions.aborted").alias("txn_aborted"),
        F.col("queue.transactions.unknown").alias("txn_unknown"),
        _anomalies().alias("anomalies"),
        F.col("release.transactions.protocol").alias("txn_protocol"),
        F.col(CORRUPT).alias("results_corrupt"),
    )
    joined = t.join(r, "run", "full").join(counts, "run", "left").join(latency, "run", "left")
    broken = (
        F.when(F.col("test_corrupt").isNotNull(), "test.json is not JSON")
        .when(F.col("results_corrupt").isNotNull(), "results.json is not JSON")
        .when(
            F.col("bad_lines") > 0,
            F.format_string("history.jsonl truncated (%d lines not JSON)", F.col("bad_lines")),
        )
        .when(F.col("workload").isNull(), "test.json has no spec")
    )
    return joined.withColumn("broken", broken).drop("test_corrupt", "results_corrupt")


RUN_COLUMNS = (
    "run",
    "test",
    "start_time",
    *CONFIG,
    "seed",
    "client",
    "client_version",
    "librdkafka_version",
    "harness_version",
    "ops",
    "ok",
    "fail",
    "info",
    "acknowledged",
    "lost",
    "recovered",
    "unexpected",
    "duplicated",
    "nonlinearizable_keys",
    "unknown_keys",
    *TXN_OUTCOMES,
    "txn_protocol",
    "anomalies",
    "verdict",
    *QUANTILE_NAMES,
)


def _of_rated(column: str) -> Any:
    # The column where the run counts in the rates, else null (left out of sums and means).
    F = _f()
    return F.when(F.col("verdict") != INCOMPLETE_WORD, F.col(column))


def aggregates(runs: Any, completions: Any) -> Any:
    """Takes the usable runs and the completions. Returns per configuration: runs, invalid,
    unknown, invalid_rate with its 95% Wilson interval, lost per run (mean, max) and over
    all runs beside the acknowledged writes, non-linearizable keys, and the
    latency quantiles of all its ok ops, all of the runs that count in the rates; and
    incomplete, the INCOMPLETE runs counted apart."""
    F = _f()
    # A configuration whose every run is incomplete has no rate: null, not a division by 0.
    n = F.when(F.col("runs") > 0, F.col("runs"))
    counts_in_rates = F.col("verdict") != INCOMPLETE_WORD
    p = F.try_divide(F.col("invalid"), n)
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * F.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    counted = runs.groupBy(*CONFIG).agg(
        F.sum(F.when(counts_in_rates, 1).otherwise(0)).alias("runs"),
        F.sum(F.when(F.col("verdict") == "INVALID", 1).otherwise(0)).alias("invalid"),
        F.sum(F.when(F.col("verdict") == "UNKNOWN", 1).otherwise(0)).alias("unknown"),
        F.sum(F.when(counts_in_rates, 0).otherwise(1)).alias("incomplete"),
        F.round(F.avg(_of_rated("lost")), 3).alias("lost_mean"),
        F.max(_of_rated("lost")).alias("lost_max"),
        F.sum(_of_rated("lost")).alias("lost_total"),
        F.sum(_of_rated("acknowledged")).alias("acknowledged_total"),
        F.sum(_of_rated("nonlinearizable_keys")).alias("nonlinearizable_keys"),
        *(F.sum(_of_rated(name)).alias(name) for name in TXN_OUTCOMES),
    )
    figures = counted.select(
        *CONFIG,
        "runs",
        "invalid",
        "unknown",
        "incomplete",
        F.round(p, 4).alias("invalid_rate"),
        F.round(F.greatest(F.lit(0.0), centre - half), 4).alias("invalid_rate_low"),
        F.round(F.least(F.lit(1.0), centre + half), 4).alias("invalid_rate_high"),
        "lost_mean",
        "lost_max",
        "lost_total",
        "acknowledged_total",
        "nonlinearizable_keys",
        *TXN_OUTCOMES,
    )
    with_config = completions.join(rated(runs).select("run", *CONFIG), "run")
    return figures.join(latency_quantiles(with_config, *CONFIG), list(CONFIG), "left")
