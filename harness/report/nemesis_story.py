"""The nemesis as a story: one row per step a fault took, in words, with when it began and
ended in test seconds (and wall time once test.json records t = 0), its errors apart.

Results.json keeps each nemesis op at its completion; a row starts at the op's invoke,
taken from the history (invoke_times), so a fault's row begins where its band does in
the plots. A fault that records its own steps (isr-shrink) gets a row per step, each at
its invoke plus the step's `after_s`; the corruption and composed faults' words are in
disk_story.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.report.disk_story import disk_op_words, disk_step_words
from harness.report.membership_story import membership_op_words, membership_step_words
from harness.report.proxy_story import proxy_words
from history import Event

Value = dict[str, Any]
_TRUNCATING = re.compile(
    r"Truncating (?:partition )?(?P<topic>\S+)-(?P<partition>\d+) "
    r"(?:with TruncationState\(offset=|to offset )(?P<offset>\d+)"
    r"(?:.*below high watermark (?P<hw>\d+))?"
)
_ERROR_CHARS = 200


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the story: when (test seconds; stop is None for an instant), what, the
    error if any, the broker log lines it cites, and the JSON it was read from."""

    start: float
    stop: float | None
    words: str
    error: str = ""
    log_lines: tuple[str, ...] = ()
    raw: Any = field(default=None, compare=False)


def invoke_times(events: Sequence[Event]) -> list[float]:
    """Takes a history's events. Returns the time of each nemesis invoke in seconds since
    the test began, in order: the nth is the invoke of results.json's nth nemesis op (the
    nemesis is one process, so its invokes and completions alternate)."""
    return [
        e["time"] / 1e9
        for e in events
        if e.get("process") == "nemesis" and e.get("type") == "invoke"
    ]


def estimated_invokes(section: dict[str, Any]) -> list[float]:
    """Takes results.json's nemesis section. Returns each op's invoke time as the section
    shows it, where no history is at hand: a start op that took effect from its window,
    a stop op that recorded steps from the first of them, any other at its completion (a
    plain stop or a skip takes a second or so)."""
    windows = [w for w in section.get("windows", []) if isinstance(w, dict)]
    times = []
    for op in section.get("ops", []):
        at = float(op["time"])
        if str(op.get("f")).startswith("start-"):
            window = next((w for w in windows if w.get("detail") == op.get("value")), None)
            times.append(float(window["start"]) if window else at)
        else:
            times.append(_stop_invoke(op, windows) or at)
    return times


def _stop_invoke(op: dict[str, Any], windows: Sequence[dict[str, Any]]) -> float | None:
    # A window's steps are its start's, then its stop's, each at its op's invoke + after_s.
    value = op.get("value")
    steps = value.get("steps") if isinstance(value, dict) else None
    window = next((w for w in windows if w.get("stop") == op["time"]), None)
    if window is None or not isinstance(steps, list) or not steps:
        return None
    detail = window.get("detail")
    before = detail.get("steps", []) if isinstance(detail, dict) else []
    timed = window.get("steps", [])
    if len(timed) <= len(before) or not isinstance(steps[0].get("after_s"), int | float):
        return None
    return float(timed[len(before)]["time"]) - float(steps[0]["after_s"])


def story(ops: Sequence[Value], invoked: Sequence[float]) -> list[Row]:
    """Takes results.json's nemesis ops and their invoke times (invoke_times; missing ones
    fall back to the completion). Returns the story's rows in time order."""
    starts = [invoked[n] if n < len(invoked) else float(op["time"]) for n, op in enumerate(ops)]
    rows: list[Row] = []
    for n, op in enumerate(ops):
        mine = op_rows(op, starts[n])
        if n + 1 < len(ops) and (settled := settled_words(op, ops[n + 1], starts[n + 1])):
            mine[0] = replace(mine[0], words=mine[0].words + settled)
        rows += mine
    return rows


def settled_words(op: Value, later: Value, at: float) -> str:
    """Takes a nemesis op and the next one, invoked at `at`. Returns what the partitions'
    leaders and ISRs had become by then where they differ from what the op read as it
    returned (an election after a kill comes seconds later), or ""."""
    value, next_value = op.get("value"), later.get("value")
    if not isinstance(value, dict) or not isinstance(next_value, dict):
        return ""
    after, settled = value.get("after"), next_value.get("before")
    if not isinstance(after, dict) or not isinstance(settled, dict) or "error" in settled:
        return ""
    changed = {p: s for p, s in settled.items() if after.get(p) != s}
    return f"; by {at:.1f} s: {_states(changed)}" if changed else ""


