"""Watches, once a second while the workload runs, which node leads the cluster's
metadata (the KRaft quorum's leader and its epoch, or the ZooKeeper-mode controller) and
which voters have stopped fetching, into metadata.jsonl; and which broker leads each
partition of the store's topic, into leaders.jsonl; both on the history's clock.

The report draws it beside the faults (harness.report.plots.metadata), so a run shows
when the active controller moved and how long the cluster had none.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harness.cluster.quorum import Quorum, reaches_leader
from harness.db import Database
from nemesis.core import partition_states

LOG = logging.getLogger("harness.run")
EVERY_S = 1.0
FILE = "metadata.jsonl"
LEADERS_FILE = "leaders.jsonl"


@runtime_checkable
class HasQuorum(Protocol):
    """A cluster whose metadata a KRaft quorum keeps (Kafka's on KRaft)."""

    def quorum(self) -> Quorum:
        """Returns the quorum's leader, epoch and voters, asked now."""
        ...


def sample(cluster: Database) -> dict[str, Any]:
    """Returns who leads the metadata now: {"leader": node or None} and, on KRaft, the
    epoch and the voters not fetching from the leader lately ("behind"); on NATS the
    meta group's leader."""
    if cluster.metadata != "kraft" or not isinstance(cluster, HasQuorum):
        return {"leader": cluster.active_controller()}
    quorum = cluster.quorum()
    behind = [
        cluster.node_of_broker(v.node_id) for v in quorum.voters if not reaches_leader(v, quorum)
    ]
    return {
        "leader": cluster.node_of_broker(quorum.leader),
        "epoch": quorum.epoch,
        "behind": behind,
    }


class MetadataWatch:
    """Threads that append a sample every second until stopped: who leads the metadata
    (metadata.jsonl) and, given the store's topic, who leads each of its partitions
    (leaders.jsonl, for the recovery times, checkers/recovery.py). Apart, so a slow answer
    of one never thins the other; a sample that fails is written with its error."""

    def __init__(
        self,
        cluster: Database,
        folder: Path,
        elapsed_ns: Callable[[], int],
        topic: str | None = None,
    ) -> None:
        self._elapsed_ns = elapsed_ns
        self._stop = threading.Event()
        watches: list[tuple[Path, Callable[[], dict[str, Any]]]] = [
            (folder / FILE, lambda: sample(cluster))
        ]
        if topic is not None:
            watches.append((folder / LEADERS_FILE, lambda: leaders(cluster, topic)))
        self._threads = [
            threading.Thread(target=self._watch, args=w, name=f"watch-{w[0].stem}", daemon=True)
            for w in watches
        ]

    def __enter__(self) -> MetadataWatch:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _watch(self, path: Path, take: Callable[[], dict[str, Any]]) -> None:
        with path.open("a", encoding="utf-8") as out:
            while not self._stop.is_set():
                try:
                    found = take()
                except Exception as err:  # a fault may leave no one to ask: that is data
                    found = {"leader": None, "error": str(err).splitlines()[0][:200]}
                # Stamped when the answer came: the state it gives held by then at least.
                out.write(json.dumps({"time": self._elapsed_ns(), **found}) + "\n")
                out.flush()
                self._stop.wait(EVERY_S)


def leaders(cluster: Database, topic: str) -> dict[str, Any]:
    """Returns each partition of topic's leader, ISR and leader epoch as the controller
    committed them ("partitions"), beside what a client asking the brokers is told now
    ("seen": a broker cut off from the controller still names itself); raises when the
    committed state cannot be read."""
    committed = {
        str(p.partition): {
            "leader": cluster.node_of_broker(p.leader) if p.leader >= 0 else None,
            "isr": [cluster.node_of_broker(b) for b in p.isr],
            "epoch": p.leader_epoch,
        }
        for p in cluster.committed_partitions(topic)
    }
    return {"partitions": committed, "seen": partition_states(cluster, topic)}


def read_samples(folder: Path, name: str = FILE) -> list[dict[str, Any]]:
    """Returns the samples of folder's metadata.jsonl, or of another watch's file (none
    when it is missing); a line that is not JSON (the run was killed mid-write) ends the
    list."""
    samples: list[dict[str, Any]] = []
    try:
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
    except OSError:
        return samples
    for line in lines:
        try:
            samples.append(json.loads(line))
        except ValueError:
            LOG.warning("%s: a line is not JSON; the samples end there", folder / name)
            break
    return samples
