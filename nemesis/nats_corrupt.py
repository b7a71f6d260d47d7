"""File corruption on a minority of NATS JetStream servers: a server is stopped as an
operator stops it, a few bits of one file of its store flipped or the file cut short,
and the server started again; one interval later, what NATS did about it is recorded.

The faults are named HOW-FILES: HOW bitflip or truncate (nemesis/file_faults.py's
corruptions), FILES blocks, stream-state, raft-log or raft-snapshot (nemesis/nats_files.py
says which files each means). Jepsen's NATS suite (jepsen-io/nats
src/jepsen/nats/nemesis.clj, corrupt-file-package, and jepsen/src/jepsen/nemesis/file.clj)
corrupts the same files on a minority; nats-server#7549 lost acknowledged writes to a
single bit flipped in a minority's .blk files and #7556 deleted a stream after its Raft
snapshots were corrupted on a minority. What NATS promises: a stream of R replicas
survives the loss of a minority, which is repaired from the majority. Every change is
recorded exactly (file, offset, bytes before and after) with the steps and their times.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from nemesis import file_faults as ff
from nemesis import nats_files as nf
from nemesis.cluster import Cluster, Disks
from nemesis.core import Skipped, Value, split_f, wait_until
from nemesis.isr import Steps

OBSERVE_WAIT_S = 40.0
"""How long the stop op waits for the server to be a current replica of the stream."""
POLL_S = 1.0
META = "meta group"


@runtime_checkable
class Stores(Disks, Protocol):
    """Disks that can also read a whole directory of a stopped node (a server's store)."""

    def read_tree(self, node: str, path: str) -> dict[str, bytes]:
        """Returns every file under a directory of node's disk, running or stopped, by its
        path relative to the directory's parent."""
        ...


@runtime_checkable
class ExitReasons(Protocol):
    """Nodes that say how their process last ended (a server that died on a changed file)."""

    def exit_reason(self, node: str) -> dict[str, Any]:
        """Returns {"exit_code", "oom_killed"} of node's last end."""
        ...


class NatsFileCorruption:
    """The NATS corruption faults of a run, as one nemesis so that every one of them
    strikes the same minority of the stream's replicas and of the meta group."""

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
        self._stores: Stores | None = None
        self._struck: set[str] = set()
        self._down: str | None = None
        self._last: dict[str, Value] = {}

    @property
    def faults(self) -> tuple[str, ...]:
        """Returns the corruption faults this injects."""
        return self._faults

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; refuses one whose stopped servers' stores cannot be read."""
        if not isinstance(cluster, Stores):
            raise TypeError(f"{', '.join(self._faults)}: the cluster cannot reach its stores")
        self._cluster, self._stores = cluster, cluster

    def invoke(self, f: str) -> Value:
        """Corrupts one file of a stopped server and starts it again (start), or records
        what NATS did about the last corruption of this fault (stop)."""
        if self._cluster is None:
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
        """Starts the server a corruption left stopped, if one did; then records what NATS
        did about each corruption whose stop op never came (the run ended first)."""
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

    def _holders(self) -> dict[str, list[str]]:
        """The stream's replicas and the meta group's voters (every server)."""
        cluster = self._cluster
        assert cluster is not None
        replicas = {
            cluster.node_of_broker(r) for p in cluster.partitions(self.topic) for r in p.replicas
        }
        return {self.topic: sorted(replicas), META: list(cluster.nodes)}

    def _corrupt(self, how: str, group: str, steps: Steps) -> Value:
        cluster, stores = self._cluster, self._stores
        assert cluster is not None and stores is not None
        holders = self._holders()
        candidates = [
            n
            for n in holders[self.topic]
            if ff.may_strike(self._struck, n, holders) and cluster.state(n) == "running"
        ]
        if not candidates:
            raise Skipped(f"no running server may be struck: {sorted(self._struck)} already were")
        node = self.rng.choice(sorted(candidates))
        steps.record("chosen", node=node)
        # Marked first: a server left stopped half-way must still be started by teardown.
        self._down = node
        stores.stop(node)
        steps.record("stopped", node=node)
        try:
            # What the server logs from here on is about its start on the changed file.
            log_lines = {n: len(cluster.server_log(n, "", lines=10**6)) for n in cluster.nodes}
            file, data = self._choose(node, group)
            steps.record("chosen-file", node=node, file=file, size=len(data))
            changed, change = ff.CORRUPTIONS[how](data, self.rng)
            self._struck.add(node)
            stores.write_file(node, f"{nf.STORE_DIR}/{file}", changed)
            # Read back from the stopped server's disk: the change is there before it starts.
            back = ff.bytes_now(change, stores.read_file(node, f"{nf.STORE_DIR}/{file}"))
            # Which records the change hit, in the block as it was (the server may rewrite it).
            hit = _records(file, change, data)
            steps.record(
                "corrupted",
                node=node,
                file=file,
                how=how,
                change=change,
                records=hit,
                read_back=back,
            )
        finally:  # started again even when no file could be changed
            cluster.start(node)
            self._down = None
        steps.record("started", node=node)
        return {
            "node": node,
            "file": file,
            "how": how,
            "change": change,
            "struck": sorted(self._struck),
            "log_lines_before": log_lines,
        }

    def _choose(self, node: str, group: str) -> tuple[str, bytes]:
        """Reads the stopped server's store and draws one file of the group with a byte in
        it (the Raft files of the stream's group and of the meta group only)."""
        stores = self._stores
        assert stores is not None
        tree = {
            path.partition("/")[2]: data
            for path, data in stores.read_tree(node, nf.STORE_DIR).items()
        }
        stream = nf.stream_on_disk(tree, (self.topic, f"KV_{self.topic}"))
        if stream is None:
            raise Skipped(f"{node} holds no stream {self.topic} on its disk")
        raft = [*nf.stream_group(nf.raft_metas(tree), (stream,)), nf.META_GROUP]
        files = nf.files_of(group, stream, raft, {p: len(d) for p, d in tree.items()})
        if not files:
            raise Skipped(f"{node} holds no {group} file of stream {stream} with a byte in it")
        file = self.rng.choice(files)
        return file, tree[file]

    def _observe(self, done: Value, steps: Steps) -> Value:
        """What NATS did about one corruption: whether the server runs and is a current
        replica of the stream, what is now at the changed bytes (for a block, the record
        each lies in), and its log lines since, and the other servers'."""
        cluster, stores = self._cluster, self._stores
        assert cluster is not None and stores is not None
        node, file = done["node"], done["file"]
        since: dict[str, int] = done["log_lines_before"]
        back = self._wait(lambda: self._rejoined(node), OBSERVE_WAIT_S)
        running = cluster.state(node) == "running"
        ended = (
            None if running or not isinstance(cluster, ExitReasons) else cluster.exit_reason(node)
        )
        try:
            now: bytes | None = stores.read_file(node, f"{nf.STORE_DIR}/{file}")
        except Exception:  # the server deleted or renamed the file: an answer, recorded
            now = None
        lines = cluster.server_log(node, "", lines=10**6)[since.get(node, 0) :]
        said = nf.evidence(lines)
        on_disk = ff.bytes_now(done["change"], now)
        steps.record(
            "observed",
            system="NATS",
            node=node,
            file=file,
            running=running,
            ended=ended,
            rejoined=back,
            within_s=OBSERVE_WAIT_S,
            on_disk=on_disk,
            records=_records(file, done["change"], now),
            nats_said=nf.log_lines(lines, file),
            evidence=said,
            elsewhere=self._elsewhere(node, since),
            did=nf.verdict(running, back, on_disk, said, ended),
            state=steps.state(),
        )
        return {"node": node, "file": file, "how": done["how"]}

    def _elsewhere(self, struck: str, since: dict[str, int]) -> dict[str, list[str]]:
        """The lines every other server logged since the corruption that tell of one, or
        of a deleted or reset stream (a repair there is no news)."""
        cluster = self._cluster
        assert cluster is not None
        found: dict[str, list[str]] = {}
        for other in cluster.nodes:
            if other == struck:
                continue
            lines = cluster.server_log(other, "", lines=10**6)[since.get(other, 0) :]
            kept = [e["line"] for e in nf.evidence(lines) if e["means"] != "repaired"]
            if kept:
                found[other] = kept
        return found

    def _rejoined(self, node: str) -> bool:
        cluster = self._cluster
        assert cluster is not None
        if cluster.state(node) != "running":
            return False
        try:
            parts = cluster.committed_partitions(self.topic)
        except Exception:  # no answer yet: not back yet
            return False
        server = cluster.broker_id(node)
        return all(server in p.isr for p in parts if server in p.replicas)

    def _wait(self, done: Callable[[], bool], bound: float) -> bool:
        return wait_until(done, bound, POLL_S, self._clock, self._sleep)


def _records(file: str, change: Any, now: bytes | None) -> list[Value]:
    """For a message block (of the stream or of a Raft WAL), the record at each changed
    byte of the block's bytes given (as it was, or as it is now); for a cut block, the
    record at the last byte kept. Else nothing."""
    if now is None or not file.endswith(".blk"):
        return []
    if isinstance(change, list):
        return nf.records_at(now, [c["offset"] for c in change])
    if isinstance(change, dict) and int(change.get("size_after", 0)) > 0:
        return nf.records_at(now, [int(change["size_after"]) - 1])
    return []
