"""Jepsen's Kafka anomaly catalogue on a queue history (jepsen.tests.kafka): the history
read into plain records once (reader.py, or in halves by two processes: halves.py), the
finders of each kind, the policy that says which kinds invalidate, the consumers' lag.

The face of the family: the check and its reading, the policy, the lag, and what the
report draws from the records.
"""

from checkers.queue.cases import inconsistent_offset_cases, index_observations
from checkers.queue.checker import QueueStream, check, check_read, explain, reject_malformed
from checkers.queue.explain import case_words, follows_from_loss
from checkers.queue.halves import load_queue_halves
from checkers.queue.lag import (
    LagPoint,
    Process,
    lag_points,
    process_order,
    worst_lags,
    worst_realtime_lag,
)
from checkers.queue.policy import (
    KINDS,
    POLICY,
    SUB_VIA,
    TXN_KINDS,
    TXN_POLICY,
    SubVia,
    effect,
    parse_kinds,
)
from checkers.queue.reader import (
    DRAIN,
    POLL,
    SEND,
    QueueHistory,
    Send,
    observations,
    observed_batches,
    read_queue_history,
)

__all__ = [
    "DRAIN",
    "KINDS",
    "POLICY",
    "POLL",
    "SEND",
    "SUB_VIA",
    "TXN_KINDS",
    "TXN_POLICY",
    "LagPoint",
    "Process",
    "QueueHistory",
    "QueueStream",
    "Send",
    "SubVia",
    "case_words",
    "check",
    "check_read",
    "effect",
    "explain",
    "follows_from_loss",
    "inconsistent_offset_cases",
    "index_observations",
    "lag_points",
    "load_queue_halves",
    "observations",
    "observed_batches",
    "parse_kinds",
    "process_order",
    "read_queue_history",
    "reject_malformed",
    "worst_lags",
    "worst_realtime_lag",
]