def op_rows(op: Value, start: float) -> list[Row]:
    """Takes one nemesis op (completion time, f, value, error) and its invoke time. Returns
    its row, then one per step it recorded."""
    value = op.get("value")
    error = "; ".join(e for e in (str(op.get("error") or ""), errors_in(value)) if e)
    steps = value.get("steps") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(steps, list):
        return [Row(start, float(op["time"]), op_words(str(op.get("f")), value), error, raw=value)]
    shown = {k: v for k, v in value.items() if k != "steps"}
    rows = [Row(start, float(op["time"]), op_words(str(op.get("f")), value), error, raw=shown)]
    targets = [str(p) for p in value.get("partitions") or []]
    for step in steps:
        if isinstance(step, dict) and isinstance(step.get("after_s"), int | float):
            rows.append(step_row(step, start + float(step["after_s"]), targets))
    return rows


def step_row(step: Value, at: float, targets: Sequence[str] = ()) -> Row:
    """Takes one recorded step of a fault (isr-shrink's), its time and the partitions the
    fault targets. Returns its row."""
    lines = tuple(str(line) for line in step.get("truncation") or ())
    return Row(at, None, step_words(step, targets), errors_in(step), lines, raw=step)


def op_words(f: str, value: Any) -> str:
    """Takes a nemesis op's name and value. Returns what it did in words."""
    action, _, fault = f.partition("-")
    if isinstance(value, dict) and "skipped" in value:
        return f"{fault or f} skipped: {value['skipped']}"
    if not isinstance(value, dict):
        return f
    if (disk := disk_op_words(f, value)) is not None:
        return disk
    if (membership := membership_op_words(f, value)) is not None:
        return membership
    if f == "heal":
        revived = _revived(value.get("revived"))
        return "final heal: every fault undone" + (f"; {revived}" if revived else "")
    if (said_by_proxy := proxy_words(fault, action, value)) is not None:
        return said_by_proxy
    if action == "start":
        said = _started(fault, value)
    elif "powered-on" in value:
        said = f"{_names(value['powered-on']) or 'no node'} powered on"
        if revived := _revived(value.get("revived")):
            said += f"; {revived}"
    elif "restored" in value:
        verb = "resumed" if fault.startswith("pause") else "started again"
        said = f"{_names(value['restored']) or 'no node'} {verb}"
        if revived := _revived(value.get("revived")):
            said += f"; {revived}"
    elif "steps" in value:
        said = f"{fault} stopped: the network healed, every node started, the leader awaited"
    elif "healed" in value:
        said = f"{fault}: network healed"
    else:
        said = f
    return said + _changes(value)


def _started(fault: str, value: Value) -> str:
    led = _led(value.get("partition"))
    if "isolated" in value:
        cut_from = value.get("grudge", {}).get(value["isolated"], [])
        return f"{value['isolated']}{led or _role(fault, value)} cut off from {_names(cut_from)}"
    for verb, how in (("killed", "SIGKILL"), ("paused", "SIGSTOP")):
        if verb in value:
            return f"{_names(value[verb])}{led or _role(fault, value)} {verb} ({how})"
    if "loss" in value:
        return f"{value.get('node')}{led} drops {value['loss']:.0%} of its incoming packets"
    if "powered-off" in value:
        return _power_cut_words(value)
    if isinstance(value.get("grudge"), dict):
        return _grudge_words(value["grudge"])
    if "steps" in value:
        said = (
            f"{fault}: {value.get('leader')}, leader of partitions "
            f"{_names(value.get('partitions', []))}, to be cut from its followers"
        )
        return said if value.get("set_up", True) else f"{said}; not set up, so no loss"
    return fault


def _power_cut_words(value: Value) -> str:
    """The nodes a power cut took, why, and what each lost (nemesis/power.py)."""
    nodes, partition = value["powered-off"], value.get("partition")
    why = "" if partition is None else f" (replicas of partition {partition})"
    if partition is not None and len(nodes) == 1:
        why = _led(partition)
    elif value.get("role"):
        why = f" ({value['role']})"
    lost = value.get("lost")
    each = [
        f"{node} {loss['unsynced_bytes']} B in {loss.get('files', 0)} files"
        if isinstance(loss, dict) and "unsynced_bytes" in loss
        else f"{node} uncounted"
        for node, loss in (lost.items() if isinstance(lost, dict) else [])
    ]
    said = f"{_names(nodes)}{why} lost power"
    return said + (f"; unsynced writes lost: {', '.join(each)}" if each else "")


