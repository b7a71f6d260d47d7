"""The nemesis story's words for the membership faults: a KRaft voter removed and added
back (nemesis/controllers.py: the voter sets the quorum's leader reported) and a broker
decommissioned and brought back (nemesis/decommission.py: the partitions moved, how
long each reassignment took, what was left on the broker), and a NATS server removed
and back as a new peer (nemesis/peer_removal.py: what /jsz said at each step).

nemesis_story asks these before its own words; the steps shared with other faults
(cut-off, healed, started, stopped) keep theirs.
"""

from __future__ import annotations

from typing import Any

from nemesis.names import (
    BROKER_MEMBERSHIP_FAULTS,
    CONTROLLER_MEMBERSHIP_FAULTS,
    SERVER_MEMBERSHIP_FAULTS,
)

Value = dict[str, Any]
UNSETTLED_SHOWN = 5


def membership_op_words(f: str, value: Value) -> str | None:
    """Takes a nemesis op's name and value. Returns its row's words when the fault is a
    membership fault, else None."""
    action, _, fault = f.partition("-")
    if fault in CONTROLLER_MEMBERSHIP_FAULTS:
        voters = value.get("voters") or {}
        if action == "start":
            cut = f", {value['cut_off']} cut off first" if value.get("cut_off") else ""
            return (
                f"{fault}: {value.get('removed')} removed from the voters{cut}; voters "
                f"{_set(voters.get('before'))} then {_set(voters.get('after'))}"
            )
        added = value.get("added")
        said = f"{added} added back" if added else "the controller not added back"
        return f"{fault}: {said}; voters {_set(voters.get('after'))}"
    if fault in BROKER_MEMBERSHIP_FAULTS:
        if action == "start":
            if value.get("set_up") is False:
                return f"{fault}: {value.get('node')}'s partitions not moved away in time"
            killed = f", {value['killed']} killed meanwhile" if value.get("killed") else ""
            return (
                f"{fault}: {value.get('decommissioned')} decommissioned, "
                f"{value.get('moved')} partitions moved off it{killed}"
            )
        back = value.get("recommissioned")
        if back is None:
            return f"{fault}: {value.get('node')} not brought back"
        return f"{fault}: {back} back, {value.get('moved')} partitions moved back to it"
    if fault in SERVER_MEMBERSHIP_FAULTS:
        node = value.get("node")
        if action == "start":
            gone = value.get("removed")
            said = f"wiped and peer-removed as {gone}" if gone else "not out of the cluster in time"
            return f"{fault}: {node} {said} (the stream had {value.get('replicas')} replicas)"
        back = value.get("rejoined")
        said = f"back as a new peer, {back}" if back else "not back in the cluster in time"
        return f"{fault}: {node} {said}"
    return None


def membership_step_words(step: Value) -> str | None:
    """Takes a recorded step. Returns it in words when a membership fault records it,
    else None."""
    node = step.get("node")
    words = {
        "quorum": lambda: (
            f"the quorum: voters {_set(step.get('voters'))}, leader {step.get('leader')} "
            f"(epoch {step.get('epoch')})"
        ),
        "remove-controller": lambda: f"remove-controller {node}: {step.get('said')}",
        "remove-controller-failed": lambda: f"remove-controller {node} failed: {step.get('error')}",
        "removed": lambda: f"voters now {_set(step.get('voters'))}, leader {step.get('leader')}",
        "not-removed": lambda: _unchanged(step),
        "add-controller": lambda: f"add-controller {node}: {step.get('said')}",
        "add-controller-refused": lambda: f"add-controller {node} refused: {step.get('error')}",
        "added": lambda: f"voters now {_set(step.get('voters'))}, leader {step.get('leader')}",
        "not-added": lambda: _unchanged(step),
        "killed-leader": lambda: f"{node}, a partition leader, killed (SIGKILL)",
        "reassigning": lambda: f"{step.get('partitions')} partitions being moved off {node}",
        "reassign-failed": lambda: f"the reassignment off {node} failed: {step.get('error')}",
        "unregister-failed": lambda: f"unregistering {node} failed: {step.get('error')}",
        "reassigned-away": lambda: _settled(step, "moved off"),
        "not-reassigned-away": lambda: _unsettled(step),
        "left-on-it": lambda: f"partitions left on {node}: {len(step.get('partitions') or [])}",
        "unregistered": lambda: f"{node} unregistered: {step.get('said')}",
        "reassigning-back": lambda: (
            f"{step.get('partitions')} partitions being moved back to {node} "
            f"(refused {step.get('refused')} times first)"
        ),
        "not-reassigning-back": lambda: f"{node}'s partitions could not be moved back",
        "reassigned-back": lambda: _settled(step, "moved back"),
        "not-reassigned-back": lambda: _unsettled(step),
        "members-before": lambda: f"{step.get('server')}'s cluster: {_jsz(step.get('jsz'))}",
        "wiped": lambda: f"{step.get('server')} stopped, its store deleted, killed",
        "peer-remove": lambda: f"peer-remove {step.get('server')}: {step.get('said')}",
        "peer-remove-failed": lambda: f"peer-remove {step.get('server')}: {step.get('error')}",
        "server-left": lambda: f"{step.get('server')} left: {_jsz(step.get('jsz'))}",
        "server-not-left": lambda: (
            f"{step.get('server')} still listed after {step.get('within_s')} s: "
            f"{_jsz(step.get('jsz'))}"
        ),
        "rejoining": lambda: f"{node} started as {step.get('server')}, empty",
        "server-rejoined": lambda: f"{step.get('server')} current: {_jsz(step.get('jsz'))}",
        "server-not-rejoined": lambda: (
            f"{step.get('server')} not back after {step.get('within_s')} s: {_jsz(step.get('jsz'))}"
        ),
        "preferred-leaders": lambda: (
            "preferred leaders elected"
            + (f", refused for {len(step['refused'])}" if step.get("refused") else "")
        ),
    }
    said = words.get(str(step.get("step")))
    return said() if said is not None else None


def _jsz(seen: Any) -> str:
    """What /jsz said (nemesis.peer_removal.summary) in words."""
    if not isinstance(seen, dict):
        return "no server answered"

    def peers(listed: Any) -> str:
        if not isinstance(listed, list):
            return "unknown"
        return _set([p["name"] + ("" if p["current"] else " (behind)") for p in listed])

    return (
        f"meta leader {seen.get('meta_leader')} of {seen.get('cluster_size')} with "
        f"{peers(seen.get('meta_peers'))}; stream leader {seen.get('stream_leader')} with "
        f"{peers(seen.get('stream_peers'))}; healthy {_set(seen.get('healthy'))}"
    )


def _set(voters: Any) -> str:
    return "[" + ", ".join(str(v) for v in voters) + "]" if isinstance(voters, list) else "unknown"


def _unchanged(step: Value) -> str:
    return (
        f"the voter set did not change within {step.get('within_s')} s: "
        f"{_set(step.get('voters'))}" + (f" ({step['error']})" if step.get("error") else "")
    )


def _settled(step: Value, how: str) -> str:
    return f"{step.get('partitions')} partitions {how} in {step.get('took_s')} s"


def _unsettled(step: Value) -> str:
    left = [str(p) for p in step.get("unsettled") or []]
    more = f" and {len(left) - UNSETTLED_SHOWN} more" if len(left) > UNSETTLED_SHOWN else ""
    return (
        f"reassignment not done within {step.get('within_s')} s: "
        f"{', '.join(left[:UNSETTLED_SHOWN])}{more}"
    )
