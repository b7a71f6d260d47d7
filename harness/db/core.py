"""The Database protocol: the system under test as one role (Jepsen's `db`, jepsen-io/
jepsen jepsen/src/jepsen/db.clj: setup!, teardown!, kill!/start!, pause!/resume!,
log-files, primaries), so the runner and the nemeses work on Kafka and NATS alike.

A database is the nemeses' Cluster (nemesis/cluster.py: its nodes, kill, start, pause,
resume, exec, and who leads what: each partition's leader and in-sync replicas, the
metadata's leader) plus what a run asks of it around the workload: set up a fresh
cluster, say what it runs, make the workload's topic or stream, copy the nodes' log and
data files, tear down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from harness.progress import StatusLine
from kvstore.topic import TopicAdmin
from nemesis.cluster import Cluster


class Database(Cluster, Protocol):
    """A system under test that a run sets up, breaks, asks about and tears down."""

    @property
    def system(self) -> str:
        """Returns its `--db` name: kafka or nats."""
        ...

    def set_up(self, line: StatusLine, timeout: float) -> None:
        """Starts a fresh cluster (replacing one of the same name) and returns once it
        serves clients; raises ClusterError when it cannot within timeout seconds, having
        removed what it made."""
        ...

    def tear_down(self) -> int:
        """Removes every container and network of the cluster; returns how many
        containers it removed. Safe when nothing is there."""
        ...

    def admin(self) -> TopicAdmin:
        """Returns what creates the workload's topic: Kafka's admin client, or on NATS
        one that makes a topic of one partition a stream."""
        ...

    def facts(self) -> dict[str, Any]:
        """Returns what the running cluster says about itself that a result depends on
        (its release, metadata mode, features or sync profile), for test.json."""
        ...

    def summary(self, facts: dict[str, Any], seconds: float) -> str:
        """Takes its facts and the seconds set-up took. Returns run.log's line for it."""
        ...

    def copy_logs(self, dest: Path) -> None:
        """Copies every node's log files (and, where kept, its data) into dest/<node>/."""
        ...
