"""Counterexamples built for the viewer's tests: a small real one from the register model,
and a made-up one of any size with crashed ops, overlapping calls and a fault window."""

from __future__ import annotations

import random
from typing import Any

from checkers.linearizable.checker import check
from checkers.linearizable.models import MODELS
from history import Op

MS = 1_000_000
WINDOWS = [
    {"fault": "partition-leader", "start": 11.5, "stop": 12.0035, "in_force": 11.6},
    {"fault": "kill-leader", "start": 3.0, "stop": None, "in_force": 3.1},
    {"fault": "pause", "start": 1.0, "stop": 2.0, "in_force": 1.1},
]


def register_failure() -> dict[str, Any]:
    """Returns a register's failure report: two ops at 10 s, five bunched at 12 s (one
    crashed), the last reading a value overwritten before it began."""
    ops = [
        Op(
            index=0,
            process=0,
            f="write",
            key="k",
            value=1,
            type="ok",
            call=10_000 * MS,
            ret=10_002 * MS,
        ),
        Op(
            index=1,
            process=1,
            f="read",
            key="k",
            value=1,
            type="ok",
            call=10_001 * MS,
            ret=10_003 * MS,
        ),
        Op(
            index=2,
            process=2,
            f="write",
            key="k",
            value=2,
            type="ok",
            call=12_000 * MS,
            ret=12_001 * MS,
        ),
        Op(
            index=3,
            process=3,
            f="write",
            key="k",
            value=3,
            type="info",
            call=12_000 * MS + MS // 2,
            ret=None,
        ),
        Op(
            index=4,
            process=0,
            f="read",
            key="k",
            value=2,
            type="ok",
            call=12_002 * MS,
            ret=12_003 * MS,
        ),
        Op(
            index=5,
            process=1,
            f="write",
            key="k",
            value=4,
            type="ok",
            call=12_004 * MS,
            ret=12_005 * MS,
        ),
        Op(
            index=6,
            process=2,
            f="read",
            key="k",
            value=2,
            type="ok",
            call=12_006 * MS,
            ret=12_007 * MS,
        ),
    ]
    result = check(ops, MODELS["register"])
    assert result["valid"] is False
    failure: dict[str, Any] = result["failures"][0]
    return failure


def made_up_failure(n: int, seed: int) -> dict[str, Any]:
    """Returns a failure report of n ops on 8 processes, every fifth one crashed, the last
    one failing and half the others the prefix; times are random, often equal."""
    rng = random.Random(seed)
    free = [0] * 8  # when each worker's next op may begin
    names = list(range(8))  # a worker's process id: a new one after a crash, as Jepsen's
    ops: list[dict[str, Any]] = []
    for index in range(n):
        worker = rng.randrange(8)
        call = free[worker] + rng.choice([0, 1, 1, 2, 50, 3000]) * MS
        crashed = index % 5 == 4 and index < n - 1
        ret = None if crashed else call + rng.choice([1, 1, 2, 7, 400]) * MS
        free[worker] = call + MS if ret is None else ret
        process = names[worker]
        if crashed:
            names[worker] += 8
        ops.append(
            {
                "index": index,
                "process": process,
                "f": "write",
                "value": index,
                "type": "info" if crashed else "ok",
                "call": call,
                "ret": ret,
                "text": f"process {process} write {index}",
            }
        )
    # Ordered by a point inside each op (its return, or a crashed op's call): a real
    # linearization order.
    ordered = sorted(ops[:-1], key=lambda o: o["call"] if o["ret"] is None else o["ret"])
    half = ordered[: n // 2]
    return {
        "key": "k",
        "valid": False,
        "op": ops[-1],
        "longest_prefix": half,
        "prefix_length": len(half) + 7,
        "prefix_states": [str(o["index"]) for o in half],
        "concurrent": ordered[n // 2 :],
        "message": "read 7 but value is 9",
        "state_descriptions": ["9"],
    }
