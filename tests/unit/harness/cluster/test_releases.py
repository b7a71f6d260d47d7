"""The Kafka release table (harness/cluster/releases.py) and what follows from it without
Docker: which releases there are and what each has on, the one-line refusals (exit 254)
of what a release cannot run, the broker settings and format arguments each gets, the
matrix leaving out what `harness run` would refuse, and `analyze --kafka`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.cluster import config
from harness.cluster.layout import ClusterSpec, SpecError
from harness.cluster.releases import (
    DEFAULT_VERSION,
    MATRIX_DEFAULT,
    RELEASES,
    default_metadata,
    share_problem,
    version_problem,
)
from harness.commands import matrix
from harness.commands.matrix import Job, Kafka, parse_kafka, runnable
from harness.commands.run import spec_from_args
from harness.pipeline.analyze import of_releases
from harness.results import Broken, Listing, write_test_json
from harness.spec import TestSpec
from tests.unit.harness.cluster.test_kraft import files_of

MAVEN_CENTRAL = [
    *("3.9.1", "3.9.2", "4.0.0", "4.0.1", "4.0.2", "4.1.0", "4.1.1", "4.1.2"),
    *("4.2.0", "4.2.1", "4.2.2", "4.3.0", "4.3.1", "4.4.0"),
]
"""org.apache.kafka:kafka_2.13 on Maven Central from 3.9.1 to 4.4.0 (its
maven-metadata.xml, 2026-11-27)."""
ACCEPTANCE = ("3.9.2", "4.0.0", "4.1.2", "4.2.2", "4.3.1", "4.4.0")


def test_every_release_maven_central_serves_from_3_9_1_to_4_4_0_is_known_oldest_first() -> None:
    assert list(RELEASES) == MAVEN_CENTRAL
    assert DEFAULT_VERSION in RELEASES and set(MATRIX_DEFAULT) <= set(RELEASES)
    assert all(r.version == v and v.startswith(r.line + ".") for v, r in RELEASES.items())


def test_what_each_line_has_on_in_a_new_cluster() -> None:
    # From `kafka-storage version-mapping` of each release's jars and its upgrade notes.
    facts = {
        v: (
            r.metadata_modes,
            r.consumer_protocol,
            r.transactions_v2,
            (r.elr_feature, r.elr_default),
            r.share_stage,
            r.share_workload,
        )
        for v, r in RELEASES.items()
    }
    zk_and_kraft, kraft = ("zookeeper", "kraft"), ("kraft",)
    assert facts["3.9.2"] == (zk_and_kraft, False, False, (False, False), "none", False)
    assert facts["4.0.0"] == (kraft, True, True, (True, False), "early access", False)
    assert facts["4.1.2"] == (kraft, True, True, (True, True), "preview", False)
    assert facts["4.2.2"] == (kraft, True, True, (True, True), "production", False)
    assert facts["4.3.1"] == (kraft, True, True, (True, True), "production", True)
    assert facts["4.4.0"] == facts["4.3.0"] == facts["4.3.1"]
    for version, release in RELEASES.items():  # a line's patches differ in nothing here
        same_line = [f for v, f in facts.items() if RELEASES[v].line == release.line]
        assert all(f == facts[version] for f in same_line)
    assert default_metadata("3.9.2") == "zookeeper" and default_metadata("4.1.0") == "kraft"


def test_an_unknown_version_names_the_releases_there_are() -> None:
    assert version_problem("4.4.0") is None
    problem = version_problem("3.9.0")
    assert problem is not None and "'3.9.0'" in problem
    assert "3.9.1 to 3.9.2, 4.0.0 to 4.0.2" in problem and problem.endswith(
        "4.3.0 to 4.3.1, 4.4.0 (the releases Maven Central serves)"
    )


@pytest.mark.parametrize("version", ACCEPTANCE)
def test_run_takes_each_release_in_its_own_metadata_mode(version: str) -> None:
    args = build_parser().parse_args(["run", "--kafka-version", version, "--nemesis", "none"])
    spec = spec_from_args(args, seed=1)
    assert (spec.cluster.kafka_version, spec.cluster.metadata) == (
        version,
        default_metadata(version),
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--kafka-version", "4.1.2", "--metadata", "zookeeper"], "Kafka 4.1.2 has no ZooKeeper"),
        (["--kafka-version", "3.9.2", "--workload", "share"], "3.9.2 has no share groups"),
        (["--kafka-version", "4.0.2", "--workload", "share"], "4.0.2 has share groups as early"),
        (["--kafka-version", "4.1.0", "--workload", "share"], "4.1.0 has share groups as a prev"),
        (["--kafka-version", "4.2.2", "--workload", "share"], "delivery count limit only on"),
        (
            ["--kafka-version", "3.9.2", "--workload", "queue", "--sub-via", "subscribe",
             "--group-protocol", "consumer"],
            "(KIP-848) needs Kafka 4.0 or later, not 3.9.2",
        ),
        (["--kafka-version", "3.9.2", "--kafka-config", "safe-elr"], "4.0.0 and later has"),
    ],
)  # fmt: skip
def test_what_a_release_cannot_run_is_refused_in_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *argv, "--nemesis", "none"]) == 254
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_an_unknown_version_is_refused_by_the_parser_with_254(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--kafka-version", "4.4.1"])
    assert exit_.value.code == 254
    assert "kafka version '4.4.1': one of 3.9.1 to 3.9.2" in capsys.readouterr().err


def test_share_runs_where_the_group_sets_its_own_delivery_limit() -> None:
    assert [v for v in RELEASES if share_problem(v) is None] == ["4.3.0", "4.3.1", "4.4.0"]
    args = build_parser().parse_args(["run", "--workload", "share", "--kafka-version", "4.3.1"])
    assert spec_from_args(args, seed=1).workload == "share"


def test_only_the_releases_that_run_share_get_its_broker_settings() -> None:
    for version in ACCEPTANCE[1:]:
        broker = files_of(ClusterSpec(kafka_version=version, metadata="kraft"), "n1")
        has = "group.share.min.record.lock.duration.ms" in broker
        assert has == RELEASES[version].share_workload, version


def test_eligible_leader_replicas_are_set_at_format_from_4_0_and_refused_before() -> None:
    elr = config.PROFILES["safe-elr"]
    assert config.storage_format_args(elr, "4.0.0") == [
        "--feature",
        "eligible.leader.replicas.version=1",
    ]
    assert config.storage_format_args(config.PROFILES["safe"], "4.0.0") == []
    ClusterSpec(kafka_config="unsafe-no-elr", kafka_version="4.0.1", metadata="kraft")
    with pytest.raises(SpecError, match=r"4\.0\.0 and later"):
        ClusterSpec(kafka_config="safe-elr", kafka_version="3.9.2", metadata="kraft")


def test_the_matrix_takes_any_releases_and_leaves_out_what_run_refuses() -> None:
    kafkas = [parse_kafka(v) for v in ("3.9.2", "4.0.0", "4.3.1")]
    assert kafkas[0] == Kafka("3.9.2", "zookeeper") and kafkas[2] == Kafka("4.3.1", "kraft")
    jobs = [Job(k, "share", "linearizable", "kill-leader", "safe", 1, 101, 40.0) for k in kafkas]
    kept, lines = runnable(jobs, [])
    assert [j.kafka.version for j in kept] == ["4.3.1"]
    assert len(lines) == 2 and lines[0].startswith("left out on 3.9.2-zookeeper: ")
    grouped = [Job(k, "queue", "linearizable", "kill-leader", "safe", 1, 101, 40.0) for k in kafkas]
    extra = ["--sub-via", "subscribe", "--group-protocol", "consumer"]
    kept, lines = runnable(grouped, extra)
    assert [j.kafka.version for j in kept] == ["4.0.0", "4.3.1"] and len(lines) == 1


def test_a_matrix_whose_every_run_is_refused_exits_254(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matrix.Matrix, "start", lambda _: pytest.fail("a run was started"))
    argv = ["matrix", "--kafka", "3.9.2", "4.0.0", "--workloads", "share"]
    assert main(argv) == 254
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("harness matrix: left out on ") for line in err)


def test_analyze_takes_releases_with_or_without_their_mode(tmp_path: Path) -> None:
    runs = {
        "a/1": TestSpec(name="a", cluster=ClusterSpec(kafka_version="3.9.2", metadata="zookeeper")),
        "a/2": TestSpec(name="a", cluster=ClusterSpec(kafka_version="3.9.2", metadata="kraft")),
        "a/3": TestSpec(name="a", cluster=ClusterSpec(kafka_version="4.2.2", metadata="kraft")),
        "b/1": TestSpec(name="b", cluster=ClusterSpec(kafka_version="4.4.0", metadata="kraft")),
    }
    for run, spec in runs.items():
        (tmp_path / run).mkdir(parents=True)
        write_test_json(tmp_path / run, spec, time.time())
    listing = Listing(tmp_path, ["a/1", "a/2", "a/3"], [Broken("b/1", "x"), Broken("c/1", "y")])
    assert of_releases(listing, []) == listing
    found = of_releases(listing, [("3.9.2", None), ("4.4.0", "kraft")])
    assert found.complete == ["a/1", "a/2"]
    assert [b.run for b in found.broken] == ["b/1", "c/1"]  # c/1: no test.json to say
    assert of_releases(listing, [("3.9.2", "kraft")]).complete == ["a/2"]
    args = build_parser().parse_args(["analyze", "res", "--kafka", "4.2.2", "3.9.2:zookeeper"])
    assert args.kafka == [("4.2.2", None), ("3.9.2", "zookeeper")]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["analyze", "--kafka", "4.2.2:zookeeper"])
