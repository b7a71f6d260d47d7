"""`harness matrix`: its plan (what runs, in which order, with which seeds and limits),
the command lines it builds, its exit code, and its lanes with real child processes."""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.commands import matrix
from harness.commands.matrix import Job, Kafka, Matrix, Nats, parse_kafka, plan, runnable, worst
from nemesis.names import GROUP_FAULTS, IN_ALL, NEMESES

ZK, KRAFT = Kafka("3.9.1", "zookeeper"), Kafka("4.4.0", "kraft")


def _limits(nemesis: str) -> float:
    return 60.0 if nemesis == "isr-shrink" else 40.0


def _acceptance() -> list[Job]:
    return plan([ZK, KRAFT], ["kv", "queue"], ["linearizable"], NEMESES, ["safe"],
                range(1, 6), 100, _limits)  # fmt: skip


def test_parse_kafka_takes_the_release_default_or_a_named_mode() -> None:
    assert parse_kafka("3.9.1") == ZK
    assert parse_kafka("4.4.0") == KRAFT
    assert parse_kafka("3.9.1:kraft") == Kafka("3.9.1", "kraft")
    with pytest.raises(ValueError, match="no ZooKeeper mode"):
        parse_kafka("4.4.0:zookeeper")
    with pytest.raises(ValueError, match=r"one of 3\.9\.1 to 3\.9\.2"):
        parse_kafka("2.8.0")


def test_plan_leaves_out_faults_that_do_not_apply() -> None:
    jobs = _acceptance()
    # 102 faults: 2 move the Java clients' clocks (never planned: the matrix runs no Java
    # client), 7 aim at the group, 1 grows a queue's topic; of the other 92, 54 + the 2
    # composed + 6 corruptions + 26 clock faults apply on ZooKeeper, and 55 + 2 + 8 (the
    # metadata log's too) + 26 on KRaft; 2 workloads, 5 rounds; and the 7 group faults and
    # add-partitions on both releases for queue only (kv joins no group and has no queue's
    # topic).
    assert len(jobs) == ((54 + 2 + 6 + 26) + (55 + 2 + 8 + 26)) * 2 * 5 + (7 + 1) * 2 * 5
    on = {(j.kafka, j.nemesis) for j in jobs}
    assert (KRAFT, "partition-zookeeper") not in on and (ZK, "partition-zookeeper") in on
    for quorum_fault in ("partition-controller-quorum", "partition-brokers-from-controllers"):
        assert (ZK, quorum_fault) not in on and (KRAFT, quorum_fault) in on
    assert set(Counter((j.kafka, j.workload, j.nemesis) for j in jobs).values()) == {5}
    assert not {j.nemesis for j in jobs if j.workload == "kv"} & set(GROUP_FAULTS)


def test_group_faults_are_planned_only_for_workloads_that_can_join_a_group() -> None:
    jobs = plan([KRAFT], ["kv", "queue", "share"], ["linearizable"], GROUP_FAULTS, ["safe"],
                range(1, 2), 100, _limits)  # fmt: skip
    assert {j.workload for j in jobs} == {"queue", "share"}
    assert len(jobs) == 2 * len(GROUP_FAULTS)
    args = build_parser().parse_args(["matrix"])
    assert args.nemeses == [n for n in NEMESES if n in IN_ALL and n not in GROUP_FAULTS]


def test_plan_leaves_out_configs_a_release_cannot_run() -> None:
    jobs = plan([ZK, KRAFT], ["kv"], ["linearizable"], ["kill-leader"],
                ["safe", "safe-no-elr"], range(1, 2), 100, _limits)  # fmt: skip
    assert [(j.kafka, j.config) for j in jobs] == [
        (ZK, "safe"), (KRAFT, "safe"), (KRAFT, "safe-no-elr"),
    ]  # fmt: skip


def test_a_nats_matrix_runs_its_releases_and_sync_profiles_with_the_faults_it_takes() -> None:
    old, new = Nats("2.12.1"), Nats("2.15.3")
    faults = ["partition-leader", "power-loss-all", "partition-zookeeper", "isr-shrink"]
    planned = plan([old, new], ["queue"], ["linearizable"], faults, ["default", "always", "safe"],
                   range(1, 2), 100, _limits)  # fmt: skip
    # No Kafka profile on NATS, no ZooKeeper fault; isr-shrink is what run refuses.
    assert {j.config for j in planned} == {"default", "always"}
    assert "partition-zookeeper" not in {j.nemesis for j in planned}
    jobs, refused = runnable(planned, [])
    assert {(j.kafka, j.nemesis, j.config) for j in jobs} == {
        (v, n, c) for v in (old, new) for n in faults[:2] for c in ("default", "always")
    }
    assert refused == ["left out on nats-2.12.1, nats-2.15.3: --db nats does not take the "
                       "faults isr-shrink"]  # fmt: skip
    args = build_parser().parse_args(jobs[0].argv("res", "lane-1", [])[3:])
    assert (args.db, args.version, args.sync) == ("nats", "2.12.1", jobs[0].config)


