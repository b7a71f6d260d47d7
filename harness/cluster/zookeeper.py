"""Asks ZooKeeper what it is doing (the `srvr` four-letter word) and what the controller
has committed for a topic's partitions (their state znodes): in ZooKeeper mode that is
the truth, while a broker cut off from the controller answers metadata requests with
a stale copy.
"""

from __future__ import annotations

import json
import logging
import socket

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from harness.cluster.admin import AdminError
from nemesis.cluster import PartitionState

# kazoo logs every lost connection; the caller reports what matters.
_KAZOO_LOG = logging.getLogger("kazoo")
_KAZOO_LOG.addHandler(logging.NullHandler())
_KAZOO_LOG.propagate = False


def committed_partitions(hosts: str, topic: str, timeout: float = 3.0) -> list[PartitionState]:
    """Takes ZooKeeper's "host:port,..." and a topic. Returns each partition's leader,
    leader epoch, replicas and ISR as the controller wrote them to ZooKeeper; raises
    AdminError when ZooKeeper cannot say within timeout seconds."""
    client = KazooClient(hosts=hosts, timeout=timeout, connection_retry={"max_tries": 1})
    try:
        client.start(timeout=timeout)
        assigned = json.loads(client.get(f"/brokers/topics/{topic}")[0])["partitions"]
        states = []
        for p, replicas in sorted(assigned.items(), key=lambda item: int(item[0])):
            state = json.loads(client.get(f"/brokers/topics/{topic}/partitions/{p}/state")[0])
            states.append(
                PartitionState(
                    int(p),
                    int(state["leader"]),
                    tuple(replicas),
                    tuple(sorted(state["isr"])),
                    int(state["leader_epoch"]),
                )
            )
        return states
    except (KazooException, KazooTimeoutError, ValueError, KeyError) as err:
        raise AdminError(f"ZooKeeper has no state for {topic!r}: {err!r}") from err
    finally:
        client.stop()
        client.close()


def zookeeper_mode(address: str, port: int = 2181, timeout: float = 1.0) -> str | None:
    """Returns the server's mode (standalone, leader, follower), "not serving" while it
    has no quorum, or None when it does not answer."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.sendall(b"srvr")
            reply = b""
            while chunk := sock.recv(4096):
                reply += chunk
    except OSError:
        return None
    text = reply.decode(errors="replace")
    for line in text.splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return "not serving" if "not currently serving" in text else None
