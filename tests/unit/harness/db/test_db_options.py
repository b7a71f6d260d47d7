"""`--db`: declared once on TestSpec; a Kafka run's spec and test.json stay as they were
(no db, no NATS options), a NATS run's name them; what NATS cannot run is refused before
anything starts, and `--nemesis all` there means the faults it takes; a power cut puts
the servers' stores on faultfs."""

from __future__ import annotations

import pytest

from harness.cli import build_parser
from harness.cluster.nats import SYNC_PROFILES
from harness.commands.run import NATS_FAULTS, spec_from_args
from harness.spec import TestSpec
from nemesis.names import NATS_CORRUPT_FAULTS
from workloads.names import NATS_SYNCS
from workloads.nats_queue import NATS_QUEUE
from workloads.queue import QUEUE
from workloads.registry import workload_for


def spec(*argv: str) -> TestSpec:
    return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)


def test_a_kafka_run_keeps_its_test_json() -> None:
    kafka = spec("--workload", "queue").to_json()
    assert "db" not in kafka and not [k for k in kafka if k.startswith("nats")]
    assert workload_for("kafka", "queue") is QUEUE


def test_a_nats_run_names_its_database_release_and_sync() -> None:
    nats = spec("--db", "nats", "--workload", "queue", "--nats-sync", "always")
    assert nats.db == "nats" and nats.nats.sync == "always"
    written = nats.to_json()
    assert (written["db"], written["nats_version"], written["nats_sync"]) == (
        "nats",
        "2.12.1",
        "always",
    )
    assert workload_for("nats", "queue") is NATS_QUEUE
    assert tuple(SYNC_PROFILES) == NATS_SYNCS


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--workload", "register"], "runs the workloads queue, kv, not register"),
        (["--workload", "kv", "--store", "local-read"], "--nats-kv-reads direct"),
        (["--workload", "queue", "--txn"], "are Kafka's"),
        (["--workload", "queue", "--sub-via", "subscribe"], "are Kafka's"),
        (["--workload", "queue", "--nemesis", "isr-shrink"], "does not take the faults isr-shrink"),
        (["--workload", "queue", "--nemesis", "power-loss-quorum-one"], "power-loss-quorum-one"),
        (["--workload", "queue", "--nemesis", "partition-power-loss"], "partition-power-loss"),
        (["--workload", "queue", "--nemesis", "partition-zookeeper"], "partition-zookeeper"),
        (["--workload", "queue", "--brokers", "4"], "servers 4"),
    ],
)
def test_what_nats_cannot_run_is_refused(argv: list[str], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        spec("--db", "nats", *argv)


def test_direct_reads_are_a_nats_kv_variant() -> None:
    direct = spec("--db", "nats", "--workload", "kv", "--nats-kv-reads", "direct")
    assert direct.nats.kv_reads == "direct" and direct.to_json()["nats_kv_reads"] == "direct"
    with pytest.raises(ValueError, match="it needs --db nats"):
        spec("--workload", "kv", "--nats-kv-reads", "direct")


def test_publishing_again_is_a_nats_queue_variant_named_in_the_run() -> None:
    again = spec("--db", "nats", "--workload", "queue", "--nats-publish", "msg-id")
    assert again.nats.publish == "msg-id" and again.to_json()["nats_publish"] == "msg-id"
    assert again.name == "queue-publish-msg-id-partition-leader"
    assert spec("--db", "nats", "--workload", "queue").name == "queue-partition-leader"
    with pytest.raises(ValueError, match="it needs --db nats"):
        spec("--workload", "queue", "--nats-publish", "retry")
    with pytest.raises(ValueError, match="the queue workload's on NATS"):
        spec("--db", "nats", "--workload", "kv", "--nats-publish", "retry")


def test_all_on_nats_is_its_partitions_kills_and_pauses() -> None:
    everything = spec("--db", "nats", "--workload", "queue", "--nemesis", "all").nemesis
    power = {f"power-loss-{t}" for t in ("one", "leader", "minority", "majority", "all")}
    power |= {"pause-power-loss"}
    # `all` never cuts power, corrupts a file nor removes a server, on Kafka neither.
    assert set(everything) == NATS_FAULTS - power - {"remove-server"} - set(NATS_CORRUPT_FAULTS)
    assert {"partition-leader", "kill-one", "pause-one", "kill-leader"} <= NATS_FAULTS


def test_a_power_cut_on_nats_puts_the_stores_on_faultfs() -> None:
    cut = spec("--db", "nats", "--workload", "queue", "--nemesis", "power-loss-all")
    assert cut.nemesis == ("power-loss-all",) and cut.cluster.faultfs
    assert not spec("--db", "nats", "--workload", "queue").cluster.faultfs


def test_nats_takes_the_pause_and_power_cut_of_its_split_brain_issue_on_faultfs() -> None:
    run = spec("--db", "nats", "--workload", "queue", "--nemesis", "pause-power-loss")
    assert run.nemesis == ("pause-power-loss",) and run.cluster.faultfs
    with pytest.raises(ValueError, match="does not take the faults partition-power-loss"):
        spec("--db", "nats", "--workload", "queue", "--nemesis", "partition-power-loss")


def test_nats_takes_the_corruptions_of_its_store_files_and_kafka_refuses_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    faults = ",".join(NATS_CORRUPT_FAULTS)
    run = spec("--db", "nats", "--workload", "queue", "--nemesis", faults)
    assert run.nemesis == NATS_CORRUPT_FAULTS and not run.cluster.faultfs
    assert set(NATS_CORRUPT_FAULTS) <= NATS_FAULTS
    with pytest.raises(ValueError, match="bitflip-blocks corrupts a NATS server's files"):
        spec("--workload", "queue", "--nemesis", "bitflip-blocks")
    with pytest.raises(ValueError, match="does not take the faults bitflip-log"):
        spec("--db", "nats", "--workload", "queue", "--nemesis", "bitflip-log")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    listed = "".join(capsys.readouterr().out.split())  # argparse wraps it, even at a hyphen
    assert all(name in listed for name in NATS_CORRUPT_FAULTS)
