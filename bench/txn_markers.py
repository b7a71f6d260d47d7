"""Reads one partition's transaction markers (COMMIT and ABORT control batches) from each
replica's segment files on a running cluster, and says which transaction each data
batch ended in there, against what the run's history says its client saw.

What it finds, per replica: a transaction the client aborted (its op `fail`, the abort
returned) whose data the replica's log ends with a COMMIT of the same producer id (a
later epoch: the next incarnation of its transactional id), with no ABORT between (the
family of KAFKA-20716: the ABORT marker was lost in an unclean election, and the
producer's next commit closed the transaction it found open); and a transaction still
open at the log end (no marker at all: the last stable offset stays there).

The batch layout is Kafka's record batch v2 (DefaultRecordBatch: baseOffset,
batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, two
timestamps, producerId, producerEpoch, baseSequence, recordsCount; attributes bit 4
transactional, bit 5 control; a control record's key holds a version and a type, 0 ABORT
and 1 COMMIT: EndTransactionMarker and ControlRecordType in kafka-clients).
Usage: .venv/bin/python bench/txn_markers.py --cluster-name NAME --topic TOPIC
           --partition P [--history RUN/history.jsonl] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = "/var/lib/kafka/data"
HEAD = struct.Struct(">qiibIhiqqqhii")  # baseOffset .. recordsCount: 61 bytes
OVERHEAD = 12  # baseOffset and batchLength precede the length they count
TRANSACTIONAL, CONTROL, COMPRESSION = 0x10, 0x20, 0x07
MARKERS = {0: "ABORT", 1: "COMMIT"}


@dataclass
class Batch:
    """One record batch of a replica's log: its offsets, producer id and epoch, whether it
    is transactional, its marker (ABORT, COMMIT) if a control batch, else its values."""

    first: int
    last: int
    producer: int
    epoch: int
    transactional: bool
    marker: str | None
    values: list[str] = field(default_factory=list)


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """Reads a zigzag varint at pos; returns it and the position after it."""
    shift = raw = 0
    while True:
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7


def records(body: bytes, count: int) -> list[tuple[bytes | None, bytes | None]]:
    """Reads count uncompressed records; returns each one's key and value."""
    out: list[tuple[bytes | None, bytes | None]] = []
    pos = 0
    for _ in range(count):
        length, pos = varint(body, pos)
        end = pos + length
        pos += 1  # attributes
        _, pos = varint(body, pos)  # timestampDelta
        _, pos = varint(body, pos)  # offsetDelta
        fields: list[bytes | None] = []
        for _ in range(2):  # key, value
            size, pos = varint(body, pos)
            fields.append(None if size < 0 else body[pos : pos + size])
            pos += max(size, 0)
        out.append((fields[0], fields[1]))
        pos = end
    return out


def batches(data: bytes) -> list[Batch]:
    """Takes a .log file's bytes. Returns its batches (compressed ones without values)."""
    found: list[Batch] = []
    pos = 0
    while pos + OVERHEAD <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length == 0 or pos + OVERHEAD + length > len(data):
            break
        (*_, attributes, last_delta, _, _, producer, epoch, _, count) = HEAD.unpack_from(data, pos)
        body = data[pos + HEAD.size : pos + OVERHEAD + length]
        batch = Batch(
            base, base + last_delta, producer, epoch, bool(attributes & TRANSACTIONAL), None
        )
        if not attributes & COMPRESSION:
            read = records(body, count)
            if attributes & CONTROL:
                key = read[0][0] or b""
                kind = struct.unpack(">hh", key[:4])[1] if len(key) >= 4 else -1
                batch.marker = MARKERS.get(kind, "UNKNOWN")
            else:
                batch.values = [(v or b"").decode(errors="replace") for _, v in read]
        found.append(batch)
        pos += OVERHEAD + length
    return found


