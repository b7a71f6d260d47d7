"""Every link of every page of a results folder works, opened from disk (file://) and from
`harness serve`, followed in headless Chromium from the index: the reports, the viewer of
every invalid key and its #key anchors, the plots, the logs, the way back to the index.
The folder is made with the harness's own writers from stored histories (kv runs valid and
invalid, a queue run that lost acknowledged sends, broken and unchecked runs, `latest`).
A planted broken link is found: the check can fail."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.commands.serve import make_server
from harness.report.index import write_index
from harness.report.plots.images import LATENCY_FILE
from harness.results import point_latest
from harness.spec import TestSpec
from tests.support.browser import Browser, chromium
from tests.support.links import crawl
from tests.support.queue_sim import FIXTURE
from tests.support.run_folders import T0, build_results, write_run

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium is not installed (make test installs it)"
)


def _results(root: Path) -> Path:
    """Writes the results folder under root and its index; returns the index. The index
    is there before the runs, as after a first run, so each report links back to it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_text("")
    folders = build_results(root)
    queue = TestSpec(name="queue-loss", workload="queue", nemesis=(), seed=3)
    history = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    write_run(root, queue, [{k: v for k, v in e.items() if k != "index"} for e in history], T0)
    point_latest(root, folders["invalid"])
    return write_index(root)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _results(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def served(index: Path) -> Iterator[str]:
    httpd = make_server(index.parent, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_every_link_works_from_disk(index: Path, tmp_path: Path) -> None:
    with Browser(tmp_path / "profile", 1400, 900) as browser:
        found = crawl(browser, index.parent.as_uri() + "/", from_disk=True)
    pages = "\n".join(found.pages)
    assert "report.html" in pages and "counterexamples.html" in pages, pages
    assert found.broken == [], "\n".join(found.broken)
    assert found.links > 50


def test_every_link_works_from_serve(served: str, tmp_path: Path) -> None:
    with Browser(tmp_path / "profile", 1400, 900) as browser:
        found = crawl(browser, served, from_disk=False)
    pages = "\n".join(found.pages)
    assert "report.html" in pages and "counterexamples.html" in pages, pages
    assert found.broken == [], "\n".join(found.broken)


def test_a_planted_broken_link_is_found(tmp_path: Path) -> None:
    index = _results(tmp_path / "results")
    reports = sorted(index.parent.glob("kv-stale/*/report.html"))
    (reports[0].parent / LATENCY_FILE).unlink()  # an image the report shows
    page = reports[0].read_text()
    reports[0].write_text(page.replace("#key-", "#no-such-key-", 1))  # a fragment
    with Browser(tmp_path / "profile", 1400, 900) as browser:
        found = crawl(browser, index.parent.as_uri() + "/", from_disk=True)
    assert any(f"{LATENCY_FILE}: no such file" in b for b in found.broken), found.broken
    assert any("no element #no-such-key-" in b for b in found.broken), found.broken
