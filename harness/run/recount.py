"""Counts lost acknowledged sends a second time, from the topic's log segment files on
every broker's disk, apart from every client and checker.

The queue checker counts an acknowledged send lost when the final drain, a consumer
reading each partition to its high watermark, does not return it. This recount reads
the segment files instead (harness.run.segments), after healing and before the cluster
stops, and compares lost sets per partition, so a bug in the drain, the client or the
checker shows as a disagreement. It also says whether every replica holds the same
records and how many acknowledged offsets now hold another message (a truncated log
written over).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.results import HISTORY
from harness.run.segments import read_segment

if TYPE_CHECKING:  # the report imports this module; Kafka's client is not needed there
    from nemesis.cluster import Cluster

DATA_DIR = "/var/lib/kafka/data"

Records = dict[int, str]
"""One replica of one partition: offset -> value, as the segment files hold them."""


@runtime_checkable
class Trees(Protocol):
    """A cluster that reads a directory of a node's disk with the node stopped (Docker's
    archive API), where exec cannot run: a broker that refused to start still has a
    replica on its disk to compare."""

    def read_tree(self, node: str, path: str) -> dict[str, bytes]:
        """Returns every file under path by its path relative to path's parent."""
        ...


def segments_command(topic: str) -> list[str]:
    """Returns the shell command that prints, for every segment file of topic's
    partitions on a node, its path on one line and its bytes in base64 on the next."""
    return [
        "sh",
        "-c",
        f'for f in {DATA_DIR}/{topic}-*/*.log; do [ -f "$f" ] || continue; '
        'echo "$f"; base64 -w0 "$f"; echo; done',
    ]


def segments_listing(tree: dict[str, bytes], topic: str) -> str:
    """Takes a data directory's files (read_tree: paths under the directory's name) and
    the topic. Returns them as segments_command prints the topic's segments."""
    wanted = re.compile(rf"(?:^|/){re.escape(topic)}-\d+/\d+\.log$")
    return "".join(
        f"{DATA_DIR}/{path.split('/', 1)[-1]}\n{base64.b64encode(data).decode()}\n"
        for path, data in sorted(tree.items())
        if wanted.search(path)
    )


def parse_segments(text: str, topic: str) -> tuple[dict[int, Records], list[str]]:
    """Takes segments_command's output. Returns each partition of topic's records (files
    of other topics ignored) and the problems met reading them."""
    partition_of = re.compile(rf"/{re.escape(topic)}-(\d+)/(\d+)\.log$")
    files: list[tuple[int, int, str]] = []
    lines = text.splitlines()
    for path, encoded in zip(lines[::2], lines[1::2], strict=False):
        if (found := partition_of.search(path)) is not None:
            files.append((int(found[1]), int(found[2]), encoded))
    partitions: dict[int, Records] = {}
    problems: list[str] = []
    for partition, base, encoded in sorted(files):
        segment = read_segment(base64.b64decode(encoded))
        held = partitions.setdefault(partition, {})
        for offset, value in segment.records.items():
            held[offset] = "" if value is None else value.decode(errors="replace")
        problems += [f"{topic}-{partition}/{base:020d}.log: {p}" for p in segment.problems]
    return partitions, problems


def read_replicas(cluster: Cluster, topic: str) -> dict[str, Any]:
    """Reads every broker's copy of topic from its disk, who leads each partition and
    which brokers hold it and which are in sync. Returns {"leaders": {partition: node or
    None}, "assignment": {partition: [node]}, "in_sync": {partition: [node]}, "replicas":
    {node: {partition: Records}}, "errors": {node: why}}; a broker that cannot be read is
    named in errors."""
    states = cluster.partitions(topic)
    leaders = {
        p.partition: cluster.node_of_broker(p.leader) if p.leader >= 0 else None for p in states
    }
    assignment = {p.partition: [cluster.node_of_broker(r) for r in p.replicas] for p in states}
    in_sync = {p.partition: [cluster.node_of_broker(r) for r in p.isr] for p in states}
    replicas: dict[str, dict[int, Records]] = {}
    errors: dict[str, str] = {}

    def segments(node: str) -> tuple[str, int, str]:
        try:
            return (node, *cluster.exec(node, segments_command(topic)))
        except Exception as err:  # a stopped node: exec refused; its disk is still there
            if not isinstance(cluster, Trees):
                return node, -1, f"exec failed: {err}"
            try:
                return node, 0, segments_listing(cluster.read_tree(node, DATA_DIR), topic)
            except Exception as late:  # named in errors below; the other brokers still count
                return node, -1, f"exec failed: {err}; reading its disk failed: {late}"

    def unread(node: str, held: dict[int, Records]) -> list[int]:
        # Kafka keeps a segment file for every partition a broker holds, even an empty
        # one: a partition with none was not read (an empty answer under load), not empty.
        return sorted(p for p, nodes in assignment.items() if node in nodes and p not in held)

    with ThreadPoolExecutor(max_workers=len(cluster.brokers)) as pool:
        for node, code, out in pool.map(segments, cluster.brokers):
            held, problems = parse_segments(out, topic) if code == 0 else ({}, [])
            if code == 0 and unread(node, held):  # asked once more before it is unknown
                node, code, out = segments(node)
                held, problems = parse_segments(out, topic) if code == 0 else ({}, [])
            if code != 0:
                errors[node] = f"reading the segments exited {code}: {out.strip()[-300:]}"
                continue
            if missing := unread(node, held):
                errors[node] = f"no segment file read for partitions {missing}, asked twice"
                continue
            replicas[node] = held
            if problems:
                errors[node] = "; ".join(problems[:5])
    return {
        "leaders": leaders,
        "assignment": assignment,
        "in_sync": in_sync,
        "replicas": replicas,
        "errors": errors,
    }


