"""Every workload by its `--workload` name (the names alone are in workloads.names), and
the ones a database other than Kafka runs in their place."""

from workloads.core import Workload
from workloads.kv import KV
from workloads.nats_kv import NATS_KV
from workloads.nats_queue import NATS_QUEUE
from workloads.queue import QUEUE
from workloads.register import REGISTER
from workloads.share import SHARE

WORKLOADS: dict[str, Workload] = {w.name: w for w in (KV, REGISTER, QUEUE, SHARE)}
"""Every workload by its `--workload` name."""

NATS_WORKLOADS: dict[str, Workload] = {w.name: w for w in (NATS_QUEUE, NATS_KV)}
"""The workloads NATS JetStream runs, by the same names."""


def workload_for(db: str, name: str) -> Workload:
    """Takes a database (`--db`) and a workload name. Returns the workload that runs it
    there; raises KeyError for a workload that database does not run."""
    return NATS_WORKLOADS[name] if db == "nats" else WORKLOADS[name]