def replica_logs(cluster: str, topic: str, partition: int) -> dict[str, list[Batch]]:
    """Returns each broker node's batches of the partition, read from its segment files."""
    names = subprocess.run(
        [
            *("docker", "ps", "--format", "{{.Names}}"),
            *("--filter", f"label=kafka-harness.cluster={cluster}"),
            *("--filter", "label=kafka-harness.role=kafka"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    logs: dict[str, list[Batch]] = {}
    script = (
        f'for f in {DATA_DIR}/{topic}-{partition}/*.log; do echo "$f"; base64 -w0 "$f"; echo; done'
    )
    for container in sorted(names):
        out = subprocess.run(
            ["docker", "exec", container, "sh", "-c", script],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        node = container.rsplit("-", 1)[-1]
        logs[node] = [b for encoded in out[1::2] for b in batches(base64.b64decode(encoded))]
    return logs


def history_outcomes(path: Path, partition: int) -> dict[str, dict[str, Any]]:
    """Takes a history.jsonl. Returns, for each value sent to the partition, its op's
    invoke index, process, completion type and error."""
    invokes: dict[Any, dict[str, Any]] = {}
    sent: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        event = json.loads(line)
        process = event.get("process")
        if process == "nemesis" or event.get("f") != "txn":
            continue
        if event["type"] == "invoke":
            invokes[process] = event
            continue
        invoke = invokes.pop(process, None)
        if invoke is None:
            continue
        for mop in invoke["value"]:
            if mop[0] == "send" and mop[1] == partition:
                sent[str(mop[2])] = {
                    "index": invoke["index"],
                    "process": process,
                    "type": event["type"],
                    "error": event.get("error"),
                    "transactional_id": event.get("transactional-id"),
                }
    return sent


def transactions(log: list[Batch]) -> list[dict[str, Any]]:
    """Takes a replica's batches. Returns each transactional data batch with the marker
    of its producer id that closed it there (None: still open at the log end)."""
    out: list[dict[str, Any]] = []
    open_by_producer: dict[int, list[dict[str, Any]]] = {}
    for batch in log:
        if not batch.transactional:
            continue
        if batch.marker is None:
            entry = asdict(batch) | {"ended_by": None}
            open_by_producer.setdefault(batch.producer, []).append(entry)
            out.append(entry)
            continue
        for entry in open_by_producer.pop(batch.producer, []):
            entry["ended_by"] = {
                "marker": batch.marker,
                "offset": batch.first,
                "epoch": batch.epoch,
            }
    return out


def set_against(logs: dict[str, list[Batch]], sent: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Sets each replica's transactions against the history. Returns, per node, the
    aborted sends its log commits and the transactions it leaves open."""
    found: dict[str, Any] = {}
    for node, log in logs.items():
        committed_aborts, still_open = [], []
        for txn in transactions(log):
            ended = txn["ended_by"]
            if ended is None:
                still_open.append(txn)
                continue
            for value in txn["values"]:
                op = sent.get(value)
                if ended["marker"] == "COMMIT" and op is not None and op["type"] == "fail":
                    committed_aborts.append(
                        {"value": value, "offset": txn["first"], "producer": txn["producer"]}
                        | {"epoch": txn["epoch"], "ended_by": ended, "op": op}
                    )
        found[node] = {
            "batches": len(log),
            "markers": sum(b.marker is not None for b in log),
            "aborted_sends_committed": committed_aborts,
            "open_at_log_end": still_open,
        }
    return found


def main() -> int:
    """Prints the partition's markers per replica and what they say against the history."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-name", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partition", type=int, required=True)
    parser.add_argument("--history", type=Path)
    parser.add_argument("--out", type=Path, help="write every replica's batches here (JSON)")
    args = parser.parse_args()
    logs = replica_logs(args.cluster_name, args.topic, args.partition)
    if args.out:
        dumped = {node: [asdict(b) for b in log] for node, log in logs.items()}
        args.out.write_text(json.dumps(dumped, indent=1))
    sent = history_outcomes(args.history, args.partition) if args.history else {}
    for node, log in logs.items():
        marks = [b for b in log if b.marker]
        end = log[-1].last + 1 if log else 0
        print(f"{node}: {len(log)} batches, {len(marks)} markers, log end {end}")
    print(json.dumps(set_against(logs, sent), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
