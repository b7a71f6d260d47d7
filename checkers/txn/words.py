"""How the transaction checkers name things in prose: a transaction by its op, a partition
as the history named it, a message as written, a time in seconds.

One spelling everywhere, so that a case's lines read alike whichever finder wrote them.
"""

from __future__ import annotations

from checkers.queue.reader import Message
from checkers.txn.reader import TxnOp


def txn(op: TxnOp) -> str:
    """Takes a transaction. Returns its full name: `T12 (op 12, process 3)`."""
    return f"T{op.index} (op {op.index}, process {op.process})"


def short(index: int) -> str:
    """Takes a transaction's index. Returns its short name, `T12`, for a second mention."""
    return f"T{index}"


def partition(p: int, names: dict[int, str]) -> str:
    """Takes a partition and the history's keyword names. Returns it as written."""
    return names.get(p, str(p))


def message(m: Message) -> str:
    """Takes a message. Returns it as written in the history."""
    return repr(m)


def seconds(ns: int) -> str:
    """Takes a time in ns since the history began. Returns it in seconds, to the ms."""
    return f"{ns / 1e9:.3f} s"
