"""Consumer group checks on a queue history: no partition owned by two members at once,
committed offsets that never go backwards, takeovers that start at or before the last
commit, no acknowledged message below a commit left unpolled, and how far auto-commits reach.

The rules (the history as checkers/groups/consumer_history.py reads it):

- Ownership. A member owns a partition from its `assigned` callback to its `revoked` or
  `lost` callback (or its last op: its client closed then). Both protocols hand a
  partition over only after its owner gave it up: the classic eager protocol revokes
  every member's partitions before the rejoin that assigns any (KIP-62's JoinGroup waits
  for the members, each of which revokes first, librdkafka's on_revoke), and KIP-848's
  coordinator assigns a partition to a new owner only once the old owner acknowledged
  its revocation (the member epoch's reconciliation). So a `revoked` that comes after
  another member's `assigned` of the same partition is the protocol broken:
  `double-ownership`. A `lost` then is not: the coordinator fenced the old owner (its
  session expired) and may reassign at once; the zombie learns late, and its commits are
  refused. Such overlaps are counted (`fenced`), as are those whose old owner never said
  (`unended`: its client closed, or the run ended, first).
- Commits. Between two ok commit ops of the group, in real-time order (one completed
  before the other was invoked), a partition's committed offset never decreases: a
  member commits its position, which only grows while it holds the partition, and a
  member takes a partition over from the committed offset; a zombie's commit is refused
  (the generation or member epoch). `commit-regression`.
- Takeovers. A member assigned a partition starts reading it at the committed offset: its
  first poll's first offset there is at or below the highest offset of any commit (ok or
  info) invoked before that poll completed. Above it, the records between were skipped.
  `takeover-skip`.
- At least once. Every acknowledged message at an offset below an ok commit's offset was
  returned by some member's poll, unless the queue checker already counts it lost (Kafka
  lost it; no group could read it). `at-least-once`. At `auto.offset.reset=latest` a
  member starts a partition the group has no committed offset for at its log end, so
  until the partition's first commit every start may skip what was sent before it (a
  partition found late, or handed over before anyone committed it): what lies below the
  highest first offset of a read made before that commit is skipped by Kafka's own
  documentation, counted apart (`reset_skipped`), never as this kind.
- Auto-commit reach (a measurement, never an anomaly): see auto_commit_reach.

Every rule is judged in O(n log n) of the history or better: overlaps counted per
ownership, never pair by pair (checkers/groups/ownership.py), each takeover's first poll
and commit bound found by binary search and one sweep (checkers/groups/takeovers.py).

Result layout: {"valid", "kinds": {kind: {"count", "cases"}}, "members", "callbacks":
{assigned, revoked, lost}, "commits": {ok, fail, info, auto}, "committed": {partition:
highest ok offset}, "overlaps": {fenced, unended}, "takeovers": {judged, unjudged:
{reason: n}}, "auto_commit": auto_commit_reach's, or None}.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from checkers.groups.consumer_history import (
    Callback,
    Commit,
    Fetch,
    GroupHistory,
    by_member,
    read_group_history,
)
from checkers.groups.ownership import ownership_overlaps
from checkers.groups.takeovers import takeover_cases
from checkers.result import Result
from history import Event

Case = dict[str, Any]
CASES_KEPT = 20
KINDS = ("double-ownership", "commit-regression", "takeover-skip", "at-least-once")
REACH = ("ahead", "same-op", "returned", "behind", "nothing-returned")


def check_groups(
    events: Sequence[Event],
    lost: Collection[Any],
    auto_commit: bool,
    group: GroupHistory | None = None,
    from_latest: bool = False,
) -> Result:
    """Takes a queue history's events, the (partition, message) pairs the queue checker
    found lost (its lost_records), whether librdkafka committed, the events'
    GroupHistory if already read, and whether the group started new partitions at their
    log end (auto.offset.reset=latest). Returns the result laid out as the module
    docstring says."""
    group = group or read_group_history(events)
    overlaps = ownership_overlaps(group, CASES_KEPT)
    takeovers, unjudged = takeover_cases(group, auto_commit)
    cases = {
        "double-ownership": overlaps.cases(),
        "commit-regression": commit_regression_cases(group.commits),
        "takeover-skip": takeovers,
        "at-least-once": at_least_once_cases(group, {(p, m) for p, m in lost}),
    }
    reset_skipped = 0
    if from_latest:
        starts = latest_starts(group)
        kept = [c for c in cases["at-least-once"] if c["offset"] >= starts.get(c["partition"], -1)]
        reset_skipped = len(cases["at-least-once"]) - len(kept)
        cases["at-least-once"] = kept
    counts = {k: len(v) for k, v in cases.items()} | {"double-ownership": overlaps.ended["revoked"]}
    ended = overlaps.ended
    return {
        "valid": not any(counts.values()),
        "kinds": {k: {"count": counts[k], "cases": v[:CASES_KEPT]} for k, v in cases.items()},
        "members": len({c.member for c in group.callbacks} | set(group.last_seen)),
        "callbacks": dict(Counter(c.kind for c in group.callbacks)),
        "commits": _commit_counts(group.commits),
        "committed": {str(p): c.offsets[p] for p, c in sorted(highest_commits(group).items())},
        "overlaps": {"fenced": ended["lost"], "unended": ended[None]},
        "takeovers": {"judged": _judged(group, unjudged), "unjudged": unjudged},
        "auto_commit": auto_commit_reach(group) if auto_commit else None,
        "reset_skipped": reset_skipped,
    }


def latest_starts(group: GroupHistory) -> dict[int, int]:
    """Returns per partition the highest first offset of a member's read that completed
    before the partition's first ok commit did (every read, if none did): below it a
    group at auto.offset.reset=latest may have skipped by design."""
    first_commit: dict[int, int] = {}
    for c in group.commits:
        if c.outcome == "ok":
            for p in c.offsets:
                first_commit[p] = min(first_commit.get(p, c.completed), c.completed)
    starts: dict[int, int] = {}
    for f in group.fetches:
        if f.completed < first_commit.get(f.partition, f.completed + 1):
            starts[f.partition] = max(starts.get(f.partition, f.first), f.first)
    return starts


def commit_regression_cases(commits: list[Commit]) -> list[Case]:
    """Takes a group's commits. Returns each ok commit op below an earlier one's offset for a
    partition, in real-time order (the module docstring's commit rule, Kafka's fencing)."""
    ok = [c for c in commits if c.outcome == "ok" and not c.auto]
    done = sorted(ok, key=lambda c: c.completed)
    best: dict[int, tuple[int, Commit]] = {}
    cases: list[Case] = []
    passed = 0
    for later in sorted(ok, key=lambda c: c.invoked):
        while passed < len(done) and done[passed].completed < later.invoked:
            earlier = done[passed]
            for p, offset in earlier.offsets.items():
                if p not in best or offset > best[p][0]:
                    best[p] = (offset, earlier)
            passed += 1
        for p, offset in later.offsets.items():
            if p in best and offset < best[p][0]:
                cases.append(_regression(p, later, *best[p]))
    return cases


def _regression(partition: int, later: Commit, offset: int, earlier: Commit) -> Case:
    return {
        "partition": partition,
        "offset": later.offsets[partition],
        "index": later.index,
        "member": later.member,
        "earlier_offset": offset,
        "earlier_index": earlier.index,
        "earlier_member": earlier.member,
    }


def at_least_once_cases(group: GroupHistory, lost: set[tuple[Any, Any]]) -> list[Case]:
    """Takes a GroupHistory and the (partition, message) pairs the queue checker found
    lost, partitions spelled as the history named them. Returns each acknowledged message
    below an ok commit's offset that no member's poll returned (the module docstring's
    at-least-once rule: a group commits only what it was given), unless lost in its own
    partition: a loss of the same message elsewhere excuses nothing."""
    highest = highest_commits(group)
    cases: list[Case] = []
    for partition, offset, message in group.acked:
        commit = highest.get(partition)
        if commit is None or offset >= commit.offsets[partition]:
            continue
        spelled = group.names.get(partition, partition)
        if message in group.polled.get(partition, ()) or (spelled, message) in lost:
            continue
        cases.append(
            {
                "partition": partition,
                "offset": offset,
                "value": message,
                "committed": commit.offsets[partition],
                "commit_index": commit.index,
                "commit_member": commit.member,
            }
        )
    return sorted(cases, key=lambda c: (c["partition"], c["offset"]))


def highest_commits(group: GroupHistory) -> dict[int, Commit]:
    """Takes a GroupHistory. Returns per partition the ok commit (op or auto) of the
    highest offset."""
    highest: dict[int, Commit] = {}
    for c in group.commits:
        if c.outcome != "ok":
            continue
        for p, offset in c.offsets.items():
            if p not in highest or offset > highest[p].offsets[p]:
                highest[p] = c
    return highest


def auto_commit_reach(group: GroupHistory) -> dict[str, Any]:
    """Takes a GroupHistory. Returns, per ok auto-commit and partition, how its offset O
    compares with what the member's polls had returned there since it was assigned it.

    A measurement, never an anomaly: Kafka promises auto-commit only at-least-once
    (KIP-62, the consumer's javadoc: positions returned by the previous poll are committed
    in a later one), and the Bufstream analysis found the Java client commits the
    penultimate poll's positions. librdkafka stores an offset when it hands the record
    to the application and commits the stored ones every 5 s from its own thread, so a
    commit may cover records of the op still running. With H the highest offset returned
    by the member's earlier polls and H' with the op that served the report too:
    `ahead` O > H' + 1 (records never returned), `same-op` H + 1 < O <= H' + 1,
    `returned` O = H + 1, `behind` O <= H, `nothing-returned` (no poll since assigned)."""
    counts = dict.fromkeys(REACH, 0)
    ahead: list[Case] = []
    in_op = {(f.member, f.index, f.partition): f.last for f in group.fetches}
    reports = [c for c in group.commits if c.auto and c.outcome == "ok"]
    assigns = [c for c in group.callbacks if c.kind == "assigned"]
    items: list[Callback | Commit | Fetch] = [*assigns, *reports, *group.fetches]
    items.sort(key=lambda i: (i.index, _RANK[type(i).__name__]))
    for member, ordered in by_member(items):
        high: dict[int, int] = {}
        for item in ordered:
            if isinstance(item, Callback):
                for p in item.partitions:
                    high.pop(p, None)
            elif isinstance(item, Fetch):
                high[item.partition] = max(high.get(item.partition, -1), item.last)
            else:
                for p, offset in item.offsets.items():
                    reach = _reach(offset, high.get(p), in_op.get((member, item.index, p)))
                    counts[reach] += 1
                    if reach == "ahead" and len(ahead) < CASES_KEPT:
                        ahead.append(
                            {
                                "partition": p,
                                "offset": offset,
                                "member": member,
                                "index": item.index,
                            }
                        )
    return {"counts": counts, "ahead_cases": ahead}


_RANK = {"Callback": 0, "Commit": 1, "Fetch": 2}


def _reach(offset: int, before: int | None, during: int | None) -> str:
    if before is None and during is None:
        return "nothing-returned"
    upto = max(x for x in (before, during) if x is not None)
    if offset > upto + 1:
        return "ahead"
    if before is None or offset > before + 1:
        return "same-op"
    return "returned" if offset == before + 1 else "behind"


def _assigns(group: GroupHistory) -> list[Callback]:
    return [c for c in group.callbacks if c.kind == "assigned"]


def _judged(group: GroupHistory, unjudged: dict[str, int]) -> int:
    return sum(len(cb.partitions) for cb in _assigns(group)) - sum(unjudged.values())


def _commit_counts(commits: list[Commit]) -> dict[str, int]:
    counts = Counter("auto" if c.auto else c.outcome for c in commits)
    return {k: counts[k] for k in ("ok", "fail", "info", "auto")}


def group_lines(section: dict[str, Any]) -> list[str]:
    """Takes the groups section. Returns its counts and anomalies in a few lines."""
    if "error" in section:
        return [f"the group checks failed: {section['error']}"]
    commits, takeovers = section["commits"], section["takeovers"]
    lines = [
        f"groups: {section['members']} members; callbacks "
        + (", ".join(f"{n} {kind}" for kind, n in sorted(section["callbacks"].items())) or "none")
        + f"; commits {commits['ok']} ok, {commits['fail']} fail, {commits['info']} info"
        + (f", {commits['auto']} automatic" if commits["auto"] else "")
        + f"; takeovers {takeovers['judged']} judged"
    ]
    for kind, found in section["kinds"].items():
        if found["count"]:
            lines.append(f"groups {kind}: {found['count']} (first: {found['cases'][0]})")
    if section.get("reset_skipped"):
        lines.append(
            f"groups: {section['reset_skipped']} acknowledged sends below where a member "
            "started a partition before its first commit, skipped by auto.offset.reset=latest "
            "as Kafka documents (not counted)"
        )
    return lines
