"""The transactions hunt (issue 22): `--workload queue --txn` under each process or network
fault, on 3.9.1 ZooKeeper and 4.4.0 KRaft, with and without --crash-clients, N rounds.

Rounds go outermost, so that a hunt cut short still has every cell the same number of
times. One line per run goes to OUT/hunt.tsv as it ends; the table sums it up per cell,
with what the faults reached as their stop ops recorded it (issue 37: requests held and
delivered after their senders gave up, held across a commit or an abort of their own
producer, late Produce requests appended; clients paused past their timeout).
Usage: .venv/bin/python bench/txn_hunt.py [--rounds 5] [--first-round 1] [--seed-base 2200]
           [--out DIR] [--client librdkafka|java] [--faults F,...] [--releases V,...]
           [--crash both|no|yes]
       .venv/bin/python bench/txn_hunt.py --table-only --out DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAULTS = ("pause-leader", "pause-random", "kill-leader", "partition-leader")
KRAFT_ONLY = ("pause-active-controller",)
RELEASES = ("3.9.1", "4.4.0")  # ZooKeeper and KRaft, each release's default metadata
BROKEN = ("no results", "no history")
"""A run's verdict in the table when it broke before its workload ran."""
CRASH_EVERY_S = 10.0
"""Mean seconds between one client's crashes: a third of Jepsen's default, so that a
60 s run of 5 clients crashes about 30 of them, many inside a fault window."""
FIELDS = (
    "release",
    "fault",
    "crash",
    "seed",
    "exit",
    "verdict",
    "committed",
    "aborted",
    "unknown",
    "crashed",
    "acknowledged",
    "lost",
    "kinds",
    "worst_lag_s",
    "reached",
    "folder",
)
REACHED = (
    "after_sender_gave_up",
    "landed_count",
    "late_ends_accepted",
    "late_ends_live",
    "connections_cut",
)
"""The counts a proxy fault's stop op records that the table sums (nemesis/proxy.py)."""


def cells(
    releases: tuple[str, ...] = RELEASES,
    faults: tuple[str, ...] | None = None,
    crashes: tuple[bool, ...] = (False, True),
) -> list[tuple[str, str, bool]]:
    """Returns every (release, fault, crash) of one round (by default the issue 22 hunt's
    faults, with pause-active-controller on 4.4.0)."""
    found = []
    for release in releases:
        chosen = faults or FAULTS + (KRAFT_ONLY if release == "4.4.0" else ())
        for fault in chosen:
            for crash in crashes:
                found.append((release, fault, crash))
    return found


def reached(events: list[dict[str, Any]]) -> str:
    """Takes a run's history events. Returns reached_counts as the table keeps them:
    "what=n; what=n"."""
    return "; ".join(f"{k}={n}" for k, n in sorted(reached_counts(events).items()))


def reached_counts(events: list[dict[str, Any]]) -> dict[str, int]:
    """Takes a run's history events. Returns what its faults reached, summed over their
    stop ops: requests held by API and kind (held across a commit or an abort of their
    own producer), the REACHED counts, pauses past the transaction timeout (none at 0)."""
    sums: dict[str, int] = defaultdict(int)
    for e in events:
        value = e.get("value")
        if e.get("process") != "nemesis" or e.get("type") != "info" or not isinstance(value, dict):
            continue
        if not str(e.get("f", "")).startswith("stop-"):
            continue
        for api, n in (value.get("held") or {}).items():
            sums[f"held {api}"] += int(n)
        for kind, n in (value.get("held_across") or {}).items():
            sums[kind] += int(n)
        for field in REACHED:
            sums[field] += int(value.get(field) or 0)
        if value.get("aborted_by_coordinator_after_s") is not None:
            sums["paused past an abort"] += 1
        if (end := value.get("end_txn")) is not None:
            sums[f"paused EndTxn {end.get('answer')}"] += 1
    return {k: n for k, n in sums.items() if n}


def summed_reached(runs: list[dict[str, str]]) -> str:
    """Takes table rows. Returns what their faults reached, summed over them, in words
    ("-" when nothing)."""
    sums: dict[str, int] = defaultdict(int)
    for run in runs:
        for item in filter(None, (run.get("reached") or "").split("; ")):
            what, count = item.rsplit("=", 1)
            sums[what] += int(count)
    return ", ".join(f"{k} {n}" for k, n in sorted(sums.items())) or "-"


def run_one(
    release: str, fault: str, crash: bool, seed: int, out: Path, client: str, cluster: str
) -> dict[str, Any]:
    """Runs one test; returns its line of the table."""
    name = f"hunt-{client}-{release}-{fault}-{'crash' if crash else 'plain'}"
    argv = [
        sys.executable,
        *("-m", "harness", "run", "--workload", "queue", "--txn"),
        # A cell's faults joined by + run together (`--nemesis` takes a comma list).
        *("--nemesis", fault.replace("+", ","), "--kafka-version", release),
        *("--kafka-config", "safe"),
        *("--abort-p", "0.1", "--isolation-level", "read_committed"),
        *("--time-limit", "60", "--seed", str(seed), "--name", name),
        *("--results", str(out), "--client", client, "--cluster-name", cluster),
        *(("--crash-clients", str(CRASH_EVERY_S)) if crash else ()),
    ]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    folders = sorted((out / name).glob("*/results.json"), key=lambda p: p.stat().st_mtime)
    row: dict[str, Any] = {
        "release": release,
        "fault": fault,
        "crash": crash,
        "seed": seed,
        "exit": done.returncode,
    }
    if not folders:
        return row | {"verdict": "no results", "folder": done.stderr.strip()[-200:]}
    return row | summary(folders[-1].parent)


