"""Known Kafka bugs as the harness's proof (issue 40): each hunt runs the smallest workload,
faults and settings that should expose one bug, on a release (or setting) that has it and
on one that does not, with the same seeds, and says in how many runs the checker found it.

A hunt's cells differ only in what the bug depends on (the release, the client, a broker
setting); the seeds are the same in every cell, so a cell without the bug runs exactly
the schedules that found it in the other. One line per run goes to OUT/hunt.tsv as it
ends (a hunt run again goes on where it stopped); the table says per cell: runs, found,
first folder that found it. `--guard` is the nightly regression cell: the bug's cell
only, with the seeds that found it (HUNTS' `guard_seeds`), failing (exit 1) when none of
them finds it any more, so a change of the harness that loses the ability is caught.

Sources: KAFKA-17754 (Jepsen's 2024 report of a late EndTxn that lands in the producer's
next transaction; KIP-890 part 2, transactions v2, is the fix, spoken only by the Java
client of 4.0 and later against a 4.0+ cluster); redpanda-data/kafka-fsync (acknowledged
writes gone when every replica loses power under Kafka's default flush settings).
Usage: .venv/bin/python bench/hunt.py BUG [--runs 5] [--seed-base N] [--out DIR]
           [--cluster-name NAME] [--cells LABEL,...]
       .venv/bin/python bench/hunt.py BUG --guard
       .venv/bin/python bench/hunt.py BUG --table-only [--out DIR]
       .venv/bin/python bench/hunt.py --list
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from txn_hunt import reached_counts, summed_reached
from txn_markers import history_outcomes, replica_logs, set_against

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ("cell", "seed", "exit", "verdict", "found", "evidence", "reached", "folder")


@dataclasses.dataclass(frozen=True)
class Cell:
    """One side of a hunt: a label, the run options it adds, and whether the bug should
    be there."""

    label: str
    options: tuple[str, ...]
    has_bug: bool


@dataclasses.dataclass(frozen=True)
class Hunt:
    """One bug's hunt: the run options every cell shares, its cells, the queue anomaly
    kinds that show the bug with the op outcome a case must have (None: any), so that a
    run found it when any kind has such a case (a torn transaction is a lost write of an
    op that ended `info`), or what a fault's stop op must have seen (`seen`, as
    txn_hunt.reached names it: an answer the coordinator gave a paused client), the
    seeds the nightly guard runs on the cell that found it, and a sentence of what goes
    wrong."""

    bug: str
    what: str
    options: tuple[str, ...]
    cells: tuple[Cell, ...]
    kinds: tuple[tuple[str, str | None], ...]
    seen: str | None
    seed_base: int
    guard_seeds: tuple[int, ...]
    guard_cell: str
    markers: bool = False
    """Keep the cluster after each run and read the transaction markers of the partitions
    a case names from every replica's segments (bench/txn_markers.py) into the folder."""


