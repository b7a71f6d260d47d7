"""Workloads: one module each, a client, a generator and the checkers that judge it."""

from workloads.core import Workload
from workloads.kv import KV
from workloads.register import REGISTER

WORKLOADS: dict[str, Workload] = {w.name: w for w in (KV, REGISTER)}
"""Every workload by its `--workload` name."""
