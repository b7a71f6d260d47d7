"""Writes a seeded history of a simulated atomic register as a Jepsen text log, in the
shape of Jepsen's etcd logs (read, write and cas; timed-out ops logged as info).

Run: .venv/bin/python bench/hard_register.py OUT.log [--ops 3000] [--seed 1] [...].
bench/bench_porcupine.py checks it with Porcupine and with `harness check`: the defaults
make one that Porcupine (v1.3.1) cannot decide in 120 s. Clients issue ops back to back;
an op takes effect at one instant between its invoke and its completion; a timed-out op
takes effect later or never, and its client comes back as a new process, as in Jepsen.
"""

from __future__ import annotations

import argparse
import heapq
import random
from dataclasses import dataclass
from pathlib import Path

FS = ("read", "write", "cas")


@dataclass(frozen=True, slots=True)
class Shape:
    """A history's shape: invocations, clients at once, the share of ops that time out,
    written values drawn from range(values), and the weights of read, write and cas."""

    ops: int = 3000
    concurrency: int = 10
    timeouts: float = 0.10
    values: int = 5
    weights: tuple[int, int, int] = (2, 1, 1)


@dataclass(frozen=True, slots=True)
class _Planned:
    process: int
    f: str
    call: int
    done: int  # when its completion is logged
    effect: float  # when it takes effect: inf for never
    timed_out: bool


def _plan(rnd: random.Random, shape: Shape) -> list[_Planned]:
    """Takes a seeded generator and a shape. Returns the ops as the clients issue them: each
    waits a little after its previous op, takes about a millisecond (in microseconds), and
    takes effect inside its interval; a timed-out op half the time later, else never."""
    free = [(0, client, client) for client in range(shape.concurrency)]  # (at, client, process)
    next_process = shape.concurrency
    planned = []
    for _ in range(shape.ops):
        at, client, process = heapq.heappop(free)
        call = at + rnd.randint(10, 500)
        done = call + rnd.randint(100, 2_000)
        timed_out = rnd.random() < shape.timeouts
        effect: float = rnd.uniform(call, done)
        if timed_out:
            effect = rnd.uniform(call, done + 50_000) if rnd.random() < 0.5 else float("inf")
        f = rnd.choices(FS, weights=shape.weights)[0]
        planned.append(_Planned(process, f, call, done, effect, timed_out))
        if timed_out:  # Jepsen gives a crashed client's next op a new process
            process, next_process = next_process, next_process + 1
        heapq.heappush(free, (done, client, process))
    return planned


def register_log(shape: Shape, seed: int) -> list[str]:
    """Takes a shape and a seed. Returns the lines of a Jepsen log of a register that starts
    as nil: each op's invoke and completion (ok; fail for a cas that found another value;
    info for a timed-out op), in time order."""
    rnd = random.Random(seed)
    planned = _plan(rnd, shape)
    value: int | None = None
    events: list[tuple[int, int, str]] = []  # (time, order, line)
    for i in sorted(range(len(planned)), key=lambda i: planned[i].effect):
        op = planned[i]
        happens = op.effect != float("inf")
        kind = "ok"
        if op.f == "read":
            invoked, returned = "nil", "nil" if value is None else str(value)
        elif op.f == "write":
            new = rnd.randrange(shape.values)
            invoked = returned = str(new)
            value = new if happens else value
        else:
            expected = value if value is not None and rnd.random() < 0.5 else None
            if expected is None:
                expected = rnd.randrange(shape.values)
            new = rnd.randrange(shape.values)
            invoked = returned = f"[{expected} {new}]"
            if expected != value:
                kind = "fail"
            elif happens:
                value = new
        if op.timed_out:
            kind, returned = "info", ":timed-out"
        events.append((op.call, 2 * i, _line(op.process, "invoke", op.f, invoked)))
        events.append((op.done, 2 * i + 1, _line(op.process, kind, op.f, returned)))
    return [line for _, _, line in sorted(events)]


def _line(process: int, kind: str, f: str, value: str) -> str:
    return f"INFO  jepsen.util - {process}\t:{kind}\t:{f}\t{value}"


def write_register_log(path: Path, shape: Shape, seed: int) -> None:
    """Writes register_log(shape, seed) to path, a line each."""
    path.write_text("".join(line + "\n" for line in register_log(shape, seed)))


def main() -> None:
    defaults = Shape()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ops", type=int, default=defaults.ops)
    parser.add_argument("--concurrency", type=int, default=defaults.concurrency)
    parser.add_argument("--timeouts", type=float, default=defaults.timeouts)
    parser.add_argument("--values", type=int, default=defaults.values)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shape = Shape(args.ops, args.concurrency, args.timeouts, args.values)
    write_register_log(args.out, shape, args.seed)


if __name__ == "__main__":
    main()
