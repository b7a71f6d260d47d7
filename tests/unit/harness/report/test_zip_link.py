"""report.html's link to the run as a zip: followed from the report as `harness serve`
serves it (its own address, and results/latest/), it downloads the run's zip; its title
says it needs `harness serve`."""

from __future__ import annotations

import http.client
import io
import re
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest

from harness.commands.serve import make_server
from harness.report.page import write_report
from harness.report.zip_link import ZIP_TITLE, zip_url

RUN = "kv-fault/20261126T001000"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    root = tmp_path / "results"
    folder = root / RUN
    folder.mkdir(parents=True)
    (folder / "results.json").write_text('{"valid": true}')
    write_report(folder, {"spec": {"name": "kv-fault"}}, {"valid": True}, {})
    (root / "latest").symlink_to(RUN)
    httpd = make_server(root, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


def _get(port: int, path: str) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, response.getheader("Content-Type") or "", body


@pytest.mark.parametrize("page", [f"/{RUN}/report.html", "/latest/report.html"])
def test_the_reports_zip_link_downloads_the_run_when_served(
    served: tuple[Path, int], page: str
) -> None:
    _, port = served
    status, _, body = _get(port, page)
    assert status == 200
    (link,) = re.findall(r'<a class="zip" href="([^"]+)" download title="([^"]+)"', body.decode())
    assert link[1] == ZIP_TITLE and "harness serve" in link[1]
    # Resolved as a browser does against the page's address.
    status, kind, zipped = _get(port, urljoin(page, link[0]))
    assert (status, kind) == (200, "application/zip")
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        assert "kv-fault-20261126T001000/report.html" in archive.namelist()


def test_the_zip_url_is_percent_encoded() -> None:
    assert zip_url(Path("results/kv-fault/20261126T001000")) == "../../kv-fault/20261126T001000.zip"
    assert zip_url(Path("r/a b#?/x")) == "../../a%20b%23%3F/x.zip"