def acked_sends(history_lines: Iterable[str]) -> Iterator[tuple[int, int, int]]:
    """Takes history.jsonl lines. Yields (partition, offset, message) of every
    acknowledged send, one-message or in a committed transaction; read straight from the
    file, not through the checker's parser."""
    for line in history_lines:
        if '"send"' not in line or '"ok"' not in line:
            continue
        event = json.loads(line)
        if event.get("type") != "ok" or event.get("f") not in ("send", "txn"):
            continue
        if "key" in event:  # one message: [offset, message] under its partition's key
            offset, message = event["value"]
            yield int(event["key"]), int(offset), int(message)
            continue
        for mop in event["value"]:  # a committed transaction: ["send", p, [offset, m]]...
            if mop[0] == "send":
                yield int(mop[1]), int(mop[2][0]), int(mop[2][1])


def recount(sends: Iterable[tuple[int, int, int]], on_disk: dict[str, Any]) -> dict[str, Any]:
    """Takes acknowledged sends and read_replicas' result. Returns, per partition and in
    all, the sends missing from the leader's log (lost), the acknowledged offsets that
    hold another message now (overwritten), and whether every replica agrees with the
    leader (holds a prefix of its records: a follower in the ISR may be a fetch behind)."""
    acked: dict[int, list[tuple[int, int]]] = {}
    for partition, offset, message in sends:
        acked.setdefault(partition, []).append((offset, message))
    leaders: dict[int, str | None] = {int(p): n for p, n in on_disk["leaders"].items()}
    replicas: dict[str, dict[int, Records]] = on_disk["replicas"]
    partitions: dict[str, Any] = {}
    for p in sorted(set(leaders) | set(acked)):
        leader = leaders.get(p)
        log = replicas.get(leader, {}).get(p) if leader is not None else None
        copies = {node: held.get(p, {}) for node, held in replicas.items() if p in held}
        sent = acked.get(p, [])
        entry: dict[str, Any] = {
            "leader": leader,
            "acknowledged": len(sent),
            "records": {node: len(c) for node, c in sorted(copies.items())},
            "replicas_agree": None
            if log is None
            else all(_prefix(c, log) for c in copies.values()),
        }
        if leader is None:
            entry["error"] = "the partition had no leader after healing"
        elif log is None:
            entry["error"] = f"the leader's log ({leader}) could not be read"
        else:
            present = {int(v) for v in log.values() if v.lstrip("-").isdigit()}
            entry["lost"] = sorted(m for _, m in sent if m not in present)
            entry["overwritten"] = sum(1 for o, m in sent if o in log and log[o] != str(m))
        partitions[str(p)] = entry
    readable = all("lost" in e for e in partitions.values()) and not on_disk["errors"]
    return {
        "source": "every broker's segment files, after healing, before the cluster stopped",
        "complete": readable,
        "acknowledged": sum(e["acknowledged"] for e in partitions.values()),
        "lost": sum(len(e.get("lost", [])) for e in partitions.values()),
        "overwritten": sum(e.get("overwritten", 0) for e in partitions.values()),
        "replicas_agree": all(e["replicas_agree"] is not False for e in partitions.values()),
        "errors": on_disk["errors"],
        "partitions": partitions,
    }


def _prefix(copy: Records, log: Records) -> bool:
    """Returns whether copy holds, at every offset it has, what the leader's log holds
    there: a follower a fetch behind agrees, one holding another record does not."""
    return all(log.get(offset) == value for offset, value in copy.items())


def compare_with_checker(counted: dict[str, Any], lost_acks: dict[str, Any]) -> dict[str, Any]:
    """Takes recount's result and the lost-acks checker's section. Returns the recount
    with `checker_lost` and `agrees`: whether each partition's lost set is the same."""
    by_checker = {str(k["key"]): sorted(k.get("lost", [])) for k in lost_acks.get("by_key", [])}
    differ = [
        p
        for p, entry in counted["partitions"].items()
        if "lost" in entry and entry["lost"] != by_checker.get(p, [])
    ]
    return counted | {
        "checker_lost": lost_acks.get("lost_count"),
        "agrees": counted["complete"] and not differ,
        "partitions_that_differ": differ,
    }


def write_recount(folder: Path, on_disk: dict[str, Any], lost_acks: Any) -> dict[str, Any]:
    """Recounts the run in folder from on_disk, compares it with the lost-acks section
    when there is one, writes recount.json and returns what it wrote."""
    with (folder / HISTORY).open(encoding="utf-8", errors="replace") as lines:
        counted = recount(acked_sends(lines), on_disk)
    if isinstance(lost_acks, dict):
        counted = compare_with_checker(counted, lost_acks)
    (folder / "recount.json").write_text(json.dumps(counted, indent=1) + "\n")
    return counted
