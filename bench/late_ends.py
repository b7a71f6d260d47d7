"""Which transaction each late EndTxn ended (issue 37, KAFKA-17754's window): for every
held EndTxn a coordinator accepted and that ended a live transaction of its producer
(the nemesis's stop op, `late_ends`), the op of that producer's process the EndTxn
reached during, what that op sent, and how it ended in the history.

The EndTxn's delivery time is the proxy's (nodes/N/kafka/faultproxy.jsonl, wall clock);
the history's times count from the run's start, so the two are put on one clock by the
late fault's first rule: its proxy time against the history time of the start op that
installed it (the rule is installed between the op's invoke and its info, so the clocks
agree to within that op's duration, printed as `anchor ±`).
Usage: .venv/bin/python bench/late_ends.py RUN_FOLDER...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

NS = 1e9


def _events(folder: Path) -> list[dict[str, Any]]:
    with (folder / "history.jsonl").open() as lines:
        return [json.loads(line) for line in lines]


def _proxy_lines(folder: Path) -> list[dict[str, Any]]:
    found = []
    for log in sorted(folder.glob("nodes/*/kafka/faultproxy.jsonl")):
        with log.open() as lines:
            found += [json.loads(line) | {"node": log.parts[-3]} for line in lines]
    return found


def _anchor(events: list[dict[str, Any]], proxy: list[dict[str, Any]]) -> tuple[float, float]:
    """Returns (wall clock - history seconds, the uncertainty) from the first late-end-txn
    rule and the start op that installed it."""
    rule = min(
        (p for p in proxy if p["event"] == "rule" and p["rule"]["name"] == "late-end-txn"),
        key=lambda p: float(p["time"]),
    )
    invoke = next(e for e in events if e.get("f") == "start-late-end-txn")
    info = next(e for e in events if e.get("f") == "start-late-end-txn" and e.get("type") == "info")
    middle = (invoke["time"] + info["time"]) / 2 / NS
    return float(rule["time"]) - middle, (info["time"] - invoke["time"]) / 2 / NS


def _delivered(proxy: list[dict[str, Any]], end: dict[str, Any]) -> float | None:
    """Returns when the held EndTxn that `end` describes reached its broker (wall clock)."""
    pid, epoch = end["producer"]
    for p in proxy:
        frame = p.get("frame") or {}
        body = frame.get("end_txn")
        if (
            p["event"] == "frame"
            and body
            and (body["producer_id"], body["producer_epoch"]) == (pid, epoch)
            and bool(body["commit"]) == end["commit"]
            and abs(float(frame["delivered"]) - float(frame["arrived"]) - end["held_s"]) < 0.01
        ):
            return float(frame["delivered"])
    return None


def _op_at(
    events: list[dict[str, Any]], process: int, at: float
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Returns the (invoke, completion) of process's op in flight at history second at."""
    pending: dict[str, Any] | None = None
    for e in events:
        if e.get("process") != process:
            continue
        if e["type"] == "invoke":
            pending = e
        elif pending is not None:
            if pending["time"] / NS <= at <= e["time"] / NS:
                return pending, e
            pending = None
    return None


def late_ends(folder: Path) -> list[str]:
    """Returns one line per late EndTxn that ended a live transaction in a run."""
    events = _events(folder)
    proxy = _proxy_lines(folder)
    stops = [
        e
        for e in events
        if e.get("process") == "nemesis"
        and e.get("type") == "info"
        and isinstance(e.get("value"), dict)
        and e["value"].get("late_ends")
    ]
    if not stops:
        return []
    shift, within = _anchor(events, proxy)
    lines = []
    for stop in stops:
        for end in stop["value"]["late_ends"]:
            if not end["ended_a_live_transaction"]:
                continue
            wall = _delivered(proxy, end)
            if wall is None:
                lines.append(f"{end['client']}: its frame is not in faultproxy.jsonl")
                continue
            at = wall - shift
            process = int(end["client"].removeprefix("p").split("-")[0])
            found = _op_at(events, process, at)
            kind = "commit" if end["commit"] else "abort"
            head = (
                f"{end['client']} late {kind} (held {end['held_s']} s) reached at "
                f"{at:.2f} s (anchor ±{within:.2f} s), ended partitions {end['partitions']}"
            )
            if found is None:
                lines.append(f"{head}: no op of process {process} in flight then")
                continue
            invoke, done = found
            sent = {f"{m[1]}" for m in invoke["value"] if m[0] == "send"}
            ended = {p.rsplit("-", 1)[1] for p in end["partitions"]}
            lines.append(
                f"{head}: in op {invoke['index']} ({invoke['time'] / NS:.2f}-"
                f"{done['time'] / NS:.2f} s) {json.dumps(invoke['value'])} (its partitions "
                f"{'hold' if ended <= sent else 'do not hold'} the ended ones), which ended "
                f"{done['type']} {done.get('error', '')}".rstrip()
            )
    return lines


def main() -> int:
    for arg in sys.argv[1:]:
        for line in late_ends(Path(arg)):
            print(f"{arg}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
