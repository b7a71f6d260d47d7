"""A queue run's loss in words: the lead sentence (how many acknowledged sends were lost,
where, under which faults, and whether the configuration allows it), then where, the
faults' steps and the configuration's reasons, as explain's points.

Pure functions of results.json's sections and test.json's spec, for harness/report/explain.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.report.points import KEYS_SHOWN, VALUES_SHOWN, Point, Section
from nemesis.names import LOSES_POWER, POWERS_OFF_A_MAJORITY

if TYPE_CHECKING:  # the nemesis story: for a run's results only
    from harness.report.nemesis_story import Row


def lost_points(queue: Section, lost_acks: Any, results: Section, spec: Section) -> list[Point]:
    """Takes the queue section, the lost-acks section, results.json's body and the spec.
    Returns first what was lost and why in one sentence (loss_lead), then which sends
    were lost where, the faults on those partitions with their steps and times (the
    brokers' truncations among them), whether the configuration allows the loss in full,
    and how lost-acks's count differs from the queue checker's."""
    lost, acked = queue.get("lost", 0), queue.get("acknowledged", 0)
    cases = queue.get("kinds", {}).get("lost-write", {}).get("cases", [])
    by_partition = _lost_by_partition(cases, lost_acks)
    judged = {c.get("judged_by") for c in cases}
    how = "the final drains" if judged == {"drain"} else "the final drains and the polls"
    where = Point(
        f"Where, as {how} show: "
        + ", ".join(
            f"{n} on partition {p}" if i == 0 else f"{n} on {p}"
            for i, (p, n) in enumerate(by_partition.items())
        )
        + ".",
    )
    if len(by_partition) <= KEYS_SHOWN:  # a few: each with its first sends and offsets
        where = Point(
            f"Where, as {how} show:",
            tuple(
                _partition_loss(p, n, [c for c in cases if str(c.get("partition")) == p])
                for p, n in by_partition.items()
            ),
        )
    faults = fault_points(results.get("nemesis"), set(by_partition))
    allowed = config_sentence(spec)
    said = [
        Point(
            loss_lead(lost, acked, len(by_partition), results.get("nemesis"), allowed)
            + gone_sentence(queue.get("store_gone"))
        ),
        where,
    ]
    torn = sorted({c["index"] for c in cases if "outcome" in c and "index" in c})
    if torn:  # KAFKA-17754's shape: a transaction committed in part
        ops = ", ".join(f"op {i}" for i in torn[:KEYS_SHOWN])
        said.append(
            Point(
                f"Of them, {sum(1 for c in cases if 'outcome' in c)} belong to transactions "
                f"of unknown outcome that committed only in part ({ops}): a poll read another "
                "of their sends, so they committed, and a transaction is all or nothing."
            )
        )
    said += [*faults, Point(allowed)]
    if isinstance(lost_acks, dict) and "lost_count" in lost_acks:
        said.append(Point(two_counts_sentence(lost, lost_acks["lost_count"])))
    return said


def loss_lead(lost: int, acked: int, partitions: int, nemesis: Any, allowed: str) -> str:
    """Takes the counts of lost and acknowledged sends, how many partitions lost any, the
    nemesis section and config_sentence's words. Returns the loss in one sentence: how
    many, where, under which faults, and whether that is expected, e.g. `406 of 568
    acknowledged sends were lost on 8 partitions under partition-power-loss: expected when
    power fails under safe.`"""
    windows = nemesis.get("windows", []) if isinstance(nemesis, dict) else []
    kinds = list(dict.fromkeys(str(w.get("fault")) for w in windows))
    under = " and ".join(kinds) if kinds else "no fault"
    on = f"{partitions} partition{'' if partitions == 1 else 's'}"
    verdict = judgement(allowed)
    return f"{lost} of {acked} acknowledged sends were lost on {on} under {under}: {verdict}."


def gone_sentence(gone: Any) -> str:
    """Takes the queue section's store_gone. Returns, when final drains were told the
    store no longer exists, a sentence saying the stream went with the sends (after a
    space, to follow the lead), else ""."""
    if not isinstance(gone, dict) or not gone.get("drains"):
        return ""
    n = int(gone["drains"])
    drains = "the final drain was" if n == 1 else f"all {n} final drains were"
    return (
        f" The stream itself was gone: {drains} told {gone.get('store')}, so nothing "
        "acknowledged before the fault could be read back."
    )


def judgement(allowed: str) -> str:
    """Takes config_sentence's words. Returns their verdict alone, before their reason:
    `expected when power fails under safe`, `not allowed under safe (...)`."""
    head, colon, _ = allowed.partition(": ")
    if colon and head.startswith(("Expected", "Not allowed")):
        return head[0].lower() + head[1:]
    return "whether the configuration allows it is not recorded"


def _lost_by_partition(cases: Sequence[Section], lost_acks: Any) -> dict[str, int]:
    # lost-acks lists every lost send per partition; the queue's cases are the first 20.
    counts: dict[str, int] = {}
    if isinstance(lost_acks, dict):
        for entry in lost_acks.get("by_key", []):
            if entry.get("lost_count"):
                counts[str(entry.get("key"))] = int(entry["lost_count"])
    if not counts:
        for case in cases:
            p = str(case.get("partition"))
            counts[p] = counts.get(p, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def _partition_loss(partition: str, count: int, cases: Sequence[Section]) -> str:
    values = [str(c.get("value")) for c in cases[:VALUES_SHOWN]]
    offsets = sorted(int(c["offset"]) for c in cases if isinstance(c.get("offset"), int))
    shown = ", ".join(values) + (", ..." if count > len(values) else "")
    span = ""
    if offsets:
        span = f" at offset{'s' if len(offsets) > 1 else ''} {offsets[0]}"
        span += f"-{offsets[-1]}" if offsets[-1] != offsets[0] else ""
    sends = "sends" if len(values) > 1 else "send"
    what = f" ({sends} of {shown}{span})" if values else ""
    return f"partition {partition} lost {count}{what}"


def fault_points(nemesis: Any, partitions: set[str]) -> list[Point]:
    """Takes the nemesis section and the partitions with losses. Returns a point per fault
    window that targeted one of them (else every window, the first few): the fault and
    when, with its steps and their test times under it, the brokers' truncations among
    them."""
    if not isinstance(nemesis, dict) or not nemesis.get("windows"):
        return [Point("No fault was injected.")]
    ops = nemesis.get("ops", [])
    from harness.report.nemesis_story import estimated_invokes, story

    rows = story(ops, estimated_invokes(nemesis))
    windows = nemesis["windows"]
    aimed = [w for w in windows if _targets(w.get("detail")) & partitions] or windows
    said = []
    for window in aimed[:KEYS_SHOWN]:
        start, stop = window["start"], window.get("stop")
        # A last step is stamped as its op returns: a hair after the window's stop.
        mine = [r for r in rows if start <= r.start and (stop is None or r.start < stop + 0.5)]
        steps = [r for r in mine if r.stop is None] or mine
        ended = "never healed" if stop is None else f"healed by {stop:.1f} s"
        said.append(
            Point(f"Fault {window['fault']} from {start:.1f} s ({ended}):", tuple(map(_at, steps)))
        )
    if len(aimed) > KEYS_SHOWN:
        more = f"{len(aimed) - KEYS_SHOWN} more fault windows are in the nemesis story."
        said.append(Point(more))
    return said


def _targets(detail: Any) -> set[str]:
    if not isinstance(detail, dict):
        return set()
    listed = detail.get("partitions")
    if isinstance(listed, list):
        return {str(p) for p in listed}
    return set() if detail.get("partition") is None else {str(detail["partition"])}


def _at(row: Row) -> str:
    return f"{row.start:.1f} s {row.words}"


def config_sentence(spec: Section) -> str:
    """Takes the spec. Returns whether its Kafka configuration and producers (or its
    NATS sync profile) allow an acknowledged send to be lost."""
    if spec.get("db") == "nats":
        return nats_sentence(spec)
    name = spec.get("kafka_config")
    from harness.cluster.config import PROFILES

    profile = PROFILES.get(name) if isinstance(name, str) else None
    if spec.get("producer_acks") == "1":
        return (
            "Expected with acks=1: a leader acknowledges before any follower holds the "
            "send, so losing that leader can lose it."
        )
    if profile is None:
        return (
            "The run's Kafka configuration is not recorded, so whether it allows this is not said."
        )
    settings = f"min.insync.replicas={profile.min_insync_replicas}"
    nemeses = spec.get("nemesis") or ()
    if not profile.fsync_every_write and any(n in POWERS_OFF_A_MAJORITY for n in nemeses):
        return (
            f"Expected when power fails under {profile.name}: Kafka acknowledges a write "
            "once the in-sync replicas hold it in memory, and fsyncs it only when the OS "
            "writes it back (log.flush.interval.messages at its default), so replicas "
            "that lose power together can lose it; the -fsync profiles should not."
        )
    if not profile.unclean_leader_election and any(n in LOSES_POWER for n in nemeses):
        return (
            f"Not allowed under {profile.name} ({settings}, no unclean leader election), "
            "power loss or not: these faults cut the power of a minority of the replicas "
            "at most, so a replica that never lost power held every acknowledged send and "
            "should have been elected. A BUG, in Kafka (a replica that lost its unsynced "
            "tail elected: its unclean shutdown not detected), the client or the harness."
        )
    if profile.unclean_leader_election:
        return (
            f"Expected under {profile.name}: {settings} with unclean leader election lets a "
            "replica that missed acknowledged sends become leader, and the old leader "
            "truncates its log to match."
        )
    return (
        f"Not allowed under {profile.name} ({settings}, no unclean leader election): every "
        "acknowledged send should survive, so this is a bug in Kafka, the client or the "
        "harness."
    )


def two_counts_sentence(queue_lost: int, lost_acks_lost: int) -> str:
    """Takes the queue checker's and lost-acks's counts of lost writes. Returns how they
    differ, in one sentence."""
    counts = (
        f"both count {queue_lost}"
        if queue_lost == lost_acks_lost
        else f"count {lost_acks_lost} and {queue_lost}"
    )
    return (
        "lost-acks (Jepsen's set check: values missing from each partition's final drain) "
        "and the queue checker (messages at their offsets, judged by the final drain or "
        f"else the polls) {counts}."
    )


PAUSE_POWER_LOSS = "pause-power-loss"
"""The composed fault whose power cut strikes one server of a quorum, the other paused."""


def nats_sentence(spec: Section) -> str:
    """Takes a NATS run's spec. Returns whether its sync profile and faults allow an
    acknowledged publish to be lost. NATS documents the default's window
    (nats-io/nats.docs nats-concepts/jetstream/README.md, "Syncing data to disk"): a
    publish is acknowledged once a quorum holds it and fsynced within sync_interval (2
    minutes), so servers that lose power together before it may lose it."""
    nemeses = spec.get("nemesis") or ()
    if spec.get("nats_sync") != "always" and any(n in POWERS_OFF_A_MAJORITY for n in nemeses):
        return (
            "Expected under NATS's default sync_interval (2 minutes), and documented: "
            "JetStream acknowledges a publish once a quorum of the stream's replicas hold "
            "it and fsyncs it within sync_interval, so a majority that loses power before "
            "then can lose it (nats-server#7564); sync_interval: always should not."
        )
    if spec.get("nats_sync") != "always" and PAUSE_POWER_LOSS in nemeses:
        return (
            "Expected under NATS's default sync_interval (2 minutes): in pause-power-loss "
            "one server of the quorum that acknowledged a publish loses power before it "
            "fsynced it while the other is paused, so the two that elect the next leader "
            "may both lack it (Jepsen's nats-server#7567); sync_interval: always should not."
        )
    return (
        f"Not allowed under NATS's sync profile {spec.get('nats_sync', 'default')} with "
        "these faults: every acknowledged publish is held by a quorum that never lost "
        "an unsynced write, so this is a bug in NATS, the client or the harness."
    )
