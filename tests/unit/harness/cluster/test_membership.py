"""The membership tools' output as Kafka 4.4.0 prints it (captured from a dynamic quorum
of the harness), read into the quorum's members; the reassignment file; the dynamic
quorum's configuration and format arguments."""

from __future__ import annotations

import json

import pytest

from harness.cluster import config
from harness.cluster.layout import ClusterSpec, Node
from harness.cluster.membership import (
    parse_replication,
    parse_status,
    reassignment_json,
    tool_command,
    tool_error,
)
from harness.cluster.node_setup import directory_id, node_env

STATUS = """\
log4j:WARN No appenders could be found for logger (org.apache.kafka.common.config.AbstractConfig).
log4j:WARN Please initialize the log4j system properly.
ClusterId:              zCInhC2fSa-Rg7MUqIVb1A
LeaderId:               101
LeaderEpoch:            1
HighWatermark:          61
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          [{"id": 101, "directoryId": "C10Z5mVHVKaDyStABTezpg", "endpoints": \
["CONTROLLER://172.30.1.11:9093"]}, {"id": 102, "directoryId": "oLqCoVcDWIesau-L7qCmaQ", \
"endpoints": ["CONTROLLER://172.30.1.12:9093"]}]
CurrentObservers:       [{"id": 2, "directoryId": "m2rDn4gwmUjZjWAqVPwQtg"}, {"id": 103, \
"directoryId": "KumIx5baWym-EmKjB-nqsQ"}]
"""

# The table as printed, its cells' padding dropped (the reader splits on whitespace).
REPLICATION = """\
log4j:WARN Please initialize the log4j system properly.
NodeId\tDirectoryId\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus\t
101\tC10Z5mVHVKaDyStABTezpg\t95\t0\t1795841971201\t1795841971201\tLeader\t
102\toLqCoVcDWIesau-L7qCmaQ\t95\t0\t1795841971111\t1795841971111\tFollower\t
2\tm2rDn4gwmUjZjWAqVPwQtg\t95\t0\t1795841971121\t1795841971121\tObserver\t
103\tKumIx5baWym-EmKjB-nqsQ\t95\t0\t1795841971114\t1795841971114\tObserver\t
"""


def test_status_gives_the_voters_with_their_directories_and_the_observers() -> None:
    members = parse_status(STATUS)
    assert (members.leader, members.epoch, members.high_watermark) == (101, 1, 61)
    assert members.voter_ids == [101, 102]
    assert members.voters[0].directory_id == "C10Z5mVHVKaDyStABTezpg"
    assert members.voters[1].endpoints == ("CONTROLLER://172.30.1.12:9093",)
    assert members.observers == (2, 103)


def test_fixed_voters_have_no_directory_and_a_missing_field_is_refused() -> None:
    fixed = STATUS.split("CurrentVoters")[0] + "CurrentVoters:          [101, 102, 103]\n"
    members = parse_status(fixed)
    assert members.voter_ids == [101, 102, 103] and {v.directory_id for v in members.voters} == {""}
    assert members.observers == ()
    with pytest.raises(ValueError, match="LeaderId"):
        parse_status("Error while executing: TimeoutException\n")


def test_replication_gives_each_node_status() -> None:
    assert parse_replication(REPLICATION) == {
        101: "Leader",
        102: "Follower",
        2: "Observer",
        103: "Observer",
    }
    with pytest.raises(ValueError, match="no table"):
        parse_replication("log4j:WARN nothing\n")


def test_a_failed_tool_is_said_by_its_innermost_cause() -> None:
    said = (
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.Timeout\n"
        "\tat org.apache.kafka.tools.MetadataQuorumCommand.main(MetadataQuorumCommand.java:78)\n"
        "Caused by: org.apache.kafka.common.errors.TimeoutException: The request timed out.\n"
    )
    assert tool_error(said).endswith("TimeoutException: The request timed out.")
    assert tool_error("Broker 7 is not registered.") == "Broker 7 is not registered."


def test_the_reassignment_file_and_the_tool_command() -> None:
    moves = {("t", 1): (3, 2), ("__consumer_offsets", 0): (2, 3)}
    assert json.loads(reassignment_json(moves)) == {
        "version": 1,
        "partitions": [
            {"topic": "__consumer_offsets", "partition": 0, "replicas": [2, 3]},
            {"topic": "t", "partition": 1, "replicas": [3, 2]},
        ],
    }
    command = tool_command("org.apache.kafka.tools.ClusterTool", "unregister", "--id", "3")
    assert command[:2] == ["timeout", "60"] and command[-3:] == ["unregister", "--id", "3"]


def test_a_dynamic_quorum_is_found_through_bootstrap_servers_and_formatted_with_its_voters() -> (
    None
):
    profile = config.PROFILES["safe"]
    voters = "101@10.0.0.11:9093,102@10.0.0.12:9093"
    shared = {"address": "10.0.0.11", "quorum_voters": voters, "brokers": 3, "profile": profile}
    fixed = config.kraft_properties(node_id=101, broker=False, controller=True, **shared)  # type: ignore[arg-type]
    dynamic = config.kraft_properties(
        node_id=101,
        broker=False,
        controller=True,
        dynamic_quorum=True,
        **shared,  # type: ignore[arg-type]
    )
    assert f"controller.quorum.voters={voters}" in fixed and "bootstrap.servers=" not in fixed
    assert "controller.quorum.voters=" not in dynamic
    assert "controller.quorum.bootstrap.servers=10.0.0.11:9093,10.0.0.12:9093" in dynamic
    assert "advertised.listeners=CONTROLLER://10.0.0.11:9093" in dynamic
    spec = ClusterSpec(metadata="kraft", kafka_version="4.4.0", dynamic_quorum=True)
    nodes = [Node("n1", "kafka", 1, "10.0.0.101"), Node("c1", "controller", 101, "10.0.0.11")]
    nodes.append(Node("c2", "controller", 102, "10.0.0.12"))
    broker, controller = (
        node_env(spec, nodes[0], "cid", nodes),
        node_env(spec, nodes[1], "cid", nodes),
    )
    assert "--initial-controllers" not in broker["KRAFT_FORMAT_ARGS"]
    first, second = directory_id("cid", 101), directory_id("cid", 102)
    assert first != second and len(first) == 22 and not first.startswith("-")
    assert controller["KRAFT_FORMAT_ARGS"] == (
        f"--initial-controllers 101@10.0.0.11:9093:{first},102@10.0.0.12:9093:{second}"
    )
    static = ClusterSpec(metadata="kraft", kafka_version="4.4.0")
    assert node_env(static, nodes[1], "cid", nodes)["KRAFT_FORMAT_ARGS"] == ""