def test_a_matrix_refuses_configs_of_the_other_db(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--db", "nats", "--configs", "safe", "--list"]) == 254
    assert "--db nats takes default, always" in capsys.readouterr().err
    assert main(["matrix", "--configs", "always", "--list"]) == 254


def test_plan_is_round_by_round_with_each_cells_releases_side_by_side() -> None:
    jobs = _acceptance()
    rounds = [j.round for j in jobs]
    assert rounds == sorted(rounds)
    assert all(j.seed == 100 + j.round for j in jobs)
    first, second = jobs[0], jobs[1]
    assert (first.kafka, second.kafka) == (ZK, KRAFT)
    assert (first.workload, first.nemesis) == (second.workload, second.nemesis)
    assert {j.time_limit for j in jobs if j.nemesis == "isr-shrink"} == {60.0}
    assert {j.time_limit for j in jobs if j.nemesis != "isr-shrink"} == {40.0}


def test_every_command_line_is_one_harness_run_accepts() -> None:
    parser = build_parser()
    for job in _acceptance()[:30]:
        argv = job.argv("res", "lane-1", ["--nemesis-interval", "10"])
        assert argv[:3] == [sys.executable, "-m", "harness"]
        args = parser.parse_args(argv[3:])
        assert args.command == "run"
        assert (args.kafka_version, args.metadata) == (job.kafka.version, job.kafka.metadata)
        assert (args.workload, args.nemesis, args.kafka_config) == (
            job.workload, job.nemesis, job.config,
        )  # fmt: skip
        assert (args.seed, args.time_limit, args.cluster_name) == (
            job.seed,
            job.time_limit,
            "lane-1",
        )
        assert args.nemesis_interval == 10


@pytest.mark.parametrize(
    ("codes", "expected"),
    [([], 0), ([0, 0], 0), ([0, 2, 0], 2), ([0, 255], 255), ([255, 2], 2), ([2, 1, 255], 1)],
)
def test_worst_ranks_invalid_then_unknown_then_no_verdict(codes: list[int], expected: int) -> None:
    assert worst(codes) == expected


def _jobs(n: int) -> list[Job]:
    return [Job(ZK, "kv", "linearizable", "kill-leader", "safe", r, r, 1.0) for r in range(n)]


def test_lanes_run_every_job_each_on_its_own_cluster(tmp_path: Path) -> None:
    # Job r exits with code r % 3: 0, 1, 2, 0, 1, 2.
    seen: list[tuple[int, str]] = []

    def command(job: Job, lane: str) -> list[str]:
        seen.append((job.round, lane))
        return [sys.executable, "-c", f"import sys; sys.exit({job.round % 3})"]

    m = Matrix(_jobs(6), 2, tmp_path / "logs", command)
    assert m.run() == 1
    assert sorted(m.codes) == [0, 0, 1, 1, 2, 2]
    assert sorted(r for r, _ in seen) == list(range(6))
    assert len({lane for _, lane in seen}) == 2
    assert len(list((tmp_path / "logs").iterdir())) == 6


def test_stop_interrupts_the_runs_in_progress_and_starts_no_more(tmp_path: Path) -> None:
    # Each child says when it started, and on SIGINT writes a marker and exits 130, as
    # `harness run` does after healing.
    script = (
        "import signal, sys, time, pathlib\n"
        "d = pathlib.Path(sys.argv[1])\n"
        "def stop(*_):\n"
        "    (d / ('interrupted-' + sys.argv[2])).touch(); sys.exit(130)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        "(d / ('started-' + sys.argv[2])).touch()\n"
        "time.sleep(60)\n"
    )

    def command(job: Job, lane: str) -> list[str]:
        return [sys.executable, "-c", script, str(tmp_path), str(job.round)]

    m = Matrix(_jobs(5), 2, tmp_path / "logs", command)
    m.start()
    deadline = time.monotonic() + 20
    while len(list(tmp_path.glob("started-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    m.stop()
    m.wait()
    assert m.codes == [130, 130]
    assert {p.name for p in tmp_path.glob("interrupted-*")} == {"interrupted-0", "interrupted-1"}
    assert m.jobs.qsize() == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["matrix", "--kafka", "4.4.0:zookeeper"],
        ["matrix", "--time-limit-of", "no-such-fault=10"],
        ["matrix", "--time-limit-of", "isr-shrink=-1"],
    ],
)
def test_bad_matrix_arguments_exit_254_before_anything_runs(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*_: object) -> None:
        raise AssertionError("a run was started")

    monkeypatch.setattr(matrix.Matrix, "start", never)
    assert main(argv) == 254
    err = capsys.readouterr().err
    assert err.startswith("harness matrix: ") and err.count("\n") == 1


def test_list_prints_the_plan_and_runs_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matrix.Matrix, "start", lambda _: pytest.fail("a run was started"))
    argv = ["matrix", "--kafka", "3.9.1", "4.4.0", "--nemeses", "partition-zookeeper",
            "isr-shrink", "--runs", "2", "--list"]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    # partition-zookeeper is left out on KRaft: 2 rounds x (1 + 2) runs.
    assert lines[-1] == "6 runs"
    assert lines[0] == "3.9.1-zookeeper kv/linearizable/partition-zookeeper/safe round 1 seed 101"
    assert not any("4.4.0-kraft kv/linearizable/partition-zookeeper" in x for x in lines)
