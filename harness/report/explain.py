"""What a run's verdict rests on, in a few sentences: what failed, where and why (the sends
lost, the faults with their times, the brokers' truncations, whether the configuration
allows it; the real-time argument of a non-linearizable key, anchored on the op that
pinned the state it had to follow, with values in its history's spelling; whether the store
variant was built to fail; each queue or transaction anomaly's count and first case), or
for a valid run what was checked.

Pure functions of results.json's sections and test.json's spec: report.html shows the
sentences under its verdict, and `harness run` and `harness check` end with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checkers import availability_sentence, lost_store_lines, split_brain_lines
from checkers.linearizable import spell
from harness.verdicts import DURATION, incomplete, verdict_word
from nemesis.names import LOSES_POWER, POWERS_OFF_A_MAJORITY

if TYPE_CHECKING:  # the nemesis story and the clusters' profiles: for a run's results only
    from harness.report.nemesis_story import Row

Section = dict[str, Any]
KEYS_SHOWN = 3
VALUES_SHOWN = 5
READ_FS = frozenset({"get", "read"})
BUILT_TO_FAIL: dict[str, str] = {
    "local-read": "its reads answer from the local replica with no barrier, so a read can "
    "miss a write that returned before it began",
    "replica-style": "it reads and checks preconditions on a local copy, so reads can be "
    "stale and conditional writes refused on a stale copy",
    "published-rule": "it decides that a write won by value equality, as the published code "
    "does, so two equal put-if-absent calls can both win",
}
"""Why each store variant other than `linearizable` (workloads.names.STORES) must fail
(tests/unit/harness/report/test_explain_anchor.py holds the two lists together)."""


def explain(results: Section, spec: Section, cases_listed: bool = False) -> list[str]:
    """Takes results.json's body, test.json's spec (kafka_config, producer_acks; {} when
    unknown) and whether the queue's transactions and anomaly cases are listed above the
    sentences already (`harness check` lists every case: then they are not said again).
    Returns the sentences, the verdict's reason first; one saying so if writing them
    failed."""
    try:
        return _sentences(results, spec, cases_listed)
    except Exception as err:  # words beside the verdict must never cost the run its verdict
        return [f"No explanation: writing it failed ({err!r}); the sections below stand."]


def _sentences(results: Section, spec: Section, cases_listed: bool) -> list[str]:
    valid = results.get("valid")
    said: list[str] = []
    lin, queue = results.get("linearizable"), results.get("queue")
    if isinstance(gone := results.get("lost-store"), dict) and gone.get("valid") is False:
        said += lost_store_lines(gone)
        if spec.get("db") == "nats":
            said.append(config_sentence(spec))
    if isinstance(lin, dict) and lin.get("valid") is False:
        said += linearizable_sentences(lin)
    if valid is False and (store := spec.get("store")) in BUILT_TO_FAIL:
        said.append(
            f"Expected: this store variant ({store}) is built to fail: {BUILT_TO_FAIL[store]}."
        )
    if isinstance(queue, dict) and "error" not in queue:
        if queue.get("lost"):
            said += lost_sentences(queue, results.get("lost-acks"), results, spec)
            if not cases_listed:
                said += consequence_sentences(queue)
        if not cases_listed:
            said += anomaly_sentences(queue)
    if isinstance(replicas := results.get("replicas"), dict) and replicas.get("valid") is False:
        from harness.report.replicas_section import replica_sentences  # a run's results only

        said += replica_sentences(replicas)
    if isinstance(brain := results.get("split-brain"), dict) and brain.get("valid") is False:
        said += split_brain_lines(brain, str(brain.get("stream", "")))
    if valid is True:
        said.append(checked_sentence(results))
        if isinstance(found := results.get("availability"), dict):
            said += [s for s in (availability_sentence(found),) if s]
    elif valid is not False:
        said += unknown_sentences(results)
    if incomplete(results):
        said.append(
            f"INCOMPLETE: {results[DURATION].get('reason', 'the workload stopped short')}; "
            "what ran is checked, but says nothing of how often the whole test fails."
        )
    if "interrupted" in results and not incomplete(results):  # else INCOMPLETE said it
        said.append(f"The run was interrupted: {results['interrupted']}.")
    return said


def linearizable_sentences(section: Section) -> list[str]:
    """Takes the linearizability section. Returns, per invalid key (the first few), the
    real-time argument: when the failing op began, after which op had returned, and what
    it read although the state could only be another."""
    invalid = [f for f in section.get("failures", []) if f.get("valid") is False]
    said = [key_sentence(f) for f in invalid[:KEYS_SHOWN]]
    if len(invalid) > KEYS_SHOWN:
        said.append(f"{len(invalid) - KEYS_SHOWN} more keys are not linearizable either.")
    return said


def key_sentence(failure: Section) -> str:
    """Takes one invalid key's failure. Returns its real-time argument in one sentence: when
    the failing op began, after which op had returned (the one that pinned the state it
    had to follow) and the state that op left, what it read or why it cannot take effect,
    and what overlapped it, e.g. `Key 3 is not linearizable: get (op 812, process 4) was
    invoked at 17.412 s, 0.90 ms after get 48 (op 807, process 3) returned, which left the
    state 48; yet it read 46; no op overlapped it.`"""
    op = failure.get("op") or {}
    key, spelling = failure.get("key"), str(failure.get("spelling") or "json")
    reads = op.get("f") in READ_FS
    who = "The history" if key is None else f"Key {spell(key, spelling)}"
    head = f"{who} is not linearizable: {_op(op, with_value=not reads)}"
    before, left = pinning_op(failure), failure.get("pinned_state")
    state = f", which left the state {left}" if left is not None else ""
    if before is not None:
        gap = _duration(op["call"] - before["ret"])
        when = f" was invoked at {_s(op.get('call'))}, {gap} after {_op(before)} returned{state}"
    elif left is not None:
        when = f" was invoked at {_s(op.get('call'))}, before any op returned, in the state {left}"
    else:
        when = f" was invoked at {_s(op.get('call'))}"
    states = failure.get("state_descriptions") or []
    shown = " or ".join(states[:3])
    could = f" (the state could only be {shown})" if states and states != [left] else ""
    overlapping = failure.get("concurrent") or []
    if overlapping:
        listed = "; ".join(_op(c) for c in overlapping[:3])
        more = f" and {len(overlapping) - 3} more" if len(overlapping) > 3 else ""
        concurrent = f"; what overlapped it ({listed}{more}) does not explain it either"
    else:
        concurrent = "; no op overlapped it"
    if reads:
        found = f"yet it read {spell(op.get('value'), spelling)}{could}"
    else:
        found = f"yet it cannot take effect: {failure.get('message')}{could}"
    return f"{head}{when}; {found}{concurrent}."


def pinning_op(failure: Section) -> Section | None:
    """Takes an invalid key's failure. Returns the op that pinned the state the failing op
    had to follow (`pinned_by`; for a failure written before it was recorded, the last op
    of the prefix's tail, in linearization order, to return before the failing op was
    invoked), or None when no op had returned by then."""
    if "pinned_by" in failure:
        pinned = failure["pinned_by"]
        return pinned if isinstance(pinned, dict) else None
    call = (failure.get("op") or {}).get("call")
    if not isinstance(call, int | float):
        return None
    done = [
        p
        for p in failure.get("longest_prefix") or []
        if isinstance(p.get("ret"), int | float) and p["ret"] < call
    ]
    return done[-1] if done else None


def lost_sentences(queue: Section, lost_acks: Any, results: Section, spec: Section) -> list[str]:
    """Takes the queue section, the lost-acks section, results.json's body and the spec.
    Returns which acknowledged sends were lost where, the faults on those partitions with
    their steps and times, the brokers' truncations, whether the configuration allows the
    loss, and how lost-acks's count differs from the queue checker's."""
    lost, acked = queue.get("lost", 0), queue.get("acknowledged", 0)
    cases = queue.get("kinds", {}).get("lost-write", {}).get("cases", [])
    by_partition = _lost_by_partition(cases, lost_acks)
    judged = {c.get("judged_by") for c in cases}
    how = "the final drains" if judged == {"drain"} else "the final drains and the polls"
    where = "; ".join(
        _partition_loss(p, n, [c for c in cases if str(c.get("partition")) == p])
        for p, n in by_partition.items()
    )
    said = [f"{lost} of {acked} acknowledged sends were lost, as {how} show: {where}."]
    torn = sorted({c["index"] for c in cases if "outcome" in c and "index" in c})
    if torn:  # KAFKA-17754's shape: a transaction committed in part
        ops = ", ".join(f"op {i}" for i in torn[:KEYS_SHOWN])
        said.append(
            f"Of them, {sum(1 for c in cases if 'outcome' in c)} belong to transactions of "
            f"unknown outcome that committed only in part ({ops}): a poll read another of "
            "their sends, so they committed, and a transaction is all or nothing."
        )
    said += fault_sentences(results.get("nemesis"), set(by_partition))
    said.append(config_sentence(spec))
    if isinstance(lost_acks, dict) and "lost_count" in lost_acks:
        said.append(two_counts_sentence(lost, lost_acks["lost_count"]))
    return said


def _lost_by_partition(cases: Sequence[Section], lost_acks: Any) -> dict[str, int]:
    # lost-acks lists every lost send per partition; the queue's cases are the first 20.
    counts: dict[str, int] = {}
    if isinstance(lost_acks, dict):
        for entry in lost_acks.get("by_key", []):
            if entry.get("lost_count"):
                counts[str(entry.get("key"))] = int(entry["lost_count"])
    if not counts:
        for case in cases:
            p = str(case.get("partition"))
            counts[p] = counts.get(p, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def _partition_loss(partition: str, count: int, cases: Sequence[Section]) -> str:
    values = [str(c.get("value")) for c in cases[:VALUES_SHOWN]]
    offsets = sorted(int(c["offset"]) for c in cases if isinstance(c.get("offset"), int))
    shown = ", ".join(values) + (", ..." if count > len(values) else "")
    span = ""
    if offsets:
        span = f" at offset{'s' if len(offsets) > 1 else ''} {offsets[0]}"
        span += f"-{offsets[-1]}" if offsets[-1] != offsets[0] else ""
    sends = "sends" if len(values) > 1 else "send"
    what = f" ({sends} of {shown}{span})" if values else ""
    return f"partition {partition} lost {count}{what}"


def fault_sentences(nemesis: Any, partitions: set[str]) -> list[str]:
    """Takes the nemesis section and the partitions with losses. Returns a sentence per
    fault window that targeted one of them (else every window, the first few): its steps
    with their test times, the brokers' truncations among them."""
    if not isinstance(nemesis, dict) or not nemesis.get("windows"):
        return ["No fault was injected."]
    ops = nemesis.get("ops", [])
    from harness.report.nemesis_story import estimated_invokes, story

    rows = story(ops, estimated_invokes(nemesis))
    windows = nemesis["windows"]
    aimed = [w for w in windows if _targets(w.get("detail")) & partitions] or windows
    said = []
    for window in aimed[:KEYS_SHOWN]:
        start, stop = window["start"], window.get("stop")
        # A last step is stamped as its op returns: a hair after the window's stop.
        mine = [r for r in rows if start <= r.start and (stop is None or r.start < stop + 0.5)]
        steps = [r for r in mine if r.stop is None] or mine
        ended = "never healed" if stop is None else f"healed by {stop:.1f} s"
        said.append(
            f"Fault {window['fault']} from {start:.1f} s ({ended}): "
            + "; ".join(_at(r) for r in steps)
            + "."
        )
    if len(aimed) > KEYS_SHOWN:
        said.append(f"{len(aimed) - KEYS_SHOWN} more fault windows are in the nemesis story.")
    return said


