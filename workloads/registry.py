"""Every workload by its `--workload` name (the names alone are in workloads.names)."""

from workloads.core import Workload
from workloads.kv import KV
from workloads.queue import QUEUE
from workloads.register import REGISTER
from workloads.share import SHARE

WORKLOADS: dict[str, Workload] = {w.name: w for w in (KV, REGISTER, QUEUE, SHARE)}
"""Every workload by its `--workload` name."""
