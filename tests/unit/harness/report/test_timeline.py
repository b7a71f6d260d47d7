"""Tests that a counterexample renders as a still SVG on compressed time, the failing op
red, and as a standalone HTML viewer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from checkers.linearizable.checker import check
from checkers.linearizable.models import MODELS
from harness.report.counterexamples import timeline
from harness.report.counterexamples.timeline import render_counterexamples
from history import Op


def _failure() -> dict[str, object]:
    ops = [
        Op(index=0, process=0, f="write", key="k 1", value=1, type="ok", call=0, ret=10),
        Op(index=1, process=1, f="write", key="k 1", value=2, type="ok", call=5, ret=30),
        Op(index=2, process=2, f="write", key="k 1", value=3, type="info", call=6, ret=None),
        Op(index=3, process=0, f="read", key="k 1", value=4, type="ok", call=20, ret=40),
    ]
    result = check(ops, MODELS["register"])
    assert result["valid"] is False
    failure: dict[str, object] = result["failures"][0]
    return failure


def test_renders_an_svg_still_and_the_html_viewer(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    drawn = render_counterexamples([_failure()], tmp_path / "out")
    assert [p.name[-4:] for p in drawn["k 1"]] == [".svg", "html"]  # as every plot: vector
    still, page = drawn["k 1"]
    assert page.name == "counterexamples.html"
    assert still.stat().st_size > 1000
    assert ET.parse(still).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<script src" not in text  # no network
    blob = text.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    ops = {op["index"]: op for op in json.loads(blob)["keys"][0]["layout"]["ops"]}
    assert ops[3]["label"] == "3: read 4" and ops[3]["role"] == "failing"
    assert ops[2]["ret_s"] is None and "crashed" in text


def test_nothing_to_draw_for_an_unknown_key(tmp_path: Path) -> None:
    failure = {"key": "k", "valid": "unknown", "cause": "timeout"}
    assert render_counterexamples([failure], tmp_path) == {}
    assert list(tmp_path.iterdir()) == []


def test_every_invalid_key_has_its_still_and_shares_one_viewer(tmp_path: Path) -> None:
    other = _failure() | {"key": 2}
    unknown = {"key": "u", "valid": "unknown", "cause": "timeout"}
    drawn = render_counterexamples([_failure(), unknown, other], tmp_path)
    assert sorted(drawn) == ["2", "k 1"]
    assert drawn["k 1"][0] != drawn["2"][0] and drawn["k 1"][1] == drawn["2"][1]
    text = drawn["2"][1].read_text(encoding="utf-8")
    blob = text.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    assert [k["title"] for k in json.loads(blob)["keys"]] == [
        'key "k 1": read 4 but value is 2',
        "key 2: read 4 but value is 2",
    ]


def test_the_still_draws_the_failing_op_red_on_compressed_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved: list[Figure] = []
    monkeypatch.setattr(
        "harness.report.counterexamples.timeline.plt.close", saved.append
    )  # keep the figure
    failure = _failure()
    failure["longest_prefix"] = [failure["op"]] * 9  # stands for a long prefix
    failure["prefix_states"] = [str(n) for n in range(9)]
    timeline.draw_still(failure, tmp_path / "x.svg")
    (ax,) = saved[0].axes
    colours = {tuple(box.get_facecolor()) for box in ax.patches}
    assert tuple(to_rgba(timeline.COLOURS["failing"], 0.85)) in colours
    texts = [t.get_text() for t in ax.texts]
    assert "3: read 4" in texts and "hatched: crashed" in texts[-1]
    # the prefix cut to its last few ops, their states kept beside them
    recent = timeline._recent(failure)
    assert len(recent["longest_prefix"]) == timeline.PREFIX_SHOWN
    assert recent["prefix_states"] == [str(n) for n in range(3, 9)]
