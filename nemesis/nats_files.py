"""The files a corruption fault aims at on a NATS JetStream server, found in its store
after a clean stop, and where a changed byte of a message block lies (which record).

The layout, read from real nats-server 2.12.1 and 2.15.3 stores (every path under
STORE_DIR/jetstream; a clean stop writes the index files and the Raft snapshots):

- `$G/streams/<stream>/msgs/<n>.blk`: the stream's message blocks (`blocks`);
- `$G/streams/<stream>/msgs/index.db` (the stream's state, written at a clean stop),
  `meta.inf` (its configuration) and `meta.sum` (meta.inf's hash) (`stream-state`);
- `$SYS/_js_/<group>/`: a Raft group, `_meta_` the meta group, `S-R3F-<id>` a stream's
  (its meta.inf says `"metadata":{"account":"$G","stream":"<stream>","type":"stream"}`),
  `C-...` a consumer's. Its WAL is `msgs/<n>.blk` with `msgs/index.db`, its term and
  vote `tav.idx`, its peers `peers.idx` (`raft-log`); its snapshots
  `snapshots/snap.<term>.<index>` (`raft-snapshot`). A clean stop snapshots the group
  and compacts its WAL to one short block (30 B).

Jepsen's NATS suite (jepsen-io/nats src/jepsen/nats/nemesis.clj, file-types and
corrupt-file-package) picks files under the same directory by suffix (.blk, .db, .inf,
.sum, .idx, snap*), on a minority of the nodes; nats-server#7549 flipped bits in the
stream's .blk files, #7556 in the `$SYS/_js_` snapshots. Here the Raft files are those
of the run's stream's group and the meta group only: a consumer's group may live on
fewer servers, where one struck server is no minority.

A record of a message block (nats-server's server/filestore.go, writeMsgRecordLocked),
little-endian: total length (4 bytes, high bit: headers follow), sequence (8),
timestamp (8), subject length (2), subject, [headers length (4), headers], payload,
hash (8).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Mapping
from typing import Any

STORE_DIR = "/var/lib/nats"
"""The store_dir of every NATS server (compose/nats/nats.conf.tmpl)."""
STREAMS = "jetstream/$G/streams"
RAFT = "jetstream/$SYS/_js_"
META_GROUP = "_meta_"
FILE_GROUPS: dict[str, str] = {
    "blocks": r"{streams}/{stream}/msgs/\d+\.blk",
    "stream-state": r"{streams}/{stream}/(?:msgs/index\.db|meta\.inf|meta\.sum)",
    "raft-log": r"{raft}/{group}/(?:msgs/\d+\.blk|msgs/index\.db|tav\.idx|peers\.idx)",
    "raft-snapshot": r"{raft}/{group}/snapshots/snap\.\d+\.\d+",
}
"""Paths under STORE_DIR each fault aims at, by the last words of its name."""
RAFT_GROUPS = ("raft-log", "raft-snapshot")
NATS_WORDS = re.compile(
    r"\b(?:corrupt|checksum|too short|malformed|mismatch|inconsisten|orphan|rebuil|truncat"
    r"|snapshot|catchup|reset|lost|error|could not|unable|fatal|panic)|\[(?:WRN|ERR|FTL)\]",
    re.IGNORECASE,
)
"""What a server says, after a start on a changed file, that tells what it did (words
at a word's start: the cluster's own name may hold one)."""
EVIDENCE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("refused", re.compile(r"\[FTL\]|panic:|Can't start JetStream|Error starting", re.I)),
    ("deleted", re.compile(r"orphaned stream|Stream assignment corrupt")),
    ("reset", re.compile(r"Resetting stream cluster state")),
    (
        "detected",
        re.compile(
            r"\b(?:corrupt|checksum|too short|malformed|mismatch|inconsisten|bad messages"
            r"|could not load entry|rebuildState|Error (?:recovering|restoring|loading))",
            re.IGNORECASE,
        ),
    ),
    ("repaired", re.compile(r"\b(?:rebuil|truncat|catchup)", re.IGNORECASE)),
)
"""The lines of a server's log that tell what it did with a changed file, each with what
it means: it refused to start, it deleted the stream as an orphan (nats-server#7556), it
reset its copy of the stream to take it again from the leader, it found the corruption,
it rebuilt or caught up the stream. First match wins."""
EVIDENCE_KEPT = 6
LINES_KEPT = 20
_RECORD = struct.Struct("<IQQH")  # total length, sequence, timestamp, subject length
_HAS_HEADERS = 1 << 31
_HASH = 8
_HEAD_FIELDS = ((4, "length"), (12, "sequence"), (20, "timestamp"), (22, "subject length"))


def stream_group(metas: Mapping[str, bytes], streams: tuple[str, ...]) -> list[str]:
    """Takes each Raft group's meta.inf (group directory name -> bytes) and the names the
    run's stream may have. Returns the groups whose meta.inf names one of them as a
    stream (a group whose meta.inf does not parse is not counted)."""
    found = []
    for group, data in metas.items():
        try:
            meta = json.loads(data).get("metadata") or {}
        except (ValueError, AttributeError):  # a corrupted meta.inf names nothing
            continue
        if meta.get("type") == "stream" and meta.get("stream") in streams:
            found.append(group)
    return sorted(found)


def raft_metas(tree: Mapping[str, bytes]) -> dict[str, bytes]:
    """Takes a store's files (path under STORE_DIR -> bytes). Returns each Raft group's
    meta.inf by its group's directory name."""
    pattern = re.compile(rf"{re.escape(RAFT)}/([^/]+)/meta\.inf")
    return {m[1]: data for path, data in tree.items() if (m := pattern.fullmatch(path))}


def stream_on_disk(tree: Mapping[str, bytes], names: tuple[str, ...]) -> str | None:
    """Returns which of the names the run's stream may have is a stream directory in the
    store (a KV bucket's stream is KV_<bucket>), or None."""
    return next((n for n in names if any(p.startswith(f"{STREAMS}/{n}/") for p in tree)), None)


def files_of(
    group: str, stream: str, raft_groups: list[str], sizes: Mapping[str, int]
) -> list[str]:
    """Takes a file group (FILE_GROUPS), the stream's name, the Raft groups aimed at and a
    store's file sizes by path. Returns the group's files that hold at least a byte,
    sorted."""
    groups = "|".join(re.escape(g) for g in raft_groups) or "(?!)"
    text = FILE_GROUPS[group].format(
        streams=re.escape(STREAMS),
        stream=re.escape(stream),
        raft=re.escape(RAFT),
        group=f"(?:{groups})",
    )
    pattern = re.compile(text)
    return sorted(p for p, size in sizes.items() if size > 0 and pattern.fullmatch(p))


def records_at(data: bytes, positions: list[int]) -> list[dict[str, Any]]:
    """Takes a message block's bytes (as they are now) and positions in it. Returns for
    each the record it lies in: {"position", "record_position", "sequence", "field"}, or
    {"position", "unread": why} past the end or after a record of impossible length."""
    found: dict[int, dict[str, Any]] = {}
    wanted = sorted(set(positions))
    pos, why = 0, "past the end of the block"
    while pos + _RECORD.size <= len(data) and len(found) < len(wanted):
        length, seq, _, subject_len = _RECORD.unpack_from(data, pos)
        headers = bool(length & _HAS_HEADERS)
        length &= ~_HAS_HEADERS
        if length < _RECORD.size + subject_len + _HASH or pos + length > len(data):
            why = f"after block position {pos}, where a record claims {length} bytes"
            break
        for p in wanted:
            if pos <= p < pos + length:
                found[p] = {
                    "position": p,
                    "record_position": pos,
                    "sequence": seq & ~(3 << 62),  # bits 63 and 62: erased, tombstone
                    "field": _field(p - pos, length, subject_len, headers),
                }
        pos += length
    return [found.get(p, {"position": p, "unread": why}) for p in wanted]


def _field(at: int, length: int, subject_len: int, headers: bool) -> str:
    for end, name in _HEAD_FIELDS:
        if at < end:
            return name
    if at < _RECORD.size + subject_len:
        return "subject"
    if at >= length - _HASH:
        return "hash"
    return "headers or payload" if headers else "payload"


def log_lines(lines: list[str], file: str) -> list[str]:
    """Takes a server's log lines since its start on a changed file. Returns those that
    speak of what it did (NATS_WORDS), those naming the file's stream or group first,
    LINES_KEPT at most."""
    said = [line for line in lines if NATS_WORDS.search(line)]
    name = _owner(file)
    named = [line for line in said if name and name in line]
    return (named + [line for line in said if line not in named])[:LINES_KEPT]


def evidence(lines: list[str]) -> list[dict[str, str]]:
    """Takes a server's log lines since its start on a changed file. Returns those that say
    what it did with it (EVIDENCE), each as {"means", "line"}, refusals first,
    EVIDENCE_KEPT at most."""
    found = []
    for line in lines:
        means = next((m for m, pattern in EVIDENCE if pattern.search(line)), None)
        if means is not None:
            found.append({"means": means, "line": line})
    order = [m for m, _ in EVIDENCE]
    return sorted(found, key=lambda e: order.index(e["means"]))[:EVIDENCE_KEPT]


def _owner(file: str) -> str:
    """The stream or Raft group a store path belongs to."""
    parts = file.split("/")
    return parts[3] if len(parts) > 3 else ""


def verdict(
    running: bool,
    rejoined: bool,
    on_disk: Mapping[str, Any],
    said: list[dict[str, str]],
    ended: Mapping[str, Any] | None = None,
) -> str:
    """What NATS did, in words, from what was observed: did not start (how its process
    ended, when known), deleted or reset the stream, noticed and repaired it, or rejoined
    with the change still on its disk (or rewritten)."""
    means = {e["means"] for e in said}
    if not running:
        how = ""
        if ended:
            oom = "killed for want of memory, " if ended.get("oom_killed") else ""
            how = f": {oom}exit {ended.get('exit_code')}"
        return f"did not start (the server is down{how})"
    if "refused" in means:
        return "halted on it"
    if "deleted" in means:
        return "deleted its copy of the stream (an orphan to the meta leader)"
    if "reset" in means:
        caught = (
            "and caught up from the leader" if rejoined else "and was not current within the bound"
        )
        return f"reset its copy of the stream {caught}"
    if not rejoined:
        return "started but was not a current replica of the stream within the bound"
    if on_disk.get("file") == "gone":
        return "rejoined; the corrupted file is gone (deleted, or rebuilt under another name)"
    still = on_disk.get("still_flipped", 0) or on_disk.get("still_cut")
    if still and means & {"detected", "repaired"}:
        return "rejoined; it logged the corruption, and the changed bytes are still on its disk"
    if still:
        return "rejoined without noticing: the corruption is still on its disk"
    return "rejoined; the corrupted bytes were rewritten (repaired or rebuilt)"
