"""The partition expansion hunts (issue 40): KAFKA-20742 (a share group starts a partition
added to a topic it knows at the log end under share.auto.offset.reset=latest; fixed in
4.4.0) and KAFKA-20539 / KIP-1327 (a consumer group at auto.offset.reset=latest skips
what was sent to a new partition before it found it; documented), each a short run of the
smallest workload under add-partitions, on a release with the bug and one with the fix,
the same seeds on each.

Rounds go outermost, so that a hunt cut short still has every cell the same number of
times. One line per run goes to OUT/hunt.tsv as it ends (the expansion section's counts:
partitions added, sends acknowledged there, read there, skipped); the table sums it up.
Usage: .venv/bin/python bench/expand_hunt.py [--hunts H,...] [--releases V,...]
           [--rounds 3] [--seed-base 4000] [--out DIR]
       .venv/bin/python bench/expand_hunt.py --table-only --out DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COMMON = (
    "--nemesis", "add-partitions", "--nemesis-interval", "8", "--time-limit", "40",
    "--keys", "4", "--rate", "60", "--cluster-name", "expand",
)  # fmt: skip
HUNTS: dict[str, tuple[str, ...]] = {
    "share-latest": ("--workload", "share", "--share-auto-offset-reset", "latest"),
    "consumer-latest": (
        "--workload", "queue", "--sub-via", "subscribe", "--group-protocol", "consumer",
        "--auto-offset-reset", "latest",
    ),
    "classic-latest": (
        "--workload", "queue", "--sub-via", "subscribe", "--group-protocol", "classic",
        "--auto-offset-reset", "latest",
    ),
    "consumer-earliest": (
        "--workload", "queue", "--sub-via", "subscribe", "--group-protocol", "consumer",
    ),
    "share-earliest": ("--workload", "share"),
    "assign": ("--workload", "queue"),
}  # fmt: skip
"""Each hunt's own options: KAFKA-20742's, KAFKA-20539's under both protocols, and the
controls at earliest."""
FIELDS = (
    "hunt", "release", "seed", "exit", "verdict", "added", "acked_new", "read_new",
    "skipped", "skip_partitions", "first_case", "counted", "folder",
)  # fmt: skip


def run_one(hunt: str, release: str, seed: int, out: Path) -> dict[str, Any]:
    """Runs one hunt on one release; returns its row."""
    name = f"expand-{hunt}-{release}"
    cmd = [sys.executable, "-m", "harness", "run", *HUNTS[hunt], *COMMON]
    cmd += ["--kafka-version", release, "--seed", str(seed), "--name", name]
    with open(out / "runs.log", "a") as log:
        done = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False)
    runs = sorted((ROOT / "results" / name).glob("2*"))
    row: dict[str, Any] = {"hunt": hunt, "release": release, "seed": seed, "exit": done.returncode}
    return row | (_reading(runs[-1]) if runs else {"verdict": "no results"})


def _reading(folder: Path) -> dict[str, Any]:
    try:
        results = json.loads((folder / "results.json").read_text())
    except (OSError, ValueError):
        return {"verdict": "no results", "folder": folder.name}
    section = results.get("expansion") or {}
    parts = section.get("partitions", {}).values()
    cases = section.get("kinds", {}).get("new-partition-skip", {}).get("cases", [])
    first = cases[0] if cases else None
    return {
        "verdict": {True: "VALID", False: "INVALID"}.get(results.get("valid"), "UNKNOWN"),
        "added": len(section.get("partitions", {})),
        "acked_new": sum(p["acked"] for p in parts),
        "read_new": sum(p["read"] for p in parts),
        "skipped": sum(p["skipped"] for p in parts),
        "skip_partitions": len(cases),
        "first_case": f"p{first['partition']}@{first['first_skipped']}x{first['skipped']}"
        if first
        else "",
        "counted": section.get("counted"),
        "folder": folder.name,
    }


def table(out: Path) -> str:
    """Returns the markdown table of OUT/hunt.tsv, one line per hunt and release."""
    cells: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    with open(out / "hunt.tsv") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            cells[(row["hunt"], row["release"])].append(row)
    lines = [
        "| hunt | release | runs | skipped in | verdicts | added | acked there | read there "
        "| skipped | first skip run |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (hunt, release), rows in sorted(cells.items()):
        found = [r for r in rows if int(r["skipped"] or 0) > 0]
        verdicts = ", ".join(sorted({r["verdict"] for r in rows}))
        total = {
            k: sum(int(r[k] or 0) for r in rows)
            for k in ("added", "acked_new", "read_new", "skipped")
        }
        first = found[0]["folder"] if found else "-"
        lines.append(
            f"| {hunt} | {release} | {len(rows)} | {len(found)} | {verdicts} | {total['added']} "
            f"| {total['acked_new']} | {total['read_new']} | {total['skipped']} | {first} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hunts", default="share-latest,consumer-latest")
    ap.add_argument("--releases", default="4.3.1,4.4.0")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed-base", type=int, default=4000)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "expand-hunt")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table_only:
        tsv = args.out / "hunt.tsv"
        if not tsv.exists():
            tsv.write_text("\t".join(FIELDS) + "\n")
        for r in range(args.rounds):
            for hunt in args.hunts.split(","):
                for release in args.releases.split(","):
                    row = run_one(hunt, release, args.seed_base + r, args.out)
                    with open(tsv, "a") as f:
                        f.write("\t".join(str(row.get(k, "")) for k in FIELDS) + "\n")
                    print("\t".join(str(row.get(k, "")) for k in FIELDS), flush=True)
    print(table(args.out))


if __name__ == "__main__":
    main()
