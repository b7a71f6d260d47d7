"""File corruption on NATS (nemesis/nats_files.py, nemesis/nats_corrupt.py) without
Docker: each fault finds its files in a store laid out as a real nats-server's (the
stream's blocks and state, the Raft files of the stream's group and the meta group,
never a consumer's), a changed byte of a block is placed in its record, and the nemesis
stops a server, changes exactly what it records, starts it, strikes only a minority,
and later records what NATS did from its log."""

from __future__ import annotations

import random
import struct

import pytest

from nemesis import nats_files as nf
from nemesis.core import Skipped
from nemesis.nats_corrupt import NatsFileCorruption
from tests.support.fake_cluster import FakeCluster

STREAM = "queue"
GROUP_META = b'{"name":"S-R3F-abc","metadata":{"account":"$G","stream":"queue","type":"stream"}}'
CONSUMER_META = (
    b'{"name":"C-R3F-xyz","metadata":{"account":"$G","consumer":"c","stream":"queue",'
    b'"type":"consumer"}}'
)


def record(seq: int, subject: bytes, payload: bytes) -> bytes:
    """One message block record as nats-server writes it (no headers)."""
    length = 22 + len(subject) + len(payload) + 8
    return struct.pack("<IQQH", length, seq, 0, len(subject)) + subject + payload + bytes(8)


BLOCK = record(1, b"queue.0", b"10") + record(2, b"queue.0", b"11")
STORE = {
    "jetstream/$G/streams/queue/msgs/1.blk": BLOCK,
    "jetstream/$G/streams/queue/msgs/2.blk": b"",
    "jetstream/$G/streams/queue/msgs/index.db": bytes(73),
    "jetstream/$G/streams/queue/meta.inf": b"{}",
    "jetstream/$G/streams/queue/meta.sum": bytes(16),
    "jetstream/$G/streams/queue2/msgs/1.blk": BLOCK,
    "jetstream/$SYS/_js_/S-R3F-abc/meta.inf": GROUP_META,
    "jetstream/$SYS/_js_/S-R3F-abc/msgs/1.blk": bytes(30),
    "jetstream/$SYS/_js_/S-R3F-abc/msgs/index.db": bytes(56),
    "jetstream/$SYS/_js_/S-R3F-abc/tav.idx": bytes(16),
    "jetstream/$SYS/_js_/S-R3F-abc/peers.idx": bytes(34),
    "jetstream/$SYS/_js_/S-R3F-abc/snapshots/snap.1.301": bytes(73),
    "jetstream/$SYS/_js_/C-R3F-xyz/meta.inf": CONSUMER_META,
    "jetstream/$SYS/_js_/C-R3F-xyz/snapshots/snap.1.9": bytes(40),
    "jetstream/$SYS/_js_/C-R3F-xyz/msgs/1.blk": bytes(30),
    "jetstream/$SYS/_js_/_meta_/meta.inf": b'{"name":"_meta_"}',
    "jetstream/$SYS/_js_/_meta_/msgs/1.blk": bytes(30),
    "jetstream/$SYS/_js_/_meta_/snapshots/snap.1.5": bytes(625),
}
SIZES = {path: len(data) for path, data in STORE.items()}


def test_the_stream_and_its_raft_group_are_found_by_name() -> None:
    assert nf.stream_on_disk(STORE, (STREAM, f"KV_{STREAM}")) == STREAM
    assert nf.stream_on_disk(STORE, ("kv", "KV_kv")) is None
    assert nf.raft_metas(STORE)["S-R3F-abc"] == GROUP_META
    assert nf.stream_group(nf.raft_metas(STORE), (STREAM,)) == ["S-R3F-abc"]
    assert nf.stream_group({"x": b"not json", "y": b"[1]"}, (STREAM,)) == []


