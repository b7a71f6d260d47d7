"""File corruption on a minority: a node is stopped as an operator stops it, a few bits
of one of its files flipped or the file cut short, and the node started again; one
interval later, what Kafka did about it is recorded (it refused to start, dropped out
of the ISR, or came back; whether the changed bytes are still on its disk; what its log
says since).

The faults are named HOW-FILES: HOW bitflip or truncate, FILES log, index, checkpoint or
metadata (nemesis/file_faults.py says which files each means). Jepsen's
jepsen/src/jepsen/nemesis/file.clj corrupts files the same way and its nodes-gen keeps
them to a minority; here every corruption of a run, of whichever kind, is on nodes that
are together a minority of the replicas of each partition and of the KRaft quorum, so
an intact majority is always there to repair from. Every change is recorded exactly
(file, offset, bytes before and after) with the steps and their times.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from nemesis import file_faults as ff
from nemesis import log_batches
from nemesis.cluster import Cluster, Disks
from nemesis.core import Skipped, Value, split_f, wait_until
from nemesis.isr import Steps

OBSERVE_WAIT_S = 40.0
"""How long the stop op waits for the node to be back in every ISR it belongs to."""
POLL_S = 1.0


class FileCorruption:
    """The corruption faults of a run, as one nemesis so that every one of them strikes
    the same minority."""

    def __init__(
        self,
        faults: Sequence[str],
        topic: str,
        rng: random.Random,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._faults = tuple(faults)
        self.topic = topic
        self.rng = rng
        self._sleep = sleep
        self._clock = clock
        self._cluster: Cluster | None = None
        self._disks: Disks | None = None
        self._struck: set[str] = set()
        self._down: str | None = None
        self._last: dict[str, Value] = {}

    @property
    def faults(self) -> tuple[str, ...]:
        """Returns the corruption faults this injects."""
        return self._faults

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; refuses one whose stopped nodes' files cannot be reached."""
        if not isinstance(cluster, Disks):
            raise TypeError(f"{', '.join(self._faults)}: the cluster cannot reach its disks")
        self._cluster, self._disks = cluster, cluster

    def invoke(self, f: str) -> Value:
        """Corrupts one file of a stopped node and starts it again (start), or records what
        Kafka did about the last corruption of this fault (stop)."""
        if self._cluster is None or self._disks is None:
            raise RuntimeError(f"{f}: used before setup")
        action, fault = split_f(f)
        how, _, group = fault.partition("-")
        steps = Steps(self._cluster, self.topic, self._clock)
        if action == "start":
            done = self._corrupt(how, group, steps)
            self._last[fault] = done
            return steps.result(**done)
        if fault not in self._last:
            raise Skipped(f"{fault} has corrupted no file")
        return steps.result(**self._observe(self._last.pop(fault), steps))

    def teardown(self) -> Value:
        """Starts the node a corruption left stopped, if one did; then records what Kafka
        did about each corruption whose stop op never came (the run ended first: a slow
        stop of the node can take the whole interval), as the stop op would have."""
        if self._cluster is None:
            return {}
        report: Value = {}
        if self._down is not None:
            node, self._down = self._down, None
            self._cluster.start(node)
            report["started"] = node
        observed: Value = {}
        for fault, done in list(self._last.items()):
            steps = Steps(self._cluster, self.topic, self._clock)
            try:
                observed[fault] = steps.result(**self._observe(done, steps))
            except Exception as err:  # the heal goes on; the corruption stays unobserved
                observed[fault] = {"error": repr(err)}
            del self._last[fault]
        if observed:
            report["observed"] = observed
        return {"corrupt": report} if report else {}

    def _holders(self) -> dict[Any, list[str]]:
        """What is replicated where: each partition of the topic's replicas, and the KRaft
        voters (the metadata log)."""
        cluster = self._cluster
        assert cluster is not None
        held: dict[Any, list[str]] = {
            p.partition: [cluster.node_of_broker(r) for r in p.replicas]
            for p in cluster.partitions(self.topic)
        }
        if cluster.metadata == "kraft":
            held[ff.METADATA] = list(cluster.controllers)
        return held

    def _corrupt(self, how: str, group: str, steps: Steps) -> Value:
        cluster, disks = self._cluster, self._disks
        assert cluster is not None and disks is not None
        if group == ff.METADATA and cluster.metadata != "kraft":
            raise Skipped("the metadata log is KRaft's: this cluster keeps it in ZooKeeper")
        holders = self._holders()
        own = holders[ff.METADATA] if group == ff.METADATA else cluster.brokers
        candidates = [
            n
            for n in own
            if ff.may_strike(self._struck, n, holders) and cluster.state(n) == "running"
        ]
        if not candidates:
            raise Skipped(f"no running node may be struck: {sorted(self._struck)} already were")
        node = self.rng.choice(sorted(candidates))
        code, out = cluster.exec(node, ff.listing_command())
        if code != 0:
            raise Skipped(f"{node}'s files could not be listed: {out.strip()[-200:]}")
        listing = ff.parse_listing(out)
        files = ff.files_of(group, self.topic, listing)
        if not files:
            raise Skipped(f"{node} holds no {group} file with a byte in it")
        file = self.rng.choice(files)
        path = f"{ff.DATA_DIR}/{file}"
        steps.record("chosen", node=node, file=file, size=listing[file])
        self._struck.add(node)
        # Marked first: a node left stopped half-way must still be started by teardown.
        self._down = node
        disks.stop(node)
        steps.record("stopped", node=node)
        log_lines = 0
        try:
            # What the node logs from here on is about its start on the changed file.
            log_lines = disks.read_file(node, ff.SERVER_LOG).count(b"\n")
            data = disks.read_file(node, path)
            changed, change = ff.CORRUPTIONS[how](data, self.rng)
            disks.write_file(node, path, changed)
            steps.record("corrupted", node=node, file=file, how=how, change=change)
        finally:  # started again even when the file could not be changed
            cluster.start(node)
            self._down = None
        steps.record("started", node=node)
        return {
            "node": node,
            "file": file,
            "how": how,
            "change": change,
            "partition": ff.partition_of(file, self.topic),
            "struck": sorted(self._struck),
            "log_lines_before": log_lines,
        }

    def _observe(self, done: Value, steps: Steps) -> Value:
        """What Kafka did about one corruption: whether the node runs and is in every ISR
        it belongs to, what is now at the changed bytes, and its log lines since."""
        cluster, disks = self._cluster, self._disks
        assert cluster is not None and disks is not None
        node, file = done["node"], done["file"]
        since = int(done["log_lines_before"])
        back = self._wait(lambda: self._rejoined(node, since), OBSERVE_WAIT_S)
        state = cluster.state(node)
        try:
            now: bytes | None = disks.read_file(node, f"{ff.DATA_DIR}/{file}")
        except Exception:  # the node deleted or renamed the file: an answer, recorded
            now = None
        try:
            text = disks.read_file(node, ff.SERVER_LOG).decode(errors="replace")
        except Exception as err:  # recorded as unknown, the rest still stands
            text, said = "", [f"server.log unreadable: {err}"]
        else:
            said = ff.kafka_lines(text, since, file)
        evidence = ff.evidence(text.splitlines()[since:], file)
        on_disk = ff.bytes_now(done["change"], now)
        batches = _batches(file, done["change"], now)
        elsewhere = self._elsewhere(node, file)
        steps.record(
            "observed",
            node=node,
            file=file,
            running=state == "running",
            rejoined=back,
            within_s=OBSERVE_WAIT_S,
            on_disk=on_disk,
            batches=batches,
            kafka_said=said,
            evidence=evidence,
            elsewhere=elsewhere,
            kafka_did=_verdict(state == "running", back, on_disk, evidence, elsewhere, batches),
            state=steps.state(),
        )
        return {"node": node, "file": file, "how": done["how"], "partition": done["partition"]}

    def _elsewhere(self, struck: str, file: str) -> dict[str, list[str]]:
        """The lines of every other node's log that report a corruption of the file's
        directory: a follower refusing what the struck node served it, a controller
        refusing its metadata."""
        cluster, disks = self._cluster, self._disks
        assert cluster is not None and disks is not None
        folder = file.rsplit("/", 1)[0] if "/" in file else file
        found: dict[str, list[str]] = {}
        for other in cluster.nodes:
            if other == struck or other in cluster.zookeepers:
                continue
            try:
                text = disks.read_file(other, ff.SERVER_LOG).decode(errors="replace")
            except Exception:  # a node whose log cannot be read tells nothing either way
                continue
            lines = [
                e["line"]
                for e in ff.evidence(text.splitlines(), file)
                if e["means"] == "detected" and folder in e["line"]
            ]
            if lines:
                found[other] = lines
        return found

    def _rejoined(self, node: str, since: int) -> bool:
        cluster, disks = self._cluster, self._disks
        assert cluster is not None and disks is not None
        if cluster.state(node) != "running":
            return False
        if node not in cluster.brokers:
            # A controller: running is not enough (its JVM runs while it reads its
            # snapshot, and may then halt on it); it is back once it says it started.
            log = disks.read_file(node, ff.SERVER_LOG).decode(errors="replace")
            return any(ff.STARTED in line for line in log.splitlines()[since:])
        broker = cluster.broker_id(node)
        parts = cluster.committed_partitions(self.topic)
        return all(broker in p.isr for p in parts if broker in p.replicas)

    def _wait(self, done: Callable[[], bool], bound: float) -> bool:
        return wait_until(done, bound, POLL_S, self._clock, self._sleep)


