"""Tests the frame every time plot shares (one colour per fault kind, a strip of bands with
the names in a legend, x from 0 to the test's end), the anomalies marked at their times on
latency and rate, and offsets plots drawn only for partitions with anomalies, zoomed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.patches import Rectangle

from checkers import perf
from checkers.queue import checker as queue
from checkers.queue.reader import read_queue_history
from checkers.registry import Reading
from harness.report.plots.axes import Frame, run_end
from harness.report.plots.colours import FAULT_COLOURS, fault_colour
from harness.report.plots.images import (
    LATENCY_FILE,
    LOST_ACKS_FILE,
    OFFSETS_GLOB,
    RATE_FILE,
    offsets_file,
)
from harness.report.plots.marks import LOST, NONLINEAR, Mark, anomaly_marks
from harness.report.plots.perf import OUTCOME_COLOURS, latency_figure, rate_figure
from harness.report.plots.queue import anomaly_offsets, case_offsets, zoom
from harness.report.queue_section import offsets_line
from harness.run.verdict import RunChecked, write_outputs
from history.core import load
from nemesis.names import NEMESES
from tests.support.queue_sim import SimConfig, simulate, write_jsonl

WINDOWS: list[dict[str, Any]] = [
    {
        "fault": "isr-shrink",
        "start": 0.1,
        "stop": 0.2,
        "steps": [{"step": "isr-shrunk", "time": 0.15}, {"step": "killed", "time": 0.18}],
    },
    {"fault": "partition-brokers-from-controllers", "start": 0.3, "stop": None},
]


def _close(frame: Frame) -> None:
    import matplotlib.pyplot as plt

    plt.close(frame.fig)


def test_every_fault_has_a_colour_of_its_own_never_an_outcomes() -> None:
    assert set(NEMESES) <= set(FAULT_COLOURS)
    colours = [c.lower() for c in FAULT_COLOURS.values()]
    assert len(set(colours)) == len(colours)
    assert not set(colours) & {c.lower() for c in OUTCOME_COLOURS.values()}
    # A fault's colour is its own, whatever else the run injected.
    assert fault_colour("kill-leader") == FAULT_COLOURS["kill-leader"]
    assert fault_colour("something-older") not in colours


@pytest.mark.parametrize("draw", [latency_figure, rate_figure])
def test_a_time_plot_spans_the_test_with_faults_in_a_strip_named_in_a_legend(draw: Any) -> None:
    events, _ = simulate(1, SimConfig(ops=120))
    end = run_end(events, WINDOWS) + 2.0  # the final phase may run on after the last op
    frame = draw(perf.samples(events), WINDOWS, end=end)
    try:
        for ax in [*frame.axes, frame.strip]:
            assert ax is not None and ax.get_xlim() == (0.0, end)
        assert frame.strip is not None
        bands = [p for p in frame.strip.patches if isinstance(p, Rectangle)]
        assert [b.get_x() for b in bands] == [0.1, 0.3]
        assert bands[1].get_x() + bands[1].get_width() == pytest.approx(end)  # never healed
        assert [b.get_facecolor()[:3] for b in bands] == [
            pytest.approx(_rgb(FAULT_COLOURS[w["fault"]])) for w in WINDOWS
        ]
        (legend,) = frame.fig.legends
        names = [t.get_text() for t in legend.get_texts()]
        assert names == ["isr-shrink", "partition-brokers-from-controllers (never healed)"]
        # No word over the data: the fault names are in the legend, the steps numbered in
        # the strip and named once above it.
        assert not frame.axes[0].texts
        said = " ".join(t.get_text() for t in frame.fig.texts)
        assert "1 isr-shrunk, 2 killed" in said
    finally:
        _close(frame)


def test_time_plots_share_their_left_and_right_edges() -> None:
    events, _ = simulate(2, SimConfig(ops=60))
    samples = perf.samples(events)
    frames = [latency_figure(samples, WINDOWS, 3.0), rate_figure(samples, [], end=3.0)]
    try:
        edges = {(f.axes[0].get_position().x0, f.axes[0].get_position().x1) for f in frames}
        widths = {f.fig.get_figwidth() for f in frames}
        assert len(edges) == 1 and len(widths) == 1
    finally:
        for f in frames:
            _close(f)


def _checked(events: list[dict[str, Any]], results: dict[str, Any]) -> RunChecked:
    """Returns a queue run's results with what its checks read of events."""
    reading = Reading(queue=read_queue_history(events), samples=perf.samples(events))
    return RunChecked(results, reading, [])


def test_lost_sends_are_marked_at_their_invocation_on_latency_and_rate() -> None:
    events, planted = simulate(3, SimConfig(partitions=3, ops=400, losses=4))
    result = queue.check(events)
    assert result["lost"] == len(planted.losses) > 0
    marks = anomaly_marks({"queue": result}, events, read_queue_history(events))
    sends = {
        e["value"]: e["time"] / 1e9
        for e in events
        if e.get("f") == "send" and e["type"] == "invoke"
    }
    invoked = sorted(sends[v] for v in result["lost_messages"] if v in sends)
    assert [m.time for m in marks if m.kind == LOST] == pytest.approx(invoked)
    samples = perf.samples(events)
    for draw in (latency_figure, rate_figure):
        frame = draw(samples, [], end=run_end(events), marks=marks)
        try:
            (drawn,) = [c for c in frame.axes[0].collections if c.get_label().startswith(LOST)]
            assert drawn.get_label() == f"{LOST}: {len(invoked)}"
            assert sorted(drawn.get_offsets()[:, 0]) == pytest.approx(invoked)
        finally:
            _close(frame)


