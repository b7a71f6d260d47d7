"""`harness run`'s options: bad ones exit 254 with one line before anything starts; the
spec carries every option; the generators make unique values per key."""

from __future__ import annotations

import itertools
import random
import shlex

import pytest

from harness.cli import build_parser, main
from harness.cluster import engine, resources
from harness.cluster.resources import Machine
from harness.commands.run import spec_from_args
from harness.run import core
from harness.spec import TestSpec
from kvstore import VARIANTS
from nemesis.schedule import plan_faults
from workloads.kv import kv_ops
from workloads.names import STORES, WORKLOAD_NAMES
from workloads.register import register_ops
from workloads.registry import WORKLOADS


@pytest.mark.parametrize(
    "argv",
    [
        ["--nemesis", "bogus"],
        ["--nemesis", ""],
        ["--name", "bad/name"],
        ["--cluster-name", "-x"],
        ["--cluster-name", "a+b"],
        ["--brokers", "156"],
        ["--rate", "0"],
        ["--time-limit", "-1"],
        ["--store", "nope"],
        ["--workload", "queue2"],
        ["--concurrency", "1.5"],
        ["--txn"],
        ["--workload", "register", "--txn"],
        ["--workload", "queue", "--txn", "--producer-acks", "1"],
        ["--workload", "queue", "--txn", "--abort-p", "1.5"],
        ["--workload", "queue", "--txn", "--abort-p", "nan"],
        ["--workload", "queue", "--isolation-level", "serializable"],
        ["--workload", "kv", "--crash-clients"],
        ["--workload", "queue", "--sub-via", "both"],
        ["--workload", "kv", "--sub-via", "subscribe"],
        ["--workload", "queue", "--group-protocol", "consumer"],
        ["--workload", "queue", "--sub-via", "subscribe", "--group-protocol", "consumer"],
        ["--workload", "queue", "--auto-commit"],
        ["--workload", "queue", "--sub-via", "subscribe", "--txn", "--auto-commit"],
        ["--workload", "queue", "--txn", "--crash-clients", "0"],
        ["--workload", "share"],
        ["--workload", "share", "--kafka-version", "3.9.1", "--metadata", "kraft"],
        [
            "--workload",
            "share",
            "--kafka-version",
            "4.4.0",
            "--release-p",
            "0.8",
            "--reject-p",
            "0.5",
        ],
        ["--workload", "share", "--kafka-version", "4.4.0", "--txn"],
    ],
)
def test_bad_options_exit_254_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["run", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 254
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error" in err[-1]


def test_a_cluster_too_big_for_the_machine_is_254_before_anything_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # run_cli imports these where it calls them, so they are replaced in their modules.
    monkeypatch.setattr(engine, "docker_client", lambda: None)
    monkeypatch.setattr(resources, "engine_machine", lambda _: Machine(memory_mib=4096, cpus=2))
    monkeypatch.setattr(core, "run_test", lambda *_: pytest.fail("a run started"))
    assert main(["run", "--brokers", "5"]) == 254
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "5 brokers and 1 ZooKeeper need" in err[0]


def test_spec_carries_every_option() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "--workload",
            "register",
            "--store",
            "local-read",
            "--nemesis",
            "kill-leader,pause-one",
            "--kafka-config",
            "unsafe",
            "--time-limit",
            "12",
            "--keys",
            "3",
            "--partitions",
            "2",
            "--leave-cluster-running",
        ]
    )
    spec = spec_from_args(args, seed=7)
    assert spec.name == "register-local-read-kill-leader+pause-one"
    assert spec.nemesis == ("kill-leader", "pause-one")
    assert (spec.cluster.kafka_config, spec.time_limit, spec.keys, spec.partitions) == (
        "unsafe",
        12.0,
        3,
        2,
    )
    assert spec.leave_cluster_running and spec.seed == 7
    assert spec.to_json()["nemesis"] == ["kill-leader", "pause-one"]
    everything = spec_from_args(build_parser().parse_args(["run", "--nemesis", "all"]), seed=1)
    assert everything.name == "kv-linearizable-12-faults"


def test_a_time_limit_too_short_for_every_fault_is_said() -> None:
    def shortfall(*argv: str) -> str | None:
        spec = spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)
        faults = plan_faults(
            spec.nemesis, spec.topic, spec.time_limit, spec.nemesis_interval, random.Random(1)
        )
        return faults.shortfall()

    short = shortfall("--nemesis", "all", "--time-limit", "120")
    assert short is not None and "only 6 of the 12 faults" in short and "over 230 s" in short
    assert shortfall("--nemesis", "all", "--time-limit", "120", "--nemesis-interval", "4") is None
    assert shortfall("--nemesis", "none") is None


