"""Client-side faults (issue 37, item 2): one client cut from its transaction or group
coordinator while it still reaches the partition leaders, and one transactional client
paused between its sends and its commit or abort for longer than its transaction
timeout, then resumed (KIP-360's case, and KAFKA-20785's race). Redpanda's chaos harness
does both (redpanda-data/chaos, harness/chaos/faults/isolate_client_topic_leader.py
isolates a client from one partition's leader, the transaction coordinator's among them;
trigger_kip_360.py pauses a client before a send and before an abort); here faultproxy
does them, per client id, on every broker.

The cut. Every connection of the client that carries a coordinator request (the
transaction or group APIs below) is held both ways from that request on, and reset at
the stop with what it held thrown away: a connection that died in a partition. librdkafka
talks to a coordinator on a connection of its own, so its links to the leaders stay
whole; the Java producer shares one connection per broker, so on the coordinator's
broker its later Produce requests wait behind the cut (on the other brokers they pass).
The stop records the coordinator requests cut and the requests that reached the leaders
meanwhile.

The pause. The Java client runs in a driver process per client (workloads/java_driver.py):
it is stopped with SIGSTOP and continued with SIGCONT. librdkafka's clients live in the
harness's own process, which cannot stop; there the proxy holds every connection of the
client instead, both ways, which to the brokers is the same pause (nothing arrives from
the client, then everything it had sent arrives in order), though librdkafka's own timers
run on. Either way the pause begins at the client's next EndTxn, which the proxy holds:
between its sends and its commit or abort, as the brokers see it. It lasts the client's
transaction.timeout.ms (as its InitProducerId said) plus PAUSE_MARGIN_S, and on until
the coordinator's abort markers for the client's producer id reached a leader (up to
CLEANUP_INTERVAL_S more: the coordinator looks for timed-out transactions that often),
so that the transaction was aborted before the commit arrives.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import time
from pathlib import Path

from nemesis import proxy
from nemesis.core import Skipped, Value, split_f

TXN_APIS = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "TxnOffsetCommit")
"""What a client asks of its transaction coordinator."""
GROUP_APIS = (
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "LeaveGroup",
    "OffsetCommit",
    "OffsetFetch",
    "ConsumerGroupHeartbeat",
    "ShareGroupHeartbeat",
    "ShareFetch",
    "ShareAcknowledge",
)
"""What a consumer asks of its group coordinator (a share consumer's fetches and
acknowledgements go to the leaders, but its heartbeats to the coordinator)."""
RECENT_S = 10.0
"""A client chosen must have sent a request this recently."""
TRIGGER_WAIT_S = 5.0
"""How long pause-client waits for the chosen client's next EndTxn."""
PAUSE_MARGIN_S = 2.0
CLEANUP_INTERVAL_S = 10.0
"""How often a coordinator looks for transactions past their timeout (Kafka's default
transaction.abort.timed.out.transaction.cleanup.interval.ms): a pause waits up to this
much longer for the coordinator's abort markers."""
KAFKA_TXN_TIMEOUT_MS = 60_000
"""Kafka's default transaction.timeout.ms, for a client whose InitProducerId the proxies
did not see (a broker restarted since)."""
DRIVER_CLASS = "kafkaharness.Driver"
DRIVER_LABEL = "-Dkafka-harness.client="
"""How a Java driver's command line names its transactional id and incarnation
(workloads/java_driver.py's java_command)."""


def choose_client(clients: dict[str, Value], rng: random.Random, kind: str) -> tuple[str, Value]:
    """Takes the clients the proxies saw (nemesis.proxy.clients), a random source and
    which kind to choose: a transactional producer (txn) or a group member (group).
    Returns one active recently, with what was seen of it; raises Skipped if none is."""
    now = time.time()

    def fits(seen: Value) -> bool:
        if seen["open"] <= 0 or now - seen["last_at"] > RECENT_S:
            return False
        if kind == "txn":
            return bool(seen.get("transactional_id"))
        asked = {api for per_broker in seen["requests"].values() for api in per_broker}
        return bool(asked & set(GROUP_APIS))

    candidates = sorted(c for c, seen in clients.items() if fits(seen))
    if not candidates:
        what = "transactional producer" if kind == "txn" else "group member"
        raise Skipped(f"no {what} has sent a request through the proxies in {RECENT_S:g} s")
    chosen = rng.choice(candidates)
    return chosen, clients[chosen]


