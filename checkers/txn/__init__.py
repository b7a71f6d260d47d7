"""Transactions on a queue history, as Elle checks them (jepsen-io/elle): a dependency
graph over transactions from each partition's version order and the polls' reads, its
cycles by kind (G0, G1c and their variants), and the anomalies one read shows (G1a).

The face of the family: the check, its merge into the queue checker's result, and the
transactions' reading. The check is loaded when first asked for (a history without
transactions, the common case, never pays for it).
"""

import importlib
from typing import TYPE_CHECKING

from checkers.txn.reader import TxnHistory, TxnStream, read_txn_history

if TYPE_CHECKING:
    from checkers.txn.checker import check_txns, with_transactions

__all__ = ["TxnHistory", "TxnStream", "check_txns", "read_txn_history", "with_transactions"]
_LOADED_WHEN_ASKED = frozenset({"check_txns", "with_transactions"})


def __getattr__(name: str) -> object:
    if name in _LOADED_WHEN_ASKED:
        return getattr(importlib.import_module("checkers.txn.checker"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
