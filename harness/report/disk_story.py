"""The nemesis story's words for the faults that reach the disks: the file corruptions
(nemesis/corrupt.py: which file of which node, each changed byte, what Kafka did) and
the composed power-loss scenarios (nemesis/composed.py: who was cut off or paused, who
lost power and how much, who led while they were down).

nemesis_story asks these first and words every other fault itself.
"""

from __future__ import annotations

from typing import Any

from nemesis.names import COMPOSED_FAULTS, CORRUPT_FAULTS

Value = dict[str, Any]
CHANGES_SHOWN = 4
LINES_SHOWN = 3


def disk_op_words(f: str, value: Value) -> str | None:
    """Takes a nemesis op's name and value. Returns its row's words when the fault is a
    corruption or a composed scenario, else None."""
    action, _, fault = f.partition("-")
    if fault in CORRUPT_FAULTS:
        how = "bits flipped in" if value.get("how") == "bitflip" else "cut short:"
        if action == "start":
            return f"{fault}: {value.get('node')} stopped, {how} {value.get('file')}, started"
        return f"{fault}: what {value.get('node')} did about {value.get('file')}"
    if fault not in COMPOSED_FAULTS:
        return None
    if action == "stop":
        return f"{fault} stopped: every node back, every partition's full ISR awaited"
    said = f"{fault}: stale minority {_names(value.get('stale', []))}"
    if "crasher" in value:
        said += f", crasher {value['crasher']}, the rest {_names(value.get('rest', []))}"
    else:
        said += f", the majority {_names(value.get('majority', []))}"
    return said if value.get("set_up", True) else f"{said}; not set up, so no loss"


def disk_step_words(step: Value) -> str | None:
    """Takes a recorded step of a corruption or a composed scenario. Returns it in words,
    or None for a step these faults do not record."""
    name = str(step.get("step"))
    nodes = _names(step.get("nodes", []))
    words = {
        "chosen": lambda: f"{step.get('node')}: {step.get('file')} ({step.get('size')} B) chosen",
        "stopped": lambda: f"{step.get('node')} stopped (SIGTERM: a controlled shutdown)",
        "corrupted": lambda: f"{step.get('file')} on {step.get('node')}: " + change_words(step),
        "started": lambda: f"{step.get('node')} started again",
        "observed": lambda: observed_words(step),
        "cut-off": lambda: f"{nodes} cut off from every other node",
        "left-isr": lambda: f"{nodes} out of every ISR",
        "did-not-leave-isr": lambda: (
            f"{nodes} still in an ISR after {step.get('within_s')} s: the sequence stops here"
        ),
        "wrote-without": lambda: f"writes acknowledged without {nodes} for {step.get('for_s')} s",
        "powered-off": lambda: f"{nodes} lost power; " + lost_words(step.get("lost")),
        "paused": lambda: f"{nodes} paused (SIGSTOP)",
        "resumed": lambda: f"{nodes} resumed",
        "powered-on": lambda: f"{nodes} powered on",
        "revived": lambda: f"started again: {_names(list(step.get('revived') or {}))}",
        "watched": lambda: (
            f"after {step.get('watched_s')} s with only {_names(step.get('awake', []))} awake: "
            + leaders_words(step.get("state"))
        ),
    }
    if name in words:
        return words[name]()
    if name in ("rejoined", "did-not-rejoin") and "node" not in step:
        whole = "every partition led with its full ISR" if name == "rejoined" else "not whole"
        cut = step.get("truncated_on") or []
        truncated = f"; truncation logged on {_names(cut)}" if cut else "; no truncation logged"
        return f"{whole} within {step.get('within_s')} s{truncated}"
    return None


def change_words(step: Value) -> str:
    """What a corruption changed, byte by byte."""
    change = step.get("change")
    if isinstance(change, list):
        flips = [
            f"byte {c['offset']} {c['before']} -> {c['after']}" for c in change[:CHANGES_SHOWN]
        ]
        return "bits flipped: " + ", ".join(flips)
    if isinstance(change, dict):
        return (
            f"cut from {change.get('size_before')} to {change.get('size_after')} B "
            f"({change.get('removed_bytes')} B removed)"
        )
    return "changed"


def observed_words(step: Value) -> str:
    """What Kafka did about a corruption, and the first lines it logged since."""
    said = f"{step.get('node')} {step.get('kafka_did')}"
    lines = step.get("kafka_said") or []
    if lines:
        said += "; it logged: " + " | ".join(str(line)[:200] for line in lines[:LINES_SHOWN])
    return said


def lost_words(lost: Any) -> str:
    """What each node lost to a power cut."""
    if not isinstance(lost, dict):
        return "what was lost was not counted"
    return "unsynced writes lost: " + ", ".join(
        f"{node} {loss['unsynced_bytes']} B in {loss.get('files', 0)} files"
        if isinstance(loss, dict) and "unsynced_bytes" in loss
        else f"{node} uncounted"
        for node, loss in lost.items()
    )


def leaders_words(state: Any) -> str:
    """Who led each partition, from a step's recorded state: partitions led alike (the
    same leader and ISR) named together with their epochs, e.g. `partitions 0, 1 and 2
    led by nobody (epochs 2-3), ISR [n2]` (a line per partition was a paragraph of 8)."""
    if not isinstance(state, dict) or "error" in state:
        return f"partitions unreadable ({state.get('error') if isinstance(state, dict) else state})"
    alike: dict[str, list[tuple[str, Any]]] = {}
    for p, s in sorted(state.items(), key=lambda i: int(i[0]) if i[0].isdigit() else 1 << 30):
        if isinstance(s, dict):
            led = f"{s.get('leader') or 'nobody'}|{', '.join(s.get('isr') or [])}"
            alike.setdefault(led, []).append((p, s.get("epoch")))
    return "; ".join(_led_alike(led, found) for led, found in alike.items())


def _led_alike(led: str, found: list[tuple[str, Any]]) -> str:
    leader, isr = led.split("|")
    epochs = sorted({e for _, e in found if isinstance(e, int)})
    span = "" if not epochs else f"{epochs[0]}" if len(epochs) == 1 else f"{epochs[0]}-{epochs[-1]}"
    which = f"partition{'s' if len(found) > 1 else ''} {_names([p for p, _ in found])}"
    epoch = f" (epoch{'s' if len(epochs) > 1 else ''} {span})" if epochs else ""
    return f"{which} led by {leader}{epoch}, ISR [{isr}]"


def _names(items: Any) -> str:
    names = [str(i) for i in items] if isinstance(items, list | tuple) else [str(items)]
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]