def _targets(detail: Any) -> set[str]:
    if not isinstance(detail, dict):
        return set()
    listed = detail.get("partitions")
    if isinstance(listed, list):
        return {str(p) for p in listed}
    return set() if detail.get("partition") is None else {str(detail["partition"])}


def _at(row: Row) -> str:
    return f"{row.start:.1f} s {row.words}"


def config_sentence(spec: Section) -> str:
    """Takes the spec. Returns whether its Kafka configuration and producers (or its
    NATS sync profile) allow an acknowledged send to be lost."""
    if spec.get("db") == "nats":
        return nats_sentence(spec)
    name = spec.get("kafka_config")
    from harness.cluster.config import PROFILES

    profile = PROFILES.get(name) if isinstance(name, str) else None
    if spec.get("producer_acks") == "1":
        return (
            "Expected with acks=1: a leader acknowledges before any follower holds the "
            "send, so losing that leader can lose it."
        )
    if profile is None:
        return (
            "The run's Kafka configuration is not recorded, so whether it allows this is not said."
        )
    settings = f"min.insync.replicas={profile.min_insync_replicas}"
    nemeses = spec.get("nemesis") or ()
    if not profile.fsync_every_write and any(n in POWERS_OFF_A_MAJORITY for n in nemeses):
        return (
            f"Expected when power fails under {profile.name}: Kafka acknowledges a write "
            "once the in-sync replicas hold it in memory, and fsyncs it only when the OS "
            "writes it back (log.flush.interval.messages at its default), so replicas "
            "that lose power together can lose it; the -fsync profiles should not."
        )
    if not profile.unclean_leader_election and any(n in LOSES_POWER for n in nemeses):
        return (
            f"Not allowed under {profile.name} ({settings}, no unclean leader election), "
            "power loss or not: these faults cut the power of a minority of the replicas "
            "at most, so a replica that never lost power held every acknowledged send and "
            "should have been elected. A BUG, in Kafka (a replica that lost its unsynced "
            "tail elected: its unclean shutdown not detected), the client or the harness."
        )
    if profile.unclean_leader_election:
        return (
            f"Expected under {profile.name}: {settings} with unclean leader election lets a "
            "replica that missed acknowledged sends become leader, and the old leader "
            "truncates its log to match."
        )
    return (
        f"Not allowed under {profile.name} ({settings}, no unclean leader election): every "
        "acknowledged send should survive, so this is a bug in Kafka, the client or the "
        "harness."
    )


