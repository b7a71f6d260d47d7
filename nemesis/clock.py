"""Clock faults: the wall clock of chosen nodes jumps seconds to minutes ahead or behind
(bump), or flips between wrong and right every STROBE_PERIOD_S (strobe); stop sets it
right. Each node's JVM reads the clock through libfaketime (harness/cluster/node_setup.py);
the monotonic clock stays true, as an NTP step leaves it.

Jepsen's clock nemesis (jepsen/src/jepsen/nemesis/time.clj) bumps and strobes the clocks
of chosen nodes the same way; its bumps reach about 2^18 ms either way, as ours do.
Kafka reads the wall clock for record timestamps (CreateTime from the client's, or
LogAppendTime from the leader's), time-based retention and segment rolls, the
transaction coordinator's timeouts, group session and rebalance timeouts, and the
metadata quorum's fetch and election timers of KRaft (docs/KAFKA.md says which).

The clients' clocks (bump-clock-clients, strobe-clock-clients): every Java client
driver of the run reads its wall clock through libfaketime too, from a file of its own
in the run's client-clocks folder (ClientClocks); the Java client stamps CreateTime with
it and runs its own timers on it (a batch's delivery timeout, request timeouts).
"""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path
from typing import Any

from nemesis.cluster import Clocks, Cluster
from nemesis.core import SingleFault, Skipped, Value, split_f
from nemesis.process import why_chosen
from nemesis.targets import Aim, pick

LARGEST_BUMP_S = 262
"""The largest bump, either way: Jepsen's 2^18 ms."""

SMALLEST_BUMP_S = 5
"""The smallest: below the request and session timeouts a bump would hardly show."""

STROBE_PERIOD_S = 3.0
"""How long a strobed clock stays wrong, then right: libfaketime reads the offset again
within about two seconds (1.7-2.1 s measured), so each state lasts past one read."""


CLIENTS = "clients"
"""The target of the client clock faults: every Java client driver running."""


class ClientClocks:
    """The Java client drivers' clocks: one file per driver in a folder, named after the
    driver (workloads/java_driver.py makes it when the driver starts, libfaketime in the
    driver reads it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def clients(self) -> list[str]:
        """Returns the drivers that have a clock file, by name (a driver that exited keeps
        its file; moving its clock moves nothing)."""
        return sorted(p.name for p in self.folder.iterdir() if not p.name.startswith("."))

    def set_clock_offset(self, node: str, seconds: int) -> None:
        """Sets the clock of the driver named node `seconds` from the true time. The file is
        replaced whole, so that libfaketime never reads it half written."""
        temporary = self.folder / f".{node}.new"
        temporary.write_text(f"{seconds:+d}\n")
        os.replace(temporary, self.folder / node)


def bump_seconds(rng: random.Random) -> int:
    """Returns a bump: SMALLEST_BUMP_S to LARGEST_BUMP_S seconds, ahead or behind."""
    return rng.choice((-1, 1)) * rng.randint(SMALLEST_BUMP_S, LARGEST_BUMP_S)


class ClockFault(SingleFault):
    """One clock fault, `bump-clock-X` or `strobe-clock-X` (X a target of nemesis.targets):
    start moves the clocks of its targets, each by its own bump; stop sets every clock it
    moved right again."""

    def __init__(
        self,
        fault: str,
        topic: str,
        rng: random.Random,
        group: str | None = None,
        client_clocks: Path | None = None,
    ) -> None:
        """group: the run's consumer or share group (the coordinator target's);
        client_clocks: the folder of the Java drivers' clock files (the clients target's)."""
        super().__init__(fault, topic, rng)
        self._client_clocks = client_clocks
        verb, _, self._target = fault.partition("-clock-")
        self._strobe = verb == "strobe"
        self._aim = Aim(topic, group)
        self._clocks: Clocks | None = None
        self._moved: dict[str, int] = {}
        self._stop_strobe = threading.Event()
        self._strober: threading.Thread | None = None

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; refuses one whose clocks cannot move, or for the clients'
        clocks a run whose Java drivers have no clock files."""
        if self._target == CLIENTS:
            if self._client_clocks is None:
                raise TypeError(f"{self.fault}: the run's Java clients have no clock files")
            super().setup(cluster)
            self._clocks = ClientClocks(self._client_clocks)
            return
        if not isinstance(cluster, Clocks):
            raise TypeError(f"{self.fault}: the cluster's clocks cannot move (no libfaketime)")
        super().setup(cluster)
        self._clocks = cluster

    @property
    def clocks(self) -> Clocks:
        """Returns the cluster given to setup, as the clocks it has."""
        if self._clocks is None:
            raise RuntimeError(f"{self.fault}: used before setup")
        return self._clocks

    def invoke(self, f: str) -> Value:
        """Moves the targets' clocks (start) or sets every moved clock right (stop)."""
        action, _ = split_f(f)
        if action == "stop":
            if not self._moved:
                raise Skipped("no clock is moved")
            return {"reset": self._reset()}
        if isinstance(self._clocks, ClientClocks):
            moving = [c for c in self._clocks.clients() if c not in self._moved]
            if not moving:
                raise Skipped("no Java client driver has a clock to move")
            why: Value = {"clients": len(moving)}
        else:
            chosen = pick(self._target, self.cluster, self._aim, self.rng, list(self._moved))
            moving, why = list(chosen.nodes), why_chosen(chosen)
        offsets = {node: bump_seconds(self.rng) for node in moving}
        self._moved.update(offsets)  # recorded first: a half-done start is still undone
        errors = self._set(offsets)
        if self._strobe:
            self._start_strobe(offsets)
        done: Value = {"offsets_s": offsets} | why
        if self._strobe:
            done["strobe_period_s"] = STROBE_PERIOD_S
        return done | ({"errors": errors} if errors else {})

    def teardown(self) -> Value:
        """Sets every clock this nemesis moved right."""
        if self._clocks is None or not self._moved:
            return {}
        return {self.fault: {"reset": self._reset()}}

    def _set(self, offsets: dict[str, int]) -> dict[str, str]:
        """Sets each node's offset. Returns node -> error for those that could not be set
        (a node that is down keeps the offset its file holds until it is set again)."""
        errors = {}
        for node, seconds in offsets.items():
            try:
                self.clocks.set_clock_offset(node, seconds)
            except Exception as err:  # one node's failure must not stop the others'
                errors[node] = str(err)
        return errors

    def _reset(self) -> dict[str, Any]:
        """Stops a strobe and sets every moved clock right. Returns the nodes set right
        and the errors of those that could not be."""
        self._stop_strobe.set()
        if self._strober is not None:
            self._strober.join()
            self._strober = None
        self._stop_strobe.clear()
        errors = self._set(dict.fromkeys(self._moved, 0))
        reset = sorted(n for n in self._moved if n not in errors)
        self._moved = {n: s for n, s in self._moved.items() if n in errors}
        return {"nodes": reset} | ({"errors": errors} if errors else {})

    def _start_strobe(self, offsets: dict[str, int]) -> None:
        """Flips the clocks of offsets between right and their offsets every
        STROBE_PERIOD_S until the next reset."""

        def flip() -> None:
            wrong = False  # start set them wrong: the first flip sets them right
            while not self._stop_strobe.wait(STROBE_PERIOD_S):
                self._set({n: s if wrong else 0 for n, s in offsets.items()})
                wrong = not wrong

        self._strober = threading.Thread(target=flip, name=f"{self.fault}-strobe", daemon=True)
        self._strober.start()
