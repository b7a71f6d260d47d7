"""The Spark side of the pipeline on local[2], in the one session of conftest.py:
`analyze` over run folders built by the harness's own writers (figures checked against
values worked out by hand), and `check --spark` against the local check."""

from __future__ import annotations

import csv
import json
import math
import os
import random
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from checkers.registry import check_history
from harness.cluster.layout import ClusterSpec
from harness.pipeline.analyze import analyze_with
from harness.pipeline.spark_check import check_with_spark
from harness.progress import StatusLine
from harness.spec import TestSpec
from history import HistoryError, Op, load
from tests.support import DATA
from tests.support.run_folders import DAY, T0, VALID_OPS, WINDOW, build_results, events, write_run
from tests.unit.checkers.linearizable import test_oracle as oracle
from tests.unit.checkers.txn.test_verdict import aborted_read
from workloads.options import NatsOptions, QueueOptions


@pytest.fixture(scope="module")
def analysed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("results")
    folders = build_results(root)
    found = analyze_with(spark, root, root / "analysis", StatusLine())
    return {"root": root, "out": root / "analysis", "folders": folders, "found": found}


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _run_id(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


def test_per_run_table_counts_and_latency_quantiles(analysed: dict[str, Any]) -> None:
    rows = {r["run"]: r for r in _csv(analysed["out"] / "runs.csv")}
    folders = analysed["folders"]
    assert set(rows) == {_run_id(folders[n]) for n in ("valid1", "valid2", "invalid")}
    valid = rows[_run_id(folders["valid1"])]
    assert (valid["ops"], valid["ok"], valid["fail"], valid["info"]) == ("6", "4", "1", "1")
    assert valid["verdict"] == "VALID"
    assert (valid["workload"], valid["store"], valid["nemesis"]) == (
        "kv",
        "linearizable",
        "partition-leader",
    )
    # Ok latencies 10, 15, 20, 40 ms: nearest rank gives p50 15 and p95 = p99 = 40.
    assert (float(valid["p50_ms"]), float(valid["p95_ms"]), float(valid["p99_ms"])) == (
        15.0,
        40.0,
        40.0,
    )
    invalid = rows[_run_id(folders["invalid"])]
    assert invalid["verdict"] == "INVALID"
    assert invalid["nonlinearizable_keys"] == "1"
    assert invalid["nemesis"] == "none"


def test_aggregates_with_the_wilson_interval(analysed: dict[str, Any]) -> None:
    rows = {r["nemesis"]: r for r in _csv(analysed["out"] / "aggregates.csv")}
    fault, none = rows["partition-leader"], rows["none"]
    assert (fault["runs"], fault["invalid"], float(fault["invalid_rate"])) == ("2", "0", 0.0)
    # Wilson's interval for 0 of 2: [0, z^2 / (2 + z^2)].
    z2 = 1.959964**2
    assert float(fault["invalid_rate_high"]) == pytest.approx(z2 / (2 + z2), abs=1e-4)
    # For 1 of 1: [1 / (1 + z^2), 1].
    assert float(none["invalid_rate_low"]) == pytest.approx(1 / (1 + z2), abs=1e-4)
    assert float(none["invalid_rate_high"]) == 1.0
    assert float(fault["p50_ms"]) == 15.0


def test_fault_window_figures(analysed: dict[str, Any]) -> None:
    (row,) = [r for r in _csv(analysed["out"] / "fault_windows.csv") if r["fault"]]
    # Each run: window [0.040, 0.201) s holds the fail (0.080) and the info (0.150), no ok;
    # the 4 ok ops are outside, over 0.270 - 0.161 s.
    assert row["windows"] == "2"
    assert float(row["error_rate_inside"]) == 1.0
    assert float(row["ok_per_s_inside"]) == 0.0
    assert float(row["error_rate_outside"]) == 0.0
    assert float(row["ok_per_s_outside"]) == pytest.approx(8 / (2 * (0.270 - 0.161)), abs=0.01)


def test_broken_folders_are_listed_with_their_reason(analysed: dict[str, Any]) -> None:
    folders = analysed["folders"]
    reasons = {r["run"]: r["reason"] for r in _csv(analysed["out"] / "broken.csv")}
    assert reasons[_run_id(folders["truncated"])].startswith("history.jsonl truncated")
    assert reasons[_run_id(folders["unchecked"])].startswith("no results.json")
    assert reasons[_run_id(folders["running"])].startswith("in progress")
    assert reasons[_run_id(folders["not_started"])].startswith("no history.jsonl")
    summary = (analysed["out"] / "summary.md").read_text()
    assert "3 runs analysed in 2 configurations; 1 invalid; 4 run folders left out" in summary
    assert analysed["found"].invalid == 1


def test_outputs_parquet_plots_and_index(spark: Any, analysed: dict[str, Any]) -> None:
    out = analysed["out"]
    assert spark.read.parquet(str(out / "runs.parquet")).count() == 3
    # The runs span two days: trend plots, latency one per workload (here only kv).
    for name in ("invalid-rate.svg", "lost-writes.svg", "latency-kv.svg"):
        assert (out / name).stat().st_size > 1000
    assert not (out / "latency.png").exists() and not (out / "latency.svg").exists()
    summary = (out / "summary.md").read_text()
    assert "![latency-kv](latency-kv.svg)" in summary
    index = (analysed["root"] / "index.html").read_text()
    assert "analysis/invalid-rate.svg" in index and "analysis/latency-kv.svg" in index


def test_summary_links_every_invalid_run_and_says_it_is_the_first_analysis(
    analysed: dict[str, Any],
) -> None:
    out, invalid = analysed["out"], analysed["folders"]["invalid"]
    summary = (out / "summary.md").read_text()
    run = _run_id(invalid)
    link = f"- [{run}](../{run}/report.html) INVALID: 3.9.1-zookeeper/kv/local-read/none/safe"
    assert link + " (1 non-linearizable keys)" in summary.split("## INVALID runs")[1]
    assert (out / f"../{run}/report.html").resolve() == (invalid / "report.html").resolve()
    assert "First analysis of this output folder" in summary
    seen = json.loads((out / "last-analysis.json").read_text())["runs"]
    assert sorted(seen) == sorted(
        _run_id(analysed["folders"][n]) for n in ("valid1", "valid2", "invalid")
    )
    assert not (out / "spark.log").exists()  # the fixture's session logs elsewhere


# --- check --spark against the local path -------------------------------------------------


def _comparable(result: dict[str, Any]) -> Any:
    body = {k: v for k, v in result.items() if k not in ("time", "trace")}
    return json.loads(json.dumps(body, default=repr))


def _agree(spark: Any, path: Path, model: str | None) -> dict[str, Any]:
    from checkers import default_model

    local_history = load(path)
    local = check_history(local_history, model or default_model(local_history))
    _, remote = check_with_spark(spark, path, model, None)
    assert _comparable(remote) == _comparable(local)
    return remote


HISTORIES = sorted(p.name for p in DATA.iterdir() if p.suffix in (".jsonl", ".edn", ".log"))


@pytest.mark.parametrize("name", HISTORIES)
def test_agrees_with_the_local_check_on_the_test_data(spark: Any, name: str) -> None:
    from checkers import LINEARIZABLE_MODELS, default_model

    if default_model(load(DATA / name)) not in LINEARIZABLE_MODELS:
        with pytest.raises(ValueError, match="runs locally"):
            check_with_spark(spark, DATA / name, None, None)
        return
    _agree(spark, DATA / name, None)


def _as_events(histories: list[list[Op]]) -> list[dict[str, Any]]:
    """Puts each history's ops under keys of their own ([history, key]), one process an
    op, as invoke and completion events in time order (an info op never completes)."""
    timed: list[tuple[float, int, dict[str, Any]]] = []
    process = 0
    for h, ops in enumerate(histories):
        for op in ops:
            process += 1
            base = {"process": process, "f": op.f, "key": [h, op.key], "value": op.value}
            timed.append((op.call, 0, {**base, "type": "invoke"}))
            if op.ret is not None and not math.isinf(op.ret):
                timed.append((op.ret, 1, {**base, "type": "ok"}))
    timed.sort(key=lambda t: (t[0], t[1]))
    return [{"index": i, "time": int(t), **e} for i, (t, _, e) in enumerate(timed)]


@pytest.mark.parametrize("model", oracle.MODEL_NAMES)
def test_agrees_with_the_local_check_on_the_oracle_suite(
    spark: Any, model: str, tmp_path: Path
) -> None:
    rnd = random.Random(f"spark-{model}")
    histories = [ops for _, m, ops, _ in oracle.CASES if m == model]
    while len(histories) < 150:
        drawn, ops = oracle.random_history(rnd, rnd.randint(2, 9))
        if drawn == model:
            histories.append(ops)
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _as_events(histories)))
    result = _agree(spark, path, model)
    assert result["keys"] >= 150 and result["failures"], "both verdicts must occur"


