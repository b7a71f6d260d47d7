"""Dependency cycles drawn for report.html: one box per transaction, one labelled arrow
per edge, well-formed SVG on the page; nothing drawn for a case that is not a cycle."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from checkers.registry import check_history
from harness.report.counterexamples.cycles import cycle_svg, edge_label
from harness.report.page import write_report
from history import load
from tests.unit.checkers.txn.test_verdict import opposite_orders, written

SVG = "{http://www.w3.org/2000/svg}"


def _g0_case(tmp_path: Path) -> dict[str, Any]:
    result = check_history(load(str(written(tmp_path, opposite_orders()))), "queue")
    case: dict[str, Any] = result["kinds"]["G0"]["cases"][0]
    return case


def test_a_two_transaction_cycle_has_two_boxes_and_two_labelled_arrows(tmp_path: Path) -> None:
    case = _g0_case(tmp_path)
    svg = cycle_svg(case)
    assert svg is not None
    root = ET.fromstring(svg)
    boxes = root.findall(f"{SVG}rect")
    arrows = root.findall(f"{SVG}g/{SVG}path")  # the edges' group; the arrowheads are defs
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert len(boxes) == 2 and len(arrows) == 2
    boxed = zip(case["indexes"], case["processes"], strict=True)
    assert {f"T{i} (process {p})" for i, p in boxed} <= set(texts)
    assert sorted(t for t in texts if t and t.startswith("ww")) == [
        "ww: partition 0, offsets 0 then 1",
        "ww: partition 1, offsets 0 then 1",
    ]
    # The two arrows between the same pair bow to opposite sides instead of overlapping.
    paths = [a.get("d") for a in arrows]
    assert paths[0] != paths[1]


def test_each_edge_kind_has_its_evidence_in_its_label() -> None:
    assert edge_label({"type": "wr", "partition": 3, "offset": 7, "value": 41}) == (
        "wr: partition 3 offset 7 (value 41)"
    )
    assert edge_label({"type": "process", "process": 2}) == "process 2: next"
    assert edge_label({"type": "realtime"}) == "realtime: completed before invoked"


def test_a_case_that_is_not_a_cycle_is_not_drawn() -> None:
    assert cycle_svg({"index": 3, "partition": 0}) is None
    assert cycle_svg({"indexes": [], "steps": []}) is None


def test_the_report_draws_each_cycle_case_beside_its_words(tmp_path: Path) -> None:
    result = check_history(load(str(written(tmp_path, opposite_orders()))), "queue")
    page = write_report(tmp_path, {"spec": {"name": "t"}}, {"valid": True, "queue": result}, {})
    text = page.read_text()
    svgs = re.findall(r"<svg.*?</svg>", text, flags=re.S)
    cycles = [c for k in result["kinds"].values() for c in k["cases"][:3] if "steps" in c]
    assert result["kinds"]["G0"]["count"] == 1 and len(svgs) == len(cycles) >= 1
    for svg in svgs:
        ET.fromstring(svg)


def test_an_allowed_cycle_is_drawn_grey_and_dashed_never_red(tmp_path: Path) -> None:
    result = check_history(load(str(written(tmp_path, opposite_orders()))), "queue")
    assert result["kinds"]["G0"]["invalidating"] is False  # Kafka isolates no writes
    allowed = cycle_svg(_g0_case(tmp_path), allowed=True)
    error = cycle_svg(_g0_case(tmp_path))
    assert allowed is not None and error is not None
    assert "#d62728" in error and 'stroke="#d62728"' not in allowed
    assert 'stroke-dasharray="6 4"' in allowed and "stroke-dasharray" not in error
    page = write_report(tmp_path, {"spec": {"name": "t"}}, {"valid": True, "queue": result}, {})
    text = page.read_text()
    assert "<td>G0 (allowed)</td>" in text and 'stroke="#d62728"' not in text


def test_allowed_anomalies_come_after_the_plots_and_the_real_problems_in_grey(
    tmp_path: Path,
) -> None:
    result = check_history(load(str(written(tmp_path, opposite_orders()))), "queue")
    g0 = result["kinds"]["G0"]
    assert g0["count"] >= 1 and not g0["invalidating"]
    # A real problem beside it: one invalidating kind with a case in the checker's words.
    result["kinds"]["precommitted-read"] = {
        "count": 1,
        "invalidating": True,
        "cases": [{"index": 5, "process": 1, "partition": 0, "offset": 3, "value": 9}],
    }
    page = write_report(tmp_path, {"spec": {"name": "t"}}, {"valid": False, "queue": result}, {})
    text = page.read_text()
    anomalies, plots, allowed = (
        text.index('<h2 id="anomalies">'),
        text.index("<h2>Plots</h2>"),
        text.index('<h2 id="allowed">Allowed anomalies</h2>'),
    )
    assert anomalies < plots < allowed < text.index('<h2 id="nemesis">')
    top = text[anomalies:plots]
    assert "<td class=fail>precommitted-read</td>" in top and "G0" not in top.split("</table>")[0]
    assert f'{g0["count"]} found that Kafka allows: <a href="#allowed">' in top
    below = text[allowed : text.index('<h2 id="nemesis">')]
    assert below.count("<td>G0 (allowed)</td>") == min(g0["count"], 3)
    assert '<div class="allowed">' in below and "<svg" in below
    assert ".allowed,.allowed td{color:#777}" in text  # grey


def test_a_run_with_only_allowed_anomalies_says_none_makes_it_invalid(tmp_path: Path) -> None:
    result = check_history(load(str(written(tmp_path, opposite_orders()))), "queue")
    page = write_report(tmp_path, {"spec": {"name": "t"}}, {"valid": True, "queue": result}, {})
    text = page.read_text()
    top = text[text.index('<h2 id="anomalies">') : text.index("<h2>Plots</h2>")]
    assert "<p>None that makes the history invalid.</p>" in top and "<table>" not in top