def two_counts_sentence(queue_lost: int, lost_acks_lost: int) -> str:
    """Takes the queue checker's and lost-acks's counts of lost writes. Returns how they
    differ, in one sentence."""
    counts = (
        f"both count {queue_lost}"
        if queue_lost == lost_acks_lost
        else f"count {lost_acks_lost} and {queue_lost}"
    )
    return (
        "lost-acks (Jepsen's set check: values missing from each partition's final drain) "
        "and the queue checker (messages at their offsets, judged by the final drain or "
        f"else the polls) {counts}."
    )


def anomaly_sentences(queue: Section) -> list[str]:
    """Takes the queue section. Returns, per anomaly kind found other than lost writes,
    its count, what it does to the verdict and its first case in the checker's words."""
    from checkers.queue import effect  # the queue checker loads for a queue's results only

    said = []
    if isinstance(txns := queue.get("transactions"), dict):
        said.append(
            f"Transactions: {txns.get('committed')} committed, {txns.get('aborted')} "
            f"aborted, {txns.get('unknown')} unknown."
        )
    following = _following(queue)  # said under the loss, by consequence_sentences
    for kind, found in queue.get("kinds", {}).items():
        count = found.get("count", 0)
        if not count or (kind == "lost-write" and queue.get("lost")) or kind in following:
            continue
        said_of = effect(
            kind, invalidating=bool(found.get("invalidating")), ignored=bool(found.get("ignored"))
        )
        first = found.get("cases") or []
        case = f"; the first: {_case_words(kind, first[0])}" if first else ""
        said.append(f"{count} {kind} ({said_of}){case}.")
    return said


