"""The JetStream assets a test makes: one file-backed stream replicated on R servers (the
queue workload's), and one KV bucket (the kv workload's), in two read variants.

Both follow Jepsen's NATS suite (jepsen-io/nats src/jepsen/nats/client.clj,
create-stream!: file storage, discard new, R replicas). A KV bucket is a stream too; its
reads go to the stream leader ($JS.API.STREAM.MSG.GET) unless the bucket allows Direct
Get, when any replica answers ($JS.API.DIRECT.GET), which NATS documents as not
read-your-writes: the linearizability check is there to catch it.
"""

from __future__ import annotations

from typing import Literal

from nats.js.api import DiscardPolicy, KeyValueConfig, StorageType, StreamConfig

from workloads.nats_kv import bucket_config

KvReads = Literal["leader", "direct"]
KV_READS: tuple[KvReads, ...] = ("leader", "direct")


def stream_config(name: str, subjects: list[str], replicas: int) -> StreamConfig:
    """Takes a stream's name, subjects and replica count; returns its config: file
    storage, refusing new messages rather than dropping old ones when full."""
    return StreamConfig(
        name=name,
        subjects=subjects,
        storage=StorageType.FILE,
        num_replicas=replicas,
        discard=DiscardPolicy.NEW,
    )


def kv_config(bucket: str, replicas: int, reads: KvReads) -> KeyValueConfig:
    """Takes a bucket's name, replica count and read variant; returns its config, the
    kv workload's (workloads/nats_kv.py): Direct Get allowed only for reads="direct"."""
    return bucket_config(bucket, replicas, direct=reads == "direct")
