"""The labels on everything the harness creates in Docker, so teardown removes
exactly what the harness made and nothing else."""

HARNESS_LABEL = "kafka-harness"
CLUSTER_LABEL = "kafka-harness.cluster"
NODE_LABEL = "kafka-harness.node"