def consequence_sentences(queue: Section) -> list[str]:
    """Takes the queue section of a run that lost sends. Returns one sentence naming the
    anomaly kinds that follow from that loss (checkers.queue.follows_from_loss), with
    their counts, why and a first case, so they read as consequences of the loss and not
    as problems of their own; [] when none does."""
    following = _following(queue)
    if not following:
        return []
    from checkers.queue import effect

    parts = []
    for kind, why in following.items():
        found = queue["kinds"][kind]
        said_of = effect(
            kind, invalidating=bool(found.get("invalidating")), ignored=bool(found.get("ignored"))
        )
        first = found.get("cases") or []
        case = f"; the first: {_case_words(kind, first[0])}" if first else ""
        parts.append(f"{found.get('count', 0)} {kind} ({said_of}: {why}{case})")
    return ["Following from the same loss, not separate problems: " + "; and ".join(parts) + "."]


def _following(queue: Section) -> dict[str, str]:
    from checkers.queue import follows_from_loss

    try:
        return follows_from_loss(queue)
    except Exception:  # an older results.json's shape: the kinds are said one by one
        return {}


def _case_words(kind: str, case: Any) -> str:
    # A case of another shape (an older results.json) is shown as it is.
    from checkers.queue import case_words

    try:
        return case_words(kind, case)
    except Exception:
        return str(case)


def checked_sentence(results: Section) -> str:
    """Takes a valid run's results. Returns one sentence of what was checked: the ops, the
    keys or sends, and the faults."""
    stats = results.get("stats", {})
    what = f"{stats.get('count', 0)} ops" + (f" ({stats['ok']} ok)" if "ok" in stats else "")
    lin, queue = results.get("linearizable"), results.get("queue")
    if isinstance(lin, dict):
        keys = lin.get("keys", 0)
        what += f" over {keys} key{'' if keys == 1 else 's'}, each linearizable"
    if isinstance(queue, dict):
        what += (
            f", {queue.get('acknowledged', 0)} acknowledged sends, none lost, no anomaly "
            "that makes a history invalid"
        )
    what += _group_words(results.get("groups"), results.get("share"))
    windows = results.get("nemesis", {}).get("windows", [])
    kinds: dict[str, int] = {}
    for w in windows:
        kinds[w["fault"]] = kinds.get(w["fault"], 0) + 1
    faults = ", ".join(f"{n} x {k}" for k, n in sorted(kinds.items())) or "no fault"
    return f"Checked {what}, under {faults}."