def requests_between(
    before: Value, after: Value, cut: dict[str, dict[str, int]] | None = None
) -> dict[str, dict[str, int]]:
    """Takes one client's requests per broker and API at two moments, and those cut in
    between per broker. Returns what reached each broker in between (brokers and APIs
    with none left out)."""
    cut = cut or {}
    sent: dict[str, dict[str, int]] = {}
    for broker, apis in after.items():
        diff = {
            api: n - before.get(broker, {}).get(api, 0) - cut.get(broker, {}).get(api, 0)
            for api, n in apis.items()
        }
        if kept := {api: n for api, n in diff.items() if n > 0}:
            sent[broker] = kept
    return sent


class CoordinatorCut(proxy.ProxyFault):
    """partition-client-txn-coordinator or -group-coordinator: one client's coordinator
    requests cut on every broker; its other requests pass."""

    def __init__(self, fault: str, topic: str, rng: random.Random) -> None:
        super().__init__(fault, topic, rng)
        self._client = ""
        self._before: Value = {}

    def invoke(self, f: str) -> Value:
        """Cuts a client from its coordinator (start), or heals and reports (stop)."""
        action, _ = split_f(f)
        brokers = self.cluster.brokers
        txn = self.fault == "partition-client-txn-coordinator"
        if action == "start":
            if self.installed:
                raise Skipped(f"{self.fault} is on already")
            seen = proxy.clients(self.proxies, brokers)
            client, about = choose_client(seen, self.rng, "txn" if txn else "group")
            rule = {
                "name": self.fault,
                "action": "cut",
                "direction": "both",
                "client": f"^{re.escape(client)}$",
                "apis": list(TXN_APIS if txn else GROUP_APIS),
            }
            self.installed = proxy.install(self.proxies, brokers, rule)
            # Counted from here: a request that passed between the choice and the rule
            # reached its broker before the cut, not through it.
            now = proxy.clients(self.proxies, brokers).get(client, {"requests": {}})
            self._client, self._before = client, now["requests"]
            done: Value = {
                "client": client,
                "cut_from": "transaction coordinator" if txn else "group coordinator",
            }
            if about.get("transactional_id"):
                done["transactional_id"] = about["transactional_id"]
            return done
        if not self.installed:
            raise Skipped(f"{self.fault} cuts nothing")
        # What reached the brokers is read while the cut still holds: read after it, it
        # would count the client's coordinator requests of the moments after the heal.
        after = proxy.clients(self.proxies, brokers).get(self._client, {"requests": {}})
        reports = proxy.end(self.proxies, self.take_installed(), release_now=True)
        cut = proxy.summary(reports, [])
        return {
            "client": self._client,
            "cut": cut["held"],
            "connections_cut": cut["connections"],
            "coordinators": sorted({r["broker"] for r in reports if r.get("conns")}),
            "reached": requests_between(
                self._before,
                after["requests"],
                {r["broker"]: r.get("frames") or {} for r in reports},
            ),
        } | ({"error": cut["error"]} if "error" in cut else {})


def driver_pid(transactional_id: str) -> int | None:
    """Returns the process id of the Java driver (a child of this process) that holds a
    transactional id now, the latest incarnation's, or None (a librdkafka client)."""
    found: list[tuple[int, int]] = []
    me = str(os.getpid())
    label = f"{DRIVER_LABEL}{transactional_id}#"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        words = [a.decode(errors="replace") for a in argv]
        tagged = [w for w in words if w.startswith(label)]
        # stat: pid (comm) state ppid ...; comm may hold spaces, so split after it.
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if DRIVER_CLASS in words and tagged and ppid == me and state != "Z":
            found.append((int(tagged[0].rsplit("#", 1)[1]), int(entry.name)))
    return max(found)[1] if found else None


