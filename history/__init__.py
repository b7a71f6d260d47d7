"""The history: the project's ground floor. Events as recorded (history.jsonl, Jepsen's
history.edn and text logs), their reading and pairing into ops, and their writing.

It imports nothing of the project; everything else reads histories through this face,
and its own modules import each other by full name.

The halves' reading (history.halves), which only the queue checker uses, is imported from
its module when one of its names is first asked for (PEP 562).
"""

import importlib
from typing import TYPE_CHECKING

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
from history.edn_values import Keyword
from history.events import EVENT_TYPES, Event, HistoryError
from history.formats import JSONL, detect_format, parse_history, read_jsonl, short
from history.frozen import Exact, freeze, thaw
from history.pairing import Invocation, pair_invocations, read_strictly
from history.paths import CHECK_CRASH_LOG_PREFIX, drawing_folders, find_histories
from history.source import HISTORY_FILES, STDIN, STDIN_NAME, find_history_file
from history.writer import HistoryWriter, jsonable

if TYPE_CHECKING:
    from history.halves import SecondHalf, find_seam, load_halves, read_second_half

_HALVES = frozenset(("SecondHalf", "find_seam", "load_halves", "read_second_half"))


def __getattr__(name: str) -> object:
    """Imports a name of history.halves the first time it is asked for."""
    if name not in _HALVES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("history.halves"), name)
    globals()[name] = value  # asked once: the next time finds it without this call
    return value


__all__ = [
    "CHECK_CRASH_LOG_PREFIX",
    "EVENT_TYPES",
    "HISTORY_FILES",
    "JSONL",
    "STDIN",
    "STDIN_NAME",
    "Event",
    "Exact",
    "History",
    "HistoryError",
    "HistoryWriter",
    "Invocation",
    "Keyword",
    "MalformedOp",
    "Op",
    "OpFound",
    "OpType",
    "Reader",
    "SecondHalf",
    "collector_paused",
    "detect_format",
    "drawing_folders",
    "drop_failures",
    "find_histories",
    "find_history_file",
    "find_seam",
    "freeze",
    "jsonable",
    "load",
    "load_halves",
    "pair",
    "pair_invocations",
    "parse_history",
    "read_jsonl",
    "read_second_half",
    "read_strictly",
    "short",
    "split_by_key",
    "thaw",
    "to_op",
]
