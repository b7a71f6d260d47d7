"""report.html's Groups section: for a consumer group's run the group checks' counts and
findings in words beside groups.svg; for a share group's, its counts, any acquisition
overlap in words, and share-deliveries.svg. Empty for a run with neither section.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.report.plots.images import GROUPS_FILE, SHARE_FILE

Case = dict[str, Any]
CASES_SHOWN = 3
GROUP_KINDS = {
    "double-ownership": "two members owned a partition at once",
    "commit-regression": "a committed offset went backwards",
    "takeover-skip": "a member that took a partition over started above the committed offset",
    "at-least-once": "a message below a committed offset was never polled by any member",
}
SHARE_KINDS = {
    "lost": "an acknowledged send never delivered after the final drain",
    "stranded": "a record delivered but never accepted, rejected or archived",
    "lock-overlap": "a record handed to a member while another held its lock",
    "delivered-after-accept": "a record delivered again after its accept was applied",
    "over-limit": "a delivery count above the limit",
    "count-not-increasing": "a redelivery whose count did not grow, with no fault between",
    "mismatched": "a delivery of another message than was sent at its offset",
}


def groups_html(results: dict[str, Any], folder: Path) -> str:
    """Takes results.json's body and the run folder. Returns the Groups section's HTML:
    the consumer group's part, the share group's, or "" when the run had neither."""
    parts = []
    if isinstance(groups := results.get("groups"), dict):
        parts.append(consumer_group_html(groups, folder))
    if isinstance(share := results.get("share"), dict):
        parts.append(share_group_html(share, folder))
    return f'<section id="groups"><h2>Groups</h2>{"".join(parts)}</section>' if parts else ""


def consumer_group_html(section: dict[str, Any], folder: Path) -> str:
    """Takes the groups section. Returns its counts, its findings in words and groups.svg."""
    if "error" in section:
        return f"<h3>Consumer group</h3><p>The group checks failed: {_e(section['error'])}</p>"
    commits, overlaps = section.get("commits", {}), section.get("overlaps", {})
    takeovers = section.get("takeovers", {})
    callbacks = section.get("callbacks", {})
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(callbacks.items())) or "none"
    unjudged = ", ".join(f"{n} {why}" for why, n in takeovers.get("unjudged", {}).items())
    committed = ", ".join(f"{p}: {o}" for p, o in section.get("committed", {}).items())
    counts = [
        ("members", section.get("members", 0)),
        ("rebalance callbacks", said),
        (
            "commits",
            f"{commits.get('ok', 0)} ok, {commits.get('fail', 0)} fail, "
            f"{commits.get('info', 0)} info, {commits.get('auto', 0)} automatic",
        ),
        ("highest committed offset by partition", committed or "none"),
        (
            "ownership overlaps allowed",
            f"{overlaps.get('fenced', 0)} fenced (the old owner's session had expired), "
            f"{overlaps.get('unended', 0)} whose old owner's client closed first",
        ),
        (
            "takeovers judged",
            f"{takeovers.get('judged', 0)}" + (f" (not: {unjudged})" if unjudged else ""),
        ),
    ]
    if isinstance(reach := section.get("auto_commit"), dict):
        counts.append(
            ("auto-commit reach", ", ".join(f"{n} {k}" for k, n in reach["counts"].items()))
        )
    return (
        "<h3>Consumer group</h3>"
        + _rows(counts)
        + findings(section.get("kinds", {}), GROUP_KINDS, group_case_words)
        + _image(
            folder,
            GROUPS_FILE,
            "Above, a band per member (in the order they were first assigned) with a lane "
            "per partition it owned, from its assigned callback to its revoked or lost one; "
            "below, each partition's committed offset by the time each ok commit returned. "
            "Faults shaded.",
        )
    )


def share_group_html(section: dict[str, Any], folder: Path) -> str:
    """Takes the share section. Returns its counts, its acquisition overlaps and other
    findings in words, and share-deliveries.svg."""
    if "error" in section:
        return f"<h3>Share group</h3><p>The share checks failed: {_e(section['error'])}</p>"
    acks, outcomes = section.get("acks", {}), section.get("outcomes", {})
    d = section.get("deliveries", {})
    applied = ", ".join(f"{v.get('ok', 0)} {kind}" for kind, v in acks.items())
    unknown = sum(v.get("unknown", 0) for v in acks.values())
    counts = [
        ("acknowledged sends", section.get("sends", {}).get("acknowledged", 0)),
        (
            "deliveries",
            f"{d.get('total', 0)} of {d.get('records', 0)} records, "
            f"{d.get('redeliveries', 0)} redeliveries, highest delivery count "
            f"{d.get('max_count', 0)} (limit {section.get('delivery_limit')})",
        ),
        ("acknowledgements applied", f"{applied}; {unknown} of unknown outcome"),
        (
            "records' outcomes",
            f"{outcomes.get('accepted', 0)} accepted, {outcomes.get('rejected', 0)} rejected, "
            f"{outcomes.get('archived-by-limit', 0)} archived by the limit, "
            f"{outcomes.get('maybe', 0)} maybe, {outcomes.get('open', 0)} open, "
            f"{outcomes.get('never-delivered', 0)} never delivered",
        ),
        ("final drain", "completed" if section.get("drained") else "none ended"),
    ]
    kinds = section.get("kinds", {})
    overlap = kinds.get("lock-overlap", {})
    if overlap.get("count"):
        overlaps = f"<p class=fail>acquisition overlaps: {overlap['count']}</p>" + _cases(
            "lock-overlap", overlap, share_case_words
        )
    else:
        overlaps = (
            "<p>No acquisition overlapped: no record was handed to a member while another "
            "held its lock.</p>"
        )
    others = {k: v for k, v in kinds.items() if k != "lock-overlap"}
    reset = section.get("allowed", {}).get("count-reset", {}).get("count", 0)
    allowed = (
        f"<p>count-reset (allowed: KIP-932 forgets an in-flight delivery when the "
        f"share-partition leader changes): {reset}</p>"
        if reset
        else ""
    )
    return (
        "<h3>Share group</h3>"
        + _rows(counts)
        + overlaps
        + findings(others, SHARE_KINDS, share_case_words)
        + allowed
        + _image(
            folder,
            SHARE_FILE,
            "Records by how many times the history saw them delivered, and by the highest "
            "delivery count the broker gave them; a count right of the dashed line is over "
            "the limit.",
        )
    )


def findings(
    kinds: dict[str, Any], meanings: dict[str, str], words: Callable[[str, Case], str]
) -> str:
    """Takes a section's kinds, what each means and a case's words. Returns a paragraph per
    kind found, its first cases in words, and one naming the kinds not found."""
    parts, clean = [], []
    for kind, found in kinds.items():
        if not found.get("count"):
            clean.append(kind)
            continue
        meaning = meanings.get(kind, kind)
        parts.append(f"<p class=fail><b>{_e(kind)}</b>: {found['count']} ({_e(meaning)})</p>")
        parts.append(_cases(kind, found, words))
    if clean:
        parts.append(f"<p>None found of: {_e(', '.join(clean))}.</p>")
    return "".join(parts)


def _cases(kind: str, found: dict[str, Any], words: Callable[[str, Case], str]) -> str:
    cases = found.get("cases", [])
    items = [f"<li>{_e(_safe_words(words, kind, c))}</li>" for c in cases[:CASES_SHOWN]]
    if (more := found.get("count", len(cases)) - min(len(cases), CASES_SHOWN)) > 0:
        items.append(f"<li>and {more} more (results.json)</li>")
    return "<ul>" + "".join(items) + "</ul>"


def _safe_words(words: Callable[[str, Case], str], kind: str, case: Case) -> str:
    # A case of another shape (an older results.json) as it is: the page must never fail.
    try:
        return words(kind, case)
    except Exception:
        return json.dumps(case, default=str)


def group_case_words(kind: str, c: Case) -> str:
    """Takes a group check's kind and case. Returns the case in a sentence."""
    p = f"Partition {c['partition']}"
    if kind == "double-ownership":
        return (
            f"{p}: {c['member']} was assigned it at {_s(c['assigned_at'])} (op "
            f"{c['assigned_in']}) while {c['owner']}, its owner since {_s(c['owner_since'])}, "
            f"revoked it only at {_s(c['ended_at'])} (op {c['ended_in']})."
        )
    if kind == "commit-regression":
        return (
            f"{p}: {c['member']}'s commit (op {c['index']}) set offset {c['offset']}, below "
            f"the {c['earlier_offset']} {c['earlier_member']} had committed (op "
            f"{c['earlier_index']}) before it began."
        )
    if kind == "takeover-skip":
        return (
            f"{p}: {c['member']}, assigned it at {_s(c['assigned_at'])} (op "
            f"{c['assigned_in']}), first read it at offset {c['first_offset']} (op "
            f"{c['fetched_in']}), above the committed {c['committed']} ({c['commit_member']}, "
            f"op {c['commit_index']}): offsets {c['committed']} to {c['first_offset'] - 1} "
            "were skipped."
        )
    if kind == "at-least-once":
        return (
            f"{p}: offset {c['offset']} (message {c['value']}) lies below the offset "
            f"{c['committed']} {c['commit_member']} committed (op {c['commit_index']}), yet "
            "no member's poll returned it."
        )
    return json.dumps(c, default=str)


