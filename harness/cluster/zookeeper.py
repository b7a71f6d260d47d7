"""Asks a ZooKeeper server what it is doing, with the `srvr` four-letter word."""

from __future__ import annotations

import socket


def zookeeper_mode(address: str, port: int = 2181, timeout: float = 1.0) -> str | None:
    """Returns the server's mode (standalone, leader, follower), "not serving" while it
    has no quorum, or None when it does not answer."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.sendall(b"srvr")
            reply = b""
            while chunk := sock.recv(4096):
                reply += chunk
    except OSError:
        return None
    text = reply.decode(errors="replace")
    for line in text.splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return "not serving" if "not currently serving" in text else None