def _group_words(groups: Any, share: Any) -> str:
    # A group run's headline names what its group did and that it broke no rule.
    said = ""
    if isinstance(groups, dict) and "commits" in groups:
        commits = groups["commits"]
        said += (
            f"; the consumer group ({groups.get('members', 0)} members, "
            f"{commits.get('ok', 0)} commits, {groups['takeovers'].get('judged', 0)} takeovers "
            f"judged) broke none of its {len(groups.get('kinds', {}))} rules"
        )
    if isinstance(share, dict) and "outcomes" in share:
        o, d = share["outcomes"], share["deliveries"]
        said += (
            f"; the share group delivered {d.get('records', 0)} records "
            f"{d.get('total', 0)} times ({o.get('accepted', 0)} accepted, "
            f"{o.get('rejected', 0)} rejected, {o.get('archived-by-limit', 0)} archived by the "
            f"delivery limit) and broke none of its {len(share.get('kinds', {}))} rules"
        )
    return said


def unknown_sentences(results: Section) -> list[str]:
    """Takes results that are neither valid nor invalid. Returns why each unknown section
    is unknown."""
    said = []
    for name, section in results.items():
        if not isinstance(section, dict) or verdict_word(section.get("valid")) != "UNKNOWN":
            continue
        if "error" in section:
            said.append(f"The {name} check failed: {section['error']}.")
        for failure in section.get("failures", []):
            if failure.get("valid") is not False:
                said.append(f"Key {failure.get('key')}: unknown, {failure.get('message')}.")
        said += [f"{name}: {why}." for why in section.get("unknown", []) if isinstance(why, str)]
    return said or ["Nothing was checked."]


def _op(op: Section, with_value: bool = True) -> str:
    text = str(op.get("text", op.get("f")))
    if text.startswith("process "):  # the model's words start "process N f ..."
        text = text.split(" ", 2)[-1]
    if not with_value:
        text = str(op.get("f"))
    return f"{text} (op {op.get('index')}, process {op.get('process')})"


def _s(ns: Any) -> str:
    return f"{ns / 1e9:.3f} s" if isinstance(ns, int | float) else "an unknown time"


def _duration(ns: float) -> str:
    ms = ns / 1e6
    if ms < 1:
        return f"{ms:.2f} ms"
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


PAUSE_POWER_LOSS = "pause-power-loss"
"""The composed fault whose power cut strikes one server of a quorum, the other paused."""


def nats_sentence(spec: Section) -> str:
    """Takes a NATS run's spec. Returns whether its sync profile and faults allow an
    acknowledged publish to be lost. NATS documents the default's window
    (nats-io/nats.docs nats-concepts/jetstream/README.md, "Syncing data to disk"): a
    publish is acknowledged once a quorum holds it and fsynced within sync_interval (2
    minutes), so servers that lose power together before it may lose it."""
    nemeses = spec.get("nemesis") or ()
    if spec.get("nats_sync") != "always" and any(n in POWERS_OFF_A_MAJORITY for n in nemeses):
        return (
            "Expected under NATS's default sync_interval (2 minutes), and documented: "
            "JetStream acknowledges a publish once a quorum of the stream's replicas hold "
            "it and fsyncs it within sync_interval, so a majority that loses power before "
            "then can lose it (nats-server#7564); sync_interval: always should not."
        )
    if spec.get("nats_sync") != "always" and PAUSE_POWER_LOSS in nemeses:
        return (
            "Expected under NATS's default sync_interval (2 minutes): in pause-power-loss "
            "one server of the quorum that acknowledged a publish loses power before it "
            "fsynced it while the other is paused, so the two that elect the next leader "
            "may both lack it (Jepsen's nats-server#7567); sync_interval: always should not."
        )
    return (
        f"Not allowed under NATS's sync profile {spec.get('nats_sync', 'default')} with "
        "these faults: every acknowledged publish is held by a quorum that never lost "
        "an unsynced write, so this is a bug in NATS, the client or the harness."
    )
