"""Every workload by its `--workload` name (the names alone are in workloads.names)."""

from workloads.core import Workload
from workloads.kv import KV
from workloads.queue import QUEUE
from workloads.register import REGISTER

WORKLOADS: dict[str, Workload] = {w.name: w for w in (KV, REGISTER, QUEUE)}
"""Every workload by its `--workload` name."""
