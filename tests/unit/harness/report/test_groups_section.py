"""report.html's Groups section (harness/report/groups_section.py, groups_plots.py): there
for a consumer group's run and a share group's, not for a plain queue run; the timeline
draws each member's ownership intervals where they belong; the findings are in words."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from checkers.groups.consumer_history import Callback, GroupHistory
from harness.report.groups_section import group_case_words, share_case_words
from harness.report.plots.groups import (
    GROUPS_FILE,
    SHARE_FILE,
    Ownership,
    delivery_histogram,
    draw_ownership,
    lane,
    ownership_intervals,
)
from harness.spec import TestSpec
from tests.support.browser import Browser, chromium
from tests.support.group_sim import GroupSimConfig, GroupSimulation
from tests.support.queue_sim import SimConfig, simulate
from tests.support.run_folders import fill_run
from tests.unit.checkers.groups.test_share import Poll, Share, clean
from workloads.options import QueueOptions

S = 1_000_000_000
SECTION = '<section id="groups"><h2>Groups</h2>'
GROUPED = QueueOptions(consumer_group=True)


def _run(folder: Path, spec: TestSpec, events: list[dict[str, Any]]) -> str:
    """Writes a run folder of events as `harness run` does (checks, plots, report).
    Returns its report.html."""
    folder.mkdir()
    fill_run(folder, spec, events, 0.0)
    return (folder / "report.html").read_text()


def _share_with_fault() -> Share:
    h = clean(drain=False)
    h.fault(2.5, 3.5)
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    return h


def test_the_section_is_there_for_a_group_run_with_its_timeline(tmp_path: Path) -> None:
    events = GroupSimulation(random.Random(6), GroupSimConfig(partitions=2)).run()
    spec = TestSpec(name="queue-group", workload="queue", nemesis=(), queue=GROUPED)
    page = _run(tmp_path / "group", spec, events)
    assert SECTION in page and "<h3>Consumer group</h3>" in page
    assert f'<img src="{GROUPS_FILE}"' in page and (tmp_path / "group" / GROUPS_FILE).exists()
    assert "None found of: double-ownership, commit-regression, takeover-skip" in page
    assert "Share group" not in page
    assert "<td>groups</td><td>VALID: " in page  # the summary under the badge counts it


def test_the_section_is_there_for_a_share_run_with_its_counts(tmp_path: Path) -> None:
    spec = TestSpec(name="share", workload="share", nemesis=("kill-leader",))
    page = _run(tmp_path / "share", spec, _share_with_fault().events())
    assert SECTION in page and "<h3>Share group</h3>" in page
    assert f'<img src="{SHARE_FILE}"' in page and (tmp_path / "share" / SHARE_FILE).exists()
    assert "No acquisition overlapped" in page
    assert "2 accepted, 1 rejected, 1 archived by the limit" in page
    assert "2 accept, 4 release, 1 reject; 0 of unknown outcome" in page
    assert "Consumer group" not in page
    assert "<td>share</td><td>VALID: " in page
    assert "the share group delivered 4 records" in page and "broke none of its" in page
    # Not an empty heading: the page says where the share checks' findings are.
    assert '<h2 id="anomalies">Anomalies</h2><p>None here: the Groups section' in page


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize("width", [1400, 800])
def test_in_chromium_the_section_shows_its_drawings_and_never_scrolls_sideways(
    tmp_path: Path, width: int
) -> None:
    group = GroupSimulation(random.Random(6), GroupSimConfig(partitions=2)).run()
    spec = TestSpec(name="queue-group", workload="queue", nemesis=(), queue=GROUPED)
    _run(tmp_path / "group", spec, group)
    spec = TestSpec(name="share", workload="share", nemesis=("kill-leader",))
    _run(tmp_path / "share", spec, _share_with_fault().events())
    with Browser(tmp_path / "profile", width, 900) as page:
        for run, drawing in (("group", GROUPS_FILE), ("share", SHARE_FILE)):
            page.open((tmp_path / run / "report.html").as_uri())
            shown = page.evaluate(
                f"(()=>{{const i=document.querySelector('img[src=\"{drawing}\"]');"
                "return [i.naturalWidth, i.getBoundingClientRect().right,"
                " document.getElementById('groups').textContent]})()"
            )
            assert shown[0] > 0 and shown[1] <= width, (run, shown[:2])  # loaded, fits
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            assert "None found of:" in shown[2]


def test_there_is_no_section_for_a_plain_queue_run(tmp_path: Path) -> None:
    events, _ = simulate(3, SimConfig())
    spec = TestSpec(name="queue", workload="queue", nemesis=())
    page = _run(tmp_path / "queue", spec, events)
    assert 'id="groups"' not in page and "Share group" not in page
    assert not (tmp_path / "queue" / GROUPS_FILE).exists()


def test_an_acquisition_overlap_is_listed_in_words(tmp_path: Path) -> None:
    h = clean()
    h.send(1, 2, 5)  # c4 holds it from 5.1 s until its accept is asked at 7 s; c5 gets it at 6.1
    h.poll(Poll(4, 5.0, [(1, 2, 5, 1)], ["accept"], ack_at=7.0))
    h.poll(Poll(5, 6.0, [(1, 2, 5, 2)], ["release"]))
    spec = TestSpec(name="share", workload="share", nemesis=())
    page = _run(tmp_path / "share", spec, h.events())
    assert "acquisition overlaps: 1" in page
    assert (
        "record 1/2: c4 was handed it at 5.1 s (delivery 1) and held its lock until its "
        "accept was applied (asked at 7.0 s), yet c5 was handed it at 6.1 s (delivery 2)."
    ) in page


def _group() -> GroupHistory:
    """m1 owns 0 and 1 from 1 s, revokes 1 at 3 s and loses 0 at 5 s; m2 is assigned 1 at
    3.5 s and never says it gave it up (its last op at 8 s)."""
    return GroupHistory(
        callbacks=[
            Callback("m1", "assigned", (0, 1), 1 * S, 0),
            Callback("m1", "revoked", (1,), 3 * S, 4),
            Callback("m2", "assigned", (1,), int(3.5 * S), 5),
            Callback("m1", "lost", (0,), 5 * S, 8),
            Callback("m3", "revoked", (0,), 6 * S, 9),  # never seen assigned: nothing
        ],
        last_seen={"m1": 5 * S, "m2": 8 * S},
    )


def test_ownership_intervals_end_at_a_revoke_a_loss_or_the_last_op() -> None:
    assert ownership_intervals(_group(), end=20.0) == [
        Ownership("m1", 0, 1.0, 5.0, "lost"),
        Ownership("m1", 1, 1.0, 3.0, "revoked"),
        Ownership("m2", 1, 3.5, 8.0, None),
    ]


def test_the_timeline_draws_each_members_intervals_in_its_band() -> None:
    ax = Figure().add_subplot()
    intervals = ownership_intervals(_group(), end=20.0)
    case = {"partition": 1, "member": "m2", "assigned_at": int(3.5 * S)}
    rows = draw_ownership(ax, intervals, partitions=2, two_owners=[case])
    assert rows == ["m1", "m2"]
    bars = {p.get_gid(): p for p in ax.patches}
    assert set(bars) == {"m1:0", "m1:1", "m2:1"}
    for o in intervals:
        bar = bars[f"{o.member}:{o.partition}"]
        assert (bar.get_x(), bar.get_width()) == pytest.approx((o.start, o.stop - o.start))
        y, height = lane(rows.index(o.member), o.partition, 2)
        assert (bar.get_y(), bar.get_height()) == pytest.approx((y, height))
        assert 0 <= bar.get_y() - rows.index(o.member) < 1  # inside its member's band
    assert bars["m2:1"].get_alpha() < 1 == bars["m1:1"].get_alpha()  # no revoke: faint
    lost, two = ax.collections
    assert lost.get_label().startswith("lost") and two.get_label().startswith("assigned")
    assert lost.get_offsets().tolist() == [[5.0, pytest.approx(sum(lane(0, 0, 2)))]]
    assert two.get_offsets().tolist() == [[3.5, pytest.approx(sum(lane(1, 1, 2)))]]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["m1", "m2"]


def test_the_delivery_histogram_counts_records_by_deliveries_and_by_count() -> None:
    from checkers.groups.share_history import read_share_history

    seen, counted = delivery_histogram(read_share_history(clean().events()))
    # r(0,0) once, r(1,0) once, r(0,1) twice, r(1,1) three times (counts 1, 2, 3).
    assert seen == {1: 2, 2: 1, 3: 1} and counted == {1: 2, 2: 1, 3: 1}


def test_the_cases_read_as_sentences() -> None:
    said = group_case_words(
        "double-ownership",
        {
            "partition": 2,
            "member": "p4",
            "assigned_at": int(3.5 * S),
            "assigned_in": 40,
            "owner": "p1",
            "owner_since": 1 * S,
            "ended_by": "revoked",
            "ended_at": 6 * S,
            "ended_in": 52,
        },
    )
    assert said == (
        "Partition 2: p4 was assigned it at 3.500 s (op 40) while p1, its owner since "
        "1.000 s, revoked it only at 6.000 s (op 52)."
    )
    delivery = {"member": "c1", "handed_s": 2.1, "count": 4, "ack": "release"}
    assert share_case_words("over-limit", {"record": [1, 7], "delivery": delivery}) == (
        "record 1/7: c1 was handed it at 2.1 s (delivery count 4, release)."
    )


def test_each_partitions_lane_is_readable_and_fewer_members_are_drawn_past_the_most() -> None:
    from harness.report.plots.groups import (
        LANE_FILL,
        LANE_MIN_IN,
        MEMBER_IN,
        TIMELINE_MAX_IN,
        member_band,
        members_shown,
    )

    for partitions in (1, 2, 8, 16, 64):
        band = member_band(partitions)
        assert band >= MEMBER_IN
        assert band * LANE_FILL / partitions >= LANE_MIN_IN - 1e-9  # was 0.03 in at 8
        shown = members_shown(200, partitions)
        assert shown >= 1 and (shown == 1 or shown * band <= TIMELINE_MAX_IN)
    assert members_shown(5, 8) == 5  # the real group run's 5 members over 8 partitions
    assert members_shown(40, 8) == int(TIMELINE_MAX_IN // member_band(8)) < 40
    # The timeline draws the members it was told to, the first assigned.
    ax = Figure().add_subplot()
    intervals = ownership_intervals(_group(), end=20.0)
    assert draw_ownership(ax, intervals, partitions=2, two_owners=[], most=1) == ["m1"]
    assert {p.get_gid() for p in ax.patches} == {"m1:0", "m1:1"}
