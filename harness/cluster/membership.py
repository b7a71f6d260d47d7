"""Kafka's own membership tools run inside the nodes: kafka-metadata-quorum (describe,
add-controller, remove-controller: KIP-853), kafka-reassign-partitions and kafka-cluster
unregister, and the readers of what they print.

The tools are the kafka-tools jar's main classes (compose/kafka-deps.pom.xml puts the jar
in every node image); the control node has no JVM, so each runs in a node of the cluster,
bounded by coreutils' timeout. Their output is read by the pure functions here, which
tests/unit/harness/cluster/test_membership.py holds to the tools' output as 4.4.0
prints it. Kafka's own tests change the voters with no faults at all (apache/kafka,
raft/src/test/java/org/apache/kafka/raft/KafkaRaftClientReconfigTest.java); the
harness does it under kills and partitions (nemesis/controllers.py).
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Mapping, Sequence

from harness.cluster.admin import AdminError
from harness.cluster.config import BROKER_PORT, CONTROLLER_PORT
from harness.cluster.queries import ClusterQueries
from nemesis.cluster import PartitionState, QuorumMembers, Voter

TOOL_S = 60
"""Bound on one tool run (a JVM start, 10 to 20 s on a loaded machine, and its requests):
a tool that cannot reach a leader keeps retrying for its admin client's default minute."""
QUORUM_TOOL = "org.apache.kafka.tools.MetadataQuorumCommand"
REASSIGN_TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool"
REASSIGNMENT_FILE = "/tmp/harness-reassignment.json"
_STATUS_LINE = re.compile(r"^(\w+):\s+(.*)$")


class ToolError(AdminError):
    """A membership tool refused, failed or did not finish in time; its output says why."""


def tool_command(main_class: str, *args: str) -> list[str]:
    """Returns the command running a Kafka tool's main class in a node, bounded by
    TOOL_S, with a small heap (the node's own JVM keeps its ceiling)."""
    return [
        "timeout",
        str(TOOL_S),
        "java",
        "-Xmx192m",
        "-cp",
        "/opt/kafka/libs/*",
        main_class,
        *args,
    ]


def tool_lines(output: str) -> list[str]:
    """Returns a tool's output without the logging library's complaints (the tools run
    with no log4j configuration of their own)."""
    return [line for line in output.splitlines() if line.strip() and not line.startswith("log4j:")]


def tool_error(said: str) -> str:
    """Takes a failed tool's output. Returns its cause: the last exception line (the
    innermost "Caused by"), else its last line."""
    lines = said.strip().splitlines()
    causes = [line.strip() for line in lines if "Exception:" in line or "Error:" in line]
    return (causes or lines or [""])[-1][-300:]


def parse_status(output: str) -> QuorumMembers:
    """Takes `kafka-metadata-quorum describe --status`'s output. Returns the quorum's
    members; raises ValueError naming what is missing. Voters are JSON objects with
    their directory ids (a dynamic quorum, kraft.version 1) or bare ids (fixed voters,
    whose directory id is then empty)."""
    fields = {}
    for line in tool_lines(output):
        if found := _STATUS_LINE.match(line.strip()):
            fields[found[1]] = found[2].strip()
    missing = [
        k for k in ("LeaderId", "LeaderEpoch", "HighWatermark", "CurrentVoters") if k not in fields
    ]
    if missing:
        raise ValueError(f"describe --status printed no {', '.join(missing)}: {output[-300:]!r}")
    voters = tuple(_voter(v) for v in json.loads(fields["CurrentVoters"]))
    observers = tuple(
        int(o["id"]) if isinstance(o, dict) else int(o)
        for o in json.loads(fields.get("CurrentObservers", "[]"))
    )
    return QuorumMembers(
        leader=int(fields["LeaderId"]),
        epoch=int(fields["LeaderEpoch"]),
        high_watermark=int(fields["HighWatermark"]),
        voters=voters,
        observers=observers,
    )


def _voter(value: object) -> Voter:
    if isinstance(value, dict):
        return Voter(
            int(value["id"]),
            str(value.get("directoryId", "")),
            tuple(str(e) for e in value.get("endpoints", [])),
        )
    if isinstance(value, int):
        return Voter(value, "")
    raise ValueError(f"a voter that is neither an id nor an object: {value!r}")


def parse_replication(output: str) -> dict[int, str]:
    """Takes `kafka-metadata-quorum describe --replication`'s output. Returns each node id
    and its status (Leader, Follower or Observer); raises ValueError without a header."""
    lines = tool_lines(output)
    header = next((i for i, line in enumerate(lines) if line.split()[:1] == ["NodeId"]), None)
    if header is None:
        raise ValueError(f"describe --replication printed no table: {output[-300:]!r}")
    columns = lines[header].split()
    status = columns.index("Status")
    return {
        int(cells[0]): cells[status]
        for cells in (line.split() for line in lines[header + 1 :])
        if len(cells) == len(columns) and cells[0].isdigit()
    }


def reassignment_json(moves: Mapping[tuple[str, int], tuple[int, ...]]) -> str:
    """Takes (topic, partition) -> replicas. Returns kafka-reassign-partitions'
    --reassignment-json-file text."""
    partitions = [
        {"topic": topic, "partition": partition, "replicas": list(replicas)}
        for (topic, partition), replicas in sorted(moves.items())
    ]
    return json.dumps({"version": 1, "partitions": partitions})


