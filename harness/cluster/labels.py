"""The labels on everything the harness creates in Docker, so teardown removes
exactly what the harness made and nothing else.

CHECKOUT_LABEL holds the path of the checkout that made a cluster: cluster names
are chosen by people and shared on one engine, while a checkout's path is unique on
its machine and stable across runs, so `make clean` can remove this checkout's
clusters and nobody else's.
"""

from harness.cluster.config import COMPOSE_DIR

HARNESS_LABEL = "kafka-harness"
CLUSTER_LABEL = "kafka-harness.cluster"
NODE_LABEL = "kafka-harness.node"
CHECKOUT_LABEL = "kafka-harness.checkout"
VERSION_LABEL = "kafka-harness.kafka-version"
METADATA_LABEL = "kafka-harness.metadata"
FAULTFS_LABEL = "kafka-harness.faultfs"
FAULTPROXY_LABEL = "kafka-harness.faultproxy"
CHECKOUT = str(COMPOSE_DIR.parent)
