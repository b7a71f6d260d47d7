"""`harness analyze` given an output folder it cannot write: one line and 254, before
any Spark starts, never 255."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT


@pytest.mark.parametrize("out", ["/dev/null", "/dev/null/analysis", "{file}", "{file}/analysis"])
def test_an_output_folder_that_cannot_be_made_is_bad_input(tmp_path: Path, out: str) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "file").write_text("not a folder")
    results, target = str(tmp_path / "results"), out.format(file=tmp_path / "file")
    run = subprocess.run(
        [sys.executable, "-m", "harness", "analyze", results, "--out", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 254, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith("harness analyze: ") and "Spark" not in line, line
