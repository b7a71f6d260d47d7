"""File corruption (nemesis/file_faults.py, nemesis/corrupt.py) without Docker: the
corruptions change exactly what they record, each fault finds its files, the struck
nodes stay a minority of every replica set, and the nemesis stops, corrupts and starts
a node and later records what Kafka did."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nemesis import file_faults as ff
from nemesis.core import Skipped
from nemesis.corrupt import FileCorruption, _batches, _verdict
from tests.support.fake_cluster import FakeCluster
from tests.support.kafka_segment import BATCH, SEGMENT

TOPIC = "queue"
LISTING = {
    "queue-0/00000000000000000000.log": 4096,
    "queue-0/00000000000000000000.index": 16,
    "queue-0/00000000000000000000.timeindex": 24,
    "queue-0/00000000000000000000.snapshot": 10,
    "queue-0/leader-epoch-checkpoint": 20,
    "queue-1/00000000000000000000.log": 0,
    "queue-x-0/00000000000000000000.log": 80,
    "queue2-0/00000000000000000000.log": 80,
    "recovery-point-offset-checkpoint": 40,
    "replication-offset-checkpoint": 40,
    "meta.properties": 90,
    "__cluster_metadata-0/00000000000000000000.log": 900,
    "__cluster_metadata-0/00000000000000000312-0000000001.checkpoint": 300,
    "__cluster_metadata-0/quorum-state": 100,
}


@given(st.binary(min_size=1, max_size=200), st.integers(0, 2**32))
def test_a_flip_changes_exactly_the_bits_it_records(data: bytes, seed: int) -> None:
    changed, changes = ff.flip_bits(data, random.Random(seed))
    assert len(changed) == len(data)
    differ = [i for i, (a, b) in enumerate(zip(data, changed, strict=True)) if a != b]
    assert differ == [c["offset"] for c in changes]
    assert len(changes) == min(2, len(data))
    for c in changes:
        assert (
            f"{data[c['offset']]:02x}" == c["before"]
            and f"{changed[c['offset']]:02x}" == c["after"]
        )
        assert data[c["offset"]] ^ changed[c["offset"]] == 1 << c["bit"]


@given(st.binary(min_size=1, max_size=300), st.integers(0, 2**32))
def test_a_cut_keeps_a_prefix_and_records_what_it_removed(data: bytes, seed: int) -> None:
    kept, change = ff.truncate(data, random.Random(seed))
    removed = data[len(kept) :]
    assert data.startswith(kept) and 1 <= len(removed) == change["removed_bytes"]
    assert change["offset"] == change["size_after"] == len(kept)
    assert change["size_before"] == len(data)
    assert change["before"] == removed[: ff.BYTES_SHOWN].hex()
    assert change["removed_sha256"] == hashlib.sha256(removed).hexdigest()


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(ValueError):
        ff.flip_bits(b"", random.Random(1))
    with pytest.raises(ValueError):
        ff.truncate(b"", random.Random(1))


def test_each_fault_finds_its_files_of_the_runs_topic_with_a_byte_in_them() -> None:
    assert ff.files_of("log", TOPIC, LISTING) == ["queue-0/00000000000000000000.log"]
    assert ff.files_of("index", TOPIC, LISTING) == [
        "queue-0/00000000000000000000.index",
        "queue-0/00000000000000000000.timeindex",
    ]
    assert ff.files_of("checkpoint", TOPIC, LISTING) == [
        "queue-0/leader-epoch-checkpoint",
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ]
    assert ff.files_of("metadata", TOPIC, LISTING) == [
        "__cluster_metadata-0/00000000000000000000.log",
        "__cluster_metadata-0/00000000000000000312-0000000001.checkpoint",
    ]
    assert ff.partition_of("queue-0/leader-epoch-checkpoint", TOPIC) == 0
    assert ff.partition_of("recovery-point-offset-checkpoint", TOPIC) is None


def test_a_listing_is_read_back_from_find() -> None:
    text = "queue-0/00000000000000000000.log 4096\nmeta.properties 90\n\nodd line\n"
    assert ff.parse_listing(text) == {
        "queue-0/00000000000000000000.log": 4096,
        "meta.properties": 90,
    }
    assert "-printf '%P %s\\n'" in ff.listing_command()[2]


def test_the_struck_nodes_stay_a_minority_of_every_replica_set() -> None:
    three = {0: ["n1", "n2", "n3"], 1: ["n1", "n2", "n3"]}
    assert ff.may_strike(set(), "n1", three)
    assert ff.may_strike({"n1"}, "n1", three)
    assert not ff.may_strike({"n1"}, "n2", three)
    five = {0: ["n1", "n2", "n3"], 1: ["n3", "n4", "n5"], "metadata": ["c1", "c2", "c3"]}
    assert ff.may_strike({"n1"}, "n4", five)  # n1 and n4 share no partition
    assert not ff.may_strike({"n1"}, "n3", five)
    assert ff.may_strike({"n1", "n4"}, "c2", five)
    assert not ff.may_strike({"c1"}, "c2", five)


def test_what_is_left_of_a_corruption_later() -> None:
    flips = [{"offset": 1, "bit": 0, "before": "00", "after": "01"}, {"offset": 9, "after": "ff"}]
    assert ff.bytes_now(flips, b"\x00\x01\x02") == {
        "bytes": [{"offset": 1, "now": "01"}, {"offset": 9, "now": None}],
        "still_flipped": 1,
    }
    cut = {"size_after": 3}
    assert ff.bytes_now(cut, b"abc") == {"size": 3, "still_cut": True}
    assert ff.bytes_now(cut, b"ab") == {"size": 2, "still_cut": False}
    assert ff.bytes_now(cut, None) == {"file": "gone"}


def test_kafkas_lines_since_the_corruption_those_about_the_file_first() -> None:
    log = "\n".join(
        [
            "[1] ERROR old trouble in queue-0",
            "[2] INFO Recovering unflushed segment 0 in dir /d/queue-1",
            "[3] INFO nothing to see",
            "[4] WARN Found invalid messages in queue-0 (CorruptRecordException)",
        ]
    )
    assert ff.kafka_lines(log, 1, "queue-0/00000000000000000000.log") == [
        "[4] WARN Found invalid messages in queue-0 (CorruptRecordException)",
        "[2] INFO Recovering unflushed segment 0 in dir /d/queue-1",
    ]


class DiskCluster(FakeCluster):
    """FakeCluster with disks: each node's files, listed by exec, read and written while
    the node is stopped."""

    def __init__(self, kraft: bool = False) -> None:
        super().__init__(kraft=kraft)
        self.files = {
            node: {
                f"{ff.DATA_DIR}/{path}": bytes(i % 251 for i in range(size))
                for path, size in LISTING.items()
            }
            | {ff.SERVER_LOG: b"[0] INFO started\n"}
            for node in self.nodes
        }
        self.writes: list[tuple[str, str]] = []

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        self.execs.append((node, cmd))
        if cmd == ff.listing_command():
            prefix = f"{ff.DATA_DIR}/"
            return 0, "".join(
                f"{p[len(prefix) :]} {len(d)}\n"
                for p, d in self.files[node].items()
                if p.startswith(prefix)
            )
        return 0, ""

    def stop(self, node: str) -> None:
        self.actions.append(("stop", node))
        self.states[node] = "exited"

    def read_file(self, node: str, path: str) -> bytes:
        return self.files[node][path]

    def write_file(self, node: str, path: str, data: bytes) -> None:
        assert self.states[node] == "exited", "a file is written only while its node is down"
        self.writes.append((node, path))
        self.files[node][path] = data


def _nemesis(faults: tuple[str, ...], cluster: DiskCluster, seed: int = 3) -> FileCorruption:
    nemesis = FileCorruption(faults, TOPIC, random.Random(seed), sleep=lambda s: None)
    nemesis.setup(cluster)
    return nemesis


def test_a_corruption_stops_the_node_changes_what_it_records_and_starts_it() -> None:
    cluster = DiskCluster()
    before = {n: dict(f) for n, f in cluster.files.items()}
    done = _nemesis(("bitflip-log",), cluster).invoke("start-bitflip-log")
    node, path = done["node"], f"{ff.DATA_DIR}/{done['file']}"
    assert done["file"] == "queue-0/00000000000000000000.log" and done["partition"] == 0
    assert [s["step"] for s in done["steps"]] == ["chosen", "stopped", "corrupted", "started"]
    assert cluster.actions == [("stop", node), ("start", node)]
    assert cluster.writes == [(node, path)]
    old, new = before[node][path], cluster.files[node][path]
    assert [i for i in range(len(old)) if old[i] != new[i]] == [c["offset"] for c in done["change"]]
    assert all(cluster.files[n] == before[n] for n in cluster.nodes if n != node)


def test_every_corruption_of_a_run_strikes_the_same_minority() -> None:
    cluster = DiskCluster()
    nemesis = _nemesis(("bitflip-log", "truncate-checkpoint", "truncate-index"), cluster)
    struck = {nemesis.invoke(f"start-{f}")["node"] for f in nemesis.faults}
    assert len(struck) == 1
    cluster.states[struck.pop()] = "exited"  # the struck node down: no other may be struck
    with pytest.raises(Skipped, match="no running node may be struck"):
        nemesis.invoke("start-bitflip-log")


def test_the_metadata_log_is_kraft_only_and_struck_on_a_controller() -> None:
    with pytest.raises(Skipped, match="KRaft"):
        _nemesis(("bitflip-metadata",), DiskCluster()).invoke("start-bitflip-metadata")
    cluster = DiskCluster(kraft=True)
    done = _nemesis(("truncate-metadata",), cluster).invoke("start-truncate-metadata")
    assert done["node"] in cluster.controllers
    assert done["file"].startswith("__cluster_metadata-0/")


def test_the_stop_records_what_kafka_did() -> None:
    cluster = DiskCluster()
    nemesis = _nemesis(("truncate-log",), cluster)
    done = nemesis.invoke("start-truncate-log")
    node = done["node"]
    cluster.files[node][ff.SERVER_LOG] += b"[9] WARN Found invalid messages in queue-0\n"
    observed = nemesis.invoke("stop-truncate-log")["steps"][-1]
    assert observed["step"] == "observed" and observed["rejoined"] is True
    assert observed["kafka_said"] == ["[9] WARN Found invalid messages in queue-0"]
    assert observed["on_disk"]["still_cut"] is True
    assert observed["evidence"] == [
        {"means": "detected", "line": "[9] WARN Found invalid messages in queue-0"}
    ]
    assert observed["kafka_did"] == (
        "rejoined; it logged the corruption, and the changed bytes are still on its disk"
    )
    assert observed["elsewhere"] == {}
    with pytest.raises(Skipped):
        nemesis.invoke("stop-truncate-log")


def test_a_node_that_starts_without_recovery_kept_the_corruption_unnoticed() -> None:
    cluster = DiskCluster()
    nemesis = _nemesis(("bitflip-log",), cluster)
    node = nemesis.invoke("start-bitflip-log")["node"]
    cluster.files[node][ff.SERVER_LOG] += (
        b"[7] INFO Skipping recovery of 10 logs from /var/lib/kafka/data since clean"
        b" shutdown file was found (kafka.log.LogManager)\n"
        b"[8] INFO [LogLoader partition=queue-0] Reloading from producer snapshot\n"
    )
    observed = nemesis.invoke("stop-bitflip-log")["steps"][-1]
    assert [e["means"] for e in observed["evidence"]] == ["unchecked"]
    assert observed["kafka_did"] == (
        "rejoined without noticing (a clean shutdown skips recovery): the corruption is still"
        " on its disk"
    )
    assert len(observed["batches"]) == 2  # one per flipped byte, placed in the file as it is


def test_a_follower_refusing_the_struck_nodes_batch_means_it_served_corrupt_data() -> None:
    cluster = DiskCluster()
    nemesis = _nemesis(("bitflip-log",), cluster)
    node = nemesis.invoke("start-bitflip-log")["node"]
    other = next(n for n in cluster.brokers if n != node)
    cluster.files[other][ff.SERVER_LOG] += (
        b"[9] ERROR [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Found invalid"
        b" messages during fetch for partition queue-0 offset 57\n"
        b"[9] ERROR Found invalid messages during fetch for partition queue-1 offset 3\n"
    )
    observed = nemesis.invoke("stop-bitflip-log")["steps"][-1]
    assert observed["elsewhere"] == {
        other: [
            "[9] ERROR [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Found invalid"
            " messages during fetch for partition queue-0 offset 57"
        ]
    }
    assert observed["kafka_did"] == f"served the corrupt data: {other} refused it"


def test_the_lines_that_say_what_kafka_did_with_a_file() -> None:
    lines = [
        "[1] INFO Skipping recovery for all logs in /d since clean shutdown file was found",
        "[2] INFO [LogLoader partition=queue-1] Recovering unflushed segment 0",
        "[3] INFO [LogLoader partition=queue-0] Recovering unflushed segment 0",
        "\tat org.apache.kafka.storage.internals.log.LogSegment.recover(LogSegment.java:1)",
        "[4] ERROR Shutdown broker because all log dirs in /d have failed",
        "[5] WARN Found a corrupted index file corresponding to log file queue-0/0.log due"
        " to Corrupt index found, rebuilding index files",
        "[6] INFO [LogLoader partition=queue-0] Reloading from producer snapshot and"
        " rebuilding producer state from offset 0",
        "[7] WARN [ReplicaFetcher replicaId=2] Partition queue-0 marked as failed",
        "[8] WARN [ReplicaFetcher replicaId=2] Partition queue-1 marked as failed",
    ]
    assert [(e["means"], e["line"][:3]) for e in ff.evidence(lines, "queue-0/0.index")] == [
        ("refused", "[4]"),
        ("detected", "[5]"),
        ("failed", "[7]"),
        ("repaired", "[3]"),
        ("unchecked", "[1]"),
    ]
    snapshot = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
    recovered = "[2] INFO [LogLoader partition=__cluster_metadata-0] Recovering unflushed segment 0"
    assert ff.evidence([recovered], snapshot) == []
    assert ff.evidence([recovered], "__cluster_metadata-0/00000000000000000000.log") != []


def test_a_node_that_does_not_come_back_refused_to_start() -> None:
    cluster = DiskCluster()
    clock = iter(range(0, 1000, 5))
    nemesis = FileCorruption(
        ("bitflip-index",), TOPIC, random.Random(2), lambda s: None, lambda: next(clock)
    )
    nemesis.setup(cluster)
    node = nemesis.invoke("start-bitflip-index")["node"]
    cluster.states[node] = "exited"
    observed = nemesis.invoke("stop-bitflip-index")["steps"][-1]
    assert observed["rejoined"] is False and observed["running"] is False
    assert observed["kafka_did"] == "refused to start (the node is down)"


def test_a_failed_write_still_starts_the_node() -> None:
    cluster = DiskCluster()

    def refuse(node: str, path: str, data: bytes) -> None:
        raise OSError("no")

    cluster.write_file = refuse  # type: ignore[method-assign]
    nemesis = _nemesis(("bitflip-log",), cluster)
    with pytest.raises(OSError):
        nemesis.invoke("start-bitflip-log")
    assert all(state == "running" for state in cluster.states.values())
    assert nemesis.teardown() == {}


def test_a_fetcher_that_failed_on_the_file_gave_up_its_partition() -> None:
    cluster = DiskCluster()
    nemesis = _nemesis(("truncate-log",), cluster)
    node = nemesis.invoke("start-truncate-log")["node"]
    cluster.files[node][ff.SERVER_LOG] += (
        b"[9] ERROR [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Unexpected error"
        b" occurred while processing data for partition queue-0 at offset 0\n"
        b"[9] WARN [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition queue-0"
        b" marked as failed\n"
    )
    observed = nemesis.invoke("stop-truncate-log")["steps"][-1]
    assert [e["means"] for e in observed["evidence"]] == ["failed", "failed"]
    assert observed["kafka_did"] == (
        "stopped replicating the file's partition: its fetcher failed on the file"
    )


def test_a_corruption_whose_stop_never_came_is_observed_at_the_heal() -> None:
    cluster = DiskCluster()
    nemesis = _nemesis(("truncate-index",), cluster)
    node = nemesis.invoke("start-truncate-index")["node"]
    healed = nemesis.teardown()["corrupt"]["observed"]["truncate-index"]
    observed = healed["steps"][-1]
    assert observed["step"] == "observed" and observed["node"] == node
    assert "kafka_did" in observed
    assert nemesis.teardown() == {}  # observed once


def test_a_controller_is_back_only_once_it_logs_its_start() -> None:
    cluster = DiskCluster(kraft=True)
    clock = iter(range(0, 10_000, 5))
    nemesis = FileCorruption(
        ("bitflip-metadata",), TOPIC, random.Random(2), lambda s: None, lambda: next(clock)
    )
    nemesis.setup(cluster)
    node = nemesis.invoke("start-bitflip-metadata")["node"]
    cluster.files[node][ff.SERVER_LOG] += (
        b"[9] ERROR Encountered fatal fault: caught exception"
        b" (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n"
    )
    observed = nemesis.invoke("stop-bitflip-metadata")["steps"][-1]
    assert observed["running"] is True and observed["rejoined"] is False
    assert observed["kafka_did"] == "halted on it"
    node = nemesis.invoke("start-bitflip-metadata")["node"]
    cluster.files[node][ff.SERVER_LOG] += (
        b"[9] INFO [KafkaRaftServer nodeId=4] Kafka Server started\n"
    )
    assert nemesis.invoke("stop-bitflip-metadata")["steps"][-1]["rejoined"] is True


def test_a_cut_segment_that_grew_again_still_holds_the_cut_batchs_head() -> None:
    # A 4.4.0 run (seed 5302): n3's segment was cut through a batch; n3 started on it
    # without recovery, counted its log end from the batches before the cut, and
    # appended what it fetched after the half batch: the file grew, the cut stayed.
    cut = 2 * BATCH + 40
    grown = SEGMENT[:cut] + SEGMENT[2 * BATCH :]
    change = {"size_after": cut}
    (found,) = _batches("queue-0/00000000000000000000.log", change, grown)
    assert found["batch_position"] == 2 * BATCH and found["crc_ok"] is False
    on_disk = ff.bytes_now(change, grown)
    assert on_disk["still_cut"] is False
    assert _verdict(True, True, on_disk, [], {}, [found]) == (
        "rejoined without noticing: the corruption is still on its disk"
    )
    whole = SEGMENT[: 2 * BATCH] + SEGMENT[2 * BATCH :]  # cut at a batch's end, then grown
    (clean,) = _batches("q-0/0.log", {"size_after": 2 * BATCH}, whole)
    assert clean["crc_ok"] is True
    assert _verdict(
        True, True, ff.bytes_now({"size_after": 2 * BATCH}, whole), [], {}, [clean]
    ) == ("rejoined; the corrupted bytes were rewritten (repaired or rebuilt)")
