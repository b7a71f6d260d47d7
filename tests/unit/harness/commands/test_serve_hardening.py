"""`harness serve` against a hostile browser or client: a Host that is not this server's
(DNS rebinding) is refused, an idle connection is closed, and a request that cannot be
served, or a client that goes away, is one line on stderr and never a traceback."""

from __future__ import annotations

import http.client
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.commands.serve import make_server

IDLE_S = 0.5


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    (tmp_path / "index.html").write_text("<p>runs</p>")
    httpd = make_server(tmp_path, 0, idle_timeout=IDLE_S)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


def _status(port: int, path: str, host: str | None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", path, skip_host=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    status = conn.getresponse().status
    conn.close()
    return status


def _stderr_lines(capsys: pytest.CaptureFixture[str], wanted: int) -> list[str]:
    # The server's threads write after the client has its answer: wait for their lines.
    text = ""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text += capsys.readouterr().err
        if len(text.splitlines()) >= wanted:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    return (text + capsys.readouterr().err).splitlines()


def test_only_the_loopback_names_with_this_port_are_served(port: int) -> None:
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LocalHost:{port}"):
        assert _status(port, "/index.html", host) == 200, host
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "localhost", ""):
        assert _status(port, "/index.html", host) == 421, host
    assert _status(port, "/index.html", None) == 421


def test_an_idle_connection_is_closed(port: int, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.create_connection(("127.0.0.1", port)) as idle:
        idle.settimeout(IDLE_S * 10)
        started = time.monotonic()
        assert idle.recv(1024) == b""
        assert time.monotonic() - started < IDLE_S * 5
    (line,) = _stderr_lines(capsys, 1)
    assert "timed out" in line


@pytest.mark.parametrize("path", ["/%00", "/a%00b/c", "/%FF", "/missing"])
def test_a_path_that_cannot_be_served_is_one_line(
    port: int, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _status(port, path, f"127.0.0.1:{port}") in (400, 404)
    (line,) = _stderr_lines(capsys, 1)
    assert path in line


def test_a_client_that_goes_away_is_one_line(port: int, capsys: pytest.CaptureFixture[str]) -> None:
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()  # a reset in the middle of the request's headers
    lines = _stderr_lines(capsys, 1)
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
