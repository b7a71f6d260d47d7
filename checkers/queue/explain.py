"""The queue checker's explanation: a summary line, the losses judged both ways, the
policy's choices (how consumers read, the kinds ignored), one line per anomaly kind found
with its count and effect (a kind that follows from the lost writes said under them, not
as a problem of its own) and one for the kinds not found, then the first few cases of
each kind in words, rendered from the result alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checkers.queue.policy import effect

CASES_SHOWN = 3
REUSED = "inconsistent-offsets"
"""An offset that held a lost send and later another: the log was cut back (a truncation
after an unclean election or a power cut) and the offsets written again."""
MOVED_BACK = ("poll-skip", "nonmonotonic-poll")
"""A consumer's offsets jumping on a partition whose log was cut back under it: the offsets
it had read, or that others saw values at, are gone or hold other values."""

Case = dict[str, Any]


def explain(result: dict[str, Any]) -> list[str]:
    """Takes a queue checker result. Returns lines a person can check against the history."""
    ack, lost = result["acknowledged"], result["lost"]
    lines = [
        f"{result['sends']} sends, {ack} acknowledged, {lost} lost "
        f"({100 * result['lost_fraction']:.1f}%)",
        _losses_line(result),
    ]
    if result["ignored"]:
        lines.append(f"ignored (reported, never invalid): {', '.join(result['ignored'])}")
    lines.extend(result["unknown"])
    if "transactions" in result:
        t = result["transactions"]
        lines.append(
            f"transactions: {t['committed']} committed, {t['aborted']} aborted, "
            f"{t['unknown']} unknown ({t['info_committed']} of them read, so committed)"
        )
    kinds = result["kinds"]
    following = follows_from_loss(result)
    for kind, found in kinds.items():
        if found["count"]:
            said = effect(kind, invalidating=found["invalidating"], ignored=found["ignored"])
            cause = f"; {following[kind]}" if kind in following else ""
            lines.append(f"{kind}: {found['count']} ({said}{cause})")
    clean = sum(1 for found in kinds.values() if not found["count"])
    if clean:
        lines.append(
            f"no case of the {clean} {'other ' if clean < len(kinds) else ''}anomaly kinds"
        )
    for kind, found in kinds.items():
        lines.extend(f"  {kind}: {case_words(kind, c)}" for c in found["cases"][:CASES_SHOWN])
    return lines


def follows_from_loss(result: dict[str, Any]) -> dict[str, str]:
    """Takes a queue checker result. Returns, for each anomaly kind found whose every kept
    case follows from the lost writes, why in a few words: inconsistent offsets that each
    held a lost send (the offset written again after the log was cut back), and poll-skips
    and nonmonotonic polls only on partitions that lost sends (a consumer's offsets moving
    over a log cut back under it). {} when nothing was lost."""
    kinds = result.get("kinds", {})
    records = result.get("lost_records")
    if records is None:  # an older result: messages are unique, their partitions in the cases
        lost_cases = kinds.get("lost-write", {}).get("cases") or []
        records = [[c.get("partition"), c.get("value")] for c in lost_cases]
    lost = {v for _, v in records} | set(result.get("lost_messages") or [])
    if not lost:
        return {}
    partitions = {str(p) for p, _ in records}
    found: dict[str, str] = {}
    reused = kinds.get(REUSED, {}).get("cases") or []
    if reused and all(any(v in lost for v in c.get("values") or []) for c in reused):
        found[REUSED] = "each held a lost send, then another: the log was cut back, written again"
    for kind in MOVED_BACK:
        cases = kinds.get(kind, {}).get("cases") or []
        if cases and all(str(c.get("partition")) in partitions for c in cases):
            found[kind] = "only on partitions that lost sends: their logs were cut back"
    return found


def case_words(kind: str, case: Case) -> str:
    """Takes an anomaly kind and one of its cases from a result. Returns the case in words,
    as the terminal shows it (a cycle's edges joined by "; then ")."""
    return _RENDERERS.get(kind, _explained)(case)


def _losses_line(result: dict[str, Any]) -> str:
    drains = result["lost_from_drains"]
    by_drains = "no final drain" if drains is None else f"{drains} by the final drains"
    return f"lost writes: {result['lost_from_polls']} from the polls alone, {by_drains}"


def _at(c: Case) -> str:
    if c.get("offset") is None:  # a send of a transaction of unknown outcome had none
        return f"partition {c['partition']}"
    return f"partition {c['partition']} offset {c['offset']}"


def _observer(c: Case) -> str:
    return f"{c['by']} op {c['index']}"


def _send(c: Case) -> str:
    return f"send of {c['value']!r} (op {c['index']}, process {c['process']})"


def _lost(c: Case) -> str:
    # A send that ended info counts once a read proved its op committed.
    how = (
        "acknowledged"
        if "outcome" not in c
        else f"ended {c['outcome']}, its transaction committed (another of its sends was read),"
    )
    if c["judged_by"] == "drain":
        return (
            f"{_send(c)} {how} at {_at(c)}; the final drain of partition "
            f"{c['partition']} does not hold it"
        )
    return (
        f"{_send(c)} {how} at {_at(c)}; no poll read it, though poll op "
        f"{c['max_read_index']} read {c['max_read_value']!r}, at offset {c['max_read_offset']}"
    )


def _unexpected(c: Case) -> str:
    sent = {"failed": "whose send certainly failed", "never sent": "that no send attempted"}
    return f"{c['value']!r} {sent.get(c['write'], c['write'])}, seen at {_at(c)} ({_observer(c)})"


def _unseen(c: Case) -> str:
    return f"send of {c['value']!r} (op {c['index']}) acknowledged at {_at(c)}; nothing read it"


def _duplicate(c: Case) -> str:
    where = " and at ".join(f"{_at(o)} ({_observer(o)})" for o in c["observed"])
    return f"{c['value']!r} seen at {where}"


def _inconsistent(c: Case) -> str:
    held = " and ".join(f"{o['value']!r} ({_observer(o)})" for o in c["observed"])
    return f"{_at(c)} held {held}"


def _step(c: Case) -> str:
    return (
        f"process {c['process']}, partition {c['partition']}: offset {c['offset']} (op "
        f"{c['index']}) after offset {c['prior_offset']} (op {c['prior_index']})"
    )


def _nonmonotonic_poll(c: Case) -> str:
    return (
        f"{_step(c)}, holding the partition throughout (no seek, and no assign, rebalance "
        "or failed op moved it)"
    )


def _poll_skip(c: Case) -> str:
    shown = ", ".join(str(o) for o in c["skipped"])
    more = "" if c["skipped_count"] <= len(c["skipped"]) else ", ..."
    offsets = "offset" if c["skipped_count"] == 1 else "offsets"
    return (
        f"{_step(c)}, skipping {c['skipped_count']} {offsets} that others saw values at "
        f"({shown}{more})"
    )


def _nonmonotonic_send(c: Case) -> str:
    landed = "acknowledged" if c["outcome"] == "ok" else f"ended {c['outcome']}, read"
    return (
        f"process {c['process']}, partition {c['partition']}: send of {c['value']!r} (op "
        f"{c['index']}) {landed} at offset {c['offset']}, after its send of "
        f"{c['prior_value']!r} (op {c['prior_index']}) at offset {c['prior_offset']}"
    )


def _explained(c: Case) -> str:
    # A transaction kind's case carries its own words: a line, or a line per edge.
    said = c["explanation"]
    return said if isinstance(said, str) else "; then ".join(said)


_RENDERERS: dict[str, Callable[[Case], str]] = {
    "lost-write": _lost,
    "unexpected": _unexpected,
    "unseen": _unseen,
    "duplicate": _duplicate,
    "inconsistent-offsets": _inconsistent,
    "nonmonotonic-poll": _nonmonotonic_poll,
    "poll-skip": _poll_skip,
    "nonmonotonic-send": _nonmonotonic_send,
    "int-nonmonotonic-poll": _nonmonotonic_poll,
    "int-poll-skip": _poll_skip,
    "int-nonmonotonic-send": _nonmonotonic_send,
}