def share_case_words(kind: str, c: Case) -> str:
    """Takes a share check's kind and case. Returns the case in a sentence."""
    record = "record {}/{}".format(*c["record"])
    if "first" in c and "second" in c:
        a, b = c["first"], c["second"]
        if kind == "lock-overlap":
            return (
                f"{record}: {a['member']} was handed it at {a['handed_s']} s (delivery "
                f"{a['count']}) and held its lock until its {a['ack']} was applied (asked at "
                f"{a['ack_sent_s']} s), yet {b['member']} was handed it at {b['handed_s']} s "
                f"(delivery {b['count']})."
            )
        return (
            f"{record}: {_delivery(a)}; then {_delivery(b)}."
            if kind != "delivered-after-accept"
            else f"{record}: {_delivery(a)}, applied; yet {_delivery(b)}."
        )
    if "delivery" in c:
        return f"{record}: {_delivery(c['delivery'])}."
    if kind == "stranded":
        return (
            f"{record} (message {c['message']}): delivery counts {c['counts']}, acks {c['acks']}."
        )
    return f"{record}: message {c.get('message', c.get('sent'))}."


def _delivery(d: Case) -> str:
    ack = f", {d['ack']}" if d.get("ack") else ""
    return f"{d['member']} was handed it at {d['handed_s']} s (delivery count {d['count']}{ack})"


def _s(ns: Any) -> str:
    return f"{ns / 1e9:.3f} s"


def _rows(rows: Sequence[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _image(folder: Path, name: str, caption: str) -> str:
    if not (folder / name).exists():
        return ""
    return f'<img src="{name}" alt="{name}"><p>{_e(caption)}</p>'


def _e(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else str(value))
