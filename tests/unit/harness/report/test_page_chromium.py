"""report.html in headless Chromium: for an INVALID kv run, an INVALID queue run (the
recorded isr-shrink history) and a VALID run, at 1400 and 800 px wide, the explanation
under the verdict lies within the first screen. Each page's box is measured by a small
script Chromium runs, which writes it into the DOM that --dump-dom prints."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from harness.cluster.layout import ClusterSpec
from harness.spec import TestSpec
from history import load
from tests.support import DATA
from tests.support.browser import chromium
from tests.support.run_folders import STALE_READ_OPS, T0, VALID_OPS, WINDOW, events, write_run

RECORDED = DATA / "queue_isr_unsafe.jsonl"
SCREEN_HEIGHT = 900
PROBE = """<script>
const box = document.getElementById("explanation").getBoundingClientRect();
const first = document.querySelector("#explanation p").getBoundingClientRect();
document.body.setAttribute("data-probe", JSON.stringify(
  {top: box.top, first_bottom: first.bottom, screen: window.innerHeight,
   width: document.documentElement.scrollWidth, viewport: window.innerWidth}));
</script></body>"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("results")
    stale = TestSpec(name="kv-stale", store="local-read", nemesis=(), seed=2)
    safe = TestSpec(name="kv-fault", nemesis=("partition-leader",), seed=1)
    queue = TestSpec(
        name="queue-isr-shrink",
        workload="queue",
        nemesis=("isr-shrink",),
        cluster=ClusterSpec(kafka_config="unsafe"),
        seed=4,
    )
    recorded = list(load(RECORDED).events)
    folders = {
        "invalid-kv": write_run(root, stale, events(STALE_READ_OPS), T0),
        "invalid-queue": write_run(root, queue, recorded, T0 + 60),
        "valid": write_run(root, safe, events(VALID_OPS, [WINDOW]), T0 + 120),
    }
    return {name: folder / "report.html" for name, folder in folders.items()}


def test_the_runs_have_the_verdicts_the_pages_are_tested_for(reports: dict[str, Path]) -> None:
    for name, report in reports.items():
        results = json.loads((report.parent / "results.json").read_text())
        assert results["valid"] is (name == "valid"), name
        assert results["explanation"], name
    queue_words = " ".join(
        json.loads((reports["invalid-queue"].parent / "results.json").read_text())["explanation"]
    )
    assert "Expected under unsafe" in queue_words
    assert "truncated partition" in queue_words


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("run", ["invalid-kv", "invalid-queue", "valid"])
def test_the_explanation_is_within_the_first_screen(
    reports: dict[str, Path], run: str, width: int, tmp_path: Path
) -> None:
    report = reports[run]
    probe = report.with_name(f"probe-{width}.html")  # beside the report: its links resolve
    probe.write_text(report.read_text().replace("</body>", PROBE))
    dom = subprocess.run(
        [
            str(chromium()),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},{SCREEN_HEIGHT}",
            "--virtual-time-budget=2000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    probe.unlink()
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found, dom.stderr[-2000:]
    box = json.loads(found[1].replace("&quot;", '"'))
    assert box["viewport"] == width
    assert box["top"] < box["screen"] / 3, box
    assert box["first_bottom"] <= box["screen"], box
    assert box["width"] <= width, box  # nothing pushes the page sideways
