"""Watches, once a second while the workload runs, which node leads the cluster's
metadata (the KRaft quorum's leader and its epoch, or the ZooKeeper-mode controller) and
which voters have stopped fetching; writes metadata.jsonl on the history's clock.

The report draws it beside the faults (harness.report.metadata_plot), so a run shows
when the active controller moved and how long the cluster had none.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cluster.quorum import reaches_leader

if TYPE_CHECKING:
    from harness.cluster.docker_cluster import DockerCluster

LOG = logging.getLogger("harness.run")
EVERY_S = 1.0
FILE = "metadata.jsonl"


def sample(cluster: DockerCluster) -> dict[str, Any]:
    """Returns who leads the metadata now: {"leader": node or None} and, on KRaft, the
    epoch and the voters not fetching from the leader lately ("behind")."""
    if cluster.metadata != "kraft":
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
    """A thread that appends a sample to metadata.jsonl every second until stopped; a
    sample that fails is written with its error (no leader answered, say)."""

    def __init__(self, cluster: DockerCluster, folder: Path, elapsed_ns: Callable[[], int]) -> None:
        self._cluster = cluster
        self._path = folder / FILE
        self._elapsed_ns = elapsed_ns
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="metadata-watch", daemon=True)

    def __enter__(self) -> MetadataWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        with self._path.open("a", encoding="utf-8") as out:
            while not self._stop.is_set():
                at = self._elapsed_ns()
                try:
                    found = sample(self._cluster)
                except Exception as err:  # a fault may leave no one to ask: that is data
                    found = {"leader": None, "error": str(err).splitlines()[0][:200]}
                out.write(json.dumps({"time": at, **found}) + "\n")
                out.flush()
                self._stop.wait(EVERY_S)


def read_samples(folder: Path) -> list[dict[str, Any]]:
    """Returns the samples of folder's metadata.jsonl (none when it is missing); a line
    that is not JSON (the run was killed mid-write) ends the list."""
    samples: list[dict[str, Any]] = []
    try:
        lines = (folder / FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return samples
    for line in lines:
        try:
            samples.append(json.loads(line))
        except ValueError:
            LOG.warning("%s: a line is not JSON; the samples end there", folder / FILE)
            break
    return samples