def test_each_fault_finds_its_files_never_another_streams_or_a_consumers() -> None:
    raft = ["S-R3F-abc", "_meta_"]
    assert nf.files_of("blocks", STREAM, raft, SIZES) == ["jetstream/$G/streams/queue/msgs/1.blk"]
    assert nf.files_of("stream-state", STREAM, raft, SIZES) == [
        "jetstream/$G/streams/queue/meta.inf",
        "jetstream/$G/streams/queue/meta.sum",
        "jetstream/$G/streams/queue/msgs/index.db",
    ]
    assert nf.files_of("raft-log", STREAM, raft, SIZES) == [
        "jetstream/$SYS/_js_/S-R3F-abc/msgs/1.blk",
        "jetstream/$SYS/_js_/S-R3F-abc/msgs/index.db",
        "jetstream/$SYS/_js_/S-R3F-abc/peers.idx",
        "jetstream/$SYS/_js_/S-R3F-abc/tav.idx",
        "jetstream/$SYS/_js_/_meta_/msgs/1.blk",
    ]
    assert nf.files_of("raft-snapshot", STREAM, raft, SIZES) == [
        "jetstream/$SYS/_js_/S-R3F-abc/snapshots/snap.1.301",
        "jetstream/$SYS/_js_/_meta_/snapshots/snap.1.5",
    ]
    assert nf.files_of("raft-snapshot", STREAM, [], SIZES) == []


def test_a_changed_byte_is_placed_in_its_record_and_field() -> None:
    second = len(BLOCK) // 2
    found = nf.records_at(BLOCK, [0, 5, 13, 21, 23, 30, 33, second + 32, len(BLOCK) + 3])
    assert [(f.get("sequence"), f.get("field")) for f in found[:8]] == [
        (1, "length"),
        (1, "sequence"),
        (1, "timestamp"),
        (1, "subject length"),
        (1, "subject"),
        (1, "payload"),
        (1, "hash"),
        (2, "hash"),
    ]
    assert found[-1] == {"position": len(BLOCK) + 3, "unread": "past the end of the block"}
    broken = b"\xff\x00\x00\x00" + BLOCK[4:]
    assert "claims 255 bytes" in nf.records_at(broken, [40])[0]["unread"]


def test_what_a_servers_log_says_and_what_that_means() -> None:
    lines = [
        "[7] [INF] Cluster name is wip-natscorrupt",
        "[7] [WRN] Filestore [queue] Stream state checksum did not match",
        "[7] [INF] Catchup for stream 'queue' complete",
        "[7] [WRN] Detected orphaned stream '$G > queue', will cleanup",
        "[7] [WRN] Resetting stream cluster state for '$G > queue'",
    ]
    means = [e["means"] for e in nf.evidence(lines)]
    assert means == ["deleted", "reset", "detected", "repaired"]
    reset = nf.evidence(lines[-1:])
    assert (
        nf.verdict(True, True, {}, reset)
        == "reset its copy of the stream and caught up from the leader"
    )
    assert nf.log_lines(lines, "jetstream/$G/streams/queue/msgs/index.db")[0].endswith(
        "did not match"
    )
    assert nf.verdict(True, True, {"still_flipped": 2}, []) == (
        "rejoined without noticing: the corruption is still on its disk"
    )
    assert nf.verdict(False, False, {}, []) == "did not start (the server is down)"
    oom = {"exit_code": 137, "oom_killed": True}
    assert nf.verdict(False, False, {}, [], oom) == (
        "did not start (the server is down: killed for want of memory, exit 137)"
    )
    assert nf.verdict(True, True, {"file": "gone"}, nf.evidence(lines[:2])).startswith(
        "rejoined; the corrupted file is gone"
    )


class StoreCluster(FakeCluster):
    """Three NATS servers, each with a copy of STORE, read and written while it is down,
    and a log per server."""

    def __init__(self) -> None:
        super().__init__()
        self.stores = {n: {f"{nf.STORE_DIR}/{p}": d for p, d in STORE.items()} for n in self.nodes}
        self.logs: dict[str, list[str]] = {n: ["[1] [INF] Server is ready"] for n in self.nodes}
        self.writes: list[tuple[str, str]] = []

    @property
    def zookeepers(self) -> list[str]:
        return []

    def stop(self, node: str) -> None:
        self.actions.append(("stop", node))
        self.states[node] = "exited"

    def read_file(self, node: str, path: str) -> bytes:
        return self.stores[node][path]

    def read_tree(self, node: str, path: str) -> dict[str, bytes]:
        parent = path.rsplit("/", 1)[0]
        return {p[len(parent) + 1 :]: d for p, d in self.stores[node].items()}

    def write_file(self, node: str, path: str, data: bytes) -> None:
        assert self.states[node] == "exited", "a file is written only while its server is down"
        self.writes.append((node, path))
        self.stores[node][path] = data

    def server_log(self, node: str, pattern: str, lines: int = 50) -> list[str]:
        return self.logs[node][-lines:]


