"""An exception nobody handled is a crash (255) with one line and the traceback in a
file, never exit 1, which only a checker's invalid verdict may give."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.commands import run as run_cli


def test_an_unhandled_exception_exits_255_with_the_traceback_in_a_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(_: argparse.Namespace) -> int:
        raise ValueError("a bug of ours")

    monkeypatch.setattr(run_cli, "run", boom)
    assert cli.main(["run", "--nemesis", "none"]) == 255
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "a bug of ours" in err
    match = re.search(r"traceback in (\S+)\)", err)
    assert match is not None
    log = Path(match.group(1))
    try:
        assert "ValueError: a bug of ours" in log.read_text()
    finally:
        log.unlink()


def test_a_reader_that_leaves_the_pipe_early_is_not_a_crash() -> None:
    # `harness matrix --list | head -1`: the rest of the list has nowhere to go.
    lister = subprocess.Popen(
        [sys.executable, "-m", "harness", "matrix", "--runs", "400", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert lister.stdout is not None and lister.stderr is not None
    first = lister.stdout.readline()
    lister.stdout.close()  # the reader leaves after one line
    err = lister.stderr.read().decode()
    assert lister.wait(timeout=60) == 141
    assert first and err == ""


def test_a_broken_pipe_of_our_own_is_still_a_crash(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken_socket(_: argparse.Namespace) -> int:
        raise BrokenPipeError(32, "Broken pipe")  # stdout is fine: a socket of ours broke

    monkeypatch.setattr(run_cli, "run", broken_socket)
    assert cli.main(["run", "--nemesis", "none"]) == 255
    match = re.search(r"traceback in (\S+)\)", capsys.readouterr().err)
    assert match is not None
    Path(match.group(1)).unlink()
