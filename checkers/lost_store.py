"""A store that disappeared: a read whose answer was that the bucket (or stream) holding
the writes no longer exists. Every write acknowledged before that read is lost with it.

The map model alone cannot say so: a read of a vanished bucket finds every key absent,
and whether "absent" contradicts an acknowledged write depends on which keys were read
when and what was in flight (a remove of unknown outcome explains any absence). A run
after a power cut of every NATS server under the default sync interval (nats-server#7564)
can lose its KV bucket's stream entirely, and with it every acknowledged put: this check
says so plainly, from the history alone.

A client marks such a read as an `ok` read of nothing (the key is absent: the model
judges it like any other read) whose `error` begins with GONE (checkers/gone.py) and
names what vanished.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from checkers.gone import GONE
from checkers.result import Result
from history import Op

CASES_KEPT = 10
"""How many lost writes the section lists (its counts are whole)."""


def acknowledged_write(op: Op) -> bool:
    """Takes an op. Returns whether it is a write the store acknowledged as applied: an
    ok put or write, an ok put-if-absent, replace or cas that says it applied, or an ok
    remove that found the key."""
    if op.type != "ok":
        return False
    if op.f in ("put", "write"):
        return True
    if op.f in ("put-if-absent", "replace") and isinstance(op.value, list | tuple):
        return bool(op.value) and op.value[-1] is True
    if op.f == "cas":
        return True  # a cas that did not apply completes fail, never ok
    return op.f == "remove" and op.value is True


def check(ops: Sequence[Op]) -> Result | None:
    """Takes a history's ops. Returns None when no read found the store gone; else
    {"valid": False when writes were acknowledged before the first such read (all of them
    lost with the store), True when none were, "store": what the server said, "first_read":
    that read, "gone_reads": how many reads found it gone, "acknowledged_lost": how many
    writes, "keys": on which keys, "lost": the first CASES_KEPT of them}."""
    gone = [op for op in ops if op.type == "ok" and (op.error or "").startswith(GONE)]
    if not gone:
        return None
    first = min(gone, key=lambda op: (op.ret or 0, op.index))
    seen_at = first.ret if first.ret is not None else first.call
    lost = [op for op in ops if acknowledged_write(op) and op.ret is not None and op.ret < seen_at]
    per_key = Counter(str(op.key) for op in lost)
    return {
        "valid": not lost,
        "store": (first.error or "").removeprefix(GONE).strip(),
        "first_read": _op(first),
        "gone_reads": len(gone),
        "acknowledged_lost": len(lost),
        "keys": dict(sorted(per_key.items())),
        "lost": [_op(op) for op in lost[:CASES_KEPT]],
    }


def _op(op: Op) -> dict[str, Any]:
    return {
        "index": op.index,
        "process": op.process,
        "f": op.f,
        "key": op.key,
        "value": op.value,
        "time": (op.ret if op.ret is not None else op.call) / 1e9,
    }


def explain(result: Result) -> list[str]:
    """Takes this check's result. Returns its plain sentence: what vanished, when a read
    first found it gone, and how many acknowledged writes went with it."""
    first = result.get("first_read") or {}
    when = f"at {first.get('time', 0):.3f} s" if first else ""
    lost, keys = result.get("acknowledged_lost", 0), len(result.get("keys") or {})
    store = result.get("store", "the store")
    if not lost:
        return [
            f"The store was gone when a {first.get('f', 'read')} of key {first.get('key')} "
            f"asked for it {when} ({store}), but no write had been acknowledged before."
        ]
    return [
        f"The store no longer existed: a {first.get('f', 'read')} of key {first.get('key')} "
        f"{when} was answered that {store}. Every one of the {lost} writes acknowledged "
        f"before it, on {keys} key{'s' if keys != 1 else ''}, is lost with it; the reads "
        "that found it gone are recorded as reads of nothing."
    ]
