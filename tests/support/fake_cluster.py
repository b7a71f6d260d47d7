"""A Cluster stand-in for unit tests of nemesis logic: it records what was done to which
node and reports the leaders a test sets. Network effects are for integration tests."""

from __future__ import annotations

from nemesis.cluster import PartitionState


class FakeCluster:
    """Three brokers and one ZooKeeper (or, with kraft, three controllers c4-c6, or with
    combined too, the brokers as controllers); partition 0 led by `leader`."""

    def __init__(self, leader: int = 1, kraft: bool = False, combined: bool = False) -> None:
        self.leader = leader
        self.kraft = kraft
        self.combined = combined
        self.active = "c4" if kraft and not combined else "n1"
        self.actions: list[tuple[str, str]] = []
        self.execs: list[tuple[str, list[str]]] = []
        self.fail_start: set[str] = set()
        self.states = dict.fromkeys(self.nodes, "running")
        self.coordinators: dict[str, str] = {}
        """group -> the node a test says coordinates it (FindCoordinator)."""

    @property
    def nodes(self) -> list[str]:
        return list(dict.fromkeys([*self.brokers, *self.zookeepers, *self.controllers]))

    @property
    def brokers(self) -> list[str]:
        return ["n1", "n2", "n3"]

    @property
    def zookeepers(self) -> list[str]:
        return [] if self.kraft else ["zk1"]

    @property
    def controllers(self) -> list[str]:
        if not self.kraft:
            return []
        return self.brokers if self.combined else ["c4", "c5", "c6"]

    @property
    def metadata(self) -> str:
        return "kraft" if self.kraft else "zookeeper"

    @property
    def bootstrap_servers(self) -> str:
        return "fake:9092"

    def ip(self, node: str) -> str:
        return f"10.0.0.{self.nodes.index(node) + 1}"

    def broker_id(self, node: str) -> int:
        return int(node[1:])

    def node_of_broker(self, broker_id: int) -> str:
        return f"c{broker_id}" if broker_id > 3 else f"n{broker_id}"

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        self.execs.append((node, cmd))
        return 0, ""

    def kill(self, node: str) -> None:
        self.actions.append(("kill", node))
        self.states[node] = "exited"

    def start(self, node: str) -> None:
        if node in self.fail_start:
            raise RuntimeError(f"{node} will not start")
        self.actions.append(("start", node))
        self.states[node] = "running"

    def pause(self, node: str) -> None:
        self.actions.append(("pause", node))
        self.states[node] = "paused"

    def resume(self, node: str) -> None:
        self.actions.append(("resume", node))
        self.states[node] = "running"

    def state(self, node: str) -> str:
        return self.states[node]

    def committed_partitions(self, topic: str) -> list[PartitionState]:
        return self.partitions(topic)

    def partitions(self, topic: str) -> list[PartitionState]:
        return [PartitionState(0, self.leader, (1, 2, 3), (1, 2, 3) if self.leader > 0 else ())]

    def controller(self) -> int:
        return 1

    def active_controller(self) -> str | None:
        return self.active

    def group_coordinator(self, group: str) -> str:
        if group not in self.coordinators:
            raise RuntimeError(f"error 15: no coordinator for {group}")
        return self.coordinators[group]

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        self.actions.append(("elect", topic))
        return {0: ""}

    def prefer_leader(self, topic: str, partition: int, broker: int) -> str:
        self.actions.append(("prefer", f"{topic}-{partition}:{broker}"))
        return ""

    def server_log(self, node: str, pattern: str, lines: int = 50) -> list[str]:
        return []
