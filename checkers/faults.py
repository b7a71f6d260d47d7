"""The windows in which each fault was in force, read from the nemesis events alone.

A window opens when a start-X op is invoked (the fault takes effect during that op) and
closes when the next stop-X or heal op completes (or never); a skipped fault opens none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from history import Event

HEAL_F = "heal"


def _is_nemesis_completion(event: Event) -> bool:
    return event.get("process") == "nemesis" and event.get("type") == "info"


def _took_effect(event: Event) -> bool:
    value = event.get("value")
    return "error" not in event and not (isinstance(value, dict) and "skipped" in value)


def windows(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Takes a history's events. Returns each fault window as {"fault", "start" (its
    invoke), "in_force" (its completion: the fault is in place), "stop" (seconds since the
    test began; None if never healed), "detail"}, in start order."""
    open_windows: dict[str, dict[str, Any]] = {}
    done: list[dict[str, Any]] = []
    invoked: dict[str, float] = {}
    for event in events:
        if event.get("process") == "nemesis" and event.get("type") == "invoke":
            invoked[str(event["f"])] = event["time"] / 1e9
        if not _is_nemesis_completion(event):
            continue
        f, t = str(event["f"]), event["time"] / 1e9
        action, _, fault = f.partition("-")
        if f == HEAL_F:
            for w in open_windows.values():
                done.append({**w, "stop": t})
            open_windows.clear()
        elif action == "start" and _took_effect(event):
            start = invoked.get(f, t)
            open_windows[fault] = {
                "fault": fault,
                "start": start,
                "in_force": t,
                "stop": None,
                "detail": event["value"],
                "steps": _steps(event["value"], start),
            }
        elif action == "stop" and fault in open_windows:
            window = open_windows.pop(fault)
            healing = _steps(event.get("value"), invoked.get(f, t))
            done.append({**window, "stop": t, "steps": window["steps"] + healing})
    done.extend(open_windows.values())
    return sorted(done, key=lambda w: w["start"])


def _steps(value: Any, start: float) -> list[dict[str, Any]]:
    """The named steps a fault recorded (isr-shrink's), each at start + its `after_s`."""
    steps = value.get("steps") if isinstance(value, dict) else None
    if not isinstance(steps, list):
        return []
    return [
        {"step": s["step"], "time": start + float(s["after_s"])}
        for s in steps
        if isinstance(s, dict) and "step" in s and isinstance(s.get("after_s"), int | float)
    ]


def check(events: Sequence[Event]) -> dict[str, Any]:
    """Takes a history's events. Returns {"valid": True, "windows": [...], "ops": every
    nemesis completion as {"time", "f", "value", "error"}}; it finds no anomaly."""
    ops = [
        {"time": e["time"] / 1e9, "f": e["f"], "value": e.get("value"), "error": e.get("error")}
        for e in events
        if _is_nemesis_completion(e)
    ]
    return {"valid": True, "windows": windows(events), "ops": ops}
