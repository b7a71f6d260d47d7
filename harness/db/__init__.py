"""The system under test as one role (Database, Jepsen's `db`): Kafka or NATS JetStream,
chosen by `--db`. open_db makes the one a run's spec names."""

from __future__ import annotations

import docker

from harness.cluster.nats import NatsSpec
from harness.db.core import Database
from harness.db.kafka import KafkaDb
from harness.db.nats import NatsDb, StreamAdmin
from harness.spec import TestSpec

__all__ = ["Database", "KafkaDb", "NatsDb", "StreamAdmin", "open_db"]


def open_db(spec: TestSpec, client: docker.DockerClient) -> Database:
    """Takes a run's spec and a Docker client. Returns the database it names, not yet
    set up: Kafka's cluster, or NATS servers as many as its brokers."""
    if spec.db == "nats":
        shape = NatsSpec(
            name=spec.cluster.name,
            servers=spec.cluster.brokers,
            version=spec.nats.version,
            sync=spec.nats.sync,
            faultfs=spec.cluster.faultfs,
        )
        return NatsDb(shape, client)
    return KafkaDb(spec.cluster, client)
