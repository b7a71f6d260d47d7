"""`harness serve`: serves a results directory over HTTP on 127.0.0.1 only: logs and other
text as text a browser shows, a run folder as its report, `<run>.zip` as the run's files
zipped on the fly. Refuses every path that leads outside the directory (`..`, or a
symbolic link pointing elsewhere) and every Host that is not this server's (DNS
rebinding), and closes idle connections. A request that is refused, times out or breaks
off is one line on stderr."""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import zipfile
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import urlsplit

from harness.commands import SUMMARIES
from harness.exit_codes import EXIT_BAD_INPUT
from harness.results import RUN_FILES
from workloads.argtypes import positive

HOST = "127.0.0.1"
DEFAULT_PORT = 8080
IDLE_TIMEOUT_S = 30.0
"""How long a connection may wait on its client: one thread each, so none is kept forever."""
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
TEXT = "text/plain; charset=utf-8"
TEXT_SUFFIXES = frozenset({".log", ".jsonl", ".md", ".txt", ".edn", ".csv", ".out", ".err"})
"""Shown by a browser as text; served as their own types (text/markdown, or none) Chromium
downloads them instead."""
ROTATED_LOG = re.compile(r"\.log\.[0-9-]+$")
"""A log the broker rotated: server.log.2026-11-25-10."""
REPORT = "report.html"


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
        if target.is_dir() and (target / REPORT).is_file():
            return self._redirect(urlsplit(self.path).path.rstrip("/") + "/" + REPORT)
        if target.suffix == ".zip" and not target.exists():
            folder = target.with_suffix("").resolve()  # results/latest.zip: the newest run
            if root in folder.parents and is_run_folder(folder):
                return self._send_zip(folder)
        return super().send_head()

    def guess_type(self, path: Any) -> str:
        name = os.fspath(path).lower()
        if name.endswith(".json"):
            return "application/json"
        if Path(name).suffix in TEXT_SUFFIXES or ROTATED_LOG.search(name):
            return TEXT
        return str(super().guess_type(path))

    def _redirect(self, location: str) -> None:
        # A run folder opens on its report, which links every file of the run.
        self.send_response(HTTPStatus.FOUND)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send_zip(self, folder: Path) -> None:
        # Streamed as it is made: no length known, the end of the body is the connection's
        # end (HTTP/1.0), and nothing is held in memory or written to disk.
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Disposition", f'attachment; filename="{zip_name(folder)}"')
        self.end_headers()
        if self.command != "HEAD":
            write_zip(folder, cast(BinaryIO, self.wfile))

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


def is_run_folder(folder: Path) -> bool:
    """Takes a path. Returns whether it is a run folder: a directory holding a run file."""
    return folder.is_dir() and any((folder / name).is_file() for name in RUN_FILES)


def zip_name(folder: Path) -> str:
    """Takes a run folder. Returns its zip's file name, `<test>-<stamp>.zip`, with every
    character but letters, digits and `._-` as `_` (it goes into a header)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{folder.parent.name}-{folder.name}") + ".zip"


def write_zip(folder: Path, out: BinaryIO) -> None:
    """Takes a run folder and a stream (seekable or not). Writes the folder's regular files
    to it as a zip under `<test>-<stamp>/`; symbolic links are left out, since one could
    lead outside the results directory."""
    top = zip_name(folder).removesuffix(".zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for here, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(here, d)))
            for name in sorted(files):
                path = Path(here) / name
                if path.is_file() and not path.is_symlink():
                    archive.write(path, f"{top}/{path.relative_to(folder).as_posix()}")


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
        help=SUMMARIES["serve"],
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
