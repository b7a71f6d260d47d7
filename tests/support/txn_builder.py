"""Small transactional histories written by hand for the transaction checkers' unit tests:
each transaction its completed micro-ops, process, times and outcome, in Jepsen's shape.

A completed send is `["send", p, [offset, value]]`, a completed poll `["poll", {p:
[[offset, value], ...]}]`; the invoke's micro-ops are derived (`["send", p, value]`,
`["poll"]`). A failed or info transaction completes with its invoke's micro-ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checkers.txn.checker import check_txns
from checkers.txn.reader import read_txn_history

Event = dict[str, Any]


@dataclass
class Txns:
    """Transactions added in any order; `events` writes them as a history."""

    added: list[tuple[int, int | None, Event, Event | None]] = field(default_factory=list)

    def add(
        self,
        process: int,
        invoked: int,
        done: int | None,
        mops: list[list[Any]],
        outcome: str = "ok",
    ) -> int:
        """Adds a transaction invoked and completed at those times (done None: no
        completion). Returns its handle, for `index`."""
        asked = [["send", m[1], m[2][1]] if m[0] == "send" else ["poll"] for m in mops]
        f = (
            {"send": "send", "poll": "poll"}.get(mops[0][0])
            if len({m[0] for m in mops}) == 1
            else "txn"
        )
        base = {"process": process, "f": f}
        invoke = base | {"type": "invoke", "value": asked}
        completion = None
        if done is not None:
            completion = base | {"type": outcome, "value": mops if outcome == "ok" else asked}
        self.added.append((invoked, done, invoke, completion))
        return len(self.added) - 1

    def timed(self) -> list[tuple[int, int, Event]]:
        """Returns (time, handle, event) for every event, in time order."""
        out = []
        for handle, (invoked, done, invoke, completion) in enumerate(self.added):
            out.append((invoked, handle, invoke))
            if completion is not None and done is not None:
                out.append((done, handle, completion))
        return sorted(out, key=lambda e: e[0])

    def events(self) -> list[Event]:
        """Returns the history's events, indexed in time order."""
        return [e | {"index": i, "time": t} for i, (t, _, e) in enumerate(self.timed())]

    def index(self, handle: int) -> int:
        """Returns the op index (its invoke's) of a transaction added."""
        for i, (_, h, e) in enumerate(self.timed()):
            if h == handle and e["type"] == "invoke":
                return i
        raise KeyError(handle)

    def check(self) -> dict[str, Any]:
        """Returns the transaction checker's result on the history."""
        return check_txns(read_txn_history(self.events()))


def found(result: dict[str, Any]) -> dict[str, int]:
    """Returns the kinds a result found, with their counts."""
    return {kind: k["count"] for kind, k in result["kinds"].items() if k["count"]}


def send(p: int, offset: int, value: int) -> list[Any]:
    """A completed send micro-op."""
    return ["send", p, [offset, value]]


def poll(records: dict[int, list[list[int]]]) -> list[Any]:
    """A completed poll micro-op (partition keys as JSON writes them)."""
    return ["poll", {str(p): rs for p, rs in records.items()}]