def nemesis_on(cluster: StoreCluster, *faults: str, seed: int = 5) -> NatsFileCorruption:
    nemesis = NatsFileCorruption(faults, STREAM, random.Random(seed), sleep=lambda s: None)
    nemesis.setup(cluster)
    return nemesis


@pytest.mark.parametrize("seed", range(6))
def test_a_flip_stops_the_server_changes_what_it_records_and_starts_it(seed: int) -> None:
    cluster = StoreCluster()
    done = nemesis_on(cluster, "bitflip-blocks", seed=seed).invoke("start-bitflip-blocks")
    node, path = done["node"], f"{nf.STORE_DIR}/{done['file']}"
    assert done["file"] == "jetstream/$G/streams/queue/msgs/1.blk"
    assert cluster.actions == [("stop", node), ("start", node)]
    assert cluster.writes == [(node, path)]
    new = cluster.stores[node][path]
    changed = [i for i in range(len(BLOCK)) if BLOCK[i] != new[i]]
    assert changed == [c["offset"] for c in done["change"]]
    assert all(f"{BLOCK[c['offset']]:02x}" == c["before"] for c in done["change"])
    assert all(f"{new[c['offset']]:02x}" == c["after"] for c in done["change"])
    assert all(cluster.stores[n][path] == BLOCK for n in cluster.nodes if n != node)
    steps = [s["step"] for s in done["steps"]]
    assert steps == ["chosen", "stopped", "chosen-file", "corrupted", "started"]
    corrupted = done["steps"][3]
    assert corrupted["read_back"]["still_flipped"] == len(done["change"])
    assert [r["position"] for r in corrupted["records"]] == [c["offset"] for c in done["change"]]


def test_every_corruption_of_a_run_strikes_one_server_of_three() -> None:
    cluster = StoreCluster()
    faults = (
        "bitflip-blocks",
        "truncate-stream-state",
        "bitflip-raft-log",
        "truncate-raft-snapshot",
    )
    nemesis = nemesis_on(cluster, *faults)
    struck = {nemesis.invoke(f"start-{f}")["node"] for f in faults}
    assert len(struck) == 1
    cluster.states[struck.pop()] = "exited"
    with pytest.raises(Skipped, match="no running server may be struck"):
        nemesis.invoke("start-bitflip-blocks")


def test_the_stop_records_what_nats_did_from_the_servers_logs_since() -> None:
    cluster = StoreCluster()
    nemesis = nemesis_on(cluster, "truncate-stream-state")
    done = nemesis.invoke("start-truncate-stream-state")
    node = done["node"]
    other = next(n for n in cluster.nodes if n != node)
    cluster.logs[node].append("[2] [WRN] Filestore [queue] Stream state checksum did not match")
    cluster.logs[other].append("[3] [WRN] Detected orphaned stream '$G > queue', will cleanup")
    observed = nemesis.invoke("stop-truncate-stream-state")["steps"][-1]
    assert observed["step"] == "observed" and observed["rejoined"] is True
    assert observed["on_disk"]["still_cut"] is True
    assert observed["evidence"] == [
        {
            "means": "detected",
            "line": "[2] [WRN] Filestore [queue] Stream state checksum did not match",
        }
    ]
    assert observed["elsewhere"] == {
        other: ["[3] [WRN] Detected orphaned stream '$G > queue', will cleanup"]
    }
    assert observed["did"].startswith("rejoined; it logged the corruption")
    with pytest.raises(Skipped):
        nemesis.invoke("stop-truncate-stream-state")


def test_a_store_without_the_stream_is_skipped_and_the_server_started_again() -> None:
    cluster = StoreCluster()
    nemesis = NatsFileCorruption(("bitflip-blocks",), "other", random.Random(1))
    nemesis.setup(cluster)
    with pytest.raises(Skipped, match="holds no stream other"):
        nemesis.invoke("start-bitflip-blocks")
    assert all(state == "running" for state in cluster.states.values())
    assert cluster.writes == []


def test_a_cluster_that_cannot_reach_its_stores_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot reach its stores"):
        NatsFileCorruption(("bitflip-blocks",), STREAM, random.Random(1)).setup(FakeCluster())
