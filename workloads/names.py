"""The names `--workload` and `--store` take, in a module that imports nothing: the
command line lists them without loading the workloads (Kafka's client).

workloads.registry holds the workload of each name (tests/unit/harness/commands/test_run.py checks
that the two agree); STORES maps each store name to its map class in kvstore.VARIANTS.
"""

from __future__ import annotations

WORKLOAD_NAMES: tuple[str, ...] = ("kv", "register", "queue", "share")
"""Every workload by its `--workload` name."""

STORED_WORKLOADS: tuple[str, ...] = ("kv", "register")
"""The workloads that run on a store (`--store`); the others record its default unused."""

STORES: dict[str, str] = {
    "linearizable": "kafka",
    "local-read": "local-read",
    "replica-style": "replica-style",
    "published-rule": "published-rule",
}
"""The `--store` names, each the key of its map class in kvstore.VARIANTS."""
