"""The counterexample viewer in headless Chromium, at 1400 and 800 px: no two labels
overlap (read from the DOM's boxes), hovering an op shows its times and the states before
and after it, a click pins it until a second click, the failing op is red, a crashed op
hatched, no label is cut off at the left however scrolled, and the switcher draws each
invalid key of the page."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from harness.report.counterexamples.layout import NAME_W
from harness.report.counterexamples.viewer import key_anchor, write_html
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
        return {{what: text("what"), times: text("times"), before: text("before"),
                 state: text("state"),
                 pinned: document.getElementById("panel").classList.contains("pinned")}};
        }})()"""
    )
    return panel


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("size", [7, 30, 300])
def test_no_two_labels_overlap(tmp_path: Path, width: int, size: int) -> None:
    failure = register_failure() if size == 7 else made_up_failure(size, size)
    page = write_html([failure], tmp_path / "viewer.html", WINDOWS)
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
    page = write_html([register_failure()], tmp_path / "viewer.html", WINDOWS)
    with Browser(tmp_path / "profile", width, 900) as browser:
        browser.open(page.as_uri())
        hovered = _hover(browser, 5)
        assert "write 4" in hovered["what"]
        assert hovered["times"] == "called at 12.004 s, returned at 12.005 s (1.0 ms)"
        assert hovered["before"] == "state before: 2"
        assert hovered["state"] == "state after: 4 (linearized 5 of 5)"
        first = _hover(browser, 0)
        assert first["before"] == "state before: the model's initial state"
        failing = _hover(browser, 6)
        assert failing["before"] == "state before: 4 or 3"
        assert (
            failing["state"] == "state after: none, it cannot be linearized: read 2 but value is 4"
        )
        crashed = _hover(browser, 3)
        assert "never returned: crashed" in crashed["times"]

        pinned = _hover(browser, 2, "click")
        assert pinned["pinned"] and "pinned" in pinned["what"]
        assert pinned["state"] == "state after: 2 (linearized 3 of 5)"
        _hover(browser, 0)  # another op's state shows while the mouse is on it ...
        after = _hover(browser, 0, "mouseout")  # ... and the pinned op's when it leaves
        assert after["state"] == "state after: 2 (linearized 3 of 5)" and after["pinned"]

        unpinned = _hover(browser, 2, "click")
        assert not unpinned["pinned"] and unpinned["state"] == ""
        assert unpinned["what"].startswith("Hover over an op")


def test_the_failing_op_is_red_and_a_crashed_op_hatched(tmp_path: Path) -> None:
    page = write_html([register_failure()], tmp_path / "viewer.html", WINDOWS)
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


# Scrolls the chart to x, waits a frame, and returns the labels shown that start left of
# the names column's right edge (behind it) while their box reaches past that edge.
SCROLLED = """new Promise(done => {
  const scroll = document.getElementById("scroll");
  scroll.scrollLeft = %d;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const edge = scroll.getBoundingClientRect().left + %d;
    const cut = [];
    for (const t of document.querySelectorAll("text.oplabel, text.flabel")) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      const index = t.dataset.index;
      const rect = index === undefined ? null
        : document.querySelector('rect.box[data-index="' + index + '"]');
      const right = rect ? rect.getBoundingClientRect().right : r.right;
      if (right > edge + 1 && r.left < edge - 0.5) cut.push(t.textContent);
    }
    done(JSON.stringify({cut: cut, left: scroll.scrollLeft}));
  }));
})"""


@pytest.mark.parametrize("width", [1400, 800])
def test_no_label_is_cut_off_at_the_left_however_scrolled(tmp_path: Path, width: int) -> None:
    page = write_html([made_up_failure(60, 7)], tmp_path / "viewer.html", WINDOWS)
    with Browser(tmp_path / "profile", width, 900) as browser:
        browser.open(page.as_uri())
        wide = browser.evaluate("document.getElementById('chart').getAttribute('width')")
        assert float(wide) > 2 * width  # the chart scrolls
        for x in (0, 300, 1000, 2500):
            answer = browser.call(
                "Runtime.evaluate",
                expression=SCROLLED % (x, NAME_W),
                awaitPromise=True,
                returnByValue=True,
            )
            seen = json.loads(answer["result"]["value"])
            assert seen["cut"] == [], (x, seen)


def test_the_switcher_draws_each_invalid_key_and_the_address_names_it(tmp_path: Path) -> None:
    first, second = register_failure(), made_up_failure(30, 2) | {"key": "other"}
    page = write_html([first, second], tmp_path / "viewer.html", WINDOWS)
    drawn = "document.querySelectorAll('rect.box').length"
    shown = (
        "[...document.querySelectorAll('section.key')].filter(s => !s.hidden)"
        ".map(s => s.dataset.anchor)"
    )
    with Browser(tmp_path / "profile", 800, 900) as browser:
        browser.open(page.as_uri())
        assert browser.evaluate(drawn) == 7
        assert browser.evaluate(shown) == [key_anchor("k")]
        links = browser.evaluate("[...document.querySelectorAll('#keys a')].map(a => a.href)")
        assert [link.split("#")[1] for link in links] == [key_anchor("k"), key_anchor("other")]
        browser.open(links[1])
        assert browser.evaluate(drawn) == 30
        assert browser.evaluate(shown) == [key_anchor("other")]
        assert browser.evaluate("document.querySelector('#keys a.current').textContent") == (
            '"other"'
        )
        assert _hover(browser, 29)["state"].startswith("state after: none")
        browser.reload()  # the address keeps the key, and the switcher stays in view
        assert browser.evaluate(drawn) == 30
        top = "document.getElementById('keys').getBoundingClientRect().top"
        assert browser.evaluate(top) >= 0


def test_an_axis_of_times_under_a_millisecond_counts_in_order(tmp_path: Path) -> None:
    failure = register_failure()
    for op in [failure["op"], *failure["longest_prefix"], *failure["concurrent"]]:
        op["call"] //= 1_000_000  # ms to ns: every time is now under 13 µs
        op["ret"] = None if op["ret"] is None else op["ret"] // 1_000_000
    page = write_html([failure], tmp_path / "viewer.html", WINDOWS)
    with Browser(tmp_path / "profile", 800, 900) as browser:
        browser.open(page.as_uri())
        ticks = browser.evaluate(
            "[...document.querySelectorAll('text.tick')].map(t => t.textContent)"
        )
        caption = browser.evaluate("document.querySelector('text.caption').textContent")
        assert ticks[0] == "1" and all(t.isdigit() for t in ticks)
        assert caption.startswith("calls and returns in order") and "under 1 ms" in caption
        assert _hover(browser, 5)["times"] == "called at 9 in order, returned at 10 in order"
