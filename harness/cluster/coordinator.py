"""FindCoordinator (v4), sent by the harness itself: which broker coordinates a consumer
or share group now, the target of the coordinator nemeses (issue 23, item 4).

Any broker answers for the whole cluster: the coordinator is the leader of the group's
partition of __consumer_offsets, a share group's too (KIP-932 keeps its membership there).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cluster.wire import Reader, WireError, Writer, request

FIND_COORDINATOR = 10
GROUP_KEY = 0
"""FindCoordinator's key type for a group, consumer or share (1 is a transactional id)."""


@dataclass(frozen=True, slots=True)
class CoordinatorAnswer:
    """One broker's answer about one group: error 0 with the coordinator's id, or the
    error (15, COORDINATOR_NOT_AVAILABLE, while its partition has no leader)."""

    error: int
    node_id: int
    host: str
    port: int
    message: str


def find_coordinator_body(group: str) -> bytes:
    """Returns a FindCoordinator v4 body asking for one group's coordinator."""
    body = Writer().raw(bytes([GROUP_KEY])).array_length(1).string(group)
    return bytes(body.no_tags().data)


def read_find_coordinator(answer: Reader, group: str) -> CoordinatorAnswer:
    """Takes a FindCoordinator v4 answer's body. Returns its entry for group; raises
    WireError when the answer has none."""
    answer.int32()
    found = None
    for _ in range(answer.array_length()):
        key, node_id, host, port = answer.string(), answer.int32(), answer.string(), answer.int32()
        error, message = answer.int16(), answer.string()
        answer.tags()
        if key == group:
            found = CoordinatorAnswer(error, node_id, host or "", port, message or "")
    answer.tags()
    if found is None:
        raise WireError(f"FindCoordinator answered nothing about group {group!r}")
    return found


def find_coordinator(address: str, port: int, group: str, timeout: float) -> CoordinatorAnswer:
    """Asks one broker which broker coordinates group."""
    answer = request(address, port, FIND_COORDINATOR, 4, find_coordinator_body(group), timeout)
    return read_find_coordinator(answer, group)
