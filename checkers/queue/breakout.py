"""Lost writes broken out by where they fall in their writer's sends (Jepsen's NATS
queue checker, jepsen-io/nats src/jepsen/nats/queue.clj `lost-breakout`), over every
drain and through each node's drain alone.

Each writer (a process) sends in order; of a writer's sends some were read back. A lost
send (acknowledged, never read) is
- prefix: before the writer's first send that was read: the system may have "started
  over", throwing away everything before some moment (a power cut that lost a whole
  file, say);
- middle: between its first and last send that were read: reads saw sends on either side
  of it, so it certainly should have been read (the worst kind);
- postfix: after its last send that was read, or any send of a writer none of whose sends
  was read: possibly a slow reader, possibly a lost tail.
Jepsen orders a writer's publishes by the counter each carries; here by the order the
process invoked them (its sends come in that order in the history).

Per node (drains that name the node they read through, as the NATS queue's do, one per
server): what that drain lacks of the acknowledged sends, broken out the same way
against what it read; a loss on one node only is a divergence between the servers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from checkers.queue.records import Drain, Message, Send, messages

KINDS = ("prefix", "middle", "postfix")
SHOWN = 32
"""How many lost messages of each kind a result lists (Jepsen shows 32)."""


def sections(
    sends: Sequence[Send], final: Sequence[Drain], node_drains: Mapping[str, Drain]
) -> dict[str, Any]:
    """Takes the sends in invoke order, the final drains (those the lost-acks view judges
    by) and the last ok drain through each node. Returns the lost-acks view's "breakout"
    (None without a final drain) and, when drains name their node, "breakout_by_node"."""
    placed = ranks(sends)
    read = {m for d in final for m in messages(d.records)}
    judged = {d.partition for d in final}
    lost = [
        s.value
        for s in sends
        if s.outcome == "ok" and s.partition in judged and s.value not in read
    ]
    found: dict[str, Any] = {"breakout": breakout(lost, read, placed) if final else None}
    if node_drains:
        acked = {s.value for s in sends if s.outcome == "ok"}
        found["breakout_by_node"] = by_node(acked, node_drains, placed)
    return found


def ranks(sends: Iterable[Send]) -> dict[Message, tuple[int | str, int]]:
    """Takes sends in invoke order. Returns message -> (its writer, the place of its send
    among the writer's sends); a message sent twice keeps its first send's place."""
    placed: dict[Message, tuple[int | str, int]] = {}
    count: dict[int | str, int] = {}
    for s in sends:
        place = count.get(s.process, 0)
        count[s.process] = place + 1
        placed.setdefault(s.value, (s.process, place))
    return placed


def breakout(
    lost: Iterable[Message], read: set[Message], placed: Mapping[Message, tuple[int | str, int]]
) -> dict[str, Any]:
    """Takes the lost messages, every message read, and each message's writer and place
    in send order (ranks). Returns the lost split into prefix, middle and postfix: their counts, the
    first SHOWN of each, and per writer with a loss the count of each kind."""
    first: dict[int | str, int] = {}
    last: dict[int | str, int] = {}
    # placed is in send order, where each writer's places only grow: its first read
    # message met here has the writer's least place, its last the greatest.
    for message, (writer, place) in placed.items():
        if message in read:
            if writer not in first:
                first[writer] = place
            last[writer] = place
    split: dict[str, list[Message]] = {kind: [] for kind in KINDS}
    writers: dict[str, dict[str, int]] = {}
    for message in lost:
        writer, place = placed[message]
        if writer in first and place < first[writer]:
            kind = "prefix"
        elif writer in last and place < last[writer]:
            kind = "middle"
        else:
            kind = "postfix"
        split[kind].append(message)
        counts = writers.setdefault(str(writer), dict.fromkeys(KINDS, 0))
        counts[kind] += 1
    found: dict[str, Any] = {}
    for kind in KINDS:
        found[f"lost-{kind}-count"] = len(split[kind])
        found[f"lost-{kind}"] = sorted(split[kind], key=_order)[:SHOWN]
    found["writers"] = dict(sorted(writers.items()))
    return found


def by_node(
    acked: set[Message],
    node_drains: Mapping[str, Drain],
    placed: Mapping[Message, tuple[int | str, int]],
) -> dict[str, dict[str, Any]]:
    """Takes the acknowledged messages, the last ok drain through each node, and each
    message's writer and place. Returns node -> the breakout of what its drain lacks,
    with the count lost there."""
    found = {}
    for node, drain in node_drains.items():
        read = set(messages(drain.records))
        lost = acked - read
        found[node] = {"lost-count": len(lost), **breakout(lost, read, placed)}
    return found


def _order(message: Message) -> tuple[int, int, str]:
    return (0, message, "") if type(message) is int else (1, 0, repr(message))