def _batches(file: str, change: Any, now: bytes | None) -> list[Value]:
    """For a segment (.log), the record batch at each changed byte as the file is now
    and whether it passes its CRC; for a cut segment, the batch at the last byte kept
    (a cut through a batch leaves its head, which no batch can be read from, and what
    the node appends later lands after it). Else nothing."""
    if now is None or not file.endswith(".log"):
        return []
    if isinstance(change, list):
        return log_batches.batches_at(now, [c["offset"] for c in change])
    if isinstance(change, dict) and int(change.get("size_after", 0)) > 0:
        return log_batches.batches_at(now, [int(change["size_after"]) - 1])
    return []


def _verdict(
    running: bool,
    rejoined: bool,
    on_disk: Value,
    evidence: Sequence[Value],
    elsewhere: Value,
    batches: Sequence[Value] = (),
) -> str:
    """What Kafka did, in words, from what was observed: refused to start, served the
    corrupt data (another node refused it), gave up the file's partition (its fetcher
    failed), repaired it (its log says so, or the bytes are back), or kept it without
    looking (a clean shutdown skips recovery)."""
    said = {str(e.get("means")) for e in evidence}
    if not running or "refused" in said:
        return "refused to start (the node is down)" if not running else "halted on it"
    if elsewhere:
        return "served the corrupt data: " + ", ".join(sorted(elsewhere)) + " refused it"
    if "failed" in said:
        return "stopped replicating the file's partition: its fetcher failed on the file"
    if not rejoined:
        return (
            f"started but was not back within {OBSERVE_WAIT_S:.0f} s (a broker: in every"
            " ISR it belongs to; a controller: its start logged)"
        )
    if on_disk.get("file") == "gone":
        return "rejoined; the corrupted file is gone (deleted, or rebuilt under another name)"
    broken = any("unread" in b or b.get("crc_ok") is False for b in batches)
    still = on_disk.get("still_flipped", 0) or on_disk.get("still_cut") or broken
    if still and ("detected" in said or "repaired" in said):
        return "rejoined; it logged the corruption, and the changed bytes are still on its disk"
    if still:
        unread = " (a clean shutdown skips recovery)" if "unchecked" in said else ""
        return f"rejoined without noticing{unread}: the corruption is still on its disk"
    return "rejoined; the corrupted bytes were rewritten (repaired or rebuilt)"
