"""The nemesis story's words for the faults that reach the disks: the file corruptions
(nemesis/corrupt.py and, on NATS, nemesis/nats_corrupt.py: which file of which node,
each changed byte, what Kafka or NATS did) and
the composed power-loss scenarios (nemesis/composed.py: who was cut off or paused, who
lost power and how much, who led while they were down).

nemesis_story asks these first and words every other fault itself.
"""

from __future__ import annotations

from typing import Any

from nemesis.names import COMPOSED_FAULTS, CORRUPT_FAULTS, NATS_CORRUPT_FAULTS

Value = dict[str, Any]
FILE_FAULTS = frozenset((*CORRUPT_FAULTS, *NATS_CORRUPT_FAULTS))
CHANGES_SHOWN = 4
LINES_SHOWN = 3


def disk_op_words(f: str, value: Value) -> str | None:
    """Takes a nemesis op's name and value. Returns its row's words when the fault is a
    corruption or a composed scenario, else None."""
    action, _, fault = f.partition("-")
    if fault in FILE_FAULTS:
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
        "chosen": lambda: (
            f"{step.get('node')}: {step.get('file')} ({step.get('size')} B) chosen"
            if "file" in step
            else f"{step.get('node')} chosen"
        ),
        "chosen-file": lambda: (
            f"{step.get('node')}: {step.get('file')} ({step.get('size')} B) chosen"
        ),
        "stopped": lambda: f"{step.get('node')} stopped (SIGTERM: a controlled shutdown)",
        "corrupted": lambda: (
            f"{step.get('file')} on {step.get('node')}: "
            + change_words(step)
            + (f" ({record_words(step['records'])})" if step.get("records") else "")
        ),
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
    """What Kafka did about a corruption: the verdict, the batches the change lies in,
    and the lines that show it (the node's own, then other nodes' refusals); the first
    lines it logged since when no line says more (a run recorded before the evidence)."""
    said = f"{step.get('node')} {step.get('did', step.get('kafka_did'))}"
    if batches := step.get("batches"):
        said += "; " + batch_words(batches)
    if records := step.get("records"):
        said += "; " + record_words(records)
    evidence = step.get("evidence")
    lines = [e.get("line") for e in evidence] if evidence is not None else step.get("kafka_said")
    if lines:
        said += "; it logged: " + " | ".join(str(line)[:200] for line in lines[:LINES_SHOWN])
    elif evidence is not None:
        said += "; it logged nothing about the file"
    for node, refused in sorted((step.get("elsewhere") or {}).items()):
        said += f"; {node} logged: " + " | ".join(str(line)[:200] for line in refused[:1])
    return said


def record_words(records: list[Value]) -> str:
    """Where each changed byte of a NATS message block lies now: which record, which field."""
    return ", ".join(
        f"byte {r.get('position')} is {r['unread']}"
        if "unread" in r
        else f"byte {r.get('position')} is in the record of sequence {r.get('sequence')}"
        f" ({r.get('field')})"
        for r in records
    )


def batch_words(batches: list[Value]) -> str:
    """Where each changed byte lies now: which record batch, which field, and whether
    the batch passes its CRC-32C."""
    words = []
    for b in batches:
        if "unread" in b:
            words.append(f"byte {b.get('position')} is {b['unread']}")
            continue
        first, last = b.get("offsets") or ["?", "?"]
        offsets = f"offset {first}" if first == last else f"offsets {first}-{last}"
        crc = "still passes its CRC" if b.get("crc_ok") else "now fails its CRC"
        words.append(
            f"byte {b.get('position')} is in the batch of {offsets} ({b.get('field')}), which {crc}"
        )
    return "; ".join(words)


def corruption_sentences(nemesis: Any) -> list[str]:
    """Takes results.json's nemesis section. Returns one sentence per file corruption:
    which file of which node was changed and how (offsets, bytes), and what Kafka did
    with it, with the line that shows it."""
    ops = nemesis.get("ops", []) if isinstance(nemesis, dict) else []
    started: dict[str, Value] = {}
    said = []
    for op in ops:
        action, _, fault = str(op.get("f")).partition("-")
        value = op.get("value") if isinstance(op.get("value"), dict) else {}
        if fault not in FILE_FAULTS:
            continue
        if op.get("error"):
            said.append(f"{fault} at {op.get('time', 0):.1f} s changed no file: {op['error']}.")
        elif action == "start":
            started[fault] = value
        elif fault in started:
            steps = [s for s in value.get("steps", []) if s.get("step") == "observed"]
            said.append(_corruption_sentence(fault, started.pop(fault), steps))
    healed = next((o.get("value") for o in ops if o.get("f") == "heal"), None)
    late = (healed or {}).get("corrupt", {}).get("observed", {}) if isinstance(healed, dict) else {}
    for fault, done in started.items():
        steps = late.get(fault, {}).get("steps", []) if isinstance(late.get(fault), dict) else []
        observed = [s for s in steps if s.get("step") == "observed"]
        said.append(_corruption_sentence(fault, done, observed, at_heal=bool(observed)))
    revived = (healed or {}).get("revived") if isinstance(healed, dict) else None
    # A node the observation already found down is no news at the heal.
    struck = {str(v.get("node")) for v in _starts(ops)} - {
        str(s.get("node"))
        for o in ops
        if isinstance(o.get("value"), dict)
        for s in o["value"].get("steps", [])
        if s.get("step") == "observed" and s.get("running") is False
    }
    if isinstance(revived, dict) and (down := sorted(struck & set(revived))):
        said.append(
            f"{_names(down)} had stopped again by the final heal, which started "
            f"{'it' if len(down) == 1 else 'them'}: what the observation above saw was not "
            "the end of it (the node's log says why)."
        )
    return said


def _starts(ops: list[Value]) -> list[Value]:
    """The values of the corruptions' start ops that changed a file."""
    return [
        o["value"]
        for o in ops
        if isinstance(o.get("value"), dict)
        and str(o.get("f")).startswith("start-")
        and str(o.get("f"))[len("start-") :] in FILE_FAULTS
        and not o.get("error")
    ]


def _corruption_sentence(
    fault: str, done: Value, observed: list[Value], at_heal: bool = False
) -> str:
    node = done.get("node")
    head = (
        f"{fault}: {node}'s {done.get('file')} was changed while {node} was stopped "
        f"({change_words(done)})"
    )
    system = "NATS" if fault in NATS_CORRUPT_FAULTS else "Kafka"
    if not observed:
        return f"{head}; what {system} did with it was not observed."
    when = " (seen at the final heal: the run ended before the stop op)" if at_heal else ""
    return f"{head}; {system}{when}: {observed_words(observed[-1])}."


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
