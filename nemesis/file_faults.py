"""The files a corruption fault aims at on a Kafka node, and the corruptions themselves:
pure functions of a file's bytes that return the new bytes and exactly what changed.

After Jepsen's jepsen/src/jepsen/nemesis/file.clj: `bitflip-file-chunks` flips a few bits
of a file, `truncate-file` trims its end (by a Zipf-distributed count, so mostly a
little), and `nodes-gen` keeps the corruptions to a minority of the nodes over the
whole test. Here a flip is two bits at uniformly drawn positions, a trim log-uniform in
[1, size], and the minority is kept per thing replicated: no partition, and no KRaft
quorum, ever has a majority of its replicas struck.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

DATA_DIR = "/var/lib/kafka/data"
"""log.dirs on every Kafka node (compose/server.properties.tmpl): on KRaft the metadata
log's directory too."""
SERVER_LOG = "/var/log/kafka/server.log"
STARTED = "Kafka Server started"
"""What a KRaft node's log says once its start is through (KafkaRaftServer)."""
METADATA = "metadata"
"""The file group of the KRaft metadata log and its snapshots, held by the voters."""
_SEGMENT = r"\d{20}"
FILE_GROUPS: dict[str, str] = {
    "log": rf"(?P<topic>{{topic}})-(?P<partition>\d+)/{_SEGMENT}\.log",
    "index": rf"(?P<topic>{{topic}})-(?P<partition>\d+)/{_SEGMENT}\.(?:index|timeindex)",
    "checkpoint": r"(?:(?P<topic>{topic})-(?P<partition>\d+)/leader-epoch-checkpoint"
    r"|(?:recovery-point-offset|replication-offset|log-start-offset)-checkpoint)",
    METADATA: rf"__cluster_metadata-0/{_SEGMENT}(?:\.log|-\d{{10}}\.checkpoint)",
}
"""Paths under the data directory each fault aims at, by the last word of its name: the
run's topic's log segments; its offset and time indexes; its partitions' leader-epoch
checkpoints and the directory's recovery-point, high-watermark and log-start
checkpoints; the metadata log's segments and its snapshots (KRaft)."""
SEGMENT_FILES = (".log", ".index", ".timeindex")
"""A segment and its indexes: what a segment's recovery rewrites."""
BITS_FLIPPED = 2
BYTES_SHOWN = 64
"""How many removed bytes a truncation's record shows (their count and digest are whole)."""
KAFKA_WORDS = re.compile(
    r"corrupt|crc|invalid|malformed|recover|truncat|rebuild|error|fatal|exception|halt"
    r"|shut ?down|fail|unclean",
    re.IGNORECASE,
)
"""What a broker says, after a restart on a corrupted file, that tells what it did."""
LINES_KEPT = 20
EVIDENCE: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "refused",
        re.compile(
            r"Fatal error|Exiting Kafka|Shutdown broker because all log dirs"
            r"|Encountered fatal fault|Halting",
            re.IGNORECASE,
        ),
    ),
    (
        "detected",
        re.compile(
            r"CorruptRecordException|Found invalid messages|Corrupt(?:ed)? index"
            r"|CorruptIndexException|Malformed|InvalidRecordException|CRC|checksum"
            r"|KafkaStorageException|Error while (?:reading|loading|writing)",
            re.IGNORECASE,
        ),
    ),
    (
        "failed",
        re.compile(
            r"marked as failed|Unexpected error occurred while processing data", re.IGNORECASE
        ),
    ),
    (
        "repaired",
        re.compile(r"rebuilding index|Truncating|Recovering (?:unflushed )?segment", re.I),
    ),
    ("unchecked", re.compile(r"Skipping recovery .*clean shutdown file", re.IGNORECASE)),
)
"""The lines of a broker's log that tell what it did with a changed file, each with what
it means: it refused to start (or halted), it found the corruption, it stopped
replicating the file's partition (its fetcher failed on it), it repaired the file's log
(recovery, truncation, an index rebuilt), or it started without reading its logs at all
(a clean shutdown skips recovery). First match wins."""
EVIDENCE_KEPT = 6


def listing_command(directory: str = DATA_DIR) -> list[str]:
    """Returns the shell command that prints every regular file under directory as its
    path relative to it and its size, one a line."""
    return ["sh", "-c", f"find {directory} -type f -printf '%P %s\\n'"]


def parse_listing(text: str) -> dict[str, int]:
    """Takes listing_command's output. Returns relative path -> size."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        path, _, size = line.rpartition(" ")
        if path and size.isdigit():
            found[path] = int(size)
    return found


def files_of(group: str, topic: str, listing: Mapping[str, int]) -> list[str]:
    """Takes a file group (FILE_GROUPS), the run's topic and a node's listing. Returns the
    group's files that hold at least a byte, sorted."""
    pattern = re.compile(FILE_GROUPS[group].replace("{topic}", re.escape(topic)))
    return sorted(p for p, size in listing.items() if size > 0 and pattern.fullmatch(p))


