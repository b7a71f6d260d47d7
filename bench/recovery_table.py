"""Recovery times per release, workload, client and fault over many runs (issue 26): each
run's recovery recomputed from its folder with today's checker, then one markdown row per cell.

Usage: `.venv/bin/python bench/recovery_table.py RESULTS_ROOT [ROOT ...]`; every folder
under a root with test.json, results.json, history.jsonl and leaders.jsonl is one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from checkers import leader_samples, op_spans, queue_partitions, recovery_times
from harness.run.metadata_watch import LEADERS_FILE, read_samples
from harness.run.recovery import store_partitions
from history import load

Cell = tuple[str, str, str, str, str]
"""Release (with its metadata mode), workload, client, fault, Kafka profile."""


def run_folders(roots: Sequence[Path]) -> Iterator[Path]:
    """Yields every finished run folder under the roots, in name order."""
    for root in roots:
        for test in sorted(root.rglob("test.json")):
            folder = test.parent
            if (folder / "results.json").is_file() and (folder / LEADERS_FILE).is_file():
                yield folder


def run_rows(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Takes a run folder. Returns its spec and its recovery rows, computed afresh from the
    history, the fault windows of results.json and leaders.jsonl."""
    spec = json.loads((folder / "test.json").read_text())["spec"]
    windows = json.loads((folder / "results.json").read_text())["nemesis"]["windows"]
    queue = spec["workload"] == "queue"
    touched = queue_partitions if queue else store_partitions(spec["partitions"])
    spans = op_spans(load(folder / "history.jsonl").events, touched)
    leaders = leader_samples(read_samples(folder, LEADERS_FILE))
    return spec, recovery_times(windows, spans, leaders)["partitions"]


def cell(spec: dict[str, Any]) -> Cell:
    """Takes a run's spec. Returns the table cell it belongs to."""
    workload = spec["workload"] + ("-txn" if spec.get("txn") else "")
    workload += "-idempotent" if spec.get("idempotence") and not spec.get("txn") else ""
    release = f"{spec['kafka_version']} {spec['metadata']}"
    fault = ",".join(spec["nemesis"])
    return release, workload, spec.get("client", "librdkafka"), fault, spec["kafka_config"]


def median_worst(times: Sequence[float | None]) -> str:
    """Takes times, None for never. Returns "median (worst)" over those that came, and how
    many never did."""
    came = [t for t in times if t is not None]
    text = f"{statistics.median(came):.1f} ({max(came):.1f})" if came else "-"
    missing = len(times) - len(came)
    return text + (f", never {missing}" if missing else "")


def table(cells: dict[Cell, tuple[int, list[dict[str, Any]]]]) -> str:
    """Takes per cell its run count and recovery rows. Returns the markdown table."""
    head = (
        "| release | workload | client | fault | config | runs | partitions taken | new leader, s |"
        " served in the fault | first ok op in the fault, s | after the heal, s |"
        " ops failed / timed out |"
    )
    lines = [head, "| --- " * 12 + "|"]
    for key, (runs, rows) in sorted(cells.items()):
        served = [r["in_fault_s"] for r in rows]
        lines.append(
            "| "
            + " | ".join(
                [
                    *key,
                    str(runs),
                    str(len(rows)),
                    median_worst([r["new_leader_s"] for r in rows]),
                    f"{sum(t is not None for t in served)} of {len(rows)}",
                    median_worst(served),
                    median_worst([r["after_heal_s"] for r in rows]),
                    f"{sum(r['failed'] for r in rows)} / {sum(r['timed_out'] for r in rows)}",
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", type=Path, nargs="+")
    args = parser.parse_args()
    cells: dict[Cell, tuple[int, list[dict[str, Any]]]] = {}
    for folder in run_folders(args.roots):
        spec, rows = run_rows(folder)
        runs, seen = cells.get(cell(spec), (0, []))
        cells[cell(spec)] = (runs + 1, seen + rows)
    print(table(cells))


if __name__ == "__main__":
    main()
