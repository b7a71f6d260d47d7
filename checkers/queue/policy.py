"""The queue checker's verdict policy, in one place: which anomaly kinds make a history
invalid, which only when the consumers are assigned, and which a user chose to ignore.

Jepsen's Kafka checker (jepsen.tests.kafka, `checker` and `allowed-error-types`) fails a
test on every error kind it finds except those it allows: poll-skip and nonmonotonic-poll
when the test's consumers subscribe (`:sub-via` holds `:subscribe`, so a rebalance may
move a consumer between polls), and always int-send-skip and G0, which Kafka's
transactions allow. Its suites also let the user name kinds to accept. This table is
that rule:

| kind                   | makes the history invalid |
| ---------------------- | ------------------------- |
| lost-write             | always                    |
| unexpected             | always                    |
| unseen                 | without final drains      |
| duplicate              | always                    |
| inconsistent-offsets   | always                    |
| nonmonotonic-send      | always                    |
| int-nonmonotonic-send  | always                    |
| int-nonmonotonic-poll  | always                    |
| int-poll-skip          | always                    |
| nonmonotonic-poll      | under assign only         |
| poll-skip              | under assign only         |
| stuck-consumer         | never: a liveness failure |

A stuck consumer (checkers/queue/stuck.py: a final drain at read_committed that stayed
below the high watermark past its catch-up time) read nothing wrong; it stopped getting
what was there. Like Jepsen's liveness figures (a history's unseen count over time), it is
reported beside the verdict, never part of it; the partition it could not drain is judged
by nothing, which leaves its losses unknown.

And for the transactions of a history with txn ops (checkers/txn/checker.py), TXN_POLICY:

| kind                         | makes the history invalid                         |
| ---------------------------- | ------------------------------------------------- |
| G1a (aborted read)           | always                                            |
| precommitted-read            | always                                            |
| G1c, G1c-process, G1c-realtime | always (cycles of reads, no ww edge: txn_cycles) |
| G0, G0-process, G0-realtime  | never: Kafka isolates no transaction's writes     |
| int-send-skip                | never: transactions' writes interleave            |

As in kafka.clj's `allowed-error-types`, which always allows int-send-skip and G0 and
fails a test on G1a, precommitted reads, and G1c of reads alone.

No kind depends on the producers' idempotence: the queue workload's producers make one
attempt each without idempotence (retries=0) and retry safely with it, so a duplicate or
a backwards send is Kafka's doing either way, as Jepsen assumes. A history from producers
that retry without idempotence may ignore `duplicate,nonmonotonic-send`.

An ignored kind is still found and reported, with its cases; it only stops counting
against validity.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

SubVia = Literal["assign", "subscribe"]
SUB_VIA: Final[tuple[SubVia, ...]] = ("assign", "subscribe")
ALWAYS, UNDER_ASSIGN, WITHOUT_DRAINS = "always", "under assign only", "without final drains"
KAFKA_ALLOWS = "never: Kafka allows it"
LIVENESS = "never: a liveness failure"

POLICY: Final[dict[str, str]] = {
    "lost-write": ALWAYS,
    "unexpected": ALWAYS,
    # Jepsen's histories end with polls, which are then the last word. Ours end with a
    # drain of every partition: an unseen message in a drained partition is a lost write
    # already, and one whose drain failed is judged by nothing, so "unknown", never invalid.
    "unseen": WITHOUT_DRAINS,
    "duplicate": ALWAYS,
    "inconsistent-offsets": ALWAYS,
    # Under subscribe the group may move a partition to another consumer and back between
    # two polls, resuming at a committed offset behind or ahead of the last one read.
    "nonmonotonic-poll": UNDER_ASSIGN,
    "poll-skip": UNDER_ASSIGN,
    "nonmonotonic-send": ALWAYS,
    # Within one op no rebalance intervenes unless the op says so (its cases leave out
    # the partitions it moved), so subscribe explains nothing here.
    "int-nonmonotonic-poll": ALWAYS,
    "int-poll-skip": ALWAYS,
    "int-nonmonotonic-send": ALWAYS,
    "stuck-consumer": LIVENESS,
}
"""Every kind the queue checker finds, in the order it reports them, and when it makes a
history invalid."""
KINDS: Final[tuple[str, ...]] = tuple(POLICY)

TXN_POLICY: Final[dict[str, str]] = {
    "G1a": ALWAYS,
    "precommitted-read": ALWAYS,
    # Kafka orders a transaction's sends among others' in each partition as they land.
    "int-send-skip": KAFKA_ALLOWS,
    # No write isolation: two transactions' writes may land in opposite orders in two
    # partitions, and a process's or a later transaction's before an earlier one's.
    "G0": KAFKA_ALLOWS,
    "G1c": ALWAYS,
    "G0-process": KAFKA_ALLOWS,
    "G1c-process": ALWAYS,
    "G0-realtime": KAFKA_ALLOWS,
    "G1c-realtime": ALWAYS,
}
"""Every kind the transaction checker finds, in the order it reports them, and when it
makes a history invalid."""
TXN_KINDS: Final[tuple[str, ...]] = tuple(TXN_POLICY)


def counts_against(
    kind: str, sub_via: SubVia, ignored: Iterable[str] = (), *, drained: bool = False
) -> bool:
    """Takes a kind, how the consumers read (assign or subscribe), the kinds ignored and
    whether the history ends with final drains. Returns whether one case of the kind makes
    the history invalid."""
    if kind in ignored:
        return False
    when = POLICY.get(kind) or TXN_POLICY[kind]
    if when in (KAFKA_ALLOWS, LIVENESS):
        return False
    if when == UNDER_ASSIGN:
        return sub_via == "assign"
    if when == WITHOUT_DRAINS:
        return not drained
    return True


def effect(kind: str, *, invalidating: bool, ignored: bool) -> str:
    """Takes a kind and whether it counts against the history and was ignored (as a
    result's kind entry says). Returns what a case of it does, in words."""
    if ignored:
        return "ignored"
    if invalidating:
        return "makes the history invalid"
    # A results.json of an older release may name other kinds.
    when = POLICY.get(kind) or TXN_POLICY.get(kind)
    if when == KAFKA_ALLOWS:
        return "reported: Kafka allows it"
    if when == LIVENESS:
        return "reported: a liveness failure, not a wrong read"
    if when == WITHOUT_DRAINS:
        return "reported: the final drains judge losses"
    if when == UNDER_ASSIGN:
        return "reported: consumers subscribe"
    return "reported"


def parse_kinds(text: str) -> frozenset[str]:
    """Takes a comma list of kinds, as --ignore gets it. Returns them; raises ValueError
    naming the valid kinds for a name that is none."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in POLICY and name not in TXN_POLICY]
    if unknown or not names:
        what = f"not a queue anomaly kind: {', '.join(unknown)}" if unknown else "no kind named"
        raise ValueError(f"{what} (the kinds: {', '.join(KINDS + TXN_KINDS)})")
    return frozenset(names)


def sub_via_of(subscribed: bool) -> SubVia:
    """Takes whether any consumer of a history subscribed (an ok subscribe op). Returns how
    the history's consumers read, as far as the history shows: subscribe if any did."""
    # Like Jepsen's :sub-via, one answer for the whole history: a mixed one is subscribe.
    return "subscribe" if subscribed else "assign"