def _led(partition: Any) -> str:
    return "" if partition is None else f" (leader of partition {partition})"


def _role(fault: str, value: Value) -> str:
    """What made the node the target, when it led no partition of the topic."""
    if "role" in value:
        return f" ({value['role']})"
    if "coordinates" in value:
        return f" (coordinator of group {value['coordinates']})"
    return " (the active controller)" if fault.endswith("controller") else ""


def _grudge_words(grudge: dict[str, list[str]]) -> str:
    """A clean partition as its groups ("n1, zk1 | n2, n3"), else who drops whom."""
    nodes = set(grudge) | {n for drops in grudge.values() for n in drops}
    groups: list[list[str]] = []
    for node in sorted(nodes):
        if any(node in g for g in groups):
            continue
        groups.append(sorted(nodes - set(grudge.get(node, []))))
    members = [n for g in groups for n in g]
    if len(members) == len(set(members)):  # every node in one group: a clean cut
        return "network cut into " + " | ".join(", ".join(g) for g in groups)
    return "each node drops a minority: " + "; ".join(
        f"{node} drops {_names(drops)}" for node, drops in sorted(grudge.items())
    )


def _changes(value: Value) -> str:
    """What the partitions' leaders and ISRs became while the op ran, as read when it
    returned (a kill's election may come later)."""
    before, after = value.get("before"), value.get("after")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ""
    if "error" in after:
        return f"; partitions unreadable when it returned ({after['error']})"
    changed = {p: s for p, s in after.items() if before.get(p) != s}
    if not changed:
        return "; leaders and ISRs unchanged when it returned"
    return f"; when it returned: {_states(changed)}"


def _states(states: Value) -> str:
    return ", ".join(
        f"partition {p} led by {s.get('leader') or 'nobody'}, ISR [{_list(s.get('isr'))}]"
        for p, s in sorted(states.items(), key=lambda item: _partition_order(item[0]))
        if isinstance(s, dict)
    )


def _partition_order(p: str) -> tuple[int, str]:
    return (int(p), "") if p.isdigit() else (1 << 30, p)


def step_words(step: Value, targets: Sequence[str] = ()) -> str:
    """Takes a recorded step of isr-shrink and the partitions it targets (none: every
    partition). Returns the step in words."""
    if (membership := membership_step_words(step)) is not None:
        return membership
    if (disk := disk_step_words(step)) is not None:
        return disk
    name = str(step.get("step"))
    recorded = step.get("state")
    state: Value = recorded if isinstance(recorded, dict) else {}
    if targets:
        state = {p: s for p, s in state.items() if p in targets or p == "error"}
    node = step.get("node") or step.get("leader")
    if name == "placed":
        return (
            f"preferred leaders elected: {step.get('leader')} leads, the controller "
            f"is {step.get('controller')}"
        )
    if name == "cut-from-followers":
        return (
            f"{node} cut off from its followers {_names(step.get('followers', []))} "
            f"(partitions {_names(step.get('partitions', []))})"
        )
    if name == "isr-shrunk":
        return _isr_words(state)
    if name == "killed":
        return (
            f"{node} killed (SIGKILL) after acknowledging alone for {step.get('acked_alone_s')} s"
        )
    if name == "follower-elected":
        return "new leaders: " + _leaders_words(state, step.get("controller"))
    if name == "healed":
        revived = _revived(step.get("revived"))
        return "network healed" + (f", {revived}" if revived else "")
    if name == "rejoined":
        cut = truncation_words(step.get("truncation") or [])
        return f"{node} back in the ISR" + (f"; {cut}" if cut else "")
    if name == "did-not-rejoin":
        return f"{node} not back in the ISR within {step.get('within_s')} s"
    bound = f" within {step['within_s']} s" if "within_s" in step else ""
    return f"{name.replace('-', ' ')}{bound}: the sequence stops here"


