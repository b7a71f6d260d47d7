"""The names `--nemesis` takes, in a module that imports nothing: the command line lists
them without loading the fault code (Kafka's and ZooKeeper's clients).

nemesis.schedule builds each named fault; tests/unit/nemesis/test_schedule.py checks that every
name has its fault and every fault its name.
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

PROCESS_FAULTS: tuple[str, ...] = (
    "kill-leader",
    "kill-random",
    "pause-leader",
    "pause-random",
    "kill-active-controller",
    "pause-active-controller",
)
"""Faults of nemesis.process (SIGKILL, SIGSTOP)."""

ISR_SHRINK = "isr-shrink"
"""The fault of nemesis.isr (the 2013 sequence)."""

GROUP_FAULTS: tuple[str, ...] = ("kill-coordinator", "pause-coordinator", "partition-coordinator")
"""Faults of nemesis.coordinator, aimed at the broker coordinating the run's consumer or
share group: they need a run with a group."""

POWER_FAULTS: tuple[str, ...] = (
    "power-loss-one",
    "power-loss-leader",
    "power-loss-leader-and-followers",
    "power-loss-minority",
    "power-loss-majority",
    "power-loss-brokers",
    "power-loss-quorum-one",
    "power-loss-quorum-minority",
    "power-loss-quorum-majority",
    "power-loss-quorum",
    "power-loss-active-controller",
    "power-loss-all",
)
"""Faults of nemesis.power: nodes lose power and every write since each file's last
fsync (a random broker, a partition's leader, its leader and followers, a minority, a
majority or every broker; one, a minority, a majority or all of the metadata quorum,
ZooKeeper's or KRaft's; the active controller; every node). They need the nodes on
faultfs, which a run asking for one of them sets up; `all` leaves them out."""

CORRUPT_FAULTS: tuple[str, ...] = tuple(
    f"{how}-{files}"
    for files in ("log", "index", "checkpoint", "metadata")
    for how in ("bitflip", "truncate")
)
"""Faults of nemesis.corrupt: a node is stopped, one of its files flipped or cut short,
and started again (log segments; offset and time indexes; leader-epoch, recovery-point
and other checkpoints; on KRaft the metadata log and its snapshots), only ever on a
minority of the nodes holding each."""

COMPOSED_FAULTS: tuple[str, ...] = ("partition-power-loss", "pause-power-loss")
"""Faults of nemesis.composed: Jepsen's NATS suite's part-kill and pause-kill for Kafka,
a minority that misses writes while the replicas that have them lose power."""

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
    *GROUP_FAULTS,
    *POWER_FAULTS,
    *CORRUPT_FAULTS,
    *COMPOSED_FAULTS,
)
"""Every fault the harness can inject, by the name `--nemesis` takes."""

ONLY_ON: dict[str, str] = {
    "partition-zookeeper": "zookeeper",
    "partition-controller-quorum": "kraft",
    "partition-brokers-from-controllers": "kraft",
    "bitflip-metadata": "kraft",
    "truncate-metadata": "kraft",
}
"""Faults that apply in one metadata mode only; named in the other they are skipped."""


def applicable(metadata: str, grouped: bool = False) -> tuple[str, ...]:
    """Returns every fault that applies to a cluster keeping its metadata in metadata
    (zookeeper or kraft), with the group faults only for a run with a group (grouped):
    what `--nemesis all` means there. The power and corruption faults are named one by
    one: they change how every node runs (faultfs), or what its disk holds."""
    return tuple(
        n
        for n in NEMESES
        if ONLY_ON.get(n, metadata) == metadata
        and (grouped or n not in GROUP_FAULTS)
        and n not in (*LOSES_POWER, *CORRUPT_FAULTS)
    )