HUNTS = {
    "KAFKA-17754": Hunt(
        bug="KAFKA-17754",
        what="a late EndTxn(commit) lands in the producer's next transaction and commits "
        "part of it: a transaction that ended info has some sends read, others never",
        options=(
            *("--workload", "queue", "--txn"),
            *("--nemesis", "late-produce,late-end-txn", "--kafka-config", "safe"),
            *("--abort-p", "0.1", "--isolation-level", "read_committed", "--time-limit", "60"),
        ),
        # The fix is transactions v2, which only the Java client of 4.0+ speaks against a
        # 4.0+ cluster: librdkafka runs TV1 on every release (confluentinc/librdkafka#5423).
        cells=(
            Cell("3.9.1 Java TV1", ("--kafka-version", "3.9.1", "--client", "java"), True),
            Cell("4.4.0 Java TV2", ("--kafka-version", "4.4.0", "--client", "java"), False),
            Cell("3.9.1 librdkafka TV1", ("--kafka-version", "3.9.1"), has_bug=True),
            Cell("4.4.0 librdkafka TV1", ("--kafka-version", "4.4.0"), has_bug=True),
        ),
        # A late commit that lands mid-transaction commits what was sent so far: the
        # client's own read_committed poll then reads it before its commit
        # (precommitted-read), and if the client's end then fails, the transaction ends
        # info with part of it committed (a lost write of an info op).
        kinds=(("precommitted-read", None), ("lost-write", "info")),
        seen=None,
        seed_base=3800,
        # A seed fixes the faults, not when a held commit lands: 3803 found it once and
        # not on its next run, and the window opened in about 1 run in 5, so the guard
        # tries up to 12 seeds.
        guard_seeds=(3803, *range(3805, 3816)),
        guard_cell="3.9.1 librdkafka TV1",
    ),
    "KAFKA-20785": Hunt(
        bug="KAFKA-20785",
        what="under transactions v2 a commit that reaches the coordinator after its "
        "timeout abort is answered INVALID_TXN_STATE, which clients take as fatal "
        "(PRODUCER_FENCED, recoverable, under v1)",
        options=(
            *("--workload", "queue", "--txn", "--client", "java", "--nemesis", "pause-client"),
            *("--kafka-config", "safe", "--time-limit", "60"),
        ),
        cells=(
            Cell("4.4.0 Java TV2", ("--kafka-version", "4.4.0"), has_bug=True),
            Cell("3.9.1 Java TV1", ("--kafka-version", "3.9.1"), has_bug=False),
        ),
        kinds=(),
        seen="paused EndTxn INVALID_TXN_STATE",
        seed_base=4100,
        guard_seeds=(4100,),
        guard_cell="4.4.0 Java TV2",
    ),
    "KAFKA-20742": Hunt(
        bug="KAFKA-20742",
        what="a share group starts a partition added to a topic it reads at the latest "
        "offset, not 0: what was sent there before its first read is never delivered",
        options=(
            *("--workload", "share", "--share-auto-offset-reset", "latest"),
            *("--nemesis", "add-partitions", "--nemesis-interval", "8", "--time-limit", "40"),
            *("--keys", "4", "--rate", "60"),
        ),
        # The fix (apache/kafka#22714) is in 4.4.0's group coordinator, not 4.3.1's.
        cells=(
            Cell("4.3.1", ("--kafka-version", "4.3.1"), has_bug=True),
            Cell("4.4.0", ("--kafka-version", "4.4.0"), has_bug=False),
        ),
        kinds=(("new-partition-skip", None),),
        seen=None,
        seed_base=4000,
        guard_seeds=(4000, 4001),
        guard_cell="4.3.1",
    ),
    "KAFKA-20716": Hunt(
        bug="KAFKA-20716",
        what="an unclean election drops a transaction's COMMIT or ABORT marker: a "
        "read_committed consumer stays at the last stable offset, or the producer's next "
        "commit closes the transaction the marker would have aborted (documented: "
        "apache/kafka#22937)",
        options=(
            *("--workload", "queue", "--txn", "--kafka-config", "unsafe"),
            *("--nemesis", "isr-shrink", "--isolation-level", "read_committed"),
            *("--time-limit", "60"),
        ),
        # Kafka documents it as a limitation of unclean election under transactions
        # (apache/kafka#22937): every release has it, none a fix.
        cells=(
            Cell("3.9.1", ("--kafka-version", "3.9.1"), has_bug=True),
            Cell("4.4.0", ("--kafka-version", "4.4.0"), has_bug=True),
        ),
        # A lost marker shows as a consumer stuck below the high watermark (nothing ends
        # the transaction) or, once the producer id commits again there, as an aborted
        # read (the commit closes the aborted transaction with its own).
        kinds=(("stuck-consumer", None), ("G1a", None)),
        seen=None,
        seed_base=4200,
        # Found by seeds 4200 and 4208 in 10 runs at load 9 to 51, where the ISR seldom
        # shrank: not in the nightly's NIGHTLY_HUNTS until a calm machine says how often.
        guard_seeds=(4200, 4208),
        guard_cell="3.9.1",
        markers=True,
    ),
    "kafka-fsync": Hunt(
        bug="kafka-fsync",
        what="every acknowledged write since the last fsync is lost when all in-sync "
        "replicas lose power at once (Kafka's default flush: documented, not a bug)",
        options=(
            *("--workload", "queue", "--nemesis", "power-loss-brokers"),
            *("--kafka-version", "4.4.0", "--time-limit", "40"),
        ),
        cells=(
            Cell("safe", ("--kafka-config", "safe"), has_bug=True),
            Cell("safe-fsync", ("--kafka-config", "safe-fsync"), has_bug=False),
        ),
        kinds=(("lost-write", None),),
        seen=None,
        seed_base=4000,
        guard_seeds=(),
        guard_cell="safe",
    ),
}


