"""The names `--nemesis` takes, in a module that imports nothing: the command line lists
them without loading the fault code (Kafka's and ZooKeeper's clients).

A kill, a pause and a power cut share one naming scheme, VERB-TARGET, with the targets
of nemesis.targets (Jepsen's node specs and the nodes that hold a role). nemesis.schedule
builds each named fault; tests/unit/nemesis/test_schedule.py checks that every name has
its fault and every fault its name.
"""

from __future__ import annotations

NETWORK_FAULTS: tuple[str, ...] = (
    "partition-leader",
    "partition-random-halves",
    "partition-majorities-ring",
    "partition-zookeeper",
    "flaky-leader",
    "partition-controller-quorum",
    "partition-brokers-from-controllers",
)
"""Faults of nemesis.partition (iptables). The last two need a KRaft quorum."""

TARGETS: tuple[str, ...] = (
    "one",
    "leader",
    "leader-and-followers",
    "minority",
    "majority",
    "brokers",
    "quorum-one",
    "quorum-minority",
    "quorum-majority",
    "quorum",
    "active-controller",
    "coordinator",
    "txn-coordinator",
    "all",
)
"""Whom a kill, pause or power cut takes (nemesis.targets): a random broker, a
partition's leader, its leader and followers, a minority, a majority or every broker;
one, a minority, a majority or all of the metadata quorum (ZooKeeper's servers or the
KRaft controllers); the active controller; the run's group coordinator; the transaction
coordinator; every node."""

PROCESS_FAULTS: tuple[str, ...] = tuple(
    f"{verb}-{t}" for verb in ("kill", "pause") for t in TARGETS
)
"""Faults of nemesis.process (SIGKILL, or the cgroup freezer's pause)."""

ISR_SHRINK = "isr-shrink"
"""The fault of nemesis.isr (the 2013 sequence)."""

GROUP_CUT = "partition-coordinator"
"""The fault of nemesis.coordinator: the run's group coordinator cut off from the other
nodes."""

POWER_FAULTS: tuple[str, ...] = tuple(f"power-loss-{t}" for t in TARGETS)
"""Faults of nemesis.power: nodes lose power and every write since each file's last
fsync. They need the nodes on faultfs, which a run asking for one of them sets up."""

LATE_FAULTS: tuple[str, ...] = (
    "late-produce",
    "late-end-txn",
    "late-txn-requests",
    "late-txn-markers",
    "late-replication",
)
"""Faults of nemesis.late: requests held in faultproxy and delivered late, in order,
after their senders gave up on them (clients' Produce to a leader; EndTxn, or the other
transaction requests, to the coordinator; a coordinator's markers to the leaders; a
follower's fetches from a leader)."""

SLOW_FAULTS: tuple[str, ...] = ("slow-leader", "slow-network")
"""Faults of nemesis.slow: every frame to and from one leader, or every broker, delayed
by a fixed time plus jitter (netem's delay, which this kernel lacks)."""

CLIENT_FAULTS: tuple[str, ...] = (
    "partition-client-txn-coordinator",
    "partition-client-group-coordinator",
    "pause-client",
)
"""Faults of nemesis.client: one client cut from its transaction or group coordinator
while it still reaches the partition leaders, or paused between its sends and its
commit for longer than its transaction timeout."""

PROXY_FAULTS: tuple[str, ...] = (*LATE_FAULTS, *SLOW_FAULTS, *CLIENT_FAULTS)
"""The faults that need every broker behind faultproxy, which a run asking for one of
them sets up."""

CORRUPT_FAULTS: tuple[str, ...] = tuple(
    f"{how}-{files}"
    for files in ("log", "index", "checkpoint", "metadata")
    for how in ("bitflip", "truncate")
)
"""Faults of nemesis.corrupt: a node is stopped, one of its files flipped or cut short,
and started again (log segments; offset and time indexes; leader-epoch, recovery-point
and other checkpoints; on KRaft the metadata log and its snapshots), only ever on a
minority of the nodes holding each."""

CLOCK_FAULTS: tuple[str, ...] = tuple(
    f"{verb}-clock-{t}" for verb in ("bump", "strobe") for t in TARGETS
)
"""Faults of nemesis.clock: the wall clock of the targets jumps ahead or behind, or flips
between wrong and right. They need libfaketime in every node, which a run asking for
one of them sets up."""

CLIENT_CLOCK_FAULTS: tuple[str, ...] = ("bump-clock-clients", "strobe-clock-clients")
"""Faults of nemesis.clock on the clients: the wall clock of every Java client driver
running (--txn --client java) jumps or flips, through libfaketime preloaded into each;
librdkafka's clients share the harness's process, whose clock must stay true."""

COMPOSED_FAULTS: tuple[str, ...] = ("partition-power-loss", "pause-power-loss")
"""Faults of nemesis.composed: Jepsen's NATS suite's part-kill and pause-kill, a minority
that misses writes while the replicas that have them lose power (pause-power-loss also on
NATS, where it is the sequence of nats-server#7567)."""

