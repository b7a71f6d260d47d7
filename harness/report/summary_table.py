"""report.html's summary table under the explanation: the ops' counts, each check's
verdict in a line, the replicas, the final phase, the cluster and the release's rows."""

from __future__ import annotations

from typing import Any

from checkers.groups import expansion_lines, group_lines, share_lines
from harness.cluster.config import PROFILES
from harness.report.queue_section import queue_lines
from harness.report.release_rows import release_rows
from harness.report.replicas_section import replicas_line
from harness.verdicts import verdict_word


def summary_rows(results: dict[str, Any], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """Takes results.json's body and test.json's spec. Returns the summary table's rows,
    each a name and a line."""
    stats = results.get("stats", {})
    summary = [
        (
            "operations",
            f"{stats.get('count', 0)}: {stats.get('ok', 0)} ok, "
            f"{stats.get('fail', 0)} fail, {stats.get('info', 0)} info",
        )
    ]
    for section in ("linearizable", "queue", "lost-acks", "groups", "share"):
        if section == "lost-acks" and isinstance(results.get("queue"), dict):
            continue  # its counts are the queue row's, and its verdict the queue's
        if isinstance(results.get(section), dict):
            summary.append((section, _section_summary(section, results[section])))
    if isinstance(results.get("replicas"), dict):
        summary.append(("replicas", replicas_line(results["replicas"])))
    summary.append(("final phase", _final(results.get("final", {}))))
    summary.append(("cluster", _cluster(spec)))
    summary += release_rows(results.get("release"))
    return summary


def _section_summary(name: str, section: dict[str, Any]) -> str:
    word = verdict_word(section.get("valid"))
    if name == "linearizable":
        return f"{word} over {section.get('keys', 0)} keys"
    if name == "queue":
        return f"{word}: {queue_lines(section)[0]}"
    if "lost_count" in section:
        return f"{word}: {section['ack_count']} acknowledged, {section['lost_count']} lost"
    said = {"groups": group_lines, "share": share_lines, "expansion": expansion_lines}.get(name)
    return f"{word}: {said(section)[0].split(': ', 1)[-1]}" if said else word


def _final(final: dict[str, Any]) -> str:
    if not final:
        return "not reached"
    health = (
        f"full ISR again after {final.get('seconds')} s"
        if final.get("healthy")
        else f"no full ISR within {final.get('seconds')} s: {final.get('partitions')}"
    )
    missing = final.get("missing") or []
    read = final.get("read", 0)
    reads = f"{read} final read{'' if read == 1 else 's'} ok" + (
        f", never read: {missing}" if missing else ""
    )
    recount = final.get("recount")
    return f"{health}; {reads}" + (f"; {recount_line(recount)}" if recount else "")


def _cluster(spec: dict[str, Any]) -> str:
    if spec.get("db") == "nats":
        servers = f"NATS {spec.get('nats_version', '?')}, {spec.get('brokers', '?')} servers"
        kv = spec.get("workload") == "kv"
        reads = f", kv reads: {spec.get('nats_kv_reads')}" if kv else ""
        return f"{servers}, sync {spec.get('nats_sync', '?')}{reads}"
    name = spec.get("kafka_config")
    profile = PROFILES.get(name) if isinstance(name, str) else None
    settings = ""
    if profile is not None:
        unclean = "with" if profile.unclean_leader_election else "no"
        flush = "every write fsynced" if profile.fsync_every_write else "fsync left to the OS"
        settings = (
            f": min.insync.replicas={profile.min_insync_replicas}, {unclean} unclean leader "
            f"election, {flush}"
        )
    return (
        f"Kafka {spec.get('kafka_version', '?')} on {spec.get('metadata', '?')}, "
        f"{spec.get('brokers', '?')} brokers, {name or '?'}{settings}"
    )


def recount_line(counted: dict[str, Any]) -> str:
    """Returns the line a person reads about the recount."""
    if not counted["complete"]:
        why = counted["errors"] or "see recount.json"
        return f"recount from the brokers' disks incomplete: {why}"
    line = (
        f"recount from the brokers' disks: {counted['acknowledged']} acknowledged, "
        f"{counted['lost']} lost"
    )
    if "agrees" in counted:
        line += (
            ", the same sends the checker found"
            if counted["agrees"]
            else f"; the checker found {counted['checker_lost']}: they DISAGREE (recount.json)"
        )
    if not counted["replicas_agree"]:
        line += "; a replica holds records the leader does not"
    return line
