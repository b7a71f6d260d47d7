"""Tests the plots' one image format: every plot file is named in it, a figure is written
as a vector image with no date in it, a dense scatter becomes a picture inside it while
its text stays text, and no text of a time plot is smaller than SMALL_FONT - 1."""

from __future__ import annotations

import random
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from checkers import perf
from harness.report.plots import images
from harness.report.plots.images import (
    IMAGE,
    RASTER_ABOVE,
    RUN_PLOTS,
    SMALL_FONT,
    TREND_PLOTS,
    offsets_file,
    save_figure,
)
from harness.report.plots.marks import ALLOWED_CYCLE, CYCLE, LOST, NONLINEAR, Mark
from harness.report.plots.perf import latency_figure, rate_figure
from tests.support.queue_sim import SimConfig, simulate

WINDOWS = [
    {"fault": "isr-shrink", "start": 0.1, "stop": 0.2, "steps": [{"step": "x", "time": 0.15}]},
    {"fault": "kill-leader", "start": 0.3, "stop": None},
]


def test_every_plot_file_is_named_in_the_one_format() -> None:
    named = [getattr(images, n) for n in dir(images) if n.endswith("_FILE")]
    assert len(named) == 8
    for name in [*named, *RUN_PLOTS, *TREND_PLOTS, images.OFFSETS_GLOB, offsets_file(3)]:
        assert name.endswith(IMAGE), name
    assert offsets_file(3) == f"offsets-3{IMAGE}"


def _scatter(points: int) -> Figure:
    fig, ax = plt.subplots(figsize=(4, 3))
    rng = random.Random(points)
    ax.scatter([rng.random() for _ in range(points)], [rng.random() for _ in range(points)])
    ax.set_title("a title")
    return fig


def test_a_figure_is_a_vector_image_with_no_date_the_same_each_time(tmp_path: Path) -> None:
    first = save_figure(_scatter(50), tmp_path / f"a{IMAGE}").read_bytes()
    again = save_figure(_scatter(50), tmp_path / f"a{IMAGE}").read_bytes()
    assert b"<svg" in first[:2000] and b"<image" not in first
    assert b"<dc:date>" not in first
    assert first == again


@pytest.mark.parametrize("points", [RASTER_ABOVE - 10, RASTER_ABOVE + 10])
def test_only_dense_axes_become_a_picture_and_the_text_stays_vector(
    tmp_path: Path, points: int
) -> None:
    body = save_figure(_scatter(points), tmp_path / f"s{IMAGE}").read_bytes()
    pictures = body.count(b"<image")
    assert pictures == (1 if points > RASTER_ABOVE else 0)
    # The title's glyphs are drawn as paths (matplotlib's default for SVG text): still
    # sharp at any width, never part of the picture.
    assert b'id="text_' in body


@pytest.mark.parametrize("draw", [latency_figure, rate_figure])
def test_no_text_of_a_time_plot_is_smaller_than_the_smallest_size(draw: object) -> None:
    events, _ = simulate(1, SimConfig(ops=120))
    frame = draw(perf.samples(events), WINDOWS, end=1.0)  # type: ignore[operator]
    try:
        texts = [t for t in frame.fig.findobj(Text) if t.get_text().strip()]
        assert texts
        small = [
            (t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < SMALL_FONT - 1
        ]
        assert small == []
    finally:
        plt.close(frame.fig)


def test_every_legend_of_a_time_plot_fits_in_its_figure() -> None:
    events, _ = simulate(1, SimConfig(ops=120))
    samples = perf.samples(events)
    marks = [
        Mark(NONLINEAR, 0.2, 5.0),
        Mark(ALLOWED_CYCLE, 0.3, 5.0, "G0-realtime"),
        Mark(ALLOWED_CYCLE, 0.4, 5.0, "G0-process"),
        Mark(CYCLE, 0.5, 5.0, "G1c"),
        Mark(LOST, 0.6, 5.0),
    ]
    recovered = [{"start": 0.1, "new_leader_s": 0.1, "first_ok_s": 0.2}]
    frames = [
        latency_figure(samples, WINDOWS, end=1.0, marks=marks),
        rate_figure(samples, WINDOWS, recovered, end=1.0, marks=marks),
    ]
    try:
        for frame in frames:
            renderer = frame.fig.canvas.get_renderer()  # type: ignore[attr-defined]
            legends = [*frame.fig.legends, *(a.get_legend() for a in frame.axes)]
            for legend in [lg for lg in legends if lg is not None]:
                box = legend.get_window_extent(renderer)
                assert box.x0 >= 0 and box.x1 <= frame.fig.bbox.x1, [
                    t.get_text() for t in legend.get_texts()
                ]
    finally:
        for frame in frames:
            plt.close(frame.fig)
