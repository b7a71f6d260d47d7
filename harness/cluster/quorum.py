"""The KRaft controller quorum as the harness sees it: which controller leads, each
voter's lag, and which broker holds the freshest committed metadata.

Every controller is asked at once (DescribeQuorum on its controller port). Only a
leader answers without error; a leader cut off from the others may still believe it
leads for a moment, so of several the one with the highest epoch is the leader (Raft
never gives two leaders one epoch). Containers share the host's clock, so the
leader's last-fetch times compare with ours.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.cluster.wire import QuorumAnswer, ReplicaState, WireError

FRESH_FETCH_MS = 3000
"""A broker that fetched the metadata log this recently reaches the quorum: observers
fetch continuously, and the controllers fence a broker silent for 6 s."""


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One replica of the metadata log, as the quorum's leader sees it now."""

    node_id: int
    log_end_offset: int
    lag: int
    """Records behind the leader's log end."""
    last_fetch_ago_ms: int | None
    """How long ago it last fetched; None when the leader does not know (itself)."""


@dataclass(frozen=True, slots=True)
class Quorum:
    """The quorum as its leader describes it."""

    leader: int
    epoch: int
    high_watermark: int
    voters: tuple[ReplicaView, ...]
    observers: tuple[ReplicaView, ...]


def leader_answer(answers: Mapping[str, QuorumAnswer | WireError]) -> QuorumAnswer | None:
    """Takes each controller's answer (or why it gave none). Returns the answer of the
    leader of the highest epoch, or None when no controller answered as leader."""
    leaders = [a for a in answers.values() if isinstance(a, QuorumAnswer) and a.error == 0]
    return max(leaders, key=lambda a: a.leader_epoch, default=None)


def quorum_view(answer: QuorumAnswer, now_ms: int) -> Quorum:
    """Takes the leader's answer and the wall clock in ms. Returns the quorum with each
    replica's lag behind the leader and the age of its last fetch."""
    leader_end = max((v.log_end_offset for v in answer.voters), default=0)

    def view(replica: ReplicaState) -> ReplicaView:
        ago = None if replica.last_fetch_ms < 0 else max(0, now_ms - replica.last_fetch_ms)
        if replica.node_id == answer.leader_id:
            ago = None
        lag = max(0, leader_end - replica.log_end_offset)
        return ReplicaView(replica.node_id, replica.log_end_offset, lag, ago)

    return Quorum(
        leader=answer.leader_id,
        epoch=answer.leader_epoch,
        high_watermark=answer.high_watermark,
        voters=tuple(view(v) for v in answer.voters),
        observers=tuple(view(o) for o in answer.observers),
    )


def freshest_broker(quorum: Quorum, brokers: Sequence[int]) -> int | None:
    """Takes the quorum and the broker ids that may be asked. Returns the one that has
    replicated the most of the metadata log among those that fetched within
    FRESH_FETCH_MS (a combined node that leads counts as fresh), or None."""
    replicas = {r.node_id: r for r in (*quorum.observers, *quorum.voters)}
    fresh = [replicas[b] for b in brokers if b in replicas and reaches_leader(replicas[b], quorum)]
    best = max(fresh, key=lambda r: (r.log_end_offset, -r.node_id), default=None)
    return None if best is None else best.node_id


def reaches_leader(replica: ReplicaView, quorum: Quorum) -> bool:
    """Returns whether replica reaches the quorum's leader: it is the leader, or it
    fetched within FRESH_FETCH_MS."""
    ago = replica.last_fetch_ago_ms
    return replica.node_id == quorum.leader or (ago is not None and ago <= FRESH_FETCH_MS)


def ask_all(
    controllers: Mapping[str, str], ask: Callable[[str], QuorumAnswer]
) -> dict[str, QuorumAnswer | WireError]:
    """Takes controller node -> address and a function asking one address. Asks them all
    at once; returns node -> answer, or the WireError it gave."""

    def one(address: str) -> QuorumAnswer | WireError:
        try:
            return ask(address)
        except WireError as err:
            return err

    if not controllers:
        return {}
    with ThreadPoolExecutor(max_workers=len(controllers)) as pool:
        answers = pool.map(one, controllers.values())
        return dict(zip(controllers, answers, strict=True))


def now_ms() -> int:
    """Returns the wall clock in ms, the clock the quorum's fetch times are in."""
    return time.time_ns() // 1_000_000