class MembershipTools(ClusterQueries):
    """The membership tools over the nodes a ClusterQueries names (nemesis.cluster's
    Reconfigurable and Reassignable); a subclass says how to run a command in a node."""

    @abstractmethod
    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        """Runs cmd in node; returns its exit code and output."""

    def _running(self, nodes: list[str], avoid: Sequence[str] = ()) -> list[str]:
        states = self.node_states()
        return [n for n in nodes if states.get(n) == "running" and n not in avoid]

    def _tool(self, node: str, main_class: str, *args: str) -> str:
        code, output = self.exec(node, tool_command(main_class, *args))
        said = "\n".join(tool_lines(output))
        if code != 0:
            why = "timed out" if code == 124 else f"exited {code}"
            raise ToolError(f"{main_class.rsplit('.', 1)[-1]} in {node} {why}: {tool_error(said)}")
        return said

    def _quorum_tool(self, node: str, *args: str, avoid: Sequence[str] = ()) -> str:
        asked = self._running(self.controllers, avoid)
        if not asked:
            raise ToolError("no controller is running to ask")
        bootstrap = ",".join(f"{self.ip(c)}:{CONTROLLER_PORT}" for c in asked)
        return self._tool(node, QUORUM_TOOL, "--bootstrap-controller", bootstrap, *args)

    def _any_running(self, nodes: list[str], avoid: Sequence[str] = ()) -> str:
        running = self._running(nodes, avoid)
        if not running:
            raise ToolError("no node is running to run the tool in")
        return running[0]

    def quorum_members(self, avoid: Sequence[str] = (), directories: bool = True) -> QuorumMembers:
        """Returns the quorum's membership as `describe --status` prints it now, asked
        neither in nor through the nodes to avoid (cut off, say). Without directories,
        from the harness's own DescribeQuorum (every controller asked at once, the leader
        of the highest epoch believed), which needs no JVM: the voters' directory ids are
        then empty."""
        if not directories:
            found = self.quorum()
            return QuorumMembers(
                leader=found.leader,
                epoch=found.epoch,
                high_watermark=found.high_watermark,
                voters=tuple(Voter(v.node_id, "") for v in found.voters),
                observers=tuple(o.node_id for o in found.observers),
            )
        node = self._any_running(self.controllers, avoid)
        return parse_status(self._quorum_tool(node, "describe", "--status", avoid=avoid))

    def quorum_replication(self) -> dict[int, str]:
        """Returns each node id of the metadata log and its status (Leader, Follower,
        Observer) as `describe --replication` prints it now."""
        node = self._any_running(self.controllers)
        return parse_replication(self._quorum_tool(node, "describe", "--replication"))

    def remove_controller(self, node: str, directory_id: str, avoid: Sequence[str] = ()) -> str:
        """Removes controller node from the voters, asked of the other controllers but
        those to avoid."""
        return self._quorum_tool(
            self._any_running(self.controllers, (node, *avoid)),
            "remove-controller",
            "--controller-id",
            str(self.broker_id(node)),
            "--controller-directory-id",
            directory_id,
            avoid=(node, *avoid),
        )

    def add_controller(self, node: str) -> str:
        """Adds controller node to the voters: the tool runs in node and reads its id,
        directory and endpoint from node's own configuration and metadata directory."""
        return self._quorum_tool(
            node,
            "--command-config",
            "/etc/kafka/server.properties",
            "add-controller",
            avoid=(node,),
        )

    def replica_assignment(self) -> dict[str, list[PartitionState]]:
        """Returns every topic's partitions, the internal ones too, asked now."""
        return self.admin(timeout=5.0).assignments()

    def reassign(self, moves: dict[tuple[str, int], tuple[int, ...]]) -> str:
        """Starts the reassignment of moves with kafka-reassign-partitions, run in a
        running broker; returns what it said."""
        node = self._any_running(self.brokers)
        text = reassignment_json(moves)
        write = ["sh", "-c", f'printf "%s" "$1" > {REASSIGNMENT_FILE}', "sh", text]
        code, output = self.exec(node, write)
        if code != 0:
            raise ToolError(f"could not write the reassignment in {node}: {output[-200:]}")
        return self._tool(
            node,
            REASSIGN_TOOL,
            "--bootstrap-server",
            self._brokers_bootstrap(),
            "--reassignment-json-file",
            REASSIGNMENT_FILE,
            "--execute",
            # Without it the tool refuses while a reassignment is under way; with it the
            # new one replaces that of the same partitions, as the API does.
            "--additional",
        )

    def unregister_broker(self, broker_id: int) -> str:
        """Removes a stopped broker's registration (KRaft), with kafka-cluster."""
        node = self._any_running(self.brokers)
        return self._tool(
            node,
            CLUSTER_TOOL,
            "unregister",
            "--bootstrap-server",
            self._brokers_bootstrap(),
            "--id",
            str(broker_id),
        )

    def _brokers_bootstrap(self) -> str:
        return ",".join(f"{self.ip(b)}:{BROKER_PORT}" for b in self._running(self.brokers))
