"""`harness check DIR` on a folder of many small Jepsen text logs: the whole command's wall
time, start-up included, and the time each history takes inside the process.

Run: .venv/bin/python bench/bench_check_many.py [--files 100] [--runs 5] [--jobs N]. Writes
--files seeded Jepsen-style logs (jepsen.util lines of a cas-register over a few keys as
jepsen.independent writes them, [k v] values, 200 to 1,000 ops each, 2% crashed) into a
temporary folder once, then runs `python -m harness check DIR --json` --runs times under
/usr/bin/time and reports the median wall time, the median CPU time (user + system, all
processes: what a busy machine does not change much), the peak RSS, and the per-history
`seconds` of the median run.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_linearizable import Case, simulate

from history import Op

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 1.5


def edn(value: object) -> str:
    """Returns a register value as Jepsen prints it."""
    if value is None:
        return "nil"
    if isinstance(value, list | tuple):
        return "[" + " ".join(edn(v) for v in value) + "]"
    return str(value)


def log_lines(ops: list[Op]) -> list[str]:
    """Returns ops as Jepsen's log prints them: an invoke line, then the completion (a
    crashed op's :info right after its invoke), in time order, values as [key value]."""
    events = []
    for op in ops:
        invoke_value = None if op.f == "read" else op.value
        events.append((op.call, 0, op.process, "invoke", op.f, [op.key, invoke_value], ""))
        if op.ret is None:
            events.append((op.call, 1, op.process, "info", op.f, [op.key, op.value], ":timeout"))
        else:
            events.append((op.ret, 1, op.process, "ok", op.f, [op.key, op.value], ""))
    events.sort(key=lambda e: e[:2])
    lines = ["2026-11-23 10:00:00,000{GMT}\tINFO\t[main] jepsen.core: Running test"]
    for t, _, process, kind, f, value, error in events:
        stamp = f"2026-11-23 10:{t // 60_000_000_000 % 60:02}:{t // 1_000_000_000 % 60:02}"
        line = f"{stamp},{t // 1_000_000 % 1000:03}{{GMT}}\tINFO\t[jepsen worker {process}] "
        lines.append(line + f"jepsen.util: {process}\t:{kind}\t:{f}\t{edn(value)}\t{error}")
    return [*lines, "2026-11-23 10:59:59,999{GMT}\tINFO\t[main] jepsen.core: Analysis complete"]


def write_logs(folder: Path, files: int, seed: int = 1) -> int:
    """Writes `files` seeded logs into folder. Returns the ops written in all."""
    rnd = random.Random(seed)
    total = 0
    for i in range(files):
        case = Case(f"log-{i}", rnd.randint(200, 1000), rnd.randint(1, 5), 5, 0.02, False, 0)
        ops = simulate(case, seed * 1000 + i)
        total += len(ops)
        (folder / f"jepsen-{i:03}.log").write_text("\n".join(log_lines(ops)) + "\n")
    return total


Run = tuple[float, float, int, list[float], float]


def timed_check(folder: Path, jobs: int | None) -> Run:
    """Runs `harness check folder --json` once under /usr/bin/time. Returns (wall seconds,
    peak RSS MiB, exit code, each history's in-process seconds, CPU seconds)."""
    command = ["/usr/bin/time", "-f", "%e %M %U %S", sys.executable, "-m", "harness", "check"]
    command += [str(folder), "--json", *(["--jobs", str(jobs)] if jobs else [])]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    found = re.search(r"^([\d.]+) (\d+) ([\d.]+) ([\d.]+)$", done.stderr.strip().splitlines()[-1])
    if found is None:
        raise RuntimeError(f"no timing from /usr/bin/time: {done.stderr[-300:]}")
    seconds = [json.loads(line)["seconds"] for line in done.stdout.splitlines()]
    cpu = float(found[3]) + float(found[4])
    return float(found[1]), int(found[2]) / 1024, done.returncode, seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, help="passed to harness check (default: its own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-check-many-") as tmp:
        folder = Path(tmp)
        ops = write_logs(folder, args.files)
        runs = [timed_check(folder, args.jobs) for _ in range(args.runs)]
    codes = {run[2] for run in runs}
    walls = [run[0] for run in runs]
    cpus = [run[4] for run in runs]
    median_run = sorted(runs)[len(runs) // 2]
    per_file = median_run[3]
    print(f"{args.files} logs, {ops} ops; jobs {args.jobs or 'default'}; exit codes {codes}")
    print(
        f"wall: median {statistics.median(walls):.2f} s ({', '.join(f'{w:.2f}' for w in walls)})"
        f", target {TARGET_S} s; peak RSS {max(run[1] for run in runs):.0f} MiB"
    )
    print(f"cpu (user + sys): median {statistics.median(cpus):.2f} s; {_load()}")
    print(
        f"in process per history (median run): median {statistics.median(per_file) * 1000:.1f} "
        f"ms, max {max(per_file) * 1000:.1f} ms, sum {sum(per_file):.2f} s"
    )


def _load() -> str:
    """Returns the load averages, which say how far the wall times can be trusted."""
    with open("/proc/loadavg") as f:
        return "load average after " + " ".join(f.read().split()[:3])


if __name__ == "__main__":
    main()
