"""The store under test: a linearizable key-value map on a Kafka topic and weaker variants.

KafkaMap is the correct one; variants.py holds the maps whose anomalies the checkers must find.
"""

from kvstore.api import DEFAULT_TIMEOUTS, KVMap, Timeouts
from kvstore.errors import DefiniteFailure, Indeterminate, InvalidArgument, StoreError
from kvstore.kafka_map import KafkaMap
from kvstore.records import Key, Value
from kvstore.topic import create_store_topic
from kvstore.variants import LocalReadMap, PublishedRuleMap, ReplicaStyleMap

VARIANTS: dict[str, type[KafkaMap]] = {
    "kafka": KafkaMap,
    "local-read": LocalReadMap,
    "replica-style": ReplicaStyleMap,
    "published-rule": PublishedRuleMap,
}
"""Every map class by the name a workload option uses."""

__all__ = [
    "DEFAULT_TIMEOUTS",
    "VARIANTS",
    "DefiniteFailure",
    "Indeterminate",
    "InvalidArgument",
    "KVMap",
    "KafkaMap",
    "Key",
    "LocalReadMap",
    "PublishedRuleMap",
    "ReplicaStyleMap",
    "StoreError",
    "Timeouts",
    "Value",
    "create_store_topic",
]
