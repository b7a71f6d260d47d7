"""How a client says the store it read no longer exists: an ok read's error that begins
with GONE. The lost-store check, the queue's drains and the latency figures all read it.

A NATS KV read or a queue drain told "stream not found" (JetStream 10059) after a power
cut (nats-server#7564) completes ok with such an error: the model judges it a read of
nothing, and lost_store.py says that every acknowledged write went with the store.
"""

from __future__ import annotations

from history import Event

GONE = "store gone:"
"""How an ok read's error begins when the server answered that the store (a NATS KV
bucket's stream, or the queue's stream) does not exist: the rest says which and how the
server put it."""


def gone_error(what: str) -> str:
    """Takes what the server said of the vanished store. Returns the error a read's ok
    completion carries to say the store no longer exists."""
    return f"{GONE} {what}"


def gone_said(completion: Event) -> str | None:
    """Takes an op's completion event. Returns what the server said of the vanished store
    when it is an ok read that found the store gone, else None."""
    error = completion.get("error")
    if completion.get("type") == "ok" and isinstance(error, str) and error.startswith(GONE):
        return error.removeprefix(GONE).strip()
    return None


def outcome(completion: Event) -> str:
    """Takes an op's completion event. Returns how it ended for availability and latency:
    its type, but "fail" for an ok read that found the store gone. The model judges such a
    read as a read of nothing, but the clients were not served: a run whose store vanished
    must not say its ops resumed after the heal."""
    return "fail" if gone_said(completion) is not None else str(completion.get("type"))
