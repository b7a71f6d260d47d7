"""Tests the counterexample viewer's layout: compressed time keeps the order of events,
every label fits its box and no two labels overlap, the linearization runs left to
right, faults show only where they overlap, and a big counterexample is capped."""

from __future__ import annotations

from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

import pytest

from harness.report.counterexamples.layout import BOX_H, FAULT_H, MAX_OPS, PAD, layout, text_px
from harness.report.counterexamples.viewer import write_html
from tests.support.viewer_cases import WINDOWS, made_up_failure, register_failure

Box = tuple[float, float, float, float]  # left, top, right, bottom


def label_boxes(drawn: dict[str, Any]) -> list[Box]:
    """Returns the box of every label the viewer draws, as its script places them."""
    boxes = [
        (o["x0"] + PAD, o["y"], o["x0"] + PAD + text_px(o["label"]), o["y"] + BOX_H)
        for o in drawn["ops"]
    ]
    boxes += [
        (
            f["x0"] + PAD,
            f["row"] * FAULT_H + 2,
            f["x0"] + PAD + text_px(f["label"]),
            (f["row"] + 1) * FAULT_H - 2,
        )
        for f in drawn["faults"]
    ]
    y = drawn["axis_y"] + 5
    boxes += [
        (t["x"] - text_px(t["label"]) / 2, y, t["x"] + text_px(t["label"]) / 2, y + 14)
        for t in drawn["ticks"]
        if t["label"]
    ]
    return boxes


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


CASES = [
    register_failure(),
    made_up_failure(12, 1),
    made_up_failure(30, 2),
    made_up_failure(300, 3),
]


@pytest.mark.parametrize("failure", CASES)
def test_compressed_time_keeps_the_order_of_calls_and_returns(failure: dict[str, Any]) -> None:
    drawn = layout(failure, WINDOWS)
    ops = {o["index"]: o for o in drawn["ops"]}
    events = sorted((o["call_s"], o["x0"]) for o in ops.values())
    events += [(o["ret_s"], o["x1"]) for o in ops.values() if o["ret_s"] is not None]
    events.sort()
    for (t1, x1), (t2, x2) in pairwise(events):
        assert x1 < x2 if t1 < t2 else x1 == x2, (t1, t2)
    assert all(o["x0"] < o["x1"] for o in ops.values())


@pytest.mark.parametrize("failure", CASES)
def test_every_label_fits_its_box_and_no_two_labels_overlap(failure: dict[str, Any]) -> None:
    drawn = layout(failure, WINDOWS)
    for op in drawn["ops"]:
        assert op["x0"] + 2 * PAD + text_px(op["label"]) <= op["x1"] + 1e-6, op
    boxes = label_boxes(drawn)
    clashes = [(a, b) for a, b in combinations(boxes, 2) if overlap(a, b)]
    assert not clashes, clashes[:3]


@pytest.mark.parametrize("failure", CASES)
def test_the_linearization_runs_left_to_right_through_its_ops(failure: dict[str, Any]) -> None:
    drawn = layout(failure, WINDOWS)
    ops = {o["index"]: o for o in drawn["ops"]}
    xs = [p["x"] for p in drawn["lin"]]
    assert xs == sorted(xs) and len(xs) > 0
    for point in drawn["lin"]:
        box = ops[point["index"]]
        assert box["x0"] <= point["x"] <= box["x1"] + 3  # past it only at equal times
        assert ops[point["index"]]["role"] == "prefix"


def test_the_prefix_ops_carry_their_position_and_the_state_after_them() -> None:
    drawn = layout(register_failure(), WINDOWS)
    by_index = {o["index"]: o for o in drawn["ops"]}
    assert by_index[6]["role"] == "failing" and by_index[6]["lin"] is None
    assert [(by_index[i]["lin"], by_index[i]["state"]) for i in (0, 2, 5)] == [
        (1, "1"),
        (3, "2"),
        (5, "4"),
    ]
    assert by_index[3]["ret_s"] is None and by_index[3]["x1"] == max(o["x1"] for o in drawn["ops"])
    assert by_index[2]["call_s"] == 12.0 and by_index[2]["ret_s"] == 12.001


def test_only_faults_overlapping_the_shown_span_are_drawn() -> None:
    drawn = layout(register_failure(), WINDOWS)
    assert [f["label"] for f in drawn["faults"]] == [
        "partition-leader 11.500 s → 12.004 s",
        "kill-leader 3.000 s → never healed",
    ]
    assert drawn["faults"][1]["open_left"] and drawn["faults"][1]["open_right"]
    quiet = layout(register_failure(), [WINDOWS[2]])
    assert quiet["faults"] == []
    assert quiet["fault_note"] == "no fault in force here; pause ended at 2.000 s, 8.000 s before"


def test_a_big_counterexample_is_capped_near_the_failing_op_and_says_so(tmp_path: Path) -> None:
    failure = made_up_failure(300, 3)
    drawn = layout(failure, WINDOWS)
    assert (drawn["shown"], drawn["total"]) == (MAX_OPS, 300)
    assert any(o["role"] == "failing" for o in drawn["ops"])
    page = write_html([failure], tmp_path / "viewer.html", WINDOWS).read_text()
    assert f"Showing {MAX_OPS} of 300 ops" in page
    assert "<script src" not in page and "http" not in page.replace(
        "http://www.w3.org/2000/svg", ""
    )


def test_each_op_of_the_prefix_carries_the_state_before_it() -> None:
    failure = register_failure()
    ops = {o["index"]: o for o in layout(failure, WINDOWS)["ops"]}
    order = [o["index"] for o in failure["longest_prefix"]]
    assert ops[order[0]]["before"] == "the model's initial state"
    for earlier, later in pairwise(order):
        assert ops[later]["before"] == ops[earlier]["state"]
    assert ops[failure["op"]["index"]]["before"] == "4 or 3"  # what the prefix may leave
    cut = failure | {"prefix_length": 9}  # the report kept the prefix's tail only
    assert layout(cut, WINDOWS)["ops"][0]["before"] is None


def test_times_under_a_millisecond_are_counted_in_order() -> None:
    assert layout(register_failure(), WINDOWS)["axis"] == "seconds"
    failure = register_failure()
    for op in [failure["op"], *failure["longest_prefix"], *failure["concurrent"]]:
        op["call"] //= 1_000_000
        op["ret"] = None if op["ret"] is None else op["ret"] // 1_000_000
    drawn = layout(failure, WINDOWS)
    assert drawn["axis"] == "order" and "under 1 ms" in drawn["axis_caption"]
    labels = [int(t["label"]) for t in drawn["ticks"] if t["label"]]
    assert labels == sorted(labels) and labels[0] == 1