def test_a_malformed_history_gives_the_local_error(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    lines = [
        {"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "write", "value": 1},
        {"index": 1, "time": 2, "process": 1, "type": "ok", "f": "read", "value": 1},
    ]
    path.write_text("\n".join(json.dumps(e) for e in lines) + "\n")
    with pytest.raises(HistoryError) as local:
        load(path)
    with pytest.raises(HistoryError) as remote:
        check_with_spark(spark, path, None, None)
    assert str(remote.value) == str(local.value)
    # A cut-off line after a well-formed pair: the only problem is the bad JSON.
    well_formed = [lines[0], {**lines[0], "index": 1, "time": 2, "type": "ok"}]
    path.write_text("".join(json.dumps(e) + "\n" for e in well_formed) + '{"index": 2, "ti\n')
    with pytest.raises(HistoryError) as local:
        load(path)
    with pytest.raises(HistoryError) as remote:
        check_with_spark(spark, path, None, None)
    assert str(remote.value) == str(local.value)


# --- run folders that are hard to read, in one tree analysed once ---------------------------
# (one `analyze` over all of them: each run of the job costs tens of seconds of the suite)


@pytest.fixture(scope="module")
def mixed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Analyses, from inside the folder as `.`, one tree of runs: of two Kafka releases
    (one recorded before KRaft existed), names that need decoding or that Spark would
    read as patterns or schemes, and folders of the wrong shape."""
    from tests.support.run_folders import build_malformed

    root = tmp_path_factory.mktemp("mixed")
    history = events(VALID_OPS, [WINDOW])
    zookeeper = TestSpec(name="kv-fault", seed=1)
    kraft = TestSpec(
        name="kv-fault", seed=2, cluster=ClusterSpec(kafka_version="4.4.0", metadata="kraft")
    )
    write_run(root, zookeeper, history, T0)
    write_run(root, kraft, history, T0 + 60)
    older = write_run(root, zookeeper, history, T0 + 120)
    # A run recorded before KRaft existed: test.json has neither field (3.9 on ZooKeeper).
    test = json.loads((older / "test.json").read_text())
    del test["spec"]["kafka_version"], test["spec"]["metadata"]
    test["versions"] = {"kafka": "3.9.1"}
    (older / "test.json").write_text(json.dumps(test))
    # The history's path becomes a run id once per file, after its lines are counted and
    # paired: a name that its URI encodes must still find its counts and its latencies.
    encoded = TestSpec(name="kv fault+1 %41", nemesis=("partition-leader",), seed=1)
    decoded = [write_run(root, encoded, history, T0 + d) for d in (0, DAY)]

    # Spark expands a path it reads as a glob, and takes `name:` before the first `/` for
    # a scheme: here they are bytes of a name, of a folder given as `.`. Hadoop cannot
    # expand a folder named `x:y`: a run with both is left out, not fatal.
    def plain(name: str) -> Path:
        return write_run(root, TestSpec(name=name, nemesis=(), seed=1), events(VALID_OPS), T0)

    # A queue run in transactions with crashing clients, one aborted read planted.
    txn_spec = TestSpec(
        name="queue-txn-crash",
        workload="queue",
        nemesis=("pause-leader",),
        queue=QueueOptions(txn=True),
        crash_clients=10.0,
        seed=3,
    )
    txn = write_run(root, txn_spec, aborted_read().events(), T0)
    # Its recovery rows as `harness run` adds them (checkers/recovery.py), two partitions.
    results = json.loads((txn / "results.json").read_text())
    # The first waited out its 10 s fault: it has no in_fault_s, made from these fields.
    taken = [(6.0, 10.9, None), (8.0, None, 0.5)]
    results["recovery"] = {
        "partitions": [
            {"fault": "pause-leader", "start": 10.0, "stop": 20.0}
            | {"new_leader_s": a, "first_ok_s": b, "after_heal_s": c}
            for a, b, c in taken
        ]
    }
    # And the protocol its transactions spoke, as `harness run` reads it from the coordinator.
    results["release"] = {"client": "confluent-kafka", "transactions": {"protocol": "TV1"}}
    (txn / "results.json").write_text(json.dumps(results))
    # The same through the Java client: another test, never averaged with librdkafka's.
    java_spec = TestSpec(
        name="queue-txn-java",
        workload="queue",
        nemesis=("pause-leader",),
        queue=QueueOptions(txn=True, client="java"),
    )
    java = write_run(root, java_spec, aborted_read().events(), T0)
    # A NATS run: its release, `nats` and its sync profile, not the Kafka fields its spec
    # leaves at their defaults (with them it was counted as 3.9.1 on ZooKeeper, safe).
    nats_spec = TestSpec(name="kv-nats", db="nats", nats=NatsOptions(sync="always"), seed=4)
    nats = write_run(root, nats_spec, history, T0)
    patterns = [plain("kv[1]{a,b}*?\\"), plain("javascript:alert(1);1")]
    unreadable = plain("x[1]:y")
    reasons = build_malformed(root)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        found = analyze_with(spark, Path("."), root / "analysis", StatusLine())
    finally:
        os.chdir(cwd)
    return {
        "found": found,
        "out": root / "analysis",
        "decoded": decoded,
        "patterns": patterns,
        "unreadable": unreadable,
        "reasons": reasons,
        "txn": txn,
        "java": java,
        "nats": nats,
    }


def test_runs_group_by_kafka_release_and_metadata_mode(mixed: dict[str, Any]) -> None:
    rows = _csv(mixed["out"] / "aggregates.csv")
    # partition-leader on 3.9.1: the three kv-fault runs but the KRaft one, the two with
    # encoded names, and build_malformed's good run; the pattern-named runs have no fault.
    assert sorted((r["kafka_version"], r["metadata"], r["nemesis"], r["runs"]) for r in rows) == [
        ("2.12.1", "nats", "partition-leader", "1"),
        ("3.9.1", "zookeeper", "none", "2"),
        ("3.9.1", "zookeeper", "partition-leader", "5"),
        ("3.9.1", "zookeeper", "pause-leader", "1"),
        ("3.9.1", "zookeeper", "pause-leader,crash-clients", "1"),
        ("4.4.0", "kraft", "partition-leader", "1"),
    ]
    assert {r["kafka_config"] for r in rows if r["metadata"] == "nats"} == {"always"}
    summary = (mixed["out"] / "summary.md").read_text()
    assert "4.4.0-kraft/kv/linearizable/partition-leader/safe" in summary
    side = summary.split("## Side by side")[1].split("##")[0]
    assert "| test | 2.12.1-nats always | 3.9.1-zookeeper safe | 4.4.0-kraft safe |" in side
    assert "| kv/linearizable/partition-leader | 1 runs: 0 invalid, 0 unknown" in side
    assert "| 5 runs: 0 invalid, 0 unknown" in side


def test_a_transactional_run_has_its_outcomes_and_anomalies(mixed: dict[str, Any]) -> None:
    rows = {r["run"]: r for r in _csv(mixed["out"] / "runs.csv")}
    txn = rows[_run_id(mixed["txn"])]
    assert (txn["workload"], txn["nemesis"], txn["verdict"]) == (
        "queue-txn",
        "pause-leader,crash-clients",
        "INVALID",
    )
    assert (txn["txn_committed"], txn["txn_aborted"], txn["txn_unknown"]) == ("2", "1", "0")
    assert "G1a:1" in txn["anomalies"].split(" ")
    others = [r for r in rows.values() if r["workload"] == "kv"]
    assert others and all(r["anomalies"] == "" for r in others)
    # A queue runs on no store: its recorded default is not shown (kv's is).
    assert txn["store"] == "" and {r["store"] for r in others} == {"linearizable"}
    config = [r for r in _csv(mixed["out"] / "aggregates.csv") if r["workload"] == "queue-txn"]
    assert [(r["runs"], r["invalid"], r["txn_committed"], r["txn_aborted"]) for r in config] == [
        ("1", "1", "2", "1")
    ]
    java = rows[_run_id(mixed["java"])]
    assert (java["workload"], java["nemesis"], java["txn_aborted"]) == (
        "queue-txn-java",
        "pause-leader",
        "1",
    )
    # The client library each ran through, from test.json; the protocol, from results.json.
    assert (txn["client"], txn["txn_protocol"]) == ("confluent-kafka", "TV1")
    assert txn["client_version"] == metadata.version("confluent-kafka")
    assert (java["client"], java["txn_protocol"]) == ("kafka-clients", "")
    nats = rows[_run_id(mixed["nats"])]
    assert {r["client"] for r in others if r is not nats} == {"confluent-kafka"}
    assert (nats["client"], nats["client_version"]) == ("nats-py", "")


def test_recovery_times_per_configuration_and_fault(mixed: dict[str, Any]) -> None:
    (row,) = _csv(mixed["out"] / "recovery.csv")
    assert (row["workload"], row["fault"], row["runs"], row["partitions"]) == (
        "queue-txn",
        "pause-leader",
        "1",
        "2",
    )
    # The median of two is the lower one (percentile_approx returns a value it saw).
    assert (row["new_leader_s_median"], row["new_leader_s_worst"]) == ("6.0", "8.0")
    assert (row["first_ok_s_median"], row["first_ok_s_never"]) == ("10.9", "1")
    assert (row["in_fault_s_median"], row["in_fault_s_never"]) == ("", "2")
    assert (row["after_heal_s_worst"], row["after_heal_s_never"]) == ("0.5", "1")


def test_run_ids_needing_decoding_keep_their_history(mixed: dict[str, Any]) -> None:
    rows = {r["run"]: r for r in _csv(mixed["out"] / "runs.csv")}
    decoded = [rows[_run_id(f)] for f in mixed["decoded"]]
    assert {(r["ops"], r["ok"], r["p50_ms"], r["p95_ms"]) for r in decoded} == {
        ("6", "4", "15.0", "40.0")
    }


def test_run_folders_of_the_wrong_shape_are_left_out_with_their_reason(
    mixed: dict[str, Any],
) -> None:
    reasons = mixed["reasons"]
    listed = {r["run"]: r["reason"] for r in _csv(mixed["out"] / "broken.csv")}
    assert set(listed) == set(reasons) | {_run_id(mixed["unreadable"])}
    summary = (mixed["out"] / "summary.md").read_text()
    for run, reason in reasons.items():
        assert reason in listed[run], (run, listed[run])
        assert f"- `{run}`: {listed[run]}" in summary


def test_run_names_spark_would_read_as_patterns_are_analysed(mixed: dict[str, Any]) -> None:
    # build_malformed's good run is the first 1, the two transactional runs the 2, the
    # NATS run the last 1.
    assert mixed["found"].runs == 3 + 2 + 2 + 1 + 2 + 1
    assert [
        (b["run"], b["reason"].split(":")[0])
        for b in mixed["found"].broken
        if b["run"] == _run_id(mixed["unreadable"])
    ] == [(_run_id(mixed["unreadable"]), "Spark cannot read it")]
    rows = {r["run"]: r["ops"] for r in _csv(mixed["out"] / "runs.csv")}
    assert {run: rows.get(run) for run in map(_run_id, mixed["patterns"])} == {
        _run_id(f): "6" for f in mixed["patterns"]
    }
