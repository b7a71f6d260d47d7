"""A run's page read 800 px wide needs no sideways scroll (issue 39): the counterexample
still has a narrow twin, the ops nearest the failing one, that a page under 60em shows;
the Recovery table is stacked there, each cell named by its column."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from checkers.linearizable.checker import check
from checkers.linearizable.models import MODELS
from harness.report.counterexamples.timeline import (
    NARROW_PX,
    PX_PER_INCH,
    narrow_file,
    render_counterexamples,
)
from harness.report.page import write_report
from history import Op
from tests.support.browser import Browser, chromium

LONG = "a value long enough that every label is cut to its 30 characters"


def _failure() -> dict[str, Any]:
    # Six writes one after another, then a read of a value never written: a still of
    # seven ops each 30 characters wide, about 1,700 px, as kv-invalid's was 1,300.
    ops = [
        Op(
            index=i,
            process=i % 3,
            f="write",
            key="k",
            value=f"{i} {LONG}",
            type="ok",
            call=100 * i,
            ret=100 * i + 50,
        )
        for i in range(6)
    ]
    ops.append(
        Op(index=6, process=0, f="read", key="k", value="never", type="ok", call=700, ret=750)
    )
    result = check(ops, MODELS["register"])
    assert result["valid"] is False
    failure: dict[str, Any] = result["failures"][0]
    return failure


def _px(svg: Path) -> float:
    width = ET.parse(svg).getroot().attrib["width"]
    assert width.endswith("pt")
    return float(width[:-2]) / 72 * PX_PER_INCH


def test_the_narrow_still_fits_800_px_and_the_full_one_does_not(tmp_path: Path) -> None:
    (still, _viewer) = render_counterexamples([_failure()], tmp_path)["k"]
    narrow = narrow_file(still)
    assert narrow.name == still.name.replace(".svg", "-narrow.svg") and narrow.exists()
    assert _px(still) > 2 * NARROW_PX and _px(narrow) <= NARROW_PX


def _page(folder: Path, results: dict[str, Any], drawings: dict[str, list[Path]]) -> Path:
    return write_report(folder, {"spec": {"name": "kv"}}, results, drawings)


def test_the_page_picks_the_narrow_still_under_60em(tmp_path: Path) -> None:
    failure = _failure()
    drawings = render_counterexamples([failure], tmp_path)
    results = {"valid": False, "linearizable": {"valid": False, "keys": 1, "failures": [failure]}}
    text = _page(tmp_path, results, drawings).read_text()
    narrow = narrow_file(drawings["k"][0]).name
    assert re.search(
        rf'<picture><source media="\(max-width: 60em\)" srcset="{re.escape(narrow)}">'
        r'<img src="counterexample-k-[0-9a-f]+\.svg"',
        text,
    )
    if chromium() is None:
        return
    for width in (1400, 800):
        with Browser(tmp_path / f"profile-{width}", width, 900) as browser:
            browser.open((tmp_path / "report.html").as_uri())
            src = browser.evaluate("document.querySelector('.cx img').currentSrc")
            assert src.endswith(narrow) == (width == 800), (width, src)
            if width == 800:
                box = "(b => b.scrollWidth - b.clientWidth)(document.querySelector('.cx'))"
                assert browser.evaluate(box) <= 0


def _recovery_row(partition: int) -> dict[str, Any]:
    return {
        "start": 11.55,
        "fault": "kill-coordinator",
        "node": "n1",
        "partition": partition,
        "new_leader": "n2",
        "new_leader_s": 4.769,
        "first_ok_s": 5.782,
        "in_fault_s": 5.782,
        "first_ok_by_client": {str(c): 6.5 + c / 10 for c in (5, 7, 8, 11, 14)},
        "after_heal_s": 20.855,
        "failed": 0,
        "timed_out": 0,
    }


RECOVERY = {
    "partitions": [_recovery_row(p) for p in (0, 3, 6)],
    "summary": {"kill-coordinator": {"partitions": 3, "new_leader_s": {"median": 4.769}}},
}


def test_each_recovery_cell_is_named_by_its_column(tmp_path: Path) -> None:
    text = _page(tmp_path, {"valid": True, "recovery": RECOVERY}, {}).read_text()
    table = text.split('<table id="recovery">')[1].split("</table>")[0]
    assert table.count('<td data-label="each client&#x27;s first ok op">') == 3
    assert table.count("<td data-label=") == 3 * 11 and '<tr class="head">' in table


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
def test_the_recovery_table_fits_at_1400_and_is_stacked_at_800(tmp_path: Path) -> None:
    page = _page(tmp_path, {"valid": True, "recovery": RECOVERY}, {})
    for width in (1400, 800):
        with Browser(tmp_path / f"profile-{width}", width, 900) as browser:
            browser.open(page.as_uri())
            sideways = "(t => t.scrollWidth - t.clientWidth)(document.getElementById('recovery'))"
            assert browser.evaluate(sideways) <= 0, width
            shown = "getComputedStyle(document.querySelector('#recovery tr.head')).display"
            named = "getComputedStyle(document.querySelector('#recovery td'), '::before').content"
            if width == 800:
                assert browser.evaluate(shown) == "none"
                assert browser.evaluate(named) == '"t (s): "'
            else:
                assert browser.evaluate(shown) != "none"