def summary(folder: Path) -> dict[str, Any]:
    """Takes a run's folder. Returns its figures for the table."""
    results = json.loads((folder / "results.json").read_text())
    queue = results.get("queue", {})
    txns = queue.get("transactions", {})
    kinds = {k: v.get("count", 0) for k, v in queue.get("kinds", {}).items() if v.get("count")}
    history_file = folder / "history.jsonl"
    if not history_file.exists():  # the run broke before its workload (a cluster not up)
        return {"verdict": "no history", "folder": str(results.get("error", ""))[:200]}
    history = history_file.read_text()
    events = [json.loads(line) for line in history.splitlines() if '"nemesis"' in line]
    return {
        "verdict": {True: "valid", False: "INVALID"}.get(results.get("valid"), "unknown"),
        "committed": txns.get("committed"),
        "aborted": txns.get("aborted"),
        "unknown": txns.get("unknown"),
        "crashed": history.count("crashed before its commit"),
        "acknowledged": queue.get("acknowledged"),
        "lost": queue.get("lost"),
        "kinds": " ".join(f"{k}:{n}" for k, n in sorted(kinds.items())),
        "worst_lag_s": round((queue.get("worst_realtime_lag") or {}).get("lag", 0.0), 1),
        "reached": reached(events),
        "folder": str(folder),
    }


def table(rows: list[dict[str, str]]) -> str:
    """Returns the per-cell summary as a Markdown table."""
    by_cell: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_cell[(row["release"], row["fault"], row["crash"])].append(row)
    lines = [
        "| release | fault | crash-clients | runs | invalid / unknown | committed | aborted "
        "| unknown | crashed | lost | kinds found (sum over the runs) | faults reached |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (release, fault, crash), runs in sorted(by_cell.items()):
        kinds: dict[str, int] = defaultdict(int)
        for run in runs:
            for item in filter(None, run["kinds"].split(" ")):
                kind, count = item.split(":")
                kinds[kind] += int(count)
        found = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
        reach = summed_reached(runs)

        def total(field: str, runs: list[dict[str, str]] = runs) -> int:
            return sum(int(r[field] or 0) for r in runs)

        invalid = sum(r["verdict"] == "INVALID" for r in runs)
        unknown = sum(r["verdict"] == "unknown" for r in runs)
        lines.append(
            f"| {release} | {fault} | {'yes' if crash == 'True' else 'no'} | {len(runs)} "
            f"| {invalid} / {unknown} | {total('committed'):,} | {total('aborted'):,} "
            f"| {total('unknown'):,} | {total('crashed'):,} | {total('lost')} | {found} "
            f"| {reach} |"
        )
    return "\n".join(lines)


def already_run(tsv: Path) -> set[tuple[str, str, str, str]]:
    """Returns the (release, fault, crash, seed) of every run the hunt's table holds."""
    if not tsv.exists():
        return set()
    with tsv.open() as f:
        rows = csv.DictReader(f, delimiter="\t")
        return {(r["release"], r["fault"], r["crash"], r["seed"]) for r in rows}


def main() -> int:
    """Runs the hunt (or only prints the table of one done); returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed-base", type=int, default=2200)
    parser.add_argument(
        "--first-round",
        type=int,
        default=1,
        help="the first round (runs already in the table are skipped)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "txn-hunt")
    parser.add_argument("--client", choices=("librdkafka", "java"), default="librdkafka")
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument(
        "--cluster-name",
        default="txn-hunt",
        help="the runs' cluster (a run replaces a cluster of its name: keep it apart from "
        "other runs on the engine)",
    )
    parser.add_argument(
        "--faults",
        help="a comma list of cells, each a fault or faults joined by + that run together "
        "(default: the issue 22 hunt's)",
    )
    parser.add_argument("--releases", default=",".join(RELEASES), help="a comma list")
    parser.add_argument("--crash", choices=("both", "no", "yes"), default="both")
    args = parser.parse_args()
    tsv = args.out / "hunt.tsv"
    if not args.table_only:
        args.out.mkdir(parents=True, exist_ok=True)
        crashes = {"both": (False, True), "no": (False,), "yes": (True,)}[args.crash]
        faults = tuple(args.faults.split(",")) if args.faults else None
        grid = cells(tuple(args.releases.split(",")), faults, crashes)
        done = already_run(tsv)
        for round_ in range(args.first_round - 1, args.rounds):
            for n, (release, fault, crash) in enumerate(grid, start=1):
                started = time.monotonic()
                seed = args.seed_base + round_
                if (release, fault, str(crash), str(seed)) in done:
                    continue  # a hunt run again goes on where it stopped
                row = run_one(release, fault, crash, seed, args.out, args.client, args.cluster_name)
                # A run that broke before its workload is no cell's evidence: kept apart,
                # and the next hunt of the same table runs it again.
                table_file = tsv if row["verdict"] not in BROKEN else args.out / "broken.tsv"
                new = not table_file.exists()
                with table_file.open("a", newline="") as f:
                    writer = csv.DictWriter(f, FIELDS, delimiter="\t")
                    if new:
                        writer.writeheader()
                    writer.writerow(row)
                print(
                    f"round {round_ + 1}/{args.rounds} run {n}/{len(grid)}: {release} {fault} "
                    f"crash={crash} {row.get('verdict')} {row.get('kinds', '')} "
                    f"({time.monotonic() - started:.0f} s)",
                    flush=True,
                )
    with tsv.open() as f:
        print(table(list(csv.DictReader(f, delimiter="\t"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