def slug(cell: Cell) -> str:
    """Returns a cell's label as a test name's part: "3.9.1-Java-TV1"."""
    return cell.label.replace(" ", "-").replace("(", "").replace(")", "")


def run_one(hunt: Hunt, cell: Cell, seed: int, out: Path, cluster: str) -> dict[str, Any]:
    """Runs one test of a hunt's cell; returns its line of the table."""
    name = f"{hunt.bug}-{slug(cell)}"
    argv = [
        *(sys.executable, "-m", "harness", "run", *hunt.options, *cell.options),
        *("--seed", str(seed), "--name", name, "--results", str(out)),
        *("--cluster-name", cluster),
    ]
    if hunt.markers:
        argv.append("--leave-cluster-running")
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        row: dict[str, Any] = {"cell": cell.label, "seed": seed, "exit": done.returncode}
        folders = sorted((out / name).glob("*/results.json"), key=lambda p: p.stat().st_mtime)
        if not folders or not (folders[-1].parent / "history.jsonl").exists():
            return row | {"verdict": "broken", "found": False, "folder": done.stderr[-200:]}
        folder = folders[-1].parent
        row |= judged(hunt, folder)
        if hunt.markers and row["found"]:
            read_markers(folder, cluster)
            row |= judged(hunt, folder)
        return row
    finally:
        if hunt.markers:
            down = (sys.executable, "-m", "harness", "cluster", "down", "--name", cluster)
            subprocess.run(down, cwd=ROOT, capture_output=True, check=False)


def read_markers(folder: Path, cluster: str) -> None:
    """Takes a run's folder whose cluster is still up. Reads the transaction markers of
    each partition its cases name from every replica (bench/txn_markers.py) into
    markers-P.json there."""
    results = json.loads((folder / "results.json").read_text())
    # The run's topic: TestSpec.topic, fresh per seed.
    topic = f"store-{json.loads((folder / 'test.json').read_text())['spec']['seed']}"
    kinds = (results.get("queue") or {}).get("kinds", {})
    partitions = sorted(
        {
            int(c["partition"])
            for k in ("G1a", "stuck-consumer")
            for c in kinds.get(k, {}).get("cases", [])
        }
    )
    for partition in partitions:
        logs = replica_logs(cluster, topic, partition)
        found = set_against(logs, history_outcomes(folder / "history.jsonl", partition))
        (folder / f"markers-{partition}.json").write_text(json.dumps(found, indent=1))


def markers_said(folder: Path) -> str:
    """Takes a run's folder. Returns what its markers-P.json files show, in a few words
    ("" when it has none)."""
    said = []
    for path in sorted(folder.glob("markers-*.json")):
        partition = path.stem.removeprefix("markers-")
        for node, seen in json.loads(path.read_text()).items():
            committed, hanging = seen["aborted_sends_committed"], seen["open_at_log_end"]
            said.append(
                f"p{partition} {node}: {len(committed)} aborted sends committed, "
                f"{len(hanging)} transactions open at the log end"
            )
    return ", ".join(said)


