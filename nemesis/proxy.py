"""The one place that drives faultproxy, the in-path proxy in front of every broker of a
cluster made with it: rules installed on brokers and ended, what passed each proxy, and
the proxies' reports summarized into what a nemesis op records. That says how many
requests of which APIs were held, for how long, how many reached the broker after their
sender had given up on them, what the broker answered the late ones (a Produce appended
at an offset, or refused with which error), and how many waited across an EndTxn of
their own producer: a commit or an abort that reached a coordinator while they were
held, the window of KAFKA-17754 ("312 Produce requests held across a commit").
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from confluent_kafka import KafkaError

from nemesis.cluster import Cluster, InPath
from nemesis.core import SingleFault

Value = dict[str, Any]
SETTLE_S = 1.0
"""After the last held request left: time for the broker's answers to come back."""
POLL_S = 0.2
LANDED_SHOWN = 10
"""How many late Produce requests a summary lists one by one."""
ANSWERS_READ = ("Produce", "EndTxn", "InitProducerId", "AddPartitionsToTxn")
MARKER_WINDOW_S = 3.0
"""How soon after an EndTxn its coordinator's markers reach the leaders (it first
appends the transaction's new state to its log, replicated)."""
"""The requests whose answers the proxy reads (faultproxy/bodies.go); others it passes."""


@dataclass(frozen=True, slots=True)
class Installed:
    """One rule in one broker's proxy."""

    broker: str
    rule_id: int
    since: float
    """When it was installed (unix seconds): the EndTxn log is read from here."""


class ProxyFault(SingleFault):
    """What every fault made of faultproxy rules shares: the proxies it was set up with,
    the rules it installed, and a teardown that releases what they still hold."""

    def __init__(self, fault: str, topic: str, rng: random.Random) -> None:
        super().__init__(fault, topic, rng)
        self._proxies: InPath | None = None
        self.installed: list[Installed] = []

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; refuses one whose brokers are not behind faultproxy."""
        self._proxies = in_path(cluster, self.fault)
        super().setup(cluster)

    @property
    def proxies(self) -> InPath:
        """Returns the cluster given to setup, as the proxies it has."""
        if self._proxies is None:
            raise RuntimeError(f"{self.fault}: used before setup")
        return self._proxies

    def take_installed(self) -> list[Installed]:
        """Returns the rules installed, forgetting them: they are about to end."""
        installed, self.installed = self.installed, []
        return installed

    def teardown(self) -> Value:
        """Releases at once whatever the fault's rules still hold; says what passed the
        proxies, the proof that the run's clients went through them."""
        if self._proxies is None:
            return {}
        nodes = {self.cluster.ip(n) for n in self.cluster.nodes}
        done: Value = {"through_faultproxy": passed(self.proxies, self.cluster.brokers, nodes)}
        if self.installed:
            done["released"] = release(self.proxies, self.take_installed())
        return {self.fault: done}


def in_path(cluster: Cluster, fault: str) -> InPath:
    """Returns the cluster as one whose brokers are behind faultproxy; raises TypeError
    when they are not (the run must be made with --faultproxy)."""
    if not isinstance(cluster, InPath):
        raise TypeError(f"{fault}: the cluster has no faultproxy")
    cluster.proxy_stats(cluster.brokers[0])  # raises when the brokers are not behind it
    return cluster


def install(proxies: InPath, brokers: Iterable[str], rule: Value) -> list[Installed]:
    """Installs rule in each broker's proxy. Returns where it went."""
    since = time.time()
    return [Installed(b, int(proxies.proxy_add_rule(b, rule)["id"]), since) for b in brokers]


def end(proxies: InPath, installed: Sequence[Installed], release_now: bool) -> list[Value]:
    """Ends the rules; unless release_now, each held connection keeps its own hold time.
    Waits until nothing is held any more and the answers came back; returns the final
    reports, each with its broker (or the error of a proxy that no longer knows the rule:
    its broker was restarted, and what it held died with it)."""
    ended = {
        i: _ask(partial(proxies.proxy_end_rule, i.broker, i.rule_id, release_now))
        for i in installed
    }
    longest = max((int(r.get("hold_ms") or 0) for r in ended.values()), default=0) / 1000
    deadline = time.monotonic() + longest + SETTLE_S
    while any(r.get("held_now") or r.get("undelivered") for r in ended.values()):
        if time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
        ended = {i: _ask(partial(proxies.proxy_rule, i.broker, i.rule_id)) for i in ended}
    time.sleep(SETTLE_S)
    final = {i: _ask(partial(proxies.proxy_rule, i.broker, i.rule_id)) for i in ended}
    return [r | {"broker": i.broker} for i, r in final.items()]


def release(proxies: InPath, installed: Sequence[Installed]) -> Value:
    """Ends the rules and releases what they hold at once (a teardown). Returns broker
    -> connections released, or the error of a proxy that could not say."""
    done: Value = {}
    for i in installed:
        report = _ask(partial(proxies.proxy_end_rule, i.broker, i.rule_id, True))
        if "error" in report:
            done[i.broker] = report
        elif held := int(report.get("held_now") or 0) + int(report.get("undelivered") or 0):
            done[i.broker] = {"released": held}
    return done


