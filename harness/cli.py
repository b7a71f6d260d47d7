"""Command-line entry point: `python -m harness SUBCOMMAND ...`.

Each subcommand lives in its own module with `add_parser(subparsers)`, which
sets `func(args) -> exit code` on its parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness import check_cli, run_cli
from harness.cluster import cli as cluster_cli

# Jepsen's exit codes: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 crash.
EXIT_BAD_ARGS = 254


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_ARGS)


def build_parser() -> argparse.ArgumentParser:
    """Returns the parser with every subcommand registered."""
    parser = _Parser(prog="harness", description="Jepsen-style correctness tests for Kafka.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    run_cli.add_parser(sub)
    cluster_cli.add_parser(sub)
    check_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parses argv and runs the chosen subcommand; returns its exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code