EXPAND_FAULTS: tuple[str, ...] = ("add-partitions",)
"""Faults of nemesis.expand: the workload's topic grows by two partitions at each start,
and the generator sends to them at once (never removed: a stop changes nothing)."""

CONTROLLER_MEMBERSHIP_FAULTS: tuple[str, ...] = (
    "remove-controller",
    "remove-controller-partitioned",
)
"""Faults of nemesis.controllers: a KRaft voter removed from the quorum and added back
(KIP-853), alone or while another voter is cut off. They need a quorum formatted for
dynamic membership, which a run asking for one of them sets up."""

BROKER_MEMBERSHIP_FAULTS: tuple[str, ...] = ("decommission-broker", "decommission-kill-leader")
"""Faults of nemesis.decommission: a broker's partitions reassigned away, the broker
stopped (and on KRaft unregistered), then brought back and its partitions reassigned
back; alone or while a partition leader on another broker is killed."""

SERVER_MEMBERSHIP_FAULTS: tuple[str, ...] = ("remove-server",)
"""Faults of nemesis.peer_removal (NATS JetStream only): a server wiped and removed from
the meta group (peer-remove), then started again as a new peer under a new name."""

MEMBERSHIP_FAULTS: tuple[str, ...] = (
    *CONTROLLER_MEMBERSHIP_FAULTS,
    *BROKER_MEMBERSHIP_FAULTS,
    *SERVER_MEMBERSHIP_FAULTS,
)
"""The faults that change who is in the cluster."""

LOSES_POWER: tuple[str, ...] = (*POWER_FAULTS, *COMPOSED_FAULTS)
"""The faults that cut power: they need the nodes on faultfs."""

POWERS_OFF_A_MAJORITY: tuple[str, ...] = (
    "power-loss-leader-and-followers",
    "power-loss-majority",
    "power-loss-brokers",
    "power-loss-all",
    "partition-power-loss",
)
"""The faults that may cut the power of a majority of a partition's replicas at once (with
three brokers): only they can lose a write every in-sync replica acknowledged but none
fsynced. The others leave a majority that never lost power."""

NEMESES: tuple[str, ...] = (
    *NETWORK_FAULTS,
    *PROCESS_FAULTS,
    ISR_SHRINK,
    GROUP_CUT,
    *POWER_FAULTS,
    *CORRUPT_FAULTS,
    *COMPOSED_FAULTS,
    *PROXY_FAULTS,
    *CLOCK_FAULTS,
    *CLIENT_CLOCK_FAULTS,
    *EXPAND_FAULTS,
    *MEMBERSHIP_FAULTS,
)
"""Every fault the harness can inject, by the name `--nemesis` takes."""

GROUP_FAULTS: tuple[str, ...] = (
    "kill-coordinator",
    "pause-coordinator",
    GROUP_CUT,
    "power-loss-coordinator",
    "partition-client-group-coordinator",
    "bump-clock-coordinator",
    "strobe-clock-coordinator",
)
"""The faults aimed at the run's consumer or share group: they need a run with one."""

RENAMED: dict[str, str] = {"kill-random": "kill-one", "pause-random": "pause-one"}
"""Names older runs and scripts use, and what they are called now."""

IN_ALL: tuple[str, ...] = (
    *NETWORK_FAULTS,
    *(f"{verb}-{t}" for t in ("leader", "one", "active-controller") for verb in ("kill", "pause")),
    ISR_SHRINK,
    "kill-coordinator",
    "pause-coordinator",
    GROUP_CUT,
)
"""What `--nemesis all` can mean: the network faults, kills and pauses of a leader, a
random broker and the active controller, isr-shrink and the group faults. Faults that
change how every node runs (power loss needs faultfs, the proxy faults faultproxy, the
clock faults libfaketime) and the kills and pauses of several nodes at once are named one
by one, and so are add-partitions, which changes the topic for the rest of the run, and
the membership faults, which change the quorum's format (a dynamic one) or take a
broker out of the cluster for a whole interval."""

ONLY_ON: dict[str, str] = {
    "partition-zookeeper": "zookeeper",
    "partition-controller-quorum": "kraft",
    "partition-brokers-from-controllers": "kraft",
    "bitflip-metadata": "kraft",
    "truncate-metadata": "kraft",
    "remove-controller": "kraft",
    "remove-controller-partitioned": "kraft",
    "remove-server": "nats",
}
"""Faults that apply in one metadata mode only (nats: NATS JetStream's); named in
another they are skipped."""


def applicable(metadata: str, grouped: bool = False) -> tuple[str, ...]:
    """Returns every fault `--nemesis all` takes on a cluster keeping its metadata in
    metadata (zookeeper or kraft), with the group faults only for a run with a group
    (grouped). The power, corruption and proxy faults are named one by one (IN_ALL)."""
    return tuple(
        n
        for n in NEMESES
        if n in IN_ALL
        and ONLY_ON.get(n, metadata) == metadata
        and (grouped or n not in GROUP_FAULTS)
    )
