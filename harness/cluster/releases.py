"""The Kafka releases the harness runs, and what each can do: the one table every option,
the cluster's configuration and the matrix read, and the one-line refusals of what a
release cannot run.

Every release Maven Central serves from 3.9.1 to 4.4.0 is here. What a new cluster of a
release has on was read from the release itself: `kafka-storage version-mapping` of its
jars prints the feature levels its storage is formatted with (3.9 has no such command and
no such features). The stages come from each release's upgrade notes
(kafka.apache.org/<line>/getting-started/upgrade) and KIP-932's early access notes:

| line | metadata | group | transaction | eligible leader replicas | share groups (share.version) |
| --- | --- | --- | --- | --- | --- |
| 3.9 | ZooKeeper or KRaft | - | - | - | none |
| 4.0 | KRaft | 1 | 2 | 0 (can be set to 1) | early access (config only) |
| 4.1 | KRaft | 1 | 2 | 1 | preview (0: off) |
| 4.2, 4.3 | KRaft | 1 | 2 | 1 | production (1) |
| 4.4 | KRaft | 1 | 2 | 1 | production (2) |

group is group.version, 1 being KIP-848's consumer rebalance protocol; transaction is
transaction.version, 2 being KIP-890's transactions v2, which only clients that have it
speak; eligible leader replicas is KIP-966's eligible.leader.replicas.version. A share
group can set its own delivery count limit (the group config share.delivery.count.limit)
from 4.3 on, as the GroupConfig class of the jars shows. Every release from 3.9 formats a
KRaft controller either with fixed voters (`controller.quorum.voters`, what the harness
does by default) or as a dynamic quorum (KIP-853's `--standalone` or
`--initial-controllers`, what it does for the controller membership faults), so no
release differs there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Metadata = Literal["zookeeper", "kraft"]
METADATA_MODES: tuple[Metadata, ...] = ("zookeeper", "kraft")
ShareStage = Literal["none", "early access", "preview", "production"]


@dataclass(frozen=True, slots=True)
class Release:
    """A Kafka release the harness runs, and what it can do."""

    version: str
    metadata_modes: tuple[Metadata, ...]
    """Where it can keep its metadata; the first is its default here (ZooKeeper while a
    release still has it, as before KRaft was added to the harness)."""
    consumer_protocol: bool
    """Whether a new cluster has KIP-848's consumer rebalance protocol (group.version 1)."""
    transactions_v2: bool
    """Whether a new KRaft cluster has KIP-890's transactions v2 on (transaction.version 2)."""
    elr_feature: bool
    """Whether storage format can set eligible leader replicas (KIP-966's feature)."""
    elr_default: bool
    """Whether a new KRaft cluster has eligible leader replicas on."""
    share_stage: ShareStage
    """How far share groups (KIP-932) are: none, early access (4.0: unstable RPCs only
    4.0's own client speaks), preview (4.1: off unless share.version is set) or
    production (on in a new cluster)."""
    group_delivery_limit: bool
    """Whether a share group can set its own delivery count limit
    (share.delivery.count.limit as a group config, 4.3 on); before, only the brokers'
    group.share.delivery.count.limit sets it."""

    @property
    def share_workload(self) -> bool:
        """Whether the share workload runs on it: share groups on in a new cluster, with a
        delivery count limit of the group's own (the one test.json records and the share
        checker judges by)."""
        return self.share_stage == "production" and self.group_delivery_limit

    @property
    def line(self) -> str:
        """Returns its release line, e.g. 4.1 for 4.1.2."""
        return ".".join(self.version.split(".")[:2])


def _line(
    line: str,
    patches: tuple[int, ...],
    *,
    zookeeper: bool,
    elr: tuple[bool, bool],
    share: ShareStage,
    group_delivery_limit: bool = False,
) -> dict[str, Release]:
    """Returns the releases of one line, which share everything but their patch number."""
    modes: tuple[Metadata, ...] = ("zookeeper", "kraft") if zookeeper else ("kraft",)
    return {
        f"{line}.{patch}": Release(
            f"{line}.{patch}",
            metadata_modes=modes,
            consumer_protocol=not zookeeper,
            transactions_v2=not zookeeper,
            elr_feature=elr[0],
            elr_default=elr[1],
            share_stage=share,
            group_delivery_limit=group_delivery_limit,
        )
        for patch in patches
    }


RELEASES: dict[str, Release] = {
    **_line("3.9", (1, 2), zookeeper=True, elr=(False, False), share="none"),
    **_line("4.0", (0, 1, 2), zookeeper=False, elr=(True, False), share="early access"),
    **_line("4.1", (0, 1, 2), zookeeper=False, elr=(True, True), share="preview"),
    **_line("4.2", (0, 1, 2), zookeeper=False, elr=(True, True), share="production"),
    **_line(
        "4.3", (0, 1), zookeeper=False, elr=(True, True), share="production",
        group_delivery_limit=True,
    ),
    **_line(
        "4.4", (0,), zookeeper=False, elr=(True, True), share="production",
        group_delivery_limit=True,
    ),
}  # fmt: skip
"""Every release the harness runs, oldest first."""
DEFAULT_VERSION = "3.9.1"
MATRIX_DEFAULT = ("3.9.1", "4.4.0")
"""The releases `harness matrix` runs unless told: the oldest, ZooKeeper's, and the newest."""


def version_problem(version: str) -> str | None:
    """Returns why version names no release the harness runs, or None."""
    if version in RELEASES:
        return None
    lines: dict[str, list[str]] = {}
    for known in RELEASES.values():
        lines.setdefault(known.line, []).append(known.version)
    spans = ", ".join(v[0] if len(v) == 1 else f"{v[0]} to {v[-1]}" for v in lines.values())
    return f"kafka version {version!r}: one of {spans} (the releases Maven Central serves)"


def default_metadata(version: str) -> Metadata:
    """Returns the metadata mode a release runs in unless asked otherwise: ZooKeeper where
    it still can (3.9), else KRaft."""
    return RELEASES[version].metadata_modes[0]


def release_problem(version: str, metadata: str) -> str | None:
    """Returns why a Kafka version cannot run in a metadata mode, or None."""
    if (unknown := version_problem(version)) is not None:
        return unknown
    if metadata not in METADATA_MODES:
        return f"metadata {metadata!r}: one of {', '.join(METADATA_MODES)}"
    if metadata not in RELEASES[version].metadata_modes:
        return f"Kafka {version} has no ZooKeeper mode (removed in 4.0): use --metadata kraft"
    return None


def share_problem(version: str) -> str | None:
    """Returns why the share workload cannot run on a release, or None."""
    release = RELEASES[version]
    if release.share_workload:
        return None
    why = {
        "none": "has no share groups (KIP-932 came in 4.0)",
        "early access": "has share groups as early access only, whose unstable RPCs only "
        "Kafka 4.0's own client speaks",
        "preview": "has share groups as a preview, off in a new cluster",
        "production": "sets a share group's delivery count limit only on the brokers (the "
        "group config share.delivery.count.limit, which the share checker judges by, "
        "came in 4.3)",
    }[release.share_stage]
    first = next(v for v, r in RELEASES.items() if r.share_workload)
    return f"--workload share runs on Kafka {first} and later: {version} {why}"


def consumer_protocol_problem(version: str) -> str | None:
    """Returns why a release cannot run KIP-848's consumer group protocol, or None."""
    if RELEASES[version].consumer_protocol:
        return None
    return f"--group-protocol consumer (KIP-848) needs Kafka 4.0 or later, not {version}"