def test_the_failing_op_of_a_non_linearizable_key_is_ringed_at_its_latency() -> None:
    op = {"index": 7, "f": "get", "call": 2_500_000_000, "ret": 2_520_000_000}
    results = {"linearizable": {"failures": [{"key": 0, "valid": False, "op": op}]}}
    (mark,) = anomaly_marks(results, [], None)
    assert mark == Mark(NONLINEAR, 2.5, 20.0)
    frame = latency_figure([], [], 4.0, [mark])
    try:
        (drawn,) = frame.axes[0].collections
        assert drawn.get_offsets().tolist() == [[2.5, 20.0]]
    finally:
        _close(frame)


def test_a_cycle_is_marked_at_its_first_transaction() -> None:
    events = [
        {"index": 0, "process": 0, "type": "invoke", "f": "txn", "value": [], "time": 10**9},
        {"index": 1, "process": 1, "type": "invoke", "f": "txn", "value": [], "time": 2 * 10**9},
        {"index": 2, "process": 0, "type": "ok", "f": "txn", "value": [], "time": 3 * 10**9},
        {"index": 3, "process": 1, "type": "ok", "f": "txn", "value": [], "time": 4 * 10**9},
    ]
    kinds = {"G1c": {"count": 1, "invalidating": True, "cases": [{"indexes": [1, 0]}]}}
    (mark,) = anomaly_marks({"queue": {"kinds": kinds}}, events, read_queue_history([]))
    assert (mark.time, mark.latency_ms, mark.found_as) == (1.0, 2000.0, "G1c")


def test_a_run_without_anomalies_draws_no_offsets_plot(tmp_path: Path) -> None:
    events, _ = simulate(4, SimConfig(partitions=3, ops=200))
    result = queue.check(events)
    assert result["valid"] is True and anomaly_offsets(read_queue_history(events), result) == {}
    write_jsonl(events, tmp_path / "history.jsonl")
    results = {"valid": True, "queue": result}
    report = write_outputs(
        tmp_path, load(tmp_path / "history.jsonl"), {}, _checked(events, results)
    )
    assert (tmp_path / LATENCY_FILE).exists() and not (tmp_path / LOST_ACKS_FILE).exists()
    assert not list(tmp_path.glob(OFFSETS_GLOB))
    page = report.read_text(encoding="utf-8")
    assert "none of the 3 partitions had an anomaly" in page
    acked = f"{result['acknowledged']:,}"
    assert f"{LOST_ACKS_FILE} not drawn: none of the {acked} acknowledged sends was lost." in page


def test_anomalies_that_cannot_be_timed_cost_the_plots_only_their_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> None:
        raise ValueError("no times")

    monkeypatch.setattr("harness.report.plots.marks.anomaly_marks", broken)
    events, _ = simulate(6, SimConfig(partitions=2, ops=100, losses=1))
    write_jsonl(events, tmp_path / "history.jsonl")
    results = {"queue": queue.check(events)}
    write_outputs(tmp_path, load(tmp_path / "history.jsonl"), {}, _checked(events, results))
    assert (tmp_path / LATENCY_FILE).exists() and (tmp_path / RATE_FILE).exists()


def test_offsets_plots_only_for_partitions_with_anomalies_zoomed_around_them(
    tmp_path: Path,
) -> None:
    events, _ = simulate(5, SimConfig(partitions=4, ops=500, losses=1))
    result = queue.check(events)
    found = anomaly_offsets(read_queue_history(events), result)
    lost = [c for c in result["kinds"]["lost-write"]["cases"]]
    assert found == {c["partition"]: [c["offset"]] for c in lost}
    write_jsonl(events, tmp_path / "history.jsonl")
    checked = _checked(events, {"queue": result})
    report = write_outputs(tmp_path, load(tmp_path / "history.jsonl"), {}, checked)
    drawn = sorted(p.name for p in tmp_path.glob(OFFSETS_GLOB))
    assert drawn == [offsets_file(p) for p in sorted(found)]
    assert offsets_line(result, len(drawn)) in report.read_text(encoding="utf-8")
    assert "the other 3 had none and are not drawn" in offsets_line(result, 1)
    offset = lost[0]["offset"]
    assert zoom([offset]) == (max(0, offset - 10), offset + 10)
    assert zoom([100, 200]) == (75, 225)


def test_the_offsets_of_every_case_shape() -> None:
    cases = [
        {"partition": 1, "prior_offset": 3, "offset": 5, "skipped": [4]},
        {
            "partition": 2,
            "positions": [[2, 0], [3, 1]],
            "observed": [{"partition": 2, "offset": 0}],
        },
        {"partition": 6, "offsets": [405, 407], "skipped": [{"offset": 406, "value": 1}]},
        {"indexes": [1, 2], "steps": [{"partition": 1, "offsets": [595, 596]}]},
    ]
    assert [sorted(case_offsets(c)) for c in cases] == [
        [(1, 3), (1, 4), (1, 5)],
        [(2, 0), (2, 0), (3, 1)],
        [(6, 405), (6, 406), (6, 407)],
        [(1, 595), (1, 596)],
    ]


def _rgb(colour: str) -> tuple[float, float, float]:
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return r, g, b
