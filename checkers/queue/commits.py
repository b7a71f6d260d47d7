"""A consumer group's own ops, which no queue checker reads (commits), and the filters that
leave them out of a queue history: its events, a loaded History, or a Reader's input.

They are the queue's to know, for the queue's readers leave them out (checkers/queue/
halves.py, checkers/txn/reader.py); checkers/groups/consumer_history.py reads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from history import Event, History, Reader

GROUP_ONLY_FS = frozenset({"commit"})
"""The ops of a group that no queue checker reads."""


def without_group_ops(events: Sequence[Event]) -> list[Event]:
    """Takes a history's events. Returns them without the group's own ops (commits)."""
    return [e for e in events if e.get("f") not in GROUP_ONLY_FS]


def without_commits(history: History) -> History:
    """Takes a loaded history. Returns it without the group's own ops, for the queue
    checker and its plots, which do not read them (the history itself when it has none)."""
    if not history.fs & GROUP_ONLY_FS:
        return history
    return dataclasses.replace(history, events=without_group_ops(history.events))


class WithoutGroupOps:
    """A Reader that hands every invocation but the group's own ops to another Reader."""

    def __init__(self, inner: Reader) -> None:
        self.inner = inner

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does; passes it on unless a commit."""
        if invoke.get("f") not in GROUP_ONLY_FS:
            self.inner.add(invoke, invoke_line, completion, line)

    def finish(self) -> object:
        """Returns what the other Reader read."""
        return self.inner.finish()
