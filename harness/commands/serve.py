"""`harness serve`: serves a results directory over HTTP on 127.0.0.1 only, refusing
every path that leads outside it (`..`, or a symbolic link pointing elsewhere), every
Host that is not this server's (DNS rebinding), and closing idle connections. A request
that is refused, times out or breaks off is one line on stderr."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

from harness.commands.argtypes import positive
from harness.exit_codes import EXIT_BAD_INPUT

HOST = "127.0.0.1"
DEFAULT_PORT = 8080
IDLE_TIMEOUT_S = 30.0
"""How long a connection may wait on its client: one thread each, so none is kept forever."""
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})


class ResultsServer(ThreadingHTTPServer):
    """A threading HTTP server whose connections time out after `idle_timeout` seconds of
    silence, and which says in one line why a request it could not finish broke off."""

    def __init__(self, address: tuple[str, int], handler: Any, idle_timeout: float) -> None:
        self.idle_timeout = idle_timeout
        super().__init__(address, handler)
        self.port: int = self.socket.getsockname()[1]  # the one chosen when asked for 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away mid-request is routine for a server: no traceback.
        err = sys.exc_info()[1]
        print(f"{client_address[0]} - - dropped a request: {err!r}", file=sys.stderr)


class ResultsHandler(SimpleHTTPRequestHandler):
    """Serves files under `directory` to a browser that asked this server by a loopback
    name: another Host is 421, anything resolving outside `directory` is 403."""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(cast(ResultsServer, self.server).idle_timeout)

    def send_head(self) -> Any:
        if not self._host_is_ours():
            self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "not a loopback name of this server")
            return None
        root = Path(self.directory).resolve()
        try:
            target = Path(self.translate_path(self.path)).resolve()
        except ValueError:  # a NUL byte: no file has that name
            self.send_error(HTTPStatus.BAD_REQUEST, "not a file name")
            return None
        if target != root and root not in target.parents:
            self.send_error(HTTPStatus.FORBIDDEN, "outside the results directory")
            return None
        return super().send_head()

    def _host_is_ours(self) -> bool:
        # A page of another site that made its name resolve to 127.0.0.1 still sends its
        # own name as Host: only the loopback names, with this server's port, are ours.
        name, port = split_host(self.headers.get("Host", ""))
        ours = str(cast(ResultsServer, self.server).port)
        return name.lower() in LOOPBACK_NAMES and (port or "80") == ours

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        return  # a line for each file served would bury the lines that matter

    def log_error(self, format: str, *args: Any) -> None:
        # No request line yet when the client never sent one (an idle connection).
        request = getattr(self, "requestline", "") or "(no request)"
        self.log_message(f"%s: {format}", request, *args)


def split_host(host: str) -> tuple[str, str | None]:
    """Takes a Host header. Returns its name and its port (None when it gives none)."""
    name, colon, port = host.rpartition(":")
    if not colon or name.endswith(":") or "]" in port:  # no port, or a bare IPv6 address
        return host, None
    return name, port


def make_server(root: Path, port: int, idle_timeout: float = IDLE_TIMEOUT_S) -> ResultsServer:
    """Takes a results directory, a port (0: any free one) and how long a connection may
    stay idle. Returns a server bound to 127.0.0.1 that serves it, not yet serving."""
    handler = functools.partial(ResultsHandler, directory=os.fspath(root.resolve()))
    return ResultsServer((HOST, port), handler, idle_timeout)


def add_parser(subparsers: Any) -> None:
    """Takes argparse's subparsers; registers `serve` with `func(args) -> exit code`."""
    parser = subparsers.add_parser(
        "serve",
        help="serve the results directory on 127.0.0.1",
        description="Serve results/ (index.html, every report) on 127.0.0.1 only.",
    )
    parser.add_argument("--port", type=positive(int), default=DEFAULT_PORT, help="default: 8080")
    parser.add_argument("--results", default="results", metavar="DIR", help="default: results")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Takes parsed `serve` arguments. Serves until ^C; returns the exit code."""
    from harness.report.index import write_index

    root = Path(args.results)
    if not root.is_dir():
        print(f"harness serve: {root}: no such directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        server = make_server(root, args.port)
    except OSError as err:
        print(
            f"harness serve: cannot listen on {HOST}:{args.port}: {err.strerror}", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    write_index(root)
    print(f"serving {root} at http://{HOST}:{server.port}/ (^C to stop)")
    with server:
        server.serve_forever()
    return 0