def _ask(call: Callable[[], Value]) -> Value:
    """Returns call's answer, or {"error": ...} when the proxy could not give one."""
    try:
        return call()
    except Exception as err:  # a broker restarted or down: reported with the rest
        return {"error": str(err)}


def ends_since(proxies: InPath, brokers: Iterable[str], since: float) -> list[Value]:
    """Returns every EndTxn request that reached any broker's proxy since a time."""
    found: list[Value] = []
    for broker in brokers:
        found += _ask_list(partial(proxies.proxy_ends, broker, since), broker)
    return found


def markers_since(proxies: InPath, brokers: Iterable[str], since: float) -> list[Value]:
    """Returns every transaction marker that reached any broker's proxy since a time."""
    found: list[Value] = []
    for broker in brokers:
        found += _ask_list(partial(proxies.proxy_markers, broker, since), broker)
    return found


def _ask_list(call: Callable[[], list[Value]], broker: str) -> list[Value]:
    """Returns call's list, each with its broker, or none when the proxy could not say
    (a broker down now: what it saw is lost with its proxy)."""
    try:
        return [item | {"broker": broker} for item in call()]
    except Exception:  # reported by the absence: the caller counts what it found
        return []


def clients(proxies: InPath, brokers: Iterable[str]) -> dict[str, Value]:
    """Returns what every broker's proxy saw of each client id, merged: requests by API
    per broker, and a transactional producer's id, timeout, producer id and epoch."""
    merged: dict[str, Value] = {}
    for broker in brokers:
        try:
            seen = proxies.proxy_stats(broker)["clients"]
        except Exception:  # a broker down now: what it saw is lost with its proxy
            continue
        for client, s in seen.items():
            m = merged.setdefault(client, {"requests": {}, "open": 0, "last_at": 0.0})
            m["requests"][broker] = s.get("requests", {})
            m["open"] += int(s.get("open", 0))
            m["last_at"] = max(m["last_at"], float(s.get("last_at", 0)))
            for key in ("transactional_id", "transaction_timeout_ms", "peer"):
                if s.get(key):
                    m[key] = s[key]
            if int(s.get("producer_id", -1)) >= 0:  # 0 is the first producer id
                m["producer_id"], m["producer_epoch"] = s["producer_id"], s["producer_epoch"]
    return merged


def passed(proxies: InPath, brokers: Iterable[str], nodes: set[str]) -> Value:
    """Returns what passed the proxies from clients, the peers that are not nodes (the
    addresses in nodes): how many client ids, and their requests by API."""
    seen = clients(proxies, brokers)
    ours = {c: s for c, s in seen.items() if s.get("peer") not in nodes}
    requests: Counter[str] = Counter()
    for s in ours.values():
        for per_broker in s["requests"].values():
            requests.update(per_broker)
    return {"clients": len(ours), "requests": dict(requests.most_common())}


def error_name(code: int, api: str = "Produce") -> str:
    """Returns a Kafka error code's name (librdkafka's names, the broker's codes): the
    answer to a request of api, "appended" (a Produce) or "accepted" for none,
    "unanswered" for -1."""
    if code < 0:
        return "unanswered"
    if code == 0:
        return "appended" if api == "Produce" else "accepted"
    return str(KafkaError(code).name())


def producers_of(record: Value) -> set[int]:
    """Returns the producer ids a held request carried (its batches, EndTxn, markers)."""
    pids = {int(b["producer_id"]) for b in record.get("batches") or []}
    pids |= {int(m["producer_id"]) for m in record.get("markers") or []}
    if record.get("add_partitions"):
        pids.add(int(record["add_partitions"]["producer_id"]))
    if record.get("end_txn"):
        pids.add(int(record["end_txn"]["producer_id"]))
    return {p for p in pids if p >= 0}


def crossed(record: Value, ends: Sequence[Value]) -> Counter[str]:
    """Returns how many EndTxns of the record's producers were delivered to a
    coordinator while it was held, by commit and abort."""
    pids = producers_of(record)
    arrived, delivered = float(record["arrived"]), float(record.get("delivered") or 0)
    if not pids or not delivered:
        return Counter()
    return Counter(
        "commit" if e.get("commit") else "abort"
        for e in ends
        if int(e.get("producer_id", -1)) in pids
        and arrived < float(e.get("delivered") or 0) < delivered
    )


