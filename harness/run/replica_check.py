"""Replica agreement from the brokers' disks: after the final heal and drain, every
replica's copy of each partition (the segment files the recount reads) is compared
offset by offset below the high watermark the final drain read to (checkers'
check_replicas), and the acknowledged sends each replica lacks are counted.

Writes replicas.json (every partition's comparison) and returns the section
results.json keeps. A difference below a high watermark makes the run invalid; the
section also says whether the sends no replica holds are the very sends the lost-acks
checker and the recount found lost, so the three counts can be checked one against
another.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from checkers import UNKNOWN, check_replicas
from harness.results import HISTORY
from harness.run.recount import acked_sends

LOG = logging.getLogger("harness.run")
REPLICAS_FILE = "replicas.json"


def drained_watermarks(history_lines: Iterable[str]) -> dict[int, int]:
    """Takes history.jsonl lines. Returns each partition's high watermark as its last ok
    final drain read it (`high-watermark` on the drain's completion)."""
    found: dict[int, int] = {}
    for line in history_lines:
        if '"drain"' not in line or '"high-watermark"' not in line:
            continue
        event = json.loads(line)
        if event.get("f") == "drain" and event.get("type") == "ok":
            found[int(event["key"])] = int(event["high-watermark"])
    return found


def compare_lost(section: dict[str, Any], lost_acks: Any, recount: Any) -> dict[str, Any]:
    """Takes check_replicas' result, the lost-acks section and the recount (each may be
    missing). Returns who counted how many lost sends, and whether the three named the
    same sends in every partition."""
    lost = {p: e["lost_everywhere"] for p, e in section["partitions"].items()}
    said: dict[str, Any] = {"replicas": section["lost"]}
    differ: set[str] = set()
    if isinstance(lost_acks, dict) and "by_key" in lost_acks:
        by_checker = {str(k["key"]): sorted(k.get("lost", [])) for k in lost_acks["by_key"]}
        said["lost_acks"] = lost_acks.get("lost_count")
        differ |= {
            p for p in lost.keys() | by_checker.keys() if lost.get(p, []) != by_checker.get(p, [])
        }
    if isinstance(recount, dict) and "partitions" in recount:
        counted = {p: e["lost"] for p, e in recount["partitions"].items() if "lost" in e}
        said["recount"] = recount.get("lost")
        differ |= {p for p in lost.keys() | counted.keys() if lost.get(p, []) != counted.get(p, [])}
    return said | {"same_sends": not differ, "partitions_that_differ": sorted(differ)}


def replica_section(folder: Path, on_disk: dict[str, Any], lost_acks: Any) -> dict[str, Any]:
    """Compares the replicas read in on_disk (read_replicas) for the run in folder, writes
    replicas.json and returns results.json's `replicas` section: the comparison without
    its long lists, and how its lost sends compare with the lost-acks checker's and the
    recount's. A comparison that fails is unknown, with the error."""
    try:
        with (folder / HISTORY).open(encoding="utf-8", errors="replace") as lines:
            watermarks = drained_watermarks(lines)
        with (folder / HISTORY).open(encoding="utf-8", errors="replace") as lines:
            sends = list(acked_sends(lines))
        section = check_replicas(
            on_disk["replicas"],
            {int(p): nodes for p, nodes in on_disk["assignment"].items()},
            watermarks,
            sends,
            {int(p): n for p, n in on_disk["leaders"].items()},
            in_sync={int(p): nodes for p, nodes in on_disk.get("in_sync", {}).items()} or None,
        )
        recount = _read_json(folder / "recount.json")
        section["lost_counted_by"] = compare_lost(section, lost_acks, recount)
        section["read_errors"] = on_disk["errors"]
        (folder / REPLICAS_FILE).write_text(json.dumps(section, indent=1) + "\n")
    except Exception as err:  # a crash of ours is unknown, never a verdict (Jepsen's check-safe)
        LOG.exception("comparing the replicas failed")
        return {
            "valid": UNKNOWN,
            "error": f"{type(err).__name__}: {err}",
            "trace": traceback.format_exc(),
        }
    return _brief(section)


def _brief(section: dict[str, Any]) -> dict[str, Any]:
    """The section as results.json keeps it: lists of sends become counts (they are in
    replicas.json)."""
    partitions = {
        p: {k: v for k, v in e.items() if k != "lost_everywhere"}
        | {
            "lost": len(e["lost_everywhere"]),
            "replicas": {
                n: {k: v for k, v in r.items() if k != "lacks"} for n, r in e["replicas"].items()
            },
        }
        for p, e in section["partitions"].items()
    }
    return section | {"partitions": partitions}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
