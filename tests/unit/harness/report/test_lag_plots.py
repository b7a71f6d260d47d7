"""Tests that the realtime lag and unseen plots draw from a checked queue history, with
fault windows (one of steps, one never healed), and that report.html shows both."""

from __future__ import annotations

import re
from pathlib import Path

from checkers.queue import checker as queue
from checkers.queue.lag import lag_points
from checkers.queue.reader import read_queue_history
from harness.report.page import write_report
from harness.report.plots.images import LAG_FILE, UNSEEN_FILE
from harness.report.plots.lag import draw_lag, unseen_plot
from tests.support.queue_sim import SimConfig, simulate

SVG = b"<svg"
WINDOWS = [
    {
        "fault": "isr-shrink",
        "start": 0.1,
        "stop": 0.2,
        "steps": [{"step": "isr-shrunk", "time": 0.15}],
    },
    {"fault": "kill-leader", "start": 0.3, "stop": None},
]


def test_both_plots_draw_and_the_report_shows_them(tmp_path: Path) -> None:
    events, _ = simulate(5, SimConfig(partitions=3, workers=4, ops=300, losses=2))
    result = queue.check(events)
    assert result["unseen_over_time"], "the simulation should leave sends unseen for a while"
    drawn = [
        draw_lag(lag_points(events, read_queue_history(events)), WINDOWS, tmp_path / LAG_FILE),
        unseen_plot(result, WINDOWS, tmp_path / UNSEEN_FILE),
    ]
    for path in drawn:
        assert SVG in path.read_bytes()[:2000]
        assert path.stat().st_size > 5000
    report = write_report(tmp_path, {"spec": {"name": "q"}}, {"valid": True, "queue": result}, {})
    images = re.findall(r'<img src="([^"]+)"', report.read_text(encoding="utf-8"))
    assert LAG_FILE in images and UNSEEN_FILE in images


def test_plots_of_nothing_still_draw(tmp_path: Path) -> None:
    assert SVG in draw_lag([], [], tmp_path / LAG_FILE).read_bytes()[:2000]
    assert SVG in unseen_plot({}, WINDOWS, tmp_path / UNSEEN_FILE).read_bytes()[:2000]
    report = write_report(tmp_path, {}, {"valid": True}, {})
    # No queue section: the files are listed, not shown.
    assert not re.findall(r'<img src="[^"]+"', report.read_text(encoding="utf-8"))


def test_a_queue_run_says_its_counts_once_in_the_summary(tmp_path: Path) -> None:
    events, _ = simulate(5, SimConfig(partitions=3, workers=4, ops=100))
    result = queue.check(events)
    lost_acks = {"valid": True, "ack_count": result["acknowledged"], "lost_count": 0}
    results = {"valid": True, "queue": result, "lost-acks": lost_acks}
    page = write_report(tmp_path, {"spec": {"name": "q"}}, results, {}).read_text()
    assert "<td>queue</td>" in page and "<td>lost-acks</td>" not in page
    alone = write_report(tmp_path, {}, {"valid": True, "lost-acks": lost_acks}, {}).read_text()
    assert "<td>lost-acks</td>" in alone
