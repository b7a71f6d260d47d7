"""`harness serve`: serves a results directory over HTTP on 127.0.0.1 only, refusing
every path that leads outside it (`..`, or a symbolic link pointing elsewhere)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.commands.argtypes import positive
from harness.exit_codes import EXIT_BAD_INPUT

HOST = "127.0.0.1"
DEFAULT_PORT = 8080


class ResultsHandler(SimpleHTTPRequestHandler):
    """Serves files under `directory`; anything resolving outside it is 403."""

    def send_head(self) -> Any:
        root = Path(self.directory).resolve()
        target = Path(self.translate_path(self.path)).resolve()
        if target != root and root not in target.parents:
            self.send_error(HTTPStatus.FORBIDDEN, "outside the results directory")
            return None
        return super().send_head()

    def log_message(self, format: str, *args: Any) -> None:
        return  # a request log on the terminal would bury the one line that matters


def make_server(root: Path, port: int) -> ThreadingHTTPServer:
    """Takes a results directory and a port (0: any free one). Returns a server bound to
    127.0.0.1 that serves it, not yet serving."""
    handler = functools.partial(ResultsHandler, directory=os.fspath(root.resolve()))
    return ThreadingHTTPServer((HOST, port), handler)


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
    print(f"serving {root} at http://{HOST}:{server.server_address[1]}/ (^C to stop)")
    with server:
        server.serve_forever()
    return 0
