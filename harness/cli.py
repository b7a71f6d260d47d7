"""Command-line entry point: `python -m harness SUBCOMMAND ...`.

Each subcommand lives in its own module of harness.commands with `add_parser(subparsers)`, which
sets `func(args) -> exit code` on its parser. Only the subcommand named is imported: the
others are listed by their summaries (harness.commands.SUMMARIES), so that one command
never pays for another's imports (`analyze` alone took 0.2 s: the Spark pipeline's frames).
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from harness import signals
from harness.commands import PARSERS, SUMMARIES
from harness.exit_codes import EXIT_BAD_INPUT, EXIT_CRASH, EXIT_INTERRUPTED, EXIT_READER_GONE

# Address space set aside at start (calloc'd, so it is never touched) and given back when
# memory runs out, so that saying so, in a line and a log, does not run out too.
_RESERVE = [bytes(8 * 2**20)]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


class _Version(argparse.Action):
    """--version: the harness's release and the Kafka releases it runs, read only when
    asked (importlib.metadata and the release table cost every other command nothing)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib import metadata

        from harness.cluster.releases import RELEASES

        try:
            mine = metadata.version("kafka-harness")
        except metadata.PackageNotFoundError:
            mine = "unknown (not installed)"
        first, last = next(iter(RELEASES)), next(reversed(RELEASES))
        print(f"harness {mine}; runs Kafka {first} to {last}")
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Takes the arguments to be parsed, if known. Returns the parser with every subcommand
    registered: in full the one argv names (all of them when argv is None), the others by
    name and summary only."""
    parser = _Parser(prog="harness", description="Jepsen-style correctness tests for Kafka.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    # The top-level parser has no option that takes a value (-h, --version): its first
    # other argument is the command.
    named = (
        next((arg for arg in argv if not arg.startswith("-")), None) if argv is not None else None
    )
    for name, summary in SUMMARIES.items():
        if argv is None or name == named:
            importlib.import_module(f"harness.commands.{PARSERS[name]}").add_parser(sub)
        else:
            sub.add_parser(name, help=summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parses argv and runs the chosen subcommand; returns its exit code."""
    signals.install()
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    args.argv = list(argv)  # what `run` keeps to rerun
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError as err:  # `harness matrix --list | head`: the reader left
        if not stdout_reader_gone():
            return crashed(err, log_dirs(args))  # a socket of ours broke: that is a crash
        silence_stdout()
        return EXIT_READER_GONE
    except MemoryError as err:  # before Exception: what it holds must go first
        return crashed(released(err), log_dirs(args))
    except Exception as err:  # a bug of ours: never exit 1, which means "invalid"
        return crashed(err, log_dirs(args))
    return code


def stdout_reader_gone() -> bool:
    """True when stdout is a pipe whose reader has closed it (poll reports an error on its
    write end), so a BrokenPipeError came from there and not from a socket of ours."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def silence_stdout() -> None:
    """Points stdout at /dev/null, so the interpreter's flush at exit cannot raise again
    on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def log_dirs(args: argparse.Namespace) -> list[Path]:
    """Takes the parsed arguments. Returns the folders the command wants a crash's log in,
    best first (`crash_log_dirs(args)` when its parser set one, as `check` does for --out);
    none when it has no say, or when asking fails too."""
    where: Callable[[argparse.Namespace], list[Path]] | None = getattr(args, "crash_log_dirs", None)
    try:
        return where(args) if where is not None else []
    except Exception:  # the log matters more than its place: the temp dir will do
        return []


def released(err: MemoryError) -> MemoryError:
    """Takes the MemoryError nobody handled. Frees the reserve and every value the frames of
    its traceback (and of the errors it interrupted) still hold, keeping where each was;
    returns it."""
    _RESERVE.clear()
    seen: set[int] = set()
    pending: list[BaseException | None] = [err]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        pending += [exc.__context__, exc.__cause__]
    return err


def crashed(err: BaseException, dirs: Sequence[Path] = ()) -> int:
    """Takes an exception nobody handled and the folders its command wants the log in, best
    first. Writes its traceback to a log file in the first that takes it (made if missing),
    else in the temp dir; says so in one line, and returns 255 (Jepsen's exit code for a
    crash)."""
    import tempfile  # a crash's only: the reserve, given back, leaves room to import it

    where = "no log could be written"
    for folder in [*dirs, None]:  # None: the temp dir
        try:
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix="harness-crash-", suffix=".log", dir=folder)
            with os.fdopen(fd, "w") as log:
                traceback.print_exception(err, file=log)
        except OSError:
            continue
        where = f"traceback in {path}"
        break
    print(f"harness: internal error: {err!r} ({where})", file=sys.stderr)
    return EXIT_CRASH
