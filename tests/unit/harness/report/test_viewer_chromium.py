"""The counterexample viewer in headless Chromium, at 1400 and 800 px: no two labels
overlap (read from the DOM's boxes), hovering an op shows its times and the state after
it, a click pins it until a second click, and the failing op is red, a crashed op hatched."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from harness.report.counterexamples.timeline import write_html
from tests.support.browser import Browser, chromium
from tests.support.viewer_cases import WINDOWS, made_up_failure, register_failure

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium is not installed (make test installs it)"
)
# Scrolls the chart back to its start, waits a frame (the process names follow the
# scroll), and returns every label's box.
LABEL_BOXES = """new Promise(done => {
  document.getElementById("scroll").scrollLeft = 0;
  requestAnimationFrame(() => requestAnimationFrame(() => done(JSON.stringify(
    [...document.querySelectorAll("text.label")].map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, left: r.left, top: r.top, right: r.right,
              bottom: r.bottom};
    })))));
})"""


def _labels(browser: Browser) -> list[dict[str, Any]]:
    answer = browser.call(
        "Runtime.evaluate", expression=LABEL_BOXES, awaitPromise=True, returnByValue=True
    )
    labels: list[dict[str, Any]] = json.loads(answer["result"]["value"])
    return labels


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


def _hover(browser: Browser, index: int, event: str = "mouseover") -> dict[str, Any]:
    """Sends event to op index's box; returns what the panel then says."""
    panel: dict[str, Any] = browser.evaluate(
        f"""(() => {{
        document.querySelector('rect.box[data-index="{index}"]')
          .dispatchEvent(new MouseEvent("{event}", {{bubbles: true}}));
        const text = id => document.getElementById(id).textContent;
        return {{what: text("what"), times: text("times"), state: text("state"),
                 pinned: document.getElementById("panel").classList.contains("pinned")}};
        }})()"""
    )
    return panel


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("size", [7, 30, 300])
def test_no_two_labels_overlap(tmp_path: Path, width: int, size: int) -> None:
    failure = register_failure() if size == 7 else made_up_failure(size, size)
    page = write_html(failure, tmp_path / "viewer.html", WINDOWS)
    with Browser(tmp_path / "profile", width, 900) as browser:
        browser.open(page.as_uri())
        labels = _labels(browser)
        boxes = browser.evaluate("document.querySelectorAll('rect.box').length")
    assert boxes == min(size, 120)
    assert len(labels) > boxes  # the ops', the process names, the faults', the axis'
    clashes = [(a["text"], b["text"]) for a, b in combinations(labels, 2) if _overlap(a, b)]
    assert not clashes, clashes[:5]


@pytest.mark.parametrize("width", [1400, 800])
def test_hover_shows_the_state_and_a_click_pins_it_until_clicked_again(
    tmp_path: Path, width: int
) -> None:
    page = write_html(register_failure(), tmp_path / "viewer.html", WINDOWS)
    with Browser(tmp_path / "profile", width, 900) as browser:
        browser.open(page.as_uri())
        hovered = _hover(browser, 5)
        assert "write 4" in hovered["what"]
        assert hovered["times"] == "called at 12.004 s, returned at 12.005 s (1.0 ms)"
        assert hovered["state"] == "linearized 5 of 5; state after it: 4"
        failing = _hover(browser, 6)
        assert failing["state"].startswith("cannot be linearized: read 2 but value is 4")
        crashed = _hover(browser, 3)
        assert "never returned: crashed" in crashed["times"]

        pinned = _hover(browser, 2, "click")
        assert pinned["pinned"] and "pinned" in pinned["what"]
        assert pinned["state"] == "linearized 3 of 5; state after it: 2"
        _hover(browser, 0)  # another op's state shows while the mouse is on it ...
        after = _hover(browser, 0, "mouseout")  # ... and the pinned op's when it leaves
        assert after["state"] == "linearized 3 of 5; state after it: 2" and after["pinned"]

        unpinned = _hover(browser, 2, "click")
        assert not unpinned["pinned"] and unpinned["state"] == ""
        assert unpinned["what"].startswith("Hover over an op")


def test_the_failing_op_is_red_and_a_crashed_op_hatched(tmp_path: Path) -> None:
    page = write_html(register_failure(), tmp_path / "viewer.html", WINDOWS)
    with Browser(tmp_path / "profile", 1400, 900) as browser:
        browser.open(page.as_uri())
        fills = browser.evaluate(
            "[...document.querySelectorAll('rect.box')].map(r => "
            "[r.dataset.index, r.getAttribute('fill')])"
        )
        faults = browser.evaluate("document.querySelectorAll('rect.fault').length")
        points = browser.evaluate("document.querySelectorAll('circle.dot').length")
    assert dict(fills)["6"] == "#d62728"
    assert dict(fills)["3"].startswith("url(#hatch-")
    assert faults == 2 and points == 5
