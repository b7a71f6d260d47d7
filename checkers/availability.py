"""Availability under faults: per fault window, how many client ops succeeded while the
fault was in force, and how long after its heal the first op succeeded again.

Jepsen reads this off its latency and rate plots (jepsen/src/jepsen/checker/perf.clj
shades the nemesis intervals); here it is counted, so a VALID run's headline can say
what the faults did to the clients. Pure: fault windows (checkers.faults) and op samples
(checkers.perf) in, plain data out.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from checkers.perf import Sample


def availability_section(
    windows: Sequence[dict[str, Any]], samples: Sequence[Sample]
) -> dict[str, Any]:
    """Takes the fault windows (start, in_force, stop in s; stop None if never healed) and
    the completed ops' samples. Returns {"valid": True (it finds no anomaly), "windows":
    per window its fault, the ok and all ops that completed while it was in force, and
    `resumed_s`, the seconds from its heal to the next ok completion (None: none came),
    "summary": per fault the windows, how many had no ok op, the ok ops in them, and the
    least and most `resumed_s` of the windows without one}."""
    done = sorted(s.time_s + s.latency_ms / 1000 for s in samples)
    ok = sorted(s.time_s + s.latency_ms / 1000 for s in samples if s.outcome == "ok")
    rows = []
    for w in windows:
        begin, stop = float(w.get("in_force") or w["start"]), w.get("stop")
        end = float("inf") if stop is None else float(stop)
        row: dict[str, Any] = {
            "fault": w["fault"],
            "start": begin,
            "stop": stop,
            "ok_during": _between(ok, begin, end),
            "ops_during": _between(done, begin, end),
            "resumed_s": None,
        }
        if stop is not None and (after := bisect.bisect_left(ok, end)) < len(ok):
            row["resumed_s"] = round(ok[after] - end, 3)
        rows.append(row)
    return {"valid": True, "windows": rows, "summary": _summary(rows)}


def _between(times: Sequence[float], begin: float, end: float) -> int:
    return bisect.bisect_left(times, end) - bisect.bisect_left(times, begin)


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for fault in dict.fromkeys(r["fault"] for r in rows):
        mine = [r for r in rows if r["fault"] == fault]
        # How soon ops came back says something only where they had stopped.
        resumed = [
            r["resumed_s"] for r in mine if not r["ok_during"] and r["resumed_s"] is not None
        ]
        out[fault] = {
            "windows": len(mine),
            "without_ok": sum(1 for r in mine if not r["ok_during"]),
            "ok_during": sum(r["ok_during"] for r in mine),
            "resumed_s": [min(resumed), max(resumed)] if resumed else None,
        }
    return out


def availability_sentence(section: dict[str, Any]) -> str:
    """Takes the availability section. Returns, per fault, in how many of its windows no
    op succeeded and how soon after each heal one did, in one sentence ("" without
    windows)."""
    said = []
    for fault, s in section.get("summary", {}).items():
        n = s["windows"]
        windows = f"{n} {fault} window{'s' if n != 1 else ''}"
        if s["without_ok"] == n:
            part = f"no op succeeded during {'any of the ' if n > 1 else 'the '}{windows}"
        elif s["without_ok"]:
            part = f"no op succeeded during {s['without_ok']} of the {windows}"
        else:
            part = f"{s['ok_during']} ops succeeded during the {windows}"
        if s["resumed_s"] is not None:
            low, high = s["resumed_s"]
            spread = f"{low:g} s" if low == high else f"{low:g}-{high:g} s"
            heals = "each of their heals" if s["without_ok"] > 1 else "its heal"
            part += f", and ops succeeded again {spread} after {heals}"
        said.append(part)
    if not said:
        return ""
    text = "; ".join(said)
    return text[0].upper() + text[1:] + "."
