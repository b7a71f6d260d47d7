"""Start-up time of the command line: importing harness.commands.check, and the whole
`python -m harness --help`, `check --help` and `run --help` (each registers every
subcommand's parser).

Run: .venv/bin/python bench/bench_check_startup.py [--runs 5]. Prints the median wall time
of each over --runs fresh processes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "import harness.commands.check": [sys.executable, "-c", "import harness.commands.check"],
    "python -m harness --help": [sys.executable, "-m", "harness", "--help"],
    "python -m harness check --help": [sys.executable, "-m", "harness", "check", "--help"],
    "python -m harness run --help": [sys.executable, "-m", "harness", "run", "--help"],
    "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
}


def wall_time(command: list[str]) -> float:
    """Runs command once from the checkout. Returns its wall time in seconds."""
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for name, command in COMMANDS.items():
        times = [wall_time(command) for _ in range(args.runs)]
        shown = ", ".join(f"{t:.2f}" for t in times)
        print(f"{name}: median {statistics.median(times):.2f} s ({shown})")


if __name__ == "__main__":
    main()
