"""Run folders that cannot be read (test.json or results.json of the wrong shape, a name
that is not UTF-8) are listed with the reason by the listing, the index and `serve`,
and never stop them."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.report.index import write_index
from harness.results import list_runs
from tests.support import ROOT
from tests.support.run_folders import build_malformed


@pytest.fixture(scope="module")
def malformed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("results")
    return root, build_malformed(root)


def test_the_listing_sets_each_aside_with_its_reason(
    malformed: tuple[Path, dict[str, str]],
) -> None:
    root, reasons = malformed
    listing = list_runs(root)
    assert len(listing.complete) == 1
    found = {b.name: b.reason for b in listing.broken}
    assert set(found) == set(reasons)
    for run, reason in reasons.items():
        assert reason in found[run], (run, found[run])


def test_the_index_lists_each_with_its_reason(malformed: tuple[Path, dict[str, str]]) -> None:
    root, reasons = malformed
    page = write_index(root).read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="run" (.*?)</tr>', page)
    assert len(rows) == len(reasons) + 1
    assert sum('data-verdict="VALID"' in r for r in rows) == 1
    for run, reason in reasons.items():
        (row,) = [r for r in rows if f'title="{run}"' in r]
        assert 'data-verdict="NONE"' in row and reason in row.replace("&quot;", '"'), row
    assert 'href="./kv/%FF20270101T000012/report.html"' in page  # the bytes of the name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_starts_and_lists_them(malformed: tuple[Path, dict[str, str]]) -> None:
    root, reasons = malformed
    (root / "index.html").unlink(missing_ok=True)
    port = _free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", "--results", str(root), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        page = ""
        deadline = time.monotonic() + 30
        while not page and serve.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html") as r:
                    page = r.read().decode()
            except urllib.error.URLError:
                time.sleep(0.2)
        assert serve.poll() is None, serve.communicate()[1]
    finally:
        serve.terminate()
        serve.wait(10)
    for reason in reasons.values():
        assert reason in page.replace("&quot;", '"')
