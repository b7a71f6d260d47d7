"""`harness serve` for a browser: text files as UTF-8 text it shows (never a download), a
run folder opened on its report, and a run streamed as a zip of its files, with nothing
outside the results directory in it."""

from __future__ import annotations

import http.client
import io
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.commands.serve import make_server

RUN = "kv-fault/20261126T001000"
FILES = {
    "test.json": '{"spec": {}}',
    "history.jsonl": '{"index": 0}\n',
    "results.json": '{"valid": true}',
    "report.html": "<p>report</p>",
    "run.log": "2026-11-26T00:10:00.000Z INFO harness.run: t=0\n",
    "client.log": "librdkafka said\n",
    "summary.md": "# runs\n",
    "nodes/n1/kafka/server.log": "[2026-11-26 00:10:01,000] INFO started\n",
    "nodes/n1/kafka/server.log.2026-11-25-23": "older\n",
    "nodes/n1/docker.log": "docker\n",
    "store.edn": "{:type :ok}\n",
    "notes.txt": "é\n",
    "latency.svg": '<svg xmlns="http://www.w3.org/2000/svg"/>',
    "counterexample-0-5feceb66ff.png": "not really a png",
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    root = tmp_path / "results"
    for name, body in FILES.items():
        path = root / RUN / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    (root / "latest").symlink_to(RUN)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("not to be served")
    (root / RUN / "escape").symlink_to(secret, target_is_directory=True)
    (root / RUN / "escape.txt").symlink_to(secret / "key.txt")
    (root / "elsewhere").symlink_to(secret, target_is_directory=True)
    httpd = make_server(root, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


def _get(port: int, path: str, method: str = "GET") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path)
    response = conn.getresponse()
    response.read()  # keeps the body in the response's buffer
    return response


def _fetch(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("run.log", "text/plain; charset=utf-8"),
        ("client.log", "text/plain; charset=utf-8"),
        ("history.jsonl", "text/plain; charset=utf-8"),
        ("summary.md", "text/plain; charset=utf-8"),
        ("store.edn", "text/plain; charset=utf-8"),
        ("notes.txt", "text/plain; charset=utf-8"),
        ("nodes/n1/kafka/server.log", "text/plain; charset=utf-8"),
        ("nodes/n1/kafka/server.log.2026-11-25-23", "text/plain; charset=utf-8"),
        ("results.json", "application/json"),
        ("report.html", "text/html"),
        ("latency.svg", "image/svg+xml"),
        ("counterexample-0-5feceb66ff.png", "image/png"),
    ],
)
def test_each_file_is_served_as_a_type_a_browser_shows(
    served: tuple[Path, int], name: str, kind: str
) -> None:
    status, headers, body = _fetch(served[1], f"/{RUN}/{name}")
    assert status == 200 and headers["content-type"] == kind
    assert body == FILES[name].encode()


@pytest.mark.parametrize("path", [f"/{RUN}", f"/{RUN}/", "/latest/", f"/{RUN}/?x=1"])
def test_a_run_folder_opens_on_its_report(served: tuple[Path, int], path: str) -> None:
    status, headers, _ = _fetch(served[1], path)
    assert status == 302
    assert headers["location"] == path.split("?")[0].rstrip("/") + "/report.html"
    assert _fetch(served[1], headers["location"])[2] == b"<p>report</p>"


def test_the_results_root_is_still_its_index(served: tuple[Path, int]) -> None:
    root, port = served
    (root / "index.html").write_text("<p>runs</p>")
    assert _fetch(port, "/")[:1] == (200,) and _fetch(port, "/")[2] == b"<p>runs</p>"


@pytest.mark.parametrize("path", [f"/{RUN}.zip", "/latest.zip"])
def test_a_run_is_streamed_as_a_zip_of_its_files_only(served: tuple[Path, int], path: str) -> None:
    status, headers, body = _fetch(served[1], path)
    assert status == 200 and headers["content-type"] == "application/zip"
    assert "content-length" not in headers  # streamed as it is made
    name = "kv-fault-20261126T001000"
    assert headers["content-disposition"] == f'attachment; filename="{name}.zip"'
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert archive.testzip() is None
        names = sorted(archive.namelist())
        assert names == sorted(f"{name}/{n}" for n in FILES)  # no symbolic link followed
        assert archive.read(f"{name}/notes.txt") == FILES["notes.txt"].encode()


@pytest.mark.parametrize(
    "path", ["/kv-fault.zip", "/elsewhere.zip", f"/{RUN}/nodes.zip", "/nothing/here.zip"]
)
def test_only_a_run_folder_under_the_results_is_zipped(served: tuple[Path, int], path: str) -> None:
    assert _fetch(served[1], path)[0] == 404


def test_a_head_request_for_a_zip_has_no_body(served: tuple[Path, int]) -> None:
    response = _get(served[1], f"/{RUN}.zip", method="HEAD")
    assert response.status == 200 and response.getheader("Content-Type") == "application/zip"
