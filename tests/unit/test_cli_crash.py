"""An exception nobody handled is a crash (255) with one line and the traceback in a
file, never exit 1, which only a checker's invalid verdict may give."""

from __future__ import annotations

import argparse
import re
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
