"""The history: the project's ground floor. Events as recorded (history.jsonl, Jepsen's
history.edn and text logs), their reading and pairing into ops, and their writing.

It imports nothing of the project; everything else reads histories through it.
"""

from history.core import (
    History,
    MalformedOp,
    Op,
    OpFound,
    OpType,
    Reader,
    collector_paused,
    drop_failures,
    load,
    pair,
    split_by_key,
    to_op,
)
from history.events import EVENT_TYPES, Event, HistoryError
from history.frozen import freeze
from history.pairing import Invocation, pair_invocations
from history.source import HISTORY_FILES, find_history_file
from history.writer import HistoryWriter

__all__ = [
    "EVENT_TYPES",
    "HISTORY_FILES",
    "Event",
    "History",
    "HistoryError",
    "HistoryWriter",
    "Invocation",
    "MalformedOp",
    "Op",
    "OpFound",
    "OpType",
    "Reader",
    "collector_paused",
    "drop_failures",
    "find_history_file",
    "freeze",
    "load",
    "pair",
    "pair_invocations",
    "split_by_key",
    "to_op",
]
