"""Lost acknowledged writes: Jepsen's set and total-queue checks, per key.

Compares every attempted write (`add` or `send` of one element) with the final
reads (ok `read`s returning a list of elements) and finds:

- lost: the write was acknowledged (ok) but no final read holds the element;
- recovered: the write's outcome was unknown (info) and a final read holds it;
- unexpected: a final read holds an element never written, or whose write
  certainly failed;
- duplicated: one final read holds the element more than once.

A read counts as final when it was invoked after every acknowledged write of
its key had completed and every indeterminate write had been invoked. Such a
read must see every acknowledged element, so a missing one is truly lost; an
earlier read could have missed a write still in flight. Several final reads
(one per partition, say) are united. Lost or unexpected elements make the key
invalid; with no final read nothing can be said ("unknown"). Duplicates are
reported but allowed: at-least-once delivery is not a violation of a set.

The finders (`lost_cases`, ...) each return small dicts a person can read; the
explanation (`explain`) is rendered from the result alone.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any, Protocol

from checkers.result import Validity, merge_valid
from history import Event, Invocation, MalformedOp, Op, freeze, pair_invocations, thaw

WRITE_FS = frozenset({"add", "send"})
READ_F = "read"
# When one element was written several times, the most certain outcome speaks for it.
_OUTCOME_RANK = {"ok": 2, "info": 1, "fail": 0}


class Attempt(Protocol):
    """What this check reads of one attempted write: its key and element, its outcome (ok,
    info or fail), and who made it (a Write, or a queue checker's Send)."""

    @property
    def key(self) -> Hashable: ...
    @property
    def value(self) -> Hashable: ...
    @property
    def outcome(self) -> str: ...
    @property
    def process(self) -> Any: ...
    @property
    def index(self) -> int: ...


@dataclass(slots=True)
class Write:
    """One attempted write: its element, outcome (ok, info or fail), and who made it. Not
    frozen: a frozen dataclass is made several times slower, which counts for a million;
    nothing changes one once it is made."""

    key: Hashable
    value: Hashable
    outcome: str
    process: Any
    index: int


@dataclass(frozen=True, slots=True)
class FinalRead:
    """One final read of a key: the elements it returned, in order."""

    key: Hashable
    values: tuple[Hashable, ...]
    index: int


def reject_malformed(ops: Iterable[Op]) -> None:
    """Takes a history's ops. Raises MalformedOp for the first this check cannot read: an
    operation other than add, send and read, or an ok read whose value is not a list."""
    known = sorted({*WRITE_FS, READ_F})
    for op in ops:
        if op.f not in known:
            raise MalformedOp(
                op.index,
                f"{op.f!r} is not an operation of the set model (it has {', '.join(known)})",
            )
        if op.f == READ_F and op.type == "ok" and not isinstance(op.value, list | frozenset):
            raise MalformedOp(
                op.index, f"a set read's value must be a list, not {op.value!r}", in_value=True
            )


def writes(invocations: Iterable[Invocation]) -> list[Write]:
    """Takes invocations; returns every add/send attempt with its outcome."""
    out = []
    for inv in invocations:
        if inv.invoke["f"] not in WRITE_FS:
            continue
        outcome = "info" if inv.completion is None else inv.completion["type"]
        out.append(
            Write(
                key=freeze(inv.invoke.get("key")),
                value=freeze(inv.invoke.get("value")),
                outcome=outcome,
                process=inv.invoke["process"],
                index=inv.invoke["index"],
            )
        )
    return out


def final_reads(invocations: Sequence[Invocation]) -> list[FinalRead]:
    """Takes invocations; returns the ok list-reads invoked after their key's writes settled."""
    settled = settled_by_key(
        (freeze(inv.invoke.get("key")), _settled_at(inv))
        for inv in invocations
        if inv.invoke["f"] in WRITE_FS
    )
    out = []
    for inv in invocations:
        done = inv.completion
        if inv.invoke["f"] != READ_F or done is None or done["type"] != "ok":
            continue
        if not isinstance(done.get("value"), list | frozenset):
            continue
        key = freeze(inv.invoke.get("key", done.get("key")))
        if is_final(inv.invoke["time"], key, settled):
            out.append(FinalRead(key, tuple(freeze(v) for v in done["value"]), done["index"]))
    return out


def _settled_at(inv: Invocation) -> float | None:
    done = inv.completion
    outcome = "info" if done is None else done["type"]
    return settled_at(outcome, inv.invoke["time"], None if done is None else done["time"])


def settled_at(outcome: str, invoked: float, completed: float | None) -> float | None:
    """Takes a write's outcome and its invoke and completion times. Returns when a final
    read must reflect it, or None for a write that constrains nothing."""
    # An ok write from its acknowledgement on. An indeterminate write is never certain,
    # so a read need only follow its invoke: finding it is "recovered", missing it no
    # anomaly. A failed write never lands.
    if outcome == "info":
        return float(invoked)
    if outcome == "ok" and completed is not None:
        return float(completed)
    return None


def settled_by_key(moments: Iterable[tuple[Hashable, float | None]]) -> dict[Hashable, float]:
    """Takes (key, settled_at) of every write. Returns per key when its last one settled."""
    settled: dict[Hashable, float] = {}
    for key, moment in moments:
        if moment is not None:
            settled[key] = max(settled.get(key, moment), moment)
    return settled


def is_final(invoked: float, key: Hashable, settled: dict[Hashable, float]) -> bool:
    """Takes a read's invoke time and key, and settled_by_key's map. Returns whether the
    read is final: invoked after every write of its key settled."""
    return invoked > settled.get(key, -1)


def best_writes(ws: Iterable[Attempt]) -> dict[Hashable, Attempt]:
    """Takes one key's writes. Returns per element the write whose outcome speaks for it."""
    best: dict[Hashable, Attempt] = {}
    rank = _OUTCOME_RANK
    for w in ws:
        before = best.get(w.value)
        if before is None or rank[w.outcome] > rank[before.outcome]:
            best[w.value] = w
    return best


def read_elements(reads: Iterable[FinalRead]) -> set[Hashable]:
    """Takes one key's final reads. Returns every element they hold."""
    return set(chain.from_iterable(r.values for r in reads))


def lost_cases(
    best: dict[Hashable, Attempt], reads: Sequence[FinalRead], seen: set[Hashable]
) -> list[dict[str, Any]]:
    """Takes one key's best_writes, final reads and read_elements; returns each
    acknowledged write no read holds.

    With no final read there is no evidence of loss, so no case.
    """
    if not reads:
        return []
    return [
        {"key": w.key, "value": v, "process": w.process, "index": w.index}
        for v, w in best.items()
        if w.outcome == "ok" and v not in seen
    ]


def recovered_cases(best: dict[Hashable, Attempt], seen: set[Hashable]) -> list[dict[str, Any]]:
    """Takes one key's best_writes and read_elements; returns indeterminate writes that a
    read holds."""
    return [
        {"key": w.key, "value": v, "process": w.process, "index": w.index}
        for v, w in best.items()
        if w.outcome == "info" and v in seen
    ]


def unexpected_cases(
    best: dict[Hashable, Attempt], reads: Sequence[FinalRead]
) -> list[dict[str, Any]]:
    """Takes one key's best_writes and final reads; returns read elements never
    (successfully) attempted, with `write` "none" or "failed"."""
    cases = []
    for v in dict.fromkeys(chain.from_iterable(r.values for r in reads)):
        write = best.get(v)
        if write is None:
            cases.append({"key": _key_of(reads), "value": v, "write": "none"})
        elif write.outcome == "fail":
            cases.append({"key": _key_of(reads), "value": v, "write": "failed"})
    return cases


def duplicated_cases(reads: Sequence[FinalRead]) -> list[dict[str, Any]]:
    """Takes one key's final reads; returns elements one read holds more than once."""
    copies: dict[Hashable, tuple[int, int]] = {}
    for r in reads:
        if len(set(r.values)) == len(r.values):  # the common case, decided in C
            continue
        for v, n in Counter(r.values).items():
            if n > 1 and n > copies.get(v, (0, 0))[0]:
                copies[v] = (n, r.index)
    return [
        {"key": _key_of(reads), "value": v, "copies": n, "read_index": i}
        for v, (n, i) in copies.items()
    ]


def _key_of(reads: Sequence[FinalRead]) -> Hashable:
    return reads[0].key if reads else None


def check_key(key: Hashable, ws: Sequence[Attempt], reads: Sequence[FinalRead]) -> dict[str, Any]:
    """Takes one key's writes and final reads; returns that key's counts, values and verdict."""
    best = best_writes(ws)
    seen = read_elements(reads)
    anomalies = {
        "lost": lost_cases(best, reads, seen),
        "recovered": recovered_cases(best, seen),
        "unexpected": unexpected_cases(best, reads),
        "duplicated": duplicated_cases(reads),
    }
    outcomes = Counter(map(attrgetter("outcome"), ws))
    result: dict[str, Any] = {
        "key": thaw(key),
        "valid": _verdict(anomalies, reads),
        "final_reads": len(reads),
        "attempt_count": len(ws),
        "ack_count": outcomes["ok"],
        "fail_count": outcomes["fail"],
        "info_count": outcomes["info"],
        "read_count": len(seen),
    }
    for name, cases in anomalies.items():
        result[name] = [thaw(v) for v in _sorted(c["value"] for c in cases)]
        result[f"{name}_count"] = len(cases)
    result["duplicated_copies"] = [[thaw(c["value"]), c["copies"]] for c in anomalies["duplicated"]]
    result["cases"] = {
        name: [{**c, "key": thaw(c["key"]), "value": thaw(c["value"])} for c in cases]
        for name, cases in anomalies.items()
    }
    return result


def _verdict(anomalies: dict[str, list[dict[str, Any]]], reads: Sequence[FinalRead]) -> Validity:
    if anomalies["lost"] or anomalies["unexpected"]:
        return False
    return True if reads else "unknown"


def check(events: Sequence[Event], *, strictly: bool = True) -> dict[str, Any]:
    """Takes a history's events and whether it is read strictly, as ours
    (history.read_strictly); returns the lost-acks result over every key.

    Takes events rather than paired ops because failed writes matter here: an
    element whose write failed must not be read, and attempts are counted.
    """
    started = time.monotonic()
    invocations, _ = pair_invocations(events, retires=strictly)
    return judge(writes(invocations), final_reads(invocations), len(invocations), started)


def judge(
    all_writes: Iterable[Attempt], reads: Iterable[FinalRead], ops: int, started: float
) -> dict[str, Any]:
    """Takes every write attempt, the final reads, how many ops they came from and when the
    check started (time.monotonic()). Returns the lost-acks result over every key."""
    writes_by_key: dict[Hashable, list[Attempt]] = {}
    for w in all_writes:
        writes_by_key.setdefault(w.key, []).append(w)
    reads_by_key: dict[Hashable, list[FinalRead]] = {}
    for r in reads:
        reads_by_key.setdefault(r.key, []).append(r)
    keys = list(dict.fromkeys([*writes_by_key, *reads_by_key]))
    by_key = [check_key(k, writes_by_key.get(k, []), reads_by_key.get(k, [])) for k in keys]
    result: dict[str, Any] = {
        # With no key there is no final read either: nothing was checked.
        "valid": merge_valid(*(r["valid"] for r in by_key)) if by_key else "unknown",
        "ops": ops,
        "keys": len(keys),
    }
    for name in ("attempt", "ack", "lost", "recovered", "unexpected", "duplicated"):
        result[f"{name}_count"] = sum(r[f"{name}_count"] for r in by_key)
    result["time"] = time.monotonic() - started
    result["by_key"] = by_key
    return result


def _sorted(values: Iterable[Hashable]) -> list[Any]:
    items = list(values)
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def explain(result: dict[str, Any]) -> list[str]:
    """Takes a lost-acks result; returns a few lines a person can check by hand."""
    lines = [
        f"writes: {result['attempt_count']} attempted, {result['ack_count']} acknowledged; "
        f"{result['lost_count']} lost, {result['recovered_count']} recovered, "
        f"{result['unexpected_count']} unexpected, {result['duplicated_count']} duplicated"
    ]
    for r in result["by_key"]:
        lines.extend(_explain_key(r, keyed=result["keys"] > 1 or r["key"] is not None))
    return lines


def _explain_key(r: dict[str, Any], *, keyed: bool) -> list[str]:
    where = f"key {r['key']!r}: " if keyed else ""
    n = r["final_reads"]
    reads = "the final read" if n == 1 else f"all {n} final reads"
    lines = []
    if r["final_reads"] == 0:
        lines.append(f"{where}no final read, so nothing can be said of its writes")
    if r["lost"]:
        lines.append(
            f"{where}lost {r['lost_count']} acknowledged: {_show(r['lost'])} "
            f"(ok, yet absent from {reads})"
        )
    if r["unexpected"]:
        lines.append(
            f"{where}unexpected {r['unexpected_count']}: {_show(r['unexpected'])} "
            f"(read, yet never written or their write failed)"
        )
    if r["recovered"]:
        lines.append(
            f"{where}recovered {r['recovered_count']}: {_show(r['recovered'])} "
            "(their outcome was unknown; they were read)"
        )
    if r["duplicated"]:
        shown = ", ".join(f"{v!r} x{copies}" for v, copies in r["duplicated_copies"][:10])
        lines.append(f"{where}duplicated {r['duplicated_count']}: {shown}")
    return lines


def _show(values: list[Any], limit: int = 20) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f", ... ({len(values) - limit} more)" if len(values) > limit else "")
