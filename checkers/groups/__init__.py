"""Consumer groups and share groups (KIP-932) on a queue workload's history: each read
from the raw events (consumer_history.py, share_history.py), then checked against the
rules of its protocol (consumer.py, share.py).

The face of the family: both checks, their readings, and the lines that say them.
"""

from checkers.groups.consumer import check_groups, group_lines
from checkers.groups.consumer_history import Commit, GroupHistory, read_group_history
from checkers.groups.expansion import Readers, check_expansion, expansion_lines
from checkers.groups.share import BROKER_DELIVERY_LIMIT, ShareRules, check_share, share_lines
from checkers.groups.share_history import (
    Shaped,
    ShapeProbe,
    ShareHistory,
    read_share_history,
    share_events,
)
from checkers.groups.share_history import reject_malformed as reject_malformed_share

__all__ = [
    "BROKER_DELIVERY_LIMIT",
    "Commit",
    "GroupHistory",
    "Readers",
    "ShapeProbe",
    "Shaped",
    "ShareHistory",
    "ShareRules",
    "check_expansion",
    "check_groups",
    "check_share",
    "expansion_lines",
    "group_lines",
    "read_group_history",
    "read_share_history",
    "reject_malformed_share",
    "share_events",
    "share_lines",
]
