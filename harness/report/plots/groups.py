"""The groups section's drawings: groups.svg for a consumer group's run (each member's
partitions over time, and each partition's committed offsets) and share-deliveries.svg
for a share group's (how many times each record was delivered, the delivery limit marked).

groups.svg is a time plot in the frame every time plot shares (harness/report/plots/axes.py:
the same x range, the faults as a strip of bands above and shaded faintly under the data);
share-deliveries.svg is a histogram. matplotlib is imported only to draw.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkers.groups import Commit, GroupHistory, ShareHistory
from harness.report.plots.images import GROUPS_FILE, SHARE_FILE, SMALL_FONT, save_figure

MAX_MEMBERS = 40
"""The members the timeline draws (the first assigned): a crash every few seconds makes
a member per crash, and a band each beyond this is too thin to read."""
MEMBER_IN, TIMELINE_MIN_IN, TIMELINE_MAX_IN, COMMITS_IN = 0.3, 1.5, 8.0, 2.1
"""Heights in inches: a member's band at least, the timeline at least and at most, the
commits' axes."""
LANE_MIN_IN = 0.08
"""A partition's lane at least (inches): 7 px in a browser, 6 at 800 px. A member's band
grows to hold its lanes (8 partitions in 0.3 in made lanes of 3 px), and past
TIMELINE_MAX_IN fewer members are drawn, the title saying how many."""
LANE_FILL = 0.8
"""The share of a member's band its partitions' lanes fill (the rest parts the bands)."""
OUTCOME_COLOURS = {"fail": "#d62728", "info": "#ff7f0e"}
TWO_OWNERS, FENCED = "#d62728", "black"
UNENDED_ALPHA = 0.4
LOG_ABOVE = 100
"""The most records in one bar above which the histogram's scale is logarithmic."""


@dataclass(frozen=True, slots=True)
class Ownership:
    """A member's ownership of a partition, in s since the test began: from its `assigned`
    callback to its `revoked` or `lost` one (`ended_by`), or, None, to its last op (its
    client closed, or the run ended, before it said)."""

    member: str
    partition: int
    start: float
    stop: float
    ended_by: str | None


def ownership_intervals(group: GroupHistory, end: float) -> list[Ownership]:
    """Takes a GroupHistory and the test's end (s). Returns every ownership interval, in
    the order they began; a revocation of a partition the member was never seen to be
    assigned (its assign served by an op that never completed) draws nothing."""
    held: dict[tuple[str, int], float] = {}
    found: list[Ownership] = []
    for cb in sorted(group.callbacks, key=lambda c: c.at):
        for p in cb.partitions:
            if cb.kind == "assigned":
                held.setdefault((cb.member, p), cb.at / 1e9)
            elif (start := held.pop((cb.member, p), None)) is not None:
                found.append(Ownership(cb.member, p, start, cb.at / 1e9, cb.kind))
    for (member, p), start in held.items():
        last = group.last_seen.get(member)
        stop = end if last is None else max(start, last / 1e9)
        found.append(Ownership(member, p, start, stop, None))
    return sorted(found, key=lambda o: (o.start, o.member, o.partition))


def member_rows(intervals: Sequence[Ownership]) -> list[str]:
    """Returns the members in the order of their first assignment: the timeline's rows,
    top down."""
    return list(dict.fromkeys(o.member for o in intervals))


def partition_colour(partition: int) -> Any:
    """Returns a partition's colour, the same in the timeline and the commits."""
    import matplotlib

    return matplotlib.colormaps["tab10" if partition < 10 else "tab20"](partition % 20)


def lane(row: int, partition: int, partitions: int) -> tuple[float, float]:
    """Takes a member's row, a partition and the partition count. Returns the partition's
    lane in the member's band: (bottom y, height), row 0 on top, partition 0 its top lane."""
    height = LANE_FILL / partitions
    return row + (1 - LANE_FILL) / 2 + partition * height, height


def member_band(partitions: int) -> float:
    """Takes the partition count. Returns a member's band's height (inches): MEMBER_IN, or
    more so that each partition's lane is LANE_MIN_IN high."""
    return max(MEMBER_IN, LANE_MIN_IN * partitions / LANE_FILL)


