"""Peak memory of `harness check` on a large history.jsonl, against the file's size.

Run: .venv/bin/python bench/bench_check_memory.py [--mb 200] [--runs 5] [--jobs 1]. Writes a
seeded history of a keyed register (the shape `harness run` records: invoke and completion
lines, 1,000 keys, 1% crashed ops) of about --mb MB once, then checks it --runs times with
`/usr/bin/time -v python -m harness check FILE` and reports the median peak RSS.
"""

from __future__ import annotations

import argparse
import json
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
BYTES_PER_OP = 200  # an invoke line and its completion, roughly


def register_history(megabytes: int, seed: int = 1) -> list[Op]:
    """Returns a keyed register history whose history.jsonl takes about `megabytes` MB."""
    ops = megabytes * 1_000_000 // BYTES_PER_OP
    return simulate(Case("memory", ops, 1_000, 10, 0.01, False, 0.0), seed)


def write_history(path: Path, ops: list[Op]) -> int:
    """Writes ops as history.jsonl (an invoke line, then an ok line unless the op crashed,
    in time order) at path. Returns the file's size."""
    events = []
    for op in ops:
        invoke_value = None if op.f == "read" else op.value
        common = {"process": op.process, "f": op.f, "key": f"k{op.key}"}
        events.append((op.call, 0, {**common, "type": "invoke", "value": invoke_value}))
        if op.ret is not None:
            events.append((op.ret, 1, {**common, "type": "ok", "value": op.value}))
    events.sort(key=lambda e: e[:2])
    with path.open("w") as out:
        for i, (t, _, event) in enumerate(events):
            out.write(json.dumps({"index": i, "time": t, **event}) + "\n")
    return path.stat().st_size


def peak_rss_mib(path: Path, jobs: int) -> tuple[float, int]:
    """Checks the history once under /usr/bin/time -v. Returns (peak RSS in MiB, exit code)."""
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "harness", "check", str(path)]
    done = subprocess.run(
        [*command, "--jobs", str(jobs)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(done.stderr[-2000:])
    return int(found.group(1)) / 1024, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--keep", metavar="FILE", help="write (or reuse) the history here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "history.jsonl"
        size = (
            path.stat().st_size if path.exists() else write_history(path, register_history(args.mb))
        )
        runs = [peak_rss_mib(path, args.jobs) for _ in range(args.runs)]
    peaks = [rss for rss, _ in runs]
    median = statistics.median(peaks)
    size_mib = size / 2**20
    print(
        f"history {size_mib:.0f} MiB; peak RSS median {median:.0f} MiB "
        f"({median / size_mib:.2f}x the file) over {args.runs} runs: "
        f"{', '.join(f'{p:.0f}' for p in peaks)}; exit codes {sorted({c for _, c in runs})}"
    )


if __name__ == "__main__":
    main()