def summary(
    reports: Sequence[Value], ends: Sequence[Value], markers: Sequence[Value] = ()
) -> Value:
    """Takes the final reports of a fault's rules and the EndTxns and transaction markers
    delivered meanwhile. Returns what the fault did, in brief (see the module's
    docstring)."""
    frames: Counter[str] = Counter()
    for r in reports:
        frames.update(r.get("frames") or {})
    records = [rec | {"broker": r["broker"]} for r in reports for rec in r.get("records") or []]
    held_s = [float(x["delivered"]) - float(x["arrived"]) for x in records if x.get("delivered")]
    across: Counter[str] = Counter()
    held_across: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    for rec in records:
        over = crossed(rec, ends)
        across.update(over)
        for kind in over:
            held_across[
                f"{rec['api']} across {'a commit' if kind == 'commit' else 'an abort'}"
            ] += 1
        if rec.get("answer") and rec["direction"] == "up" and rec["api"] in ANSWERS_READ:
            answer = rec["answer"]
            said = "a duplicate of its retry" if answer.get("duplicate") else None
            answers[f"{rec['api']} {said or error_name(int(answer['error']), rec['api'])}"] += 1
    errors = [f"{r['broker']}: {r['error']}" for r in reports if "error" in r]
    done: Value = {
        "held": dict(frames),
        "connections": sum(int(r.get("conns") or 0) for r in reports),
        "clients": sorted({c for r in reports for c in r.get("clients") or {}}),
        "longest_s": round(
            max((int(r.get("longest_ms") or 0) for r in reports), default=0) / 1000, 3
        ),
        "mean_held_s": round(sum(held_s) / len(held_s), 3) if held_s else 0.0,
        "after_sender_gave_up": sum(
            int(r.get("delivered_after_sender_closed") or 0) for r in reports
        ),
        "discarded": sum(int(r.get("discarded") or 0) for r in reports),
        "answers": dict(answers),
        "held_across": dict(held_across),
        "ends_crossed": dict(across),
        "unrecorded": sum(int(r.get("unrecorded") or 0) for r in reports),
    }
    if still := sum(int(r.get("held_now") or 0) for r in reports):
        errors.append(f"{still} connections still held after the fault")
    if errors:
        done["error"] = "; ".join(errors)
    landed = [late_produce(rec) for rec in records if _appended(rec)]
    if landed:
        done["landed"] = landed[:LANDED_SHOWN]
        done["landed_count"] = len(landed)
    accepted = [late_end(rec, ends, markers) for rec in records if _accepted_end(rec)]
    if accepted:
        done["late_ends"] = accepted[:LANDED_SHOWN]
        done["late_ends_accepted"] = len(accepted)
        done["late_ends_live"] = sum(bool(e["ended_a_live_transaction"]) for e in accepted)
    return done


def _accepted_end(record: Value) -> bool:
    answer = record.get("answer")
    return bool(
        record["api"] == "EndTxn" and record.get("end_txn") and answer and int(answer["error"]) == 0
    )


def late_end(record: Value, ends: Sequence[Value], markers: Sequence[Value]) -> Value:
    """Takes a held EndTxn its coordinator accepted, the EndTxns and the markers seen
    meanwhile. Returns it in brief, with whether it ended a live transaction: markers of
    its producer and result reached a leader within MARKER_WINDOW_S after it, with no
    other EndTxn of that producer delivered in between (an EndTxn that finds its own
    transaction over, a retry's, is accepted without markers). That is KAFKA-17754's
    case: a late EndTxn ending a later transaction of its producer."""
    end = record["end_txn"]
    pid, at = int(end["producer_id"]), float(record["delivered"])
    others = [
        float(e["delivered"])
        for e in ends
        if int(e.get("producer_id", -1)) == pid
        and e.get("delivered")
        and not (e.get("conn") == record["conn"] and e.get("broker") == record["broker"])
    ]
    written = sorted(
        (
            m
            for m in markers
            if int(m.get("producer_id", -1)) == pid
            and bool(m.get("commit")) == bool(end["commit"])
            and at < float(m["arrived"]) <= at + MARKER_WINDOW_S
        ),
        key=lambda m: float(m["arrived"]),
    )
    live = bool(written) and not any(at < d < float(written[0]["arrived"]) for d in others)
    # Its markers: those before the producer's next EndTxn, whose markers follow.
    until = min((d for d in others if d > at), default=at + MARKER_WINDOW_S)
    its = [m for m in written if float(m["arrived"]) < until]
    return {
        "client": record["client"],
        "producer": [pid, end["producer_epoch"]],
        "commit": bool(end["commit"]),
        "held_s": round(at - float(record["arrived"]), 3),
        "ended_a_live_transaction": live,
        "partitions": sorted({p for m in its for p in m.get("partitions") or []}) if live else [],
    }


def _appended(record: Value) -> bool:
    """A late Produce the broker appended: answered without error, and not with the
    offset it had given the same batch before (a duplicate of the producer's retry)."""
    answer = record.get("answer")
    return bool(
        record["api"] == "Produce"
        and answer
        and int(answer["error"]) == 0
        and not answer.get("duplicate")
    )


def late_produce(record: Value) -> Value:
    """Returns where a late Produce landed and whose it was, in brief."""
    batch = (record.get("batches") or [{}])[0]
    part = (record["answer"].get("partitions") or [{}])[0]
    return {
        "broker": record["broker"],
        "client": record["client"],
        "partition": part.get("partition"),
        "offset": part.get("base_offset"),
        "producer": [batch.get("producer_id"), batch.get("producer_epoch")],
        "sequence": batch.get("base_sequence"),
        "records": batch.get("records"),
        "held_s": round(float(record["delivered"]) - float(record["arrived"]), 3),
        "after_sender_gave_up": bool(record.get("sender_closed")),
    }
