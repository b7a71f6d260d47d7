"""Tests that a time plot tells the workload apart from the final phase after it: a dashed
line at the workload's end, the faults' shading over the data stopping there, their bands
faded past it, the rest shaded grey and named; and that the rate plot draws many lost
sends as a count per second, a few one by one."""

from __future__ import annotations

from typing import Any

import pytest
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle, StepPatch

from harness.report.plots.axes import (
    AFTER_ALPHA,
    FINAL_WORDS,
    FINAL_WORDS_BEFORE,
    Frame,
    time_figure,
    workload_end,
)
from harness.report.plots.colours import fault_colour
from harness.report.plots.marks import COUNT_ABOVE, LOST, Mark, per_second
from harness.report.plots.perf import rate_figure

# kv-valid's real run: a 20 s workload, its partition healed at 30.3 s, the final reads
# done at 40.4 s.
WINDOW: dict[str, Any] = {"fault": "partition-leader", "start": 10.0, "stop": 30.3}


def _close(frame: Frame) -> None:
    import matplotlib.pyplot as plt

    plt.close(frame.fig)


def test_the_workload_ends_at_its_time_limit_and_a_cut_short_one_has_no_final_phase() -> None:
    done = {"planned_s": 20.0, "ran_s": 29.874, "complete": True}  # ops in flight returned
    assert workload_end({"duration": done}) == 20.0
    # Interrupted: no final phase ran, the plots end where the workload stopped.
    cut = {"planned_s": 60.0, "ran_s": 20.4, "complete": False, "reason": "interrupted"}
    assert workload_end({"duration": cut}) is None
    assert workload_end({"valid": True}) is None  # a history checked alone: not known


def test_a_fault_healed_in_the_final_phase_is_shaded_only_over_the_workload() -> None:
    frame = time_figure([2.0], [WINDOW], 40.4, "t", workload_end=20.0)
    try:
        assert frame.workload_end == 20.0
        (ax,) = frame.axes
        lines = [line.get_xdata()[0] for line in ax.get_lines()]
        assert lines == [20.0]  # the dashed line at the workload's end
        fault = [p for p in ax.patches if _is(p, fault_colour("partition-leader"))]
        assert [_x_range(p) for p in fault] == [pytest.approx((10.0, 20.0))]
        final = [p for p in ax.patches if _is(p, "#000000")]
        assert [_x_range(p) for p in final] == [pytest.approx((20.0, 40.4))]
        assert [t.get_text() for t in ax.texts] == [FINAL_WORDS]
        # The strip keeps the fault in force until its heal, faded past the workload.
        assert frame.strip is not None
        bands = [p for p in frame.strip.patches if isinstance(p, Rectangle)]
        assert [(b.get_x(), b.get_x() + b.get_width()) for b in bands] == [
            pytest.approx((10.0, 20.0)),
            pytest.approx((20.0, 30.3)),
        ]
        assert [b.get_alpha() for b in bands] == [1.0, AFTER_ALPHA]
    finally:
        _close(frame)


def test_a_narrow_final_phase_is_named_left_of_its_line_and_none_is_drawn_without_one() -> None:
    frame = time_figure([2.0], [], 21.0, "t", workload_end=20.0)
    try:
        assert [t.get_text() for t in frame.axes[0].texts] == [FINAL_WORDS_BEFORE]
        assert frame.axes[0].texts[0].get_ha() == "right"
    finally:
        _close(frame)
    for finished in (None, 21.0, 30.0):  # unknown, or no final phase inside the plot
        frame = time_figure([2.0], [WINDOW], 21.0, "t", workload_end=finished)
        try:
            assert frame.workload_end is None
            assert not frame.axes[0].texts and not frame.axes[0].get_lines()
        finally:
            _close(frame)


def test_many_lost_sends_are_a_count_per_second_on_the_rate_plot() -> None:
    times = [0.1 * i for i in range(406)]  # 406 sends over 40.6 s, 10 a second
    many = [Mark(LOST, t, 5.0) for t in times]
    assert len(many) > COUNT_ABOVE
    frame = rate_figure([], [], end=41.0, marks=many)
    try:
        (ax,) = frame.axes
        steps = [p for p in ax.patches if isinstance(p, StepPatch)]
        assert steps, "drawn as a count per second"
        counts = steps[0].get_data().values
        assert list(counts) == per_second(times) and sum(counts) == 406
        assert not [c for c in ax.collections if c.get_label().startswith(LOST)]
        assert not ax.collections or all(len(c.get_offsets()) < 406 for c in ax.collections)
        assert ax.get_ylim()[1] >= max(counts)  # the step is not cut off at the top
        assert steps[0].get_label().startswith(f"{LOST}: 406")  # its legend entry
    finally:
        _close(frame)
    few = [Mark(LOST, t, 5.0) for t in times[:COUNT_ABOVE]]
    frame = rate_figure([], [], end=41.0, marks=few)
    try:
        (drawn,) = [c for c in frame.axes[0].collections if isinstance(c, PathCollection)]
        assert len(drawn.get_offsets()) == COUNT_ABOVE  # one mark each
        assert not [p for p in frame.axes[0].patches if isinstance(p, StepPatch)]
    finally:
        _close(frame)


def test_per_second_counts_as_the_rate_plot_buckets() -> None:
    assert per_second([0.2, 0.9, 1.0, 3.5]) == [2, 1, 0, 1]
    assert per_second([]) == [0]


def _is(patch: Any, colour: str) -> bool:
    from matplotlib.colors import to_rgb

    return tuple(patch.get_facecolor()[:3]) == pytest.approx(to_rgb(colour))


def _x_range(patch: Any) -> tuple[float, float]:
    # An axvspan's corners in data x (its y is in axes fractions).
    xs = [x for x, _ in patch.get_patch_transform().transform(patch.get_path().vertices)]
    return (min(xs), max(xs))
