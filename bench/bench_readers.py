"""The three history readers side by side: one register history written as history.jsonl,
as a Jepsen history.edn and as a Jepsen text log, each loaded as `harness check` loads it.

Run: .venv/bin/python bench/bench_readers.py [--ops 100000] [--runs 5]. The history is
bench/hard_register.py's (10 clients, values 0-4, 10% timed out, seed 1), so each format
carries the same events; the log's timed-out ops end `:info ... :timed-out` as in Jepsen's
etcd logs. Prints, per format, the median CPU seconds of `load(path, keep_events=False)`
over the runs (in this process, one after another), microseconds per event, and the
ratio to history.jsonl's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hard_register import Shape, write_register_log

from history import load


def edn(value: Any) -> str:
    """Returns a value of a register history as EDN spells it."""
    if value is None:
        return "nil"
    if isinstance(value, list):
        return "[" + " ".join(edn(v) for v in value) + "]"
    return str(value)


def edn_line(event: dict[str, Any]) -> str:
    """Returns an event as Jepsen's history.edn prints it, one map a line."""
    fields = [f":type :{event['type']}", f":f :{event['f']}"]
    if "value" in event:
        fields.append(f":value {edn(event['value'])}")
    fields += [f":process {event['process']}", f":time {event['time']}"]
    if "error" in event:
        fields.append(f":error :{event['error']}")
    fields.append(f":index {event['index']}")
    return "{" + ", ".join(fields) + "}"


def write_formats(folder: Path, ops: int) -> dict[str, Path]:
    """Writes the history in the three formats into folder. Returns each file by format."""
    log = folder / "history.log"
    write_register_log(log, Shape(ops=ops), seed=1)
    events = load(log).events
    jsonl, edn_file = folder / "history.jsonl", folder / "history.edn"
    jsonl.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    edn_file.write_text("".join(edn_line(e) + "\n" for e in events))
    return {"jsonl": jsonl, "edn": edn_file, "log": log}


def cpu_seconds(path: Path) -> tuple[float, int]:
    """Loads path as `harness check` does for a linearizability model. Returns the CPU
    seconds it took and the events it read."""
    started = time.process_time()
    history = load(path, keep_events=False)
    return time.process_time() - started, history.invocations * 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-readers-") as temp:
        files = write_formats(Path(temp), args.ops)
        seconds: dict[str, list[float]] = {name: [] for name in files}
        events = 0
        for _ in range(args.runs):  # interleaved, so a drift of the machine hits all three
            for name, path in files.items():
                cpu, events = cpu_seconds(path)
                seconds[name].append(cpu)
    print(f"{events} events; load average {os.getloadavg()[0]:.1f}; median of {args.runs}")
    jsonl = statistics.median(seconds["jsonl"])
    for name, runs in seconds.items():
        median = statistics.median(runs)
        print(
            f"{name:6} {median:.3f} s CPU  {1e6 * median / events:.2f} us/event  "
            f"{median / jsonl:.2f}x history.jsonl's"
        )


if __name__ == "__main__":
    main()
