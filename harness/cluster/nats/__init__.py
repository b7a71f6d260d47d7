"""NATS JetStream as a second system under test: its servers in Docker (NatsCluster),
their configuration and image, readiness and monitoring views, and the stream and KV
bucket a test makes. Outside code imports these names from here only."""

from harness.cluster.nats import members
from harness.cluster.nats.cluster import NatsCluster
from harness.cluster.nats.config import (
    DEFAULT_NATS_VERSION,
    NATS_VERSIONS,
    SYNC_PROFILES,
    NatsSpec,
    Server,
    SyncProfile,
    plan_servers,
    server_config,
)
from harness.cluster.nats.image import ensure_nats_image, nats_image
from harness.cluster.nats.jetstream import KV_READS, KvReads, kv_config, stream_config
from harness.cluster.nats.monitor import (
    Health,
    JetStreamView,
    MonitorError,
    Peer,
    StreamView,
    agreed_leader,
    parse_jsz,
    replica_states,
    split_brain,
    stream_lag,
)

__all__ = [
    "DEFAULT_NATS_VERSION",
    "KV_READS",
    "NATS_VERSIONS",
    "SYNC_PROFILES",
    "Health",
    "JetStreamView",
    "KvReads",
    "MonitorError",
    "NatsCluster",
    "NatsSpec",
    "Peer",
    "Server",
    "StreamView",
    "SyncProfile",
    "agreed_leader",
    "ensure_nats_image",
    "kv_config",
    "members",
    "nats_image",
    "parse_jsz",
    "plan_servers",
    "replica_states",
    "server_config",
    "split_brain",
    "stream_config",
    "stream_lag",
]