def shrink_steps(events: list[dict[str, Any]]) -> dict[str, int]:
    """Takes a run's nemesis events. Returns how many isr-shrink sequences reached each
    step that matters to an unclean election: the ISR shrunk to the leader, the leader
    killed, a follower elected (unclean), or the ISR did not shrink."""
    wanted = ("isr-shrunk", "killed", "follower-elected", "isr-did-not-shrink")
    sums: dict[str, int] = defaultdict(int)
    for e in events:
        value = e.get("value")
        if e.get("f") == "start-isr-shrink" and e.get("type") == "info" and isinstance(value, dict):
            for step in value.get("steps") or []:
                if step.get("step") in wanted:
                    sums[f"isr-shrink {step['step']}"] += 1
    return dict(sums)


def judged(hunt: Hunt, folder: Path) -> dict[str, Any]:
    """Takes a run's folder. Returns its verdict, whether it found the hunt's bug, the
    first case that shows it (op index, process, value, outcome) and what its faults
    reached."""
    results = json.loads((folder / "results.json").read_text())
    # A kind is the queue checker's, the expansion check's or the share checks'.
    kinds = {
        kind: found
        for section in ("queue", "expansion", "share")
        for kind, found in (results.get(section) or {}).get("kinds", {}).items()
        if isinstance(found, dict)
    }
    cases = [
        c | {"kind": kind}
        for kind, outcome in hunt.kinds
        for c in kinds.get(kind, {}).get("cases", [])
        if outcome in (None, c.get("outcome"))
    ]
    lines = (folder / "history.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines if '"nemesis"' in line]
    counts = reached_counts(events) | shrink_steps(events)
    if hunt.seen is not None and hunt.seen in counts:
        cases.append({"seen": f"{hunt.seen} x{counts[hunt.seen]}"})
    evidence = ""
    if cases:
        first = cases[0]
        shown = (
            "kind",
            "index",
            "process",
            "partition",
            "value",
            "outcome",
            "first_skipped",
            "seen",
        )
        evidence = ", ".join(f"{k}={first[k]}" for k in shown if k in first)
        evidence = f"{len(cases)} cases; first {evidence}"
        if markers := markers_said(folder):
            evidence = f"{evidence}; markers: {markers}"
    return {
        "verdict": {True: "valid", False: "INVALID"}.get(results.get("valid"), "unknown"),
        "found": bool(cases),
        "evidence": evidence,
        "reached": "; ".join(f"{k}={n}" for k, n in sorted(counts.items())),
        "folder": str(folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder),
    }


def table(hunt: Hunt, rows: list[dict[str, str]]) -> str:
    """Returns the hunt's per-cell summary as a Markdown table."""
    by_cell: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_cell[row["cell"]].append(row)
    lines = [
        "| cell | has the bug | runs | found in | invalid | seeds | first run that found it "
        "| faults reached (sum) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for cell in hunt.cells:
        runs = [r for r in by_cell.get(cell.label, []) if r["verdict"] != "broken"]
        found = [r for r in runs if r["found"] == "True"]
        reach = summed_reached(runs)
        seeds = ", ".join(sorted({r["seed"] for r in runs}))
        first = f"{found[0]['folder']} ({found[0]['evidence']})" if found else "-"
        invalid = sum(r["verdict"] == "INVALID" for r in runs)
        lines.append(
            f"| {cell.label} | {'yes' if cell.has_bug else 'no'} | {len(runs)} | {len(found)} "
            f"| {invalid} | {seeds} | {first} | {reach} |"
        )
    return "\n".join(lines)


def already_run(tsv: Path) -> set[tuple[str, str]]:
    """Returns the (cell, seed) of every run the hunt's table holds."""
    if not tsv.exists():
        return set()
    with tsv.open() as f:
        return {(r["cell"], r["seed"]) for r in csv.DictReader(f, delimiter="\t")}


def append(tsv: Path, row: dict[str, Any]) -> None:
    """Adds a run's line to the table file, with the header when the file is new."""
    new = not tsv.exists()
    with tsv.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS, delimiter="\t")
        if new:
            writer.writeheader()
        writer.writerow(row)


def hunt_runs(
    hunt: Hunt, cells: tuple[Cell, ...], seeds: list[int], out: Path, cluster: str
) -> list[dict[str, Any]]:
    """Runs every seed on every cell, seeds outermost (a hunt cut short has each cell the
    same number of times), skipping runs the table already holds. Returns the new rows."""
    tsv = out / "hunt.tsv"
    done = already_run(tsv)
    rows = []
    for n, seed in enumerate(seeds, start=1):
        for cell in cells:
            if (cell.label, str(seed)) in done:
                continue
            started = time.monotonic()
            row = run_one(hunt, cell, seed, out, cluster)
            # A run that broke before its workload is no evidence: kept apart, and the
            # next hunt of the same table runs it again.
            append(tsv if row["verdict"] != "broken" else out / "broken.tsv", row)
            rows.append(row)
            print(
                f"{hunt.bug} seed {seed} ({n}/{len(seeds)}) {cell.label}: {row['verdict']}, "
                f"{'found' if row['found'] else 'not found'} ({time.monotonic() - started:.0f} s)",
                flush=True,
            )
    return rows


def main() -> int:
    """Runs a hunt (or its guard, or prints its table); returns 0, or 1 when the guard
    did not find the bug."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bug", nargs="?", choices=sorted(HUNTS))
    parser.add_argument("--list", action="store_true", help="name each hunt and what it finds")
    parser.add_argument("--runs", type=int, default=5, help="seeds per cell (default 5)")
    parser.add_argument("--seed-base", type=int, help="the first seed (default: the hunt's)")
    parser.add_argument("--out", type=Path, help="default results/hunt-BUG")
    parser.add_argument("--cluster-name", default="hunt")
    parser.add_argument("--cells", help="a comma list of cells, as their names say them")
    parser.add_argument("--guard", action="store_true", help="nightly: exit 1 if not found")
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument(
        "--rejudge", action="store_true", help="judge the table's runs again (runs none)"
    )
    args = parser.parse_args()
    if args.list or not args.bug:
        for name, hunt in sorted(HUNTS.items()):
            print(f"{name}: {hunt.what}")
        return 0
    hunt = HUNTS[args.bug]
    out = args.out or ROOT / "results" / f"hunt-{hunt.bug}"
    if args.guard:
        return guard(hunt, out / "guard", args.cluster_name)
    if not (args.table_only or args.rejudge):
        out.mkdir(parents=True, exist_ok=True)
        wanted = set(args.cells.split(",")) if args.cells else None
        cells = tuple(c for c in hunt.cells if wanted is None or slug(c) in wanted)
        base = hunt.seed_base if args.seed_base is None else args.seed_base
        hunt_runs(hunt, cells, list(range(base, base + args.runs)), out, args.cluster_name)
    if args.rejudge:
        rejudge(hunt, out / "hunt.tsv")
    with (out / "hunt.tsv").open() as f:
        print(table(hunt, list(csv.DictReader(f, delimiter="\t"))))
    return 0


def rejudge(hunt: Hunt, tsv: Path) -> None:
    """Judges every run the table holds again from its folder (after the hunt's kinds
    changed), keeping its cell, seed and exit."""
    with tsv.open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    tsv.unlink()
    for row in rows:
        folder = ROOT / row["folder"]  # an absolute folder stays itself
        kept = {k: row[k] for k in ("cell", "seed", "exit")}
        append(tsv, kept | (judged(hunt, folder) if folder.is_dir() else row))


def guard(hunt: Hunt, out: Path, cluster: str) -> int:
    """Runs the bug's guard cell on its guard seeds, one after another, until one finds
    it. Returns 0 when one did, 1 when none did (or the hunt has no such seeds yet)."""
    if not hunt.guard_seeds:
        print(f"{hunt.bug}: no seeds found it yet, nothing to guard", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    cell = next(c for c in hunt.cells if c.label == hunt.guard_cell)
    for seed in hunt.guard_seeds:
        row = run_one(hunt, cell, seed, out, cluster)
        print(f"{hunt.bug} guard, seed {seed}: {row['verdict']}, found={row['found']}", flush=True)
        if row["found"]:
            return 0
    print(f"{hunt.bug}: not found on {cell.label} with seeds {hunt.guard_seeds}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