def members_shown(members: int, partitions: int) -> int:
    """Takes the member and partition counts. Returns how many members the timeline
    draws: all, but no more than MAX_MEMBERS nor than fit TIMELINE_MAX_IN (one at least)."""
    fit = max(1, int(TIMELINE_MAX_IN // member_band(partitions)))
    return min(members, MAX_MEMBERS, fit)


def draw_ownership(
    ax: Any,
    intervals: Sequence[Ownership],
    partitions: int,
    two_owners: Sequence[dict[str, Any]],
    most: int = MAX_MEMBERS,
) -> list[str]:
    """Takes an axis, ownership intervals, the partition count, the group checks'
    double-ownership cases and the most members to draw. Draws a band per member (the
    first `most`) with a bar per
    partition it owned (gid "member:partition"), a cross where a fenced owner learnt it
    lost the partition, and a red diamond where a member was assigned a partition another
    still owned. Returns the members drawn, top down."""
    from matplotlib.patches import Rectangle

    rows = member_rows(intervals)[:most]
    place = {m: i for i, m in enumerate(rows)}
    for o in intervals:
        if o.member not in place:
            continue
        y, height = lane(place[o.member], o.partition, partitions)
        width = max(o.stop - o.start, 1e-3)  # an ownership of no time still shows
        # Faint when no callback ended it: held until the client closed, or the run ended.
        alpha = 1.0 if o.ended_by else UNENDED_ALPHA
        colour = partition_colour(o.partition)
        bar = Rectangle((o.start, y), width, height, color=colour, alpha=alpha, lw=0)
        bar.set_gid(f"{o.member}:{o.partition}")
        ax.add_patch(bar)
    lost = [o for o in intervals if o.ended_by == "lost" and o.member in place]
    if lost:
        ys = [sum(lane(place[o.member], o.partition, partitions)) for o in lost]
        ax.scatter(
            [o.stop for o in lost],
            ys,
            marker="x",
            s=30,
            color=FENCED,
            zorder=3,
            label="lost (fenced owner)",
        )
    cases = [c for c in two_owners if c.get("member") in place]
    if cases:
        ys = [sum(lane(place[c["member"]], c["partition"], partitions)) for c in cases]
        xs = [c["assigned_at"] / 1e9 for c in cases]
        ax.scatter(
            xs,
            ys,
            marker="D",
            s=40,
            color=TWO_OWNERS,
            zorder=4,
            label="assigned while another owned it",
        )
    for row in range(1, len(rows)):  # where one member's band ends and the next begins
        ax.axhline(row, color="#dddddd", lw=0.8, zorder=0)
    ax.set_ylim(max(len(rows), 1), 0)
    ax.set_yticks([i + 0.5 for i in range(len(rows))], rows, fontsize=SMALL_FONT)
    ax.set_ylabel("member")
    return rows


def draw_commits(ax: Any, commits: Sequence[Commit]) -> None:
    """Takes an axis and a group's commits. Draws each partition's ok commits (ops and
    auto-commits) as a step line of the offset over the time each returned, and the
    offsets of commits that failed or may have landed as marks."""
    by_partition: dict[int, list[tuple[float, int]]] = {}
    for c in sorted(commits, key=lambda c: c.completed):
        if c.outcome == "ok":
            for p, offset in c.offsets.items():
                by_partition.setdefault(p, []).append((c.completed / 1e9, offset))
    for p, points in sorted(by_partition.items()):
        xs, ys = zip(*points, strict=True)
        ax.step(xs, ys, where="post", color=partition_colour(p), lw=1.2, marker=".", ms=3)
    for outcome, colour in OUTCOME_COLOURS.items():
        marks = [
            (c.completed / 1e9, offset)
            for c in commits
            if c.outcome == outcome
            for offset in c.offsets.values()
        ]
        if marks:
            xs, ys = zip(*marks, strict=True)
            ax.scatter(
                xs,
                ys,
                marker="x" if outcome == "fail" else "o",
                s=18,
                color=colour,
                label=f"commit {outcome} ({len(marks)})",
                zorder=3,
            )
    ax.set_ylabel("committed offset")


def groups_plot(
    group: GroupHistory,
    section: dict[str, Any],
    windows: Sequence[dict[str, Any]],
    path: Path,
    end: float,
    workload_end: float | None = None,
) -> Path:
    """Takes a consumer group's history as its check read it, its groups section, the
    fault windows (checkers.faults), a file, the test's end (s) and the workload's end. Draws the
    ownership timeline above the committed offsets, faults shaded. Returns the file."""
    from matplotlib.patches import Patch

    from harness.report.plots import axes as time_axes  # brings matplotlib (Agg): only when drawing

    intervals = ownership_intervals(group, end)
    partitions = 1 + max(
        [o.partition for o in intervals] + [p for c in group.commits for p in c.offsets],
        default=0,
    )
    members = len(member_rows(intervals))
    shown = members_shown(members, partitions)
    more = f" (the first {shown} of {members} members)" if members > shown else ""
    title = f"Consumer group: who owned which partition, and what was committed{more}"
    height = max(TIMELINE_MIN_IN, member_band(partitions) * shown)
    frame = time_axes.time_figure([height, COMMITS_IN], windows, end, title, workload_end)
    owners, committed = frame.axes
    cases = section.get("kinds", {}).get("double-ownership", {}).get("cases", [])
    draw_ownership(owners, intervals, partitions, cases, shown)
    draw_commits(committed, group.commits)
    used = sorted({o.partition for o in intervals} | {p for c in group.commits for p in c.offsets})
    handles = [Patch(color=partition_colour(p), label=f"partition {p}") for p in used]
    if any(o.ended_by is None for o in intervals):
        unended = "faint: no revoke seen"
        handles.append(Patch(color="grey", alpha=UNENDED_ALPHA, label=unended))
    time_axes.side_legend(owners, handles + owners.get_legend_handles_labels()[0])
    if committed.get_legend_handles_labels()[0]:
        time_axes.side_legend(committed)
    return time_axes.save(frame, path)


def delivery_histogram(share: ShareHistory) -> tuple[Counter[int], Counter[int]]:
    """Takes a ShareHistory. Returns, per record delivered, how many times the history saw
    it handed over, and the highest delivery count the broker gave it, each as a Counter
    of records by that number."""
    seen = Counter(len(found) for found in share.deliveries.values())
    counted = Counter(
        max(counts)
        for found in share.deliveries.values()
        if (counts := [d.count for d in found if d.count is not None])
    )
    return seen, counted


def share_plot(share: ShareHistory, section: dict[str, Any], path: Path) -> Path:
    """Takes a share history as its check read it, its share section and a file. Draws
    how many records were delivered once, twice, ... (as the history saw them, and by the
    broker's delivery count) with the section's delivery limit marked. Returns the file."""
    import matplotlib.pyplot as plt

    seen, counted = delivery_histogram(share)
    limit = int(section["delivery_limit"])
    fig, ax = plt.subplots(figsize=(8, 3.6))
    draw_deliveries(ax, seen, counted, limit)
    o = section.get("outcomes", {})
    ax.set_title(
        f"{sum(seen.values()):,} records delivered: {o.get('accepted', 0):,} accepted, "
        f"{o.get('rejected', 0):,} rejected, {o.get('archived-by-limit', 0):,} archived "
        "by the limit",
        fontsize=10,
    )
    return save_figure(fig, path, tight=True)


def draw_deliveries(ax: Any, seen: Counter[int], counted: Counter[int], limit: int) -> None:
    """Takes an axis, the records by deliveries seen and by highest delivery count, and the
    limit. Draws both as bars side by side and the limit as a dashed red line just right
    of it (a count beyond the line is over the limit)."""
    top = max([limit + 1, *seen, *counted])
    xs = range(1, top + 1)
    ax.bar(
        [x - 0.2 for x in xs],
        [seen[x] for x in xs],
        width=0.4,
        color="#1f77b4",
        label="deliveries the history saw",
    )
    ax.bar(
        [x + 0.2 for x in xs],
        [counted[x] for x in xs],
        width=0.4,
        color="#9467bd",
        label="highest delivery count",
    )
    ax.axvline(limit + 0.5, color="#d62728", ls="--", lw=1.2, label=f"delivery limit {limit}")
    ax.set_xticks(list(xs))
    ax.set_xlabel("deliveries of a record")
    ax.set_ylabel("records")
    if max([*seen.values(), *counted.values(), 0]) > LOG_ABOVE:  # the few redelivered show
        ax.set_yscale("symlog", linthresh=10)
    else:
        ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=SMALL_FONT, loc="upper right")


def draw_groups(
    folder: Path,
    results: dict[str, Any],
    group: GroupHistory | None,
    share: ShareHistory | None,
    end: float,
    workload_end: float | None = None,
) -> list[Path]:
    """Takes a run folder, its results, the consumer group's and the share group's
    histories as the checks read them (None: not read), the test's end (s) and the
    workload's end (axes.workload_end). Draws
    groups.svg for a consumer group's run and share-deliveries.svg for a share group's
    (each only when its section was checked). Returns the files written."""
    windows = results.get("nemesis", {}).get("windows", [])
    drawn = []
    groups_section, share_section = results.get("groups"), results.get("share")
    if group is not None and isinstance(groups_section, dict) and "error" not in groups_section:
        path = folder / GROUPS_FILE
        drawn.append(groups_plot(group, groups_section, windows, path, end, workload_end))
    if share is not None and isinstance(share_section, dict) and "error" not in share_section:
        drawn.append(share_plot(share, share_section, folder / SHARE_FILE))
    return drawn
