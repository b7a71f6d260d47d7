"""Times the cluster's life cycle as a user sees it: a cold image build (no jars, no
base image, no node image), `cluster up` to a full ISR with images present, and
`cluster down`. Prints the median of each over several runs.

Usage: .venv/bin/python bench/bench_cluster.py [--runs 5] [--cold-runs 1]
           [--kafka-version 3.9.1|4.4.0] [--metadata zookeeper|kraft] [--name bench]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.cluster.config import COMPOSE_DIR
from harness.cluster.images import DEFAULT_BASE_IMAGE, jar_folder, node_image
from harness.cluster.releases import DEFAULT_VERSION, METADATA_MODES, RELEASES


def timed(*args: str) -> float:
    """Runs `python -m harness ARGS`; returns its wall time in seconds."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"harness {' '.join(args)} failed: {proc.stderr.strip()}")
    return elapsed


def cold_build(version: str) -> float:
    """Removes the release's jars and both images, then times `cluster image`."""
    image = node_image(version)
    subprocess.run(["docker", "rmi", "-f", image, DEFAULT_BASE_IMAGE], capture_output=True)
    shutil.rmtree(Path(COMPOSE_DIR) / jar_folder(version), ignore_errors=True)
    return timed("cluster", "image", "--kafka-version", version)


def report(label: str, samples: list[float], target: float) -> None:
    med = statistics.median(samples)
    verdict = "meets" if med <= target else "MISSES"
    runs = ", ".join(f"{s:.1f}" for s in samples)
    print(f"{label:<28} median {med:6.1f} s  (runs: {runs})  target <= {target:.0f} s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=1, help="0 skips the cold build")
    parser.add_argument("--kafka-version", choices=list(RELEASES), default=DEFAULT_VERSION)
    parser.add_argument("--metadata", choices=METADATA_MODES, help="default: the version's")
    parser.add_argument("--name", default="bench", help="cluster name (default bench)")
    args = parser.parse_args()
    shape = ["--kafka-version", args.kafka_version]
    shape += ["--metadata", args.metadata] if args.metadata else []
    cold = [cold_build(args.kafka_version) for _ in range(args.cold_runs)]
    # The up/down runs below start with images present.
    timed("cluster", "image", "--kafka-version", args.kafka_version)
    ups, downs = [], []
    for _ in range(args.runs):
        ups.append(timed("cluster", "up", "--name", args.name, *shape))
        downs.append(timed("cluster", "down", "--name", args.name))
    if cold:
        report("cold image build", cold, 300)
    report(f"cluster up ({' '.join(shape[1::2])})", ups, 45)
    report("cluster down", downs, 10)


if __name__ == "__main__":
    main()