def partition_of(path: str, topic: str) -> int | None:
    """Returns the partition of topic a file belongs to, None for a directory-wide file."""
    found = re.match(rf"{re.escape(topic)}-(\d+)/", path)
    return int(found[1]) if found else None


def may_strike(struck: Collection[str], node: str, holders: Mapping[Any, Sequence[str]]) -> bool:
    """Takes the nodes corrupted so far, a candidate and what is replicated where (each
    partition's or quorum's nodes). Returns whether corrupting node too keeps the struck
    nodes a minority of the replicas of everything node holds."""
    hit = {*struck, node}
    return all(
        len(hit & set(nodes)) <= (len(nodes) - 1) // 2
        for nodes in holders.values()
        if node in nodes
    )


def flip_bits(data: bytes, rng: random.Random, bits: int = BITS_FLIPPED) -> tuple[bytes, Any]:
    """Takes a file's bytes. Returns them with `bits` bits flipped at distinct byte
    offsets, and each change as {"offset", "bit", "before", "after"} (bytes in hex)."""
    if not data:
        raise ValueError("no byte to flip in an empty file")
    changed = bytearray(data)
    changes = []
    for offset in sorted(rng.sample(range(len(data)), min(bits, len(data)))):
        bit = rng.randrange(8)
        changed[offset] ^= 1 << bit
        changes.append(
            {
                "offset": offset,
                "bit": bit,
                "before": f"{data[offset]:02x}",
                "after": f"{changed[offset]:02x}",
            }
        )
    return bytes(changed), changes


def truncate(data: bytes, rng: random.Random) -> tuple[bytes, Any]:
    """Takes a file's bytes. Returns them cut short by a log-uniform count in [1, size]
    (mostly a little, as Jepsen's Zipf trim), and the change: the offset cut at, the
    sizes, and the removed bytes (the first BYTES_SHOWN in hex, their count and SHA-256)."""
    if not data:
        raise ValueError("nothing to cut from an empty file")
    trim = min(len(data), max(1, int(len(data) ** rng.random())))
    kept, removed = data[:-trim], data[-trim:]
    return kept, {
        "offset": len(kept),
        "size_before": len(data),
        "size_after": len(kept),
        "removed_bytes": trim,
        "before": removed[:BYTES_SHOWN].hex(),
        "after": "",
        "removed_sha256": hashlib.sha256(removed).hexdigest(),
    }


CORRUPTIONS = {"bitflip": flip_bits, "truncate": truncate}


def bytes_now(change: Any, now: bytes | None) -> Any:
    """Takes what a corruption changed and the file's bytes some time later (None: the
    file is gone). Returns whether the corruption is still there: for flips, the byte now
    at each offset; for a cut, the size now."""
    if now is None:
        return {"file": "gone"}
    if isinstance(change, list):
        return {
            "bytes": [
                {
                    "offset": c["offset"],
                    "now": f"{now[c['offset']]:02x}" if c["offset"] < len(now) else None,
                }
                for c in change
            ],
            "still_flipped": sum(
                1
                for c in change
                if c["offset"] < len(now) and f"{now[c['offset']]:02x}" == c["after"]
            ),
        }
    return {"size": len(now), "still_cut": len(now) == change["size_after"]}


def kafka_lines(log_text: str, since_line: int, file: str) -> list[str]:
    """Takes a node's server.log, its line count when the node had stopped and the file
    corrupted. Returns the lines since that speak of what the node did (KAFKA_WORDS; a
    stack trace's frames left out), those naming the file's directory first, LINES_KEPT
    at most."""
    lines = log_text.splitlines()[since_line:]
    said = [line for line in lines if KAFKA_WORDS.search(line) and not line[:1].isspace()]
    folder = file.rsplit("/", 1)[0] if "/" in file else file
    named = [line for line in said if folder in line]
    rest = [line for line in said if folder not in line]
    return (named + rest)[:LINES_KEPT]


def evidence(lines: Sequence[str], file: str) -> list[dict[str, str]]:
    """Takes a node's log lines since a corruption and the file changed. Returns the lines
    that say what the node did with it (EVIDENCE), each as {"means", "line"}: a refusal,
    a detection or a skipped recovery wherever it is said, a failure or a repair only
    when it names the file's directory (a segment's recovery only for a segment or its
    indexes);
    EVIDENCE_KEPT at most, refusals and detections first."""
    folder = file.rsplit("/", 1)[0] if "/" in file else file
    found: list[dict[str, str]] = []
    for line in lines:
        means = next((m for m, pattern in EVIDENCE if pattern.search(line)), None)
        if (
            line[:1].isspace()
            or means is None
            or (means in ("failed", "repaired") and folder not in line)
            # A segment recovered (its indexes rebuilt) is no repair of a checkpoint or a
            # snapshot: a KRaft controller recovers its metadata segment on every start.
            or (means == "repaired" and "segment" in line and not file.endswith(SEGMENT_FILES))
        ):
            continue
        found.append({"means": means, "line": line})
    order = [m for m, _ in EVIDENCE]
    return sorted(found, key=lambda e: order.index(e["means"]))[:EVIDENCE_KEPT]
