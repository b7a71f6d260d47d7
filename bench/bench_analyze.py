"""Benchmarks of the Spark pipeline: `harness analyze` over realistic and synthetic run
folders, and `harness check --spark` against the local check on a 100,000-op history.

Realistic: the recorded run folders under --source (complete ones), copied --realistic
times with new names and start days. Synthetic: --synthetic copies of one recorded run cut
to its first 400 history lines. Each measurement is a fresh `python -m harness`
subprocess; figures are medians over --runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_linearizable import CASES, simulate

RUN_FILES = ("test.json", "results.json", "history.jsonl", "report.html")
DAY = 86400


def complete_runs(source: Path) -> list[Path]:
    """Returns the run folders under source that have results.json."""
    return sorted(p.parent for p in source.glob("*/*/results.json"))


def copy_run(run: Path, dest: Path, day: int, history_lines: int | None = None) -> None:
    """Copies a run's files into dest, its start moved `day` days on (and its history cut
    to its first history_lines lines when given)."""
    dest.mkdir(parents=True)
    for name in RUN_FILES:
        if (run / name).exists() and name != "history.jsonl":
            shutil.copyfile(run / name, dest / name)
    with open(run / "history.jsonl") as src, open(dest / "history.jsonl", "w") as out:
        for i, line in enumerate(src):
            if history_lines is not None and i >= history_lines:
                break
            out.write(line)
    test = json.loads((dest / "test.json").read_text())
    started = time.strptime(test["started"][:19], "%Y-%m-%dT%H:%M:%S")
    moved = time.mktime(started) + day * DAY
    test["started"] = time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.localtime(moved))
    (dest / "test.json").write_text(json.dumps(test))


def build(source: Path, root: Path, count: int, history_lines: int | None) -> None:
    """Writes count run folders under root, copied round-robin from source's runs."""
    runs = complete_runs(source)
    for i in range(count):
        run = runs[i % len(runs)]
        copy_run(
            run, root / f"{run.parent.name}-{i // len(runs)}" / run.name, i % 14, history_lines
        )


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str, int]:
    """Runs cmd. Returns (wall seconds, its output, exit code)."""
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.monotonic() - started, done.stdout + done.stderr, done.returncode


def bench_analyze(root: Path, runs: int, master: str) -> dict[str, Any]:
    """Times `harness analyze root` runs times. Returns the walls, median and peak RSS."""
    walls = []
    for _ in range(runs):
        wall, output, code = timed(
            [sys.executable, "-m", "harness", "analyze", str(root), "--spark-master", master]
        )
        if code != 0:
            raise SystemExit(f"analyze failed ({code}):\n{output}")
        walls.append(round(wall, 1))
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"walls_s": walls, "median_s": statistics.median(walls), "peak_rss_mib": round(peak_mib)}


def history_file(path: Path, seed: int) -> None:
    """Writes the checker benchmark's 100,000-op history (1,000 keys) as history.jsonl,
    one process an op, an info op never completing."""
    ops = simulate(CASES["1000-keys-100k"], seed)
    timed_events = []
    for n, op in enumerate(ops):
        base = {"process": n, "f": op.f, "key": op.key, "value": op.value}
        timed_events.append((op.call, 0, {**base, "type": "invoke"}))
        if op.ret is not None:
            timed_events.append((op.ret, 1, {**base, "type": "ok"}))
    timed_events.sort(key=lambda t: (t[0], t[1]))
    with open(path, "w") as f:
        for i, (t, _, e) in enumerate(timed_events):
            f.write(json.dumps({"index": i, "time": t, **e}) + "\n")


def bench_check(path: Path, runs: int, master: str) -> dict[str, Any]:
    """Times the local check and check --spark on path. Returns walls, medians, verdicts."""
    env = {**os.environ, "HARNESS_SPARK_MASTER": master}
    found: dict[str, Any] = {}
    for name, extra in (("local", []), ("spark", ["--spark"])):
        walls, verdicts = [], set()
        for _ in range(runs):
            cmd = [sys.executable, "-m", "harness", "check", str(path), "--model", "cas-register"]
            wall, output, code = timed([*cmd, *extra], env)
            walls.append(round(wall, 1))
            verdicts.add((code, output.strip().splitlines()[-1 if code else 0][:60]))
        found[name] = {
            "walls_s": walls,
            "median_s": statistics.median(walls),
            "verdicts": sorted(verdicts),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=Path("results"), help="default: results")
    parser.add_argument("--realistic", type=int, default=200)
    parser.add_argument("--synthetic", type=int, default=0, help="e.g. 10000")
    parser.add_argument("--check", action="store_true", help="also time check --spark")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    if not complete_runs(args.source) and (args.realistic or args.synthetic):
        print(f"analyze: skipped, no recorded run folder under {args.source} (--source)")
        args.realistic = args.synthetic = 0
    with tempfile.TemporaryDirectory(prefix="bench-analyze-") as tmp:
        if args.realistic:
            root = Path(tmp) / "realistic"
            build(args.source, root, args.realistic, None)
            print(
                f"analyze, {args.realistic} realistic runs:",
                bench_analyze(root, args.runs, args.master),
            )
        if args.synthetic:
            root = Path(tmp) / "synthetic"
            build(args.source, root, args.synthetic, 400)
            print(
                f"analyze, {args.synthetic} synthetic runs:",
                bench_analyze(root, args.runs, args.master),
            )
        if args.check:
            path = Path(tmp) / "history.jsonl"
            history_file(path, seed=1)
            print("check, 100,000 ops:", bench_check(path, args.runs, args.master))


if __name__ == "__main__":
    main()