@pytest.mark.parametrize("ops", [kv_ops, register_ops])
def test_written_values_are_unique_per_key(ops: object) -> None:
    seen: set[tuple[int, int]] = set()
    for op in itertools.islice(ops(random.Random(3), 4), 5000):  # type: ignore[operator]
        value = op["value"]
        if op["f"] == "put-if-absent":
            continue  # repeats values on purpose (workloads/kv.py)
        new = value if isinstance(value, int) else value[1] if isinstance(value, list) else None
        if new is not None:
            assert (op["key"], new) not in seen
            seen.add((op["key"], new))
        assert 0 <= op["key"] < 4
    assert len(seen) > 1000


def test_queue_options_reach_the_spec_and_kafkas_rule_on_idempotence_is_kept() -> None:
    def spec(*argv: str) -> TestSpec:
        return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)

    queue = spec("--workload", "queue", "--nemesis", "isr-shrink", "--idempotence")
    assert queue.name == "queue-isr-shrink"
    options = queue.queue
    assert (options.producer_acks, options.idempotence, options.consumer_group) == (
        "all",
        True,
        False,
    )
    grouped = spec("--workload", "queue", "--producer-acks", "1", "--consumer-group")
    assert (grouped.queue.producer_acks, grouped.queue.consumer_group) == ("1", True)
    assert spec("--workload", "queue", "--sub-via", "subscribe").queue.consumer_group is True
    kip848 = spec(
        "--workload", "queue", "--kafka-version", "4.4.0", "--sub-via", "subscribe",
        "--group-protocol", "consumer", "--auto-commit", "--crash-clients",
    )  # fmt: skip
    assert (kip848.queue.group_protocol, kip848.queue.auto_commit, kip848.crash_clients) == (
        "consumer",
        True,
        30.0,
    )
    with pytest.raises(ValueError, match=r"needs Kafka 4\.0 or later, not 3\.9\.1"):
        spec("--workload", "queue", "--sub-via", "subscribe", "--group-protocol", "consumer")
    with pytest.raises(ValueError, match="--idempotence needs --producer-acks all"):
        spec("--workload", "queue", "--producer-acks", "1", "--idempotence")


def test_txn_options_reach_the_spec_and_test_json() -> None:
    def spec(*argv: str) -> TestSpec:
        return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)

    txn = spec("--workload", "queue", "--txn", "--abort-p", "0.25", "--nemesis", "none")
    assert txn.name == "queue-txn-none"
    assert (txn.queue.txn, txn.queue.abort_p, txn.queue.isolation_level) == (
        True,
        0.25,
        "read_committed",
    )
    assert {"txn": True, "abort_p": 0.25, "isolation_level": "read_committed"}.items() <= (
        txn.to_json().items()
    )
    dirty = spec("--workload", "queue", "--txn", "--isolation-level", "read_uncommitted")
    assert (dirty.queue.isolation_level, dirty.queue.abort_p) == ("read_uncommitted", 0.1)
    assert not spec("--workload", "queue").queue.txn
    assert txn.crash_clients is None
    assert spec("--workload", "queue", "--txn", "--crash-clients").crash_clients == 30.0
    crashing = spec("--workload", "queue", "--txn", "--crash-clients", "5")
    assert crashing.to_json()["crash_clients"] == 5.0


def test_the_light_name_lists_agree_with_the_workloads_and_stores() -> None:
    assert tuple(WORKLOADS) == WORKLOAD_NAMES
    assert set(STORES.values()) <= set(VARIANTS)


@pytest.mark.parametrize(
    "argv",
    [
        ["--workload", "queue", "--test-count", "3", "--seed", "10", "--nemesis", "kill-leader"],
        ["--test-count=2", "--seed=4", "--time-limit", "5", "--store", "local-read"],
        ["--nemesis", "none"],
    ],
)
def test_each_run_of_a_series_keeps_the_command_that_runs_it_again(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[TestSpec, str]] = []

    def run_test(spec: TestSpec, root: object, line: object, command: str) -> core.RunOutcome:
        ran.append((spec, command))
        return core.RunOutcome(root, "VALID", 0)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "docker_client", lambda: None)
    monkeypatch.setattr(resources, "engine_machine", lambda _: Machine(memory_mib=65536, cpus=8))
    monkeypatch.setattr(core, "run_test", run_test)
    assert main(["run", *argv]) == 0
    assert ran
    for spec, command in ran:
        words = shlex.split(command)
        assert words[:2] == ["harness", "run"] and "--test-count" not in command
        again = build_parser().parse_args(words[1:])
        assert again.seed == spec.seed
        assert spec_from_args(again, again.seed) == spec