class ClientPause(proxy.ProxyFault):
    """pause-client: one transactional client paused from its next EndTxn for longer
    than its transaction timeout."""

    def __init__(self, fault: str, topic: str, rng: random.Random) -> None:
        super().__init__(fault, topic, rng)
        self._client = ""
        self._pid: int | None = None
        self._began = 0.0
        self._began_unix = 0.0
        self._length_s = 0.0
        self._producer_id = -1

    def invoke(self, f: str) -> Value:
        """Pauses a client at its next EndTxn (start), or resumes it (stop)."""
        action, _ = split_f(f)
        if action == "start":
            if self.installed:
                raise Skipped(f"{self.fault} is on already")
            return self._pause()
        if not self.installed:
            raise Skipped("no client is paused")
        return self._resume()

    def _pause(self) -> Value:
        brokers = self.cluster.brokers
        client, seen = choose_client(proxy.clients(self.proxies, brokers), self.rng, "txn")
        tid = str(seen["transactional_id"])
        held = {
            "client": f"^{re.escape(client)}$",
            "action": "hold",
            "direction": "both",
            "scope": "client",
        }
        self.installed = proxy.install(
            self.proxies, brokers, {"name": f"{self.fault}-at-end-txn", "apis": ["EndTxn"], **held}
        )
        deadline = time.monotonic() + TRIGGER_WAIT_S
        while not (at := self._triggered()):
            if time.monotonic() > deadline:
                proxy.release(self.proxies, self.take_installed())
                raise Skipped(f"{client} sent no EndTxn within {TRIGGER_WAIT_S:g} s")
            time.sleep(proxy.POLL_S / 2)
        self._began, self._began_unix = time.monotonic(), time.time()
        self._producer_id = int(seen.get("producer_id", -1))
        # From here every connection of the client waits, whichever broker it goes to.
        others = [b for b in brokers if b != at]
        self.installed += proxy.install(self.proxies, others, {"name": self.fault, **held})
        self._pid = driver_pid(tid)
        if self._pid is not None:
            os.kill(self._pid, signal.SIGSTOP)
        timeout_ms = int(seen.get("transaction_timeout_ms") or KAFKA_TXN_TIMEOUT_MS)
        self._client, self._length_s = client, timeout_ms / 1000 + PAUSE_MARGIN_S
        return {
            "client": client,
            "transactional_id": tid,
            "at_end_txn_on": at,
            "how": "SIGSTOP of its Java driver and its connections held"
            if self._pid is not None
            else "its connections held (a librdkafka client in the harness's process)",
            "transaction_timeout_ms": timeout_ms,
            "pause_s": self._length_s,
        }

    def _triggered(self) -> str | None:
        """Returns the broker whose proxy holds the client's EndTxn, or None yet."""
        for i in self.installed:
            if int(self.proxies.proxy_rule(i.broker, i.rule_id).get("held_now") or 0):
                return i.broker
        return None

    def _aborted_after(self) -> float | None:
        """Returns how long after the pause began the coordinator's abort markers for
        the client's producer reached a leader, or None if they have not."""
        markers = proxy.markers_since(self.proxies, self.cluster.brokers, self._began_unix)
        aborts = [
            float(m["arrived"])
            for m in markers
            if int(m.get("producer_id", -2)) == self._producer_id and not m.get("commit")
        ]
        return round(min(aborts) - self._began_unix, 3) if aborts else None

    def _resume(self) -> Value:
        # Longer than the transaction timeout, whenever the stop comes, and until the
        # coordinator aborted the transaction (or gave no sign within its cleanup time).
        if (left := self._began + self._length_s - time.monotonic()) > 0:
            time.sleep(left)
        deadline = self._began + self._length_s + CLEANUP_INTERVAL_S
        while (aborted := self._aborted_after()) is None and time.monotonic() < deadline:
            time.sleep(proxy.POLL_S)
        paused_s = time.monotonic() - self._began
        reports = proxy.end(self.proxies, self.take_installed(), release_now=True)
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):  # the harness killed it meanwhile
                os.kill(self._pid, signal.SIGCONT)
        held = proxy.summary(reports, [])
        end_txn = [
            rec
            for r in reports
            for rec in r.get("records") or []
            if rec["api"] == "EndTxn" and rec.get("end_txn")
        ]
        done: Value = {
            "client": self._client,
            "paused_s": round(paused_s, 3),
            "aborted_by_coordinator_after_s": aborted,
            "held": held["held"],
            "answers": held["answers"],
        }
        if end_txn:
            first = end_txn[0]
            done["end_txn"] = {
                "commit": first["end_txn"]["commit"],
                "producer": [first["end_txn"]["producer_id"], first["end_txn"]["producer_epoch"]],
                "answer": proxy.error_name(int((first.get("answer") or {}).get("error", -1))),
            }
        self._pid = None
        return done | ({"error": held["error"]} if "error" in held else {})

    def teardown(self) -> Value:
        """Releases the client's connections and continues its driver, if paused."""
        done = super().teardown()
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGCONT)
            done.setdefault(self.fault, {})["continued"] = self._pid
            self._pid = None
        return done
