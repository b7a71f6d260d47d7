"""Sends ^C to `harness run` at random moments (issue 7, acceptance e) and checks what is
left: the exit code, the cluster's containers and network, the history and its check.

Each run is a subprocess sent SIGINT after a seeded random delay that covers cluster
start, the workload, the faults and the final phase.
Usage: .venv/bin/python bench/interrupt_runs.py [--runs 10] [--seed 7] [--max-delay 80]
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = "interrupt"


def leftovers(engine: docker.DockerClient) -> list[str]:
    """Returns the containers and networks of this script's cluster that still exist."""
    label = f"kafka-harness.cluster={CLUSTER}"
    found = [c.name for c in engine.containers.list(all=True, filters={"label": label})]
    found += [n.name for n in engine.networks.list(filters={"label": label})]
    return found


def _sigint_as_at_a_terminal() -> None:
    # A script started with `&` runs with SIGINT ignored, and its children inherit that;
    # a person's ^C reaches a process whose SIGINT is at its default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def one_run(engine: docker.DockerClient, delay: float) -> dict[str, object]:
    """Starts a run, interrupts it after delay seconds, and returns what was found."""
    with tempfile.TemporaryDirectory() as results:
        argv = [
            sys.executable,
            "-m",
            "harness",
            "run",
            "--results",
            results,
            "--cluster-name",
            CLUSTER,
            "--time-limit",
            "60",
            "--nemesis",
            "partition-leader,kill-leader,pause-leader,flaky-leader",
            "--nemesis-interval",
            "5",
        ]
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_sigint_as_at_a_terminal,
        )
        time.sleep(delay)
        ended_first = proc.poll() is not None  # the run was over before the signal
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=300)
        folder = Path(results) / "latest"
        history = folder / "history.jsonl"
        checked = (folder / "results.json").exists() and "interrupted" in json.loads(
            (folder / "results.json").read_text()
        )
        lines = out.decode(errors="replace").replace("\r", "\n").splitlines()
        return {
            "delay_s": round(delay, 1),
            "ended_first": ended_first,
            "exit": proc.returncode,
            "history_events": len(history.read_text().splitlines()) if history.exists() else None,
            "checked": checked,
            "leftovers": leftovers(engine),
            "last_line": next((x.strip() for x in reversed(lines) if x.strip()), ""),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-delay", type=float, default=80.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    engine = docker.from_env()
    failures = 0
    for n in range(1, args.runs + 1):
        found = one_run(engine, rng.uniform(2.0, args.max_delay))
        ok = (found["exit"] == 130 or found["ended_first"]) and not found["leftovers"]
        failures += not ok
        print(f"run {n}: {'ok' if ok else 'WRONG'} {json.dumps(found)}", flush=True)
    print(
        f"{args.runs - failures} of {args.runs} runs exited 130 with nothing left "
        "(or had ended before the signal, with nothing left)"
    )
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
