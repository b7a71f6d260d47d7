"""After the faults: wait until the store's topic is whole again, then read every key
once from a fresh client, recording the reads in the history like any other op.

Both steps are bounded and give up early when the run was interrupted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from harness.run.runner import Recorder
from nemesis.cluster import Cluster
from workloads.core import Client, OpDict

LOG = logging.getLogger("harness.run")
HEALTH_TIMEOUT_S = 60.0
FINAL_READ_TIMEOUT_S = 90.0
RETRY_PAUSE_S = 0.25
"""Between a final read that did not come back ok and its retry: a new leader may refuse
reads for seconds (OFFSET_NOT_AVAILABLE until its high watermark catches up), and each
try is recorded in the history."""


def wait_healthy(
    cluster: Cluster,
    topic: str,
    interrupted: Callable[[], bool],
    timeout: float = HEALTH_TIMEOUT_S,
) -> dict[str, Any]:
    """Waits until every partition of topic has a leader and its full ISR, as the
    controller committed them: a broker's own metadata may be stale (a just-healed old
    leader still names itself with the full ISR before it has truncated). Returns
    {"healthy": bool, "seconds": waited, "partitions": the last state seen}."""
    started = time.monotonic()
    last: Any = "no answer"
    while time.monotonic() - started < timeout and not interrupted():
        try:
            parts = cluster.committed_partitions(topic)
        except Exception as err:  # metadata may be briefly unavailable after a heal
            last = str(err)
        else:
            last = [
                {"partition": p.partition, "leader": p.leader, "isr": list(p.isr)} for p in parts
            ]
            if parts and all(p.leader >= 0 and set(p.isr) == set(p.replicas) for p in parts):
                return {
                    "healthy": True,
                    "seconds": round(time.monotonic() - started, 2),
                    "partitions": last,
                }
        time.sleep(0.5)
    return {"healthy": False, "seconds": round(time.monotonic() - started, 2), "partitions": last}


def final_reads(
    reads: Sequence[OpDict],
    open_client: Callable[[str], Client],
    recorder: Recorder,
    interrupted: Callable[[], bool],
    timeout: float = FINAL_READ_TIMEOUT_S,
) -> dict[str, Any]:
    """Takes the workload's final read ops. Runs each once with a fresh client under new
    process ids, retrying one that did not come back ok after a pause, behind the others
    (a read through a server that never comes back must not take the time of the reads
    through the others). Returns {"read": how many came back ok, "missing": the keys of
    those that never did}."""
    deadline = time.monotonic() + timeout
    process = recorder.max_process + 1
    client: Client | None = None
    pending = list(reads)
    try:
        while pending and time.monotonic() < deadline and not interrupted():
            if client is None:
                try:
                    client = open_client(f"final-{process}")
                except Exception as err:  # the cluster may still be recovering
                    LOG.warning("final read: could not open a client: %s", err)
                    time.sleep(1.0)
                    continue
            op = pending[0]
            recorder.invoke(process, op)
            completion = client.invoke(op)
            recorder.complete(process, op, completion)
            pending.pop(0)
            if completion["type"] != "ok":
                pending.append(op)
                time.sleep(RETRY_PAUSE_S)
            if completion["type"] == "info" or client.failure is not None:
                process += 1
            if client.failure is not None:
                client.close()
                client = None
    finally:
        if client is not None:
            client.close()
    return {"read": len(reads) - len(pending), "missing": [op.get("key") for op in pending]}
