"""Builds small queue histories by hand, in the recorded format (and Jepsen's micro-op
shape), for the queue checker's tests."""

from __future__ import annotations

from typing import Any

Event = dict[str, Any]


class QueueHistoryBuilder:
    """Appends ops as the runner records them: an invoke and its completion, indexes and
    times in event order. Each method returns the op's invoke index (the cases' `index`)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, process: Any, type_: str, f: str, value: Any, **extra: Any) -> int:
        n = len(self.events)
        self.events.append(
            {"index": n, "time": 1000 * n, "process": process, "type": type_, "f": f}
            | {"value": value}
            | extra
        )
        return n

    def send(
        self, process: int, partition: int, message: int, offset: int | None, outcome: str = "ok"
    ) -> int:
        index = self.event(process, "invoke", "send", message, key=partition)
        value = [offset, message] if outcome == "ok" else message
        self.event(process, outcome, "send", value, key=partition)
        return index

    def poll(
        self,
        process: int,
        records: dict[int, list[tuple[int, Any]]],
        *,
        outcome: str = "ok",
        rebalanced: dict[str, list[int]] | None = None,
        **extra: Any,
    ) -> int:
        """A poll; one that did not complete ok carries the records only if any. `extra`
        goes on the completion."""
        index = self.event(process, "invoke", "poll", None)
        value = {str(p): [list(r) for r in rs] for p, rs in records.items()}
        if rebalanced is not None:
            extra["rebalanced"] = rebalanced
        self.event(process, outcome, "poll", value if outcome == "ok" or value else None, **extra)
        return index

    def micro(
        self,
        process: int,
        f: str,
        invoked: list[list[Any]],
        completed: list[list[Any]] | None = None,
        outcome: str = "ok",
        **extra: Any,
    ) -> int:
        """An op of micro-ops, Jepsen's shape: `invoked` as invoked, `completed` as the
        completion holds them (None: as invoked); `extra` goes on the completion."""
        index = self.event(process, "invoke", f, invoked)
        self.event(process, outcome, f, invoked if completed is None else completed, **extra)
        return index

    def crash(self, process: int) -> int:
        """Jepsen's :crash: the process's client is torn down; it completes info."""
        index = self.event(process, "invoke", "crash", None)
        self.event(process, "info", "crash", None)
        return index

    def consumer_op(self, process: int, f: str, value: Any, outcome: str = "ok") -> int:
        """An assign, seek or subscribe."""
        index = self.event(process, "invoke", f, value)
        self.event(process, outcome, f, value)
        return index

    def drain(
        self,
        process: int,
        partition: int,
        records: list[tuple[int, Any]],
        outcome: str = "ok",
        node: str | None = None,
        error: str | None = None,
    ) -> int:
        """A final drain; one given a node reads through it (the NATS queue's), one given
        an error completes with it."""
        through = {} if node is None else {"node": node}
        index = self.event(process, "invoke", "drain", None, key=partition, **through)
        value = [list(r) for r in records] if outcome == "ok" else None
        said = {} if error is None else {"error": error}
        self.event(process, outcome, "drain", value, key=partition, **said)
        return index

    def nemesis(self, f: str) -> None:
        self.event("nemesis", "info", f, None)
