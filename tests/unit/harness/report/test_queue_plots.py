"""Tests that the queue plots draw from a checked history: the lost-acks plot with fault
windows (one never healed) and an offsets plot with conflicts and losses marked."""

from __future__ import annotations

from pathlib import Path

from checkers.queue import checker as queue
from checkers.queue.reader import read_queue_history
from harness.report.plots.images import LOST_ACKS_FILE, offsets_file
from harness.report.plots.queue import lost_acks_plot, offsets_plot
from tests.support.queue_sim import SimConfig, simulate

SVG = b"<svg"


def test_both_plots_draw(tmp_path: Path) -> None:
    config = SimConfig(partitions=3, workers=4, ops=400, losses=5, conflicts=2)
    events, planted = simulate(3, config)
    result = queue.check(events)
    assert result["lost"] == len(planted.losses) == 5
    windows = [
        {
            "fault": "isr-shrink",
            "start": 0.1,
            "stop": 0.2,
            "steps": [{"step": "isr-shrunk", "time": 0.15}],
        },
        {"fault": "kill-leader", "start": 0.3, "stop": None},
    ]
    read = read_queue_history(events)
    drawn = [
        lost_acks_plot(read, result, windows, tmp_path / LOST_ACKS_FILE),
        offsets_plot(read, result, 0, tmp_path / offsets_file(0)),
        offsets_plot(read, result, 7, tmp_path / offsets_file(7)),  # no such partition
    ]
    for path in drawn:
        assert SVG in path.read_bytes()[:2000]
        assert path.stat().st_size > 5000
