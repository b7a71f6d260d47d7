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

DATABASES: tuple[str, ...] = ("kafka", "nats")
"""Every system under test by its `--db` name."""

NATS_VERSIONS: tuple[str, ...] = ("2.12.1", "2.15.3")
"""The nats-server releases `--nats-version` takes: Jepsen's version (jepsen-io/nats
cli.clj's default) and the newest the Go module proxy serves."""

DEFAULT_NATS_VERSION = "2.12.1"

NATS_SYNCS: tuple[str, ...] = ("default", "always")
"""The sync profiles `--nats-sync` takes (harness/cluster/nats/config.py's SYNC_PROFILES)."""

NATS_KV_READS: tuple[str, ...] = ("leader", "direct")
"""Where `--nats-kv-reads` sends a KV bucket's reads: its stream's leader, or any replica
through Direct Get."""

NATS_PUBLISH: tuple[str, ...] = ("once", "retry", "msg-id")
"""How `--nats-publish` has the queue's sends publish: once (a timed-out publish is
indeterminate), asked again after a time-out (a variant that can fail: a timed-out publish
the stream stored is stored twice), or asked again with the same Nats-Msg-Id, which
JetStream deduplicates within the stream's duplicate window (2 minutes by default)."""

NATS_WORKLOAD_NAMES: tuple[str, ...] = ("queue", "kv")
"""The workloads `--db nats` runs (workloads.registry.NATS_WORKLOADS)."""

STORES: dict[str, str] = {
    "linearizable": "kafka",
    "local-read": "local-read",
    "replica-style": "replica-style",
    "published-rule": "published-rule",
}
"""The `--store` names, each the key of its map class in kvstore.VARIANTS."""
