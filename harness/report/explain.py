"""What a run's verdict rests on, in a few sentences: what failed, where and why (the sends
lost, the faults with their times, the brokers' truncations, whether the configuration
allows it; the real-time argument of a non-linearizable key, anchored on the op that
pinned the state it had to follow, with values in its history's spelling; whether the store
variant was built to fail; each queue or transaction anomaly's count and first case), or
for a valid run what was checked. A queue run's loss is told by loss_story.

Pure functions of results.json's sections and test.json's spec: report.html shows the
points under its verdict, the first as its lead and the rest as a list, each with its
details under it (a fault's steps, the kinds that follow from a loss); `harness run` and
`harness check` end with them, a detail on a line of its own.
"""

from __future__ import annotations

import html
from typing import Any

import checkers  # its names loaded when first used: a result without a section needs none
from checkers.linearizable import spell
from harness.report.points import KEYS_SHOWN, Point, Section
from harness.verdicts import DURATION, incomplete, verdict_word

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


DETAIL = "  - "
"""How a point's detail starts in explain's lines: a list item, indented under its point."""


def explain(results: Section, spec: Section, cases_listed: bool = False) -> list[str]:
    """Takes what explain_points does. Returns its points as lines: each point's text,
    then each of its details on a line of its own starting DETAIL."""
    return [
        line
        for point in explain_points(results, spec, cases_listed)
        for line in (point.text, *(DETAIL + detail for detail in point.under))
    ]


def explain_points(results: Section, spec: Section, cases_listed: bool = False) -> list[Point]:
    """Takes results.json's body, test.json's spec (kafka_config, producer_acks; {} when
    unknown) and whether the queue's transactions and anomaly cases are listed above the
    sentences already (`harness check` lists every case: then they are not said again).
    Returns the points, the verdict's reason first, in one sentence where sends were lost
    (what and why); one saying so if writing them failed."""
    try:
        return _points(results, spec, cases_listed)
    except Exception as err:  # words beside the verdict must never cost the run its verdict
        return [Point(f"No explanation: writing it failed ({err!r}); the sections below stand.")]


def _points(results: Section, spec: Section, cases_listed: bool) -> list[Point]:
    valid = results.get("valid")
    said: list[str | Point] = []
    lin, queue = results.get("linearizable"), results.get("queue")
    if isinstance(gone := results.get("lost-store"), dict) and gone.get("valid") is False:
        said += checkers.lost_store_lines(gone)
        if spec.get("db") == "nats":
            from harness.report.loss_story import config_sentence  # a lost store only

            said.append(config_sentence(spec))
    if isinstance(lin, dict) and lin.get("valid") is False:
        said += linearizable_sentences(lin)
    if valid is False and (store := spec.get("store")) in BUILT_TO_FAIL:
        said.append(
            f"Expected: this store variant ({store}) is built to fail: {BUILT_TO_FAIL[store]}."
        )
    if isinstance(queue, dict) and "error" not in queue:
        if queue.get("lost"):
            from harness.report.loss_story import lost_points  # a queue's loss only

            said += lost_points(queue, results.get("lost-acks"), results, spec)
            if not cases_listed:
                said += consequence_points(queue)
        if not cases_listed:
            said += anomaly_sentences(queue)
    if isinstance(replicas := results.get("replicas"), dict) and replicas.get("valid") is False:
        from harness.report.replicas_section import replica_sentences  # a run's results only

        said += replica_sentences(replicas)
    if isinstance(brain := results.get("split-brain"), dict) and brain.get("valid") is False:
        said += checkers.split_brain_lines(brain, str(brain.get("stream", "")))
    if valid is True:  # what was checked leads, before the counts and allowed kinds
        checked: list[str | Point] = [checked_sentence(results)]
        if isinstance(found := results.get("availability"), dict):
            checked += [s for s in (checkers.availability_sentence(found),) if s]
        said = checked + said
    elif valid is not False:
        said += unknown_sentences(results)
    if isinstance(nemesis := results.get("nemesis"), dict) and nemesis.get("ops"):
        from harness.report.disk_story import corruption_sentences  # a run's faults only

        said += corruption_sentences(nemesis)
    if incomplete(results):
        said.append(
            f"INCOMPLETE: {results[DURATION].get('reason', 'the workload stopped short')}; "
            "what ran is checked, but says nothing of how often the whole test fails."
        )
    if "interrupted" in results and not incomplete(results):  # else INCOMPLETE said it
        said.append(f"The run was interrupted: {results['interrupted']}.")
    return [s if isinstance(s, Point) else Point(s) for s in said]


def explanation_html(points: list[Point]) -> str:
    """Takes explain's points. Returns them as HTML: the first, the verdict's reason, as a
    paragraph of its own, the rest as a short list, each point's details listed under it
    (five paragraphs a screen long were read as one wall of text)."""

    def item(point: Point) -> str:
        under = "".join(f"<li>{html.escape(detail)}</li>" for detail in point.under)
        return html.escape(point.text) + (f"<ul>{under}</ul>" if under else "")

    if not points:
        return ""
    lead, rest = points[0], points[1:]
    said = f'<p class="lead">{item(lead)}</p>' if not lead.under else f"<div>{item(lead)}</div>"
    if rest:
        said += "<ul>" + "".join(f"<li>{item(point)}</li>" for point in rest) + "</ul>"
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


def anomaly_sentences(queue: Section) -> list[str]:
    """Takes the queue section. Returns, per anomaly kind found other than lost writes,
    its count, what it does to the verdict and its first case in the checker's words: the
    kinds that make the history invalid first, then the transactions' counts, then the
    kinds Kafka allows or the run ignores (a page led by the counts or an allowed G0 hid
    the one case that mattered)."""
    from checkers.queue import effect  # the queue checker loads for a queue's results only

    invalidating: list[str] = []
    reported: list[str] = []
    following = _following(queue)  # said under the loss, by consequence_points
    for kind, found in queue.get("kinds", {}).items():
        count = found.get("count", 0)
        if not count or (kind == "lost-write" and queue.get("lost")) or kind in following:
            continue
        bad = bool(found.get("invalidating"))
        said_of = effect(kind, invalidating=bad, ignored=bool(found.get("ignored")))
        first = found.get("cases") or []
        case = f"; the first: {_case_words(kind, first[0])}" if first else ""
        (invalidating if bad else reported).append(f"{count} {kind} ({said_of}){case}.")
    counts = []
    if isinstance(txns := queue.get("transactions"), dict):
        counts.append(
            f"Transactions: {txns.get('committed')} committed, {txns.get('aborted')} "
            f"aborted, {txns.get('unknown')} unknown."
        )
    return invalidating + counts + reported


def consequence_points(queue: Section) -> list[Point]:
    """Takes the queue section of a run that lost sends. Returns one point with the
    anomaly kinds that follow from that loss under it (checkers.queue.follows_from_loss),
    each with its count, why and a first case, so they read as consequences of the loss
    and not as problems of their own; [] when none does."""
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
    return [Point("Following from the same loss, not separate problems:", tuple(parts))]


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
