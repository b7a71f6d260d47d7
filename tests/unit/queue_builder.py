"""Builds small queue histories by hand, in the recorded format, for the queue checker's tests."""

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
    ) -> int:
        index = self.event(process, "invoke", "poll", None)
        value = {str(p): [list(r) for r in rs] for p, rs in records.items()}
        extra = {} if rebalanced is None else {"rebalanced": rebalanced}
        self.event(process, outcome, "poll", value if outcome == "ok" else None, **extra)
        return index

    def consumer_op(self, process: int, f: str, value: Any, outcome: str = "ok") -> int:
        """An assign, seek or subscribe."""
        index = self.event(process, "invoke", f, value)
        self.event(process, outcome, f, value)
        return index

    def drain(
        self, process: int, partition: int, records: list[tuple[int, Any]], outcome: str = "ok"
    ) -> int:
        index = self.event(process, "invoke", "drain", None, key=partition)
        value = [list(r) for r in records] if outcome == "ok" else None
        self.event(process, outcome, "drain", value, key=partition)
        return index

    def nemesis(self, f: str) -> None:
        self.event("nemesis", "info", f, None)