def _isr_words(state: Value) -> str:
    by_isr: dict[str, list[str]] = {}
    for p, s in sorted(state.items(), key=lambda item: _partition_order(item[0])):
        if not isinstance(s, dict) or len(s.get("isr", [])) != 1:
            continue
        by_isr.setdefault(_list(s["isr"]), []).append(p)
    return "; ".join(
        f"ISR of partition{'s' if len(ps) > 1 else ''} {_names(ps)} is [{isr}]"
        for isr, ps in by_isr.items()
    ) or str(state.get("error", "no ISR of one replica"))


def _leaders_words(state: Value, controller: Any) -> str:
    by_state: dict[str, list[str]] = {}
    for p, s in sorted(state.items(), key=lambda item: _partition_order(item[0])):
        if isinstance(s, dict):
            said = f"{s.get('leader')} (epoch {s.get('epoch')}, ISR [{_list(s.get('isr'))}])"
            by_state.setdefault(said, []).append(p)
    led = "; ".join(
        f"partition{'s' if len(ps) > 1 else ''} {_names(ps)} led by {said}"
        for said, ps in by_state.items()
    )
    return (led or "none") + (f", controller {controller}" if controller else "")


def truncations(lines: Sequence[str]) -> dict[str, tuple[int, int | None]]:
    """Takes a broker's log lines about truncation. Returns, per partition number, the
    offset its log was cut back to and the high watermark it was below (None if unsaid)."""
    found: dict[str, tuple[int, int | None]] = {}
    for line in lines:
        if (m := _TRUNCATING.search(line)) is None:
            continue
        hw = int(m["hw"]) if m["hw"] else found.get(m["partition"], (0, None))[1]
        found[m["partition"]] = (int(m["offset"]), hw)
    return found


def truncation_words(lines: Sequence[str]) -> str:
    """Takes a broker's truncation log lines. Returns "truncated partition 6 to offset 56,
    3 to 61 and 0 to 58", or "" when none names a partition."""
    cut = [f"{p} to {offset}" for p, (offset, _) in truncations(lines).items()]
    if not cut:
        return ""
    first, *rest = cut
    return "truncated partition " + _names([first.replace(" to ", " to offset ", 1), *rest])


def errors_in(value: Any) -> str:
    """Takes a nemesis op's value or step. Returns the errors it holds in one line: nodes
    a heal could not reach, a cut not verified, a teardown that failed."""
    if not isinstance(value, dict):
        return ""
    found = []
    unreachable = value.get("unreachable")
    if isinstance(unreachable, dict):
        found += [f"{node}: {short_error(str(why))}" for node, why in unreachable.items()]
    verified = value.get("verified")
    if isinstance(verified, dict) and verified.get("cut") is False:
        found.append(f"cut not verified: {verified.get('leaks')}")
    if isinstance(value.get("error"), str):
        found.append(short_error(value["error"]))
    for name, part in value.items():
        if name not in ("steps", "before", "after") and isinstance(part, dict):
            found += [f"{name}: {e}" for e in [errors_in(part)] if e]
    return "; ".join(found)


STOPPED_409 = "Docker 409: the container is not running (its rules were not flushed)"
"""Expected, not an error: a heal that flushes the rules of a node another fault stopped
(a killed or powered-off node has no network to heal; it starts with clean rules)."""


def short_error(text: str) -> str:
    """Takes an error's text. Returns it short: Docker's 409 on a stopped container in
    words, anything else cut to a few lines."""
    if "409" in text and "is not running" in text:
        return STOPPED_409
    return text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS] + "..."


def only_expected(error: str) -> bool:
    """Takes a row's errors in one line (errors_in). Returns whether each is STOPPED_409,
    bare or after a node's or a part's name: what the table shows as a note, not in red."""
    parts = [part.strip() for part in error.split("; ") if part.strip()]
    return bool(parts) and all(part.endswith(STOPPED_409) for part in parts)


def _revived(revived: Any) -> str:
    if not isinstance(revived, dict) or not revived:
        return ""
    return ", ".join(f"{node} ({state}) started again" for node, state in revived.items())


def _names(items: Any) -> str:
    """["n2", "n3", "zk1"] as "n2, n3 and zk1"."""
    names = [str(i) for i in items] if isinstance(items, list | tuple) else [str(items)]
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _list(items: Any) -> str:
    """An ISR, ["n1", "n3"], as "n1, n3"."""
    return ", ".join(str(i) for i in items) if isinstance(items, list) else ""
