"""The queue checker's explanation: a summary line, one line per anomaly kind with its
count, then the first few cases of each kind in words, rendered from the result alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CASES_SHOWN = 3

Case = dict[str, Any]


def explain(result: dict[str, Any]) -> list[str]:
    """Takes a queue checker result. Returns lines a person can check against the history."""
    ack, lost = result["acknowledged"], result["lost"]
    lines = [
        f"{result['sends']} sends, {ack} acknowledged, {lost} lost "
        f"({100 * result['lost_fraction']:.1f}%)"
    ]
    lines.extend(result["unknown"])
    for kind, found in result["kinds"].items():
        effect = "makes the history invalid" if found["invalidating"] else "reported"
        lines.append(f"{kind}: {found['count']} ({effect})")
    for kind, found in result["kinds"].items():
        render = _RENDERERS[kind]
        lines.extend(f"  {kind}: {render(c)}" for c in found["cases"][:CASES_SHOWN])
    return lines


def _at(c: Case) -> str:
    return f"partition {c['partition']} offset {c['offset']}"


def _observer(c: Case) -> str:
    return f"{c['by']} op {c['index']}"


def _lost(c: Case) -> str:
    return (
        f"send of {c['value']!r} (op {c['index']}, process {c['process']}) acknowledged at "
        f"{_at(c)}; the final drain of partition {c['partition']} does not hold it"
    )


def _unexpected(c: Case) -> str:
    sent = "whose send certainly failed" if c["write"] == "failed" else "that no send attempted"
    return f"{c['value']!r} {sent}, seen at {_at(c)} ({_observer(c)})"


def _unseen(c: Case) -> str:
    return f"send of {c['value']!r} (op {c['index']}) acknowledged at {_at(c)}; no poll received it"


def _duplicate(c: Case) -> str:
    where = " and at ".join(f"{_at(o)} ({_observer(o)})" for o in c["observed"])
    return f"{c['value']!r} seen at {where}"


def _inconsistent(c: Case) -> str:
    held = " and ".join(f"{o['value']!r} ({_observer(o)})" for o in c["observed"])
    return f"{_at(c)} held {held}"


def _nonmonotonic_poll(c: Case) -> str:
    return (
        f"process {c['process']}, partition {c['partition']}: offset {c['offset']} (op "
        f"{c['index']}) after offset {c['prior_offset']} (op {c['prior_index']}), "
        "with no seek or reassignment between"
    )


def _poll_skip(c: Case) -> str:
    shown = ", ".join(str(o) for o in c["skipped"])
    more = "" if c["skipped_count"] <= len(c["skipped"]) else ", ..."
    return (
        f"process {c['process']}, partition {c['partition']}: offset {c['offset']} (op "
        f"{c['index']}) after offset {c['prior_offset']} (op {c['prior_index']}), skipping "
        f"{c['skipped_count']} offsets that others saw values at ({shown}{more})"
    )


def _nonmonotonic_send(c: Case) -> str:
    return (
        f"process {c['process']}, partition {c['partition']}: send of {c['value']!r} (op "
        f"{c['index']}) acknowledged at offset {c['offset']}, after its send of "
        f"{c['prior_value']!r} (op {c['prior_index']}) at offset {c['prior_offset']}"
    )


_RENDERERS: dict[str, Callable[[Case], str]] = {
    "lost-write": _lost,
    "unexpected": _unexpected,
    "unseen": _unseen,
    "duplicate": _duplicate,
    "inconsistent-offsets": _inconsistent,
    "nonmonotonic-poll": _nonmonotonic_poll,
    "poll-skip": _poll_skip,
    "nonmonotonic-send": _nonmonotonic_send,
}
