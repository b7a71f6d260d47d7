"""The nemesis story's words for the faults made of faultproxy rules (nemesis/late.py,
slow.py, client.py): what each start aimed at, and what each stop found it had done:
requests held and delivered late, after their senders gave up, across a commit or an
abort of their own producer, and what the brokers answered them.
"""

from __future__ import annotations

from typing import Any

Value = dict[str, Any]


def proxy_words(fault: str, action: str, value: Value) -> str | None:
    """Takes a nemesis op's fault, action (start or stop) and value. Returns its words
    when the value is a proxy fault's, else None."""
    if action == "start":
        return _started(fault, value)
    if "after_sender_gave_up" in value:
        return _late(fault, value)
    if "slowed" in value:
        return (
            f"{fault} stopped: {_count(value['slowed'])} frames had been slowed, by "
            f"{value.get('mean_delay_ms', 0):g} ms on average, in {value.get('connections', 0)} "
            "connections"
        )
    if "reached" in value:
        reached = "; ".join(
            f"{broker}: {_count(apis)}" for broker, apis in sorted(value["reached"].items())
        )
        return (
            f"{value.get('client')} healed: {_count(value.get('cut') or {}) or 'no'} coordinator "
            f"requests cut in {value.get('connections_cut', 0)} connections; meanwhile it "
            f"reached {reached or 'no broker'}"
        )
    if "paused_s" in value:
        said = f"{value.get('client')} resumed after {value['paused_s']:g} s"
        aborted = value.get("aborted_by_coordinator_after_s")
        said += (
            "; its coordinator gave no sign of aborting the transaction"
            if aborted is None
            else f"; its coordinator aborted the transaction after {aborted:g} s"
        )
        if end := value.get("end_txn"):
            what = "commit" if end.get("commit") else "abort"
            producer = end.get("producer")
            said += (
                f"; its held EndTxn ({what}, producer {producer}) was answered {end.get('answer')}"
            )
        return said
    return None


def _started(fault: str, value: Value) -> str | None:
    at = _where(value)
    if "holding" in value:
        holding = value["holding"]
        what = ", ".join(holding) if isinstance(holding, list) else str(holding)
        return (
            f"{fault}: {what} held {value.get('hold_s', 0):g} s at {at}, the first "
            "connection of each sender"
        )
    if "delayed_ms" in value:
        low, high = value["delayed_ms"]
        return f"{fault}: every frame to and from {at} delayed {low}-{high} ms"
    if "cut_from" in value:
        tid = f" ({value['transactional_id']})" if value.get("transactional_id") else ""
        return f"{value.get('client')}{tid} cut from its {value['cut_from']}"
    if "pause_s" in value:
        return (
            f"{value.get('client')} ({value.get('transactional_id')}) paused at its EndTxn on "
            f"{value.get('at_end_txn_on')} for {value['pause_s']:g} s: {value.get('how')}"
        )
    return None


def _where(value: Value) -> str:
    brokers = ", ".join(str(b) for b in value.get("brokers") or []) or "no broker"
    if "leader" in value:
        led = f"{value['leader']} (leader of partition {value.get('partition')})"
        return f"{led} from {value['follower']}" if "follower" in value else led
    return brokers


def _late(fault: str, value: Value) -> str:
    held = _count(value.get("held") or {})
    if not held:
        return f"{fault} stopped: nothing was held"
    said = (
        f"{fault} stopped: {held} held in {value.get('connections', 0)} connections, up to "
        f"{value.get('longest_s', 0):g} s; {value.get('after_sender_gave_up', 0)} delivered "
        "after their senders gave up"
    )
    if across := value.get("held_across"):
        said += f"; held across their producer's EndTxn: {_count(across)}"
    if answers := value.get("answers"):
        said += f"; answered: {_count(answers)}"
    if value.get("landed_count"):
        said += f"; {value['landed_count']} late Produce requests appended"
    if value.get("late_ends_accepted"):
        said += (
            f"; {value['late_ends_accepted']} late EndTxn requests accepted, "
            f"{value.get('late_ends_live', 0)} of them ending a live transaction"
        )
    return said


def _count(counts: dict[str, Any]) -> str:
    """{"Produce": 312, "Metadata": 2} as "312 Produce, 2 Metadata", largest first."""
    return ", ".join(f"{n} {what}" for what, n in sorted(counts.items(), key=lambda kv: -kv[1]))
