"""Reads one partition's transaction markers (COMMIT and ABORT control batches) from each
replica's segment files on a running cluster, and says which transaction each data
batch ended in there, against what the run's history says its client saw.

What it finds, per replica: a transaction the client aborted (its op `fail`, the abort
returned) whose data the replica's log ends with a COMMIT of the same producer id (a
later epoch: the next incarnation of its transactional id), with no ABORT between (the
family of KAFKA-20716: the ABORT marker was lost in an unclean election, and the
producer's next commit closed the transaction it found open); and a transaction still
open at the log end (no marker at all: the last stable offset stays there).

Each replica's segments are read by harness/run/segments.py (record batch v2, as the
recount reads them), with each batch's producer id, epoch and marker.
Usage: .venv/bin/python bench/txn_markers.py --cluster-name NAME --topic TOPIC
           --partition P [--history RUN/history.jsonl] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.run.segments import read_segment

DATA_DIR = "/var/lib/kafka/data"


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


def batches(data: bytes) -> tuple[list[Batch], list[str]]:
    """Takes a .log file's bytes. Returns its batches (compressed ones without values) and
    what could not be read of it."""
    segment = read_segment(data)
    found = [
        Batch(
            *(b.first, b.last, b.producer, b.epoch, b.transactional, b.marker),
            []
            if b.marker
            else [(v or b"").decode(errors="replace") for _, v in b.records.values()],
        )
        for b in segment.batches
    ]
    return found, segment.problems


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
        logs[node] = []
        for path, encoded in zip(out[0::2], out[1::2], strict=True):
            read, problems = batches(base64.b64decode(encoded))
            logs[node] += read
            for problem in problems:  # never skipped silently
                print(f"{node} {path}: {problem}", file=sys.stderr)
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
