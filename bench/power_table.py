"""The power-loss table of FINDINGS.md from run folders: per release, fault and Kafka
profile, the verdicts, what was acknowledged and lost (checker and recount), divergent
replicas, the unsynced bytes each cut dropped, and the ops that succeeded in the fault.

Usage: `.venv/bin/python bench/power_table.py RESULTS_ROOT [ROOT ...]`; every folder
under a root with test.json and results.json is one run (one that broke before its check
is left out, and counted). Each figure is read from the run's results.json, as the run
wrote it; a measure a run is older than is "-", or counted in fewer runs than the cell's.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

Cell = tuple[str, str, str]
"""Release (with its metadata mode), fault, Kafka profile."""


def run_results(roots: Sequence[Path]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Yields every finished run's spec and results under the roots, in folder order."""
    for root in roots:
        for test in sorted(root.rglob("test.json")):
            results = test.parent / "results.json"
            if results.is_file():
                spec = json.loads(test.read_text())["spec"]
                yield spec, json.loads(results.read_text())


def span(values: Sequence[float], unit: str = "") -> str:
    """Returns "least-most" of the values (one value alone), "-" for none."""
    if not values:
        return "-"
    low, high = min(values), max(values)
    fmt = (lambda v: f"{v:,.0f}") if all(float(v).is_integer() for v in values) else str
    return (fmt(low) if low == high else f"{fmt(low)}-{fmt(high)}") + unit


def measured(figures: Sequence[int], runs: int) -> str:
    """Returns the figures' sum, saying in how many runs of the cell they were measured
    when not in all (runs older than the measure)."""
    if not figures:
        return "-"
    return f"{sum(figures)}" + (f" ({len(figures)} of {runs} runs)" if len(figures) < runs else "")


def cut_bytes(results: dict[str, Any]) -> list[int]:
    """Returns the unsynced bytes each node lost in each power cut of the run."""
    return [
        lost["unsynced_bytes"]
        for window in results["nemesis"]["windows"]
        for lost in (window.get("detail") or {}).get("lost", {}).values()
    ]


def row(cell: Cell, runs: list[dict[str, Any]]) -> str:
    """Takes a cell and its runs' results. Returns its markdown row."""
    valid = sum(r["valid"] is True for r in runs)
    acked = [r["lost-acks"]["ack_count"] for r in runs]
    lost = sum(r["lost-acks"]["lost_count"] for r in runs)
    recounts = [(r.get("final") or {}).get("recount") for r in runs]
    compared = [r.get("replicas") for r in runs]
    windows = [w for r in runs for w in (r.get("availability") or {}).get("windows", [])]
    ok = sum(w["ok_during"] for w in windows)
    during = sum(w["ops_during"] for w in windows)
    share = f" ({100 * ok / during:.0f}%)" if during else ""
    resumed = [w["resumed_s"] for w in windows if w["resumed_s"] is not None]
    cells = [
        *cell,
        str(len(runs)),
        f"{valid} VALID" if valid == len(runs) else f"{valid} VALID, {len(runs) - valid} not",
        span(acked),
        str(lost),
        measured([c["lost"] for c in recounts if c], len(runs)),
        measured([c["divergent_below_hw"] for c in compared if c], len(runs)),
        span([b for r in runs for b in cut_bytes(r)]),
        f"{ok:,} of {during:,}{share}" if windows else "-",
        span(resumed, " s"),
    ]
    return "| " + " | ".join(cells) + " |"


def table(cells: dict[Cell, list[dict[str, Any]]]) -> str:
    """Takes each cell's runs' results. Returns the markdown table."""
    head = (
        "| release | fault | config | runs | verdict | acknowledged (per run) | lost (checker)"
        " | lost (recount) | replicas divergent below HW | unsynced bytes dropped (per node"
        " and cut) | ops ok during the fault | first ok after the heal |"
    )
    lines = [head, "| --- " * 12 + "|"]
    lines += [row(cell, runs) for cell, runs in sorted(cells.items())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", type=Path, nargs="+")
    args = parser.parse_args()
    cells: dict[Cell, list[dict[str, Any]]] = {}
    broke = 0
    for spec, results in run_results(args.roots):
        if "lost-acks" not in results:  # it broke before the check (its "error" says why)
            broke += 1
            continue
        release = f"{spec['kafka_version']} {spec['metadata']}"
        key = (release, ",".join(spec["nemesis"]), spec["kafka_config"])
        cells.setdefault(key, []).append(results)
    print(table(cells))
    if broke:
        print(f"\n{broke} run(s) left out: they broke before the check (results.json's error)")


if __name__ == "__main__":
    main()
