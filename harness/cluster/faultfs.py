"""What a node on faultfs (the power-loss layer, faultfs/) needs from Docker, and its
two ends from the control node: a crash (the JVM dies, the OS outlives it and writes
back what it held) and a power cut (every write since each file's last fsync is lost).
Each is one signal to the container, which tini passes to faultfs, so several nodes
lose power within one signal's time of each other; faultfs records what it lost in the
node's log folder, read back here. The layer's semantics and why are in faultfs/main.go.
"""

from __future__ import annotations

import io
import json
import tarfile
from typing import Any

import requests
from docker.errors import APIError, NotFound
from docker.models.containers import Container

CAPABILITIES = ["SYS_ADMIN"]
"""mount(2) of the FUSE file system, from inside the container: SYS_ADMIN also lets
the container's root mount other file systems in its own mount namespace."""
DEVICES = ["/dev/fuse:/dev/fuse:rwm"]
USER = "root"
"""The container starts as root to mount; faultfs runs the JVM as kafka beneath it."""
BACKING_SUFFIX = ".disk"
"""faultfs/supervisor.go's BackingSuffix: /var/lib/kafka/data's backing directory is
/var/lib/kafka/data.disk, what the node's disk holds (read there, around the layer,
it shows no unsynced write; read through the layer, it shows what the JVM sees)."""
EVENTS = "/var/log/kafka/faultfs.jsonl"
"""Where faultfs records each start, crash, exit and power cut (the entrypoint says so)."""
CUT_SIGNAL = "SIGPWR"
CRASH_SIGNAL = "SIGUSR1"
"""faultfs/supervisor.go's CutSignal and CrashSignal."""
JVM_USER = "kafka"
"""compose/entrypoint.sh's `faultfs run -user`: the user every process under the layer
runs as (the daemon itself runs as root)."""
END_TIMEOUT_S = 15.0
"""How long a node may take to end after the signal (a crash writes back first)."""


def end(container: Container, signal: str) -> str | None:
    """Sends signal to a node's container and waits until it has stopped. Returns None,
    or why it could not (a paused or stopped node, a node that did not end in time)."""
    try:
        container.kill(signal=signal)
        container.wait(timeout=END_TIMEOUT_S)
    except (APIError, NotFound) as err:
        return f"{signal}: {err}"
    except requests.exceptions.RequestException:
        return f"{signal}: the node did not stop within {END_TIMEOUT_S:g} s"
    return None


def last_event(container: Container, events: str = EVENTS) -> dict[str, Any]:
    """Returns the last event faultfs recorded in a node's events file, or
    {"error": ...}."""
    try:
        stream, _ = container.get_archive(events)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            lines = member.read().decode(errors="replace").splitlines() if member else []
    except (APIError, NotFound, tarfile.TarError, IndexError) as err:
        return {"error": f"{events}: {err}"}
    for line in reversed(lines):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            return event
    return {"error": f"{events}: no event recorded"}


def cut(container: Container, events: str = EVENTS) -> dict[str, Any]:
    """Cuts a node's power (its layer records events in the file events). Returns
    faultfs's record of it (what each mount lost), or {"error": ...} when there is none:
    the caller's SIGKILL then cuts the power, and what the layer held dies with it
    uncounted."""
    problem = end(container, CUT_SIGNAL)
    if problem is not None:
        return {"error": problem}
    event = last_event(container, events)
    if "error" not in event and event.get("event") != "power-cut":
        return {"error": f"the node's last event is {event.get('event')!r}, not a power cut"}
    return event


def signal_jvm(container: Container, signal: str, user: str = JVM_USER) -> str | None:
    """Sends signal (STOP or CONT) to every process under a node's layer (they run as
    user), leaving the faultfs daemon running. Returns None, or why it could not.

    A pause on faultfs: the cgroup freezer cannot freeze a container whose FUSE daemon
    serves the JVM beside it (runc: "unable to freeze"; a JVM thread waiting on the
    daemon does not freeze once the daemon is frozen), so the JVM alone is stopped, as
    Jepsen pauses a process (jepsen/src/jepsen/nemesis.clj, hammer-time: SIGSTOP)."""
    try:
        result = container.exec_run(["pkill", f"-{signal}", "-u", user], user="root")
    except APIError as err:
        return f"SIG{signal}: {err}"
    if result.exit_code != 0:
        return f"SIG{signal}: no process of {user} (pkill exit {result.exit_code})"
    return None
