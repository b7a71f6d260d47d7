"""`harness check --spark` as a user runs it: from a folder outside the checkout, with no
virtualenv on PATH, and with links planted by another user at the path it once used
for its log (`$TMPDIR/harness-spark-<uid>/`): a verdict, and nothing written through
the links. One Spark run for the whole file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import DATA

SECRET = "a root-only file\n"


def _without_the_project(env: dict[str, str]) -> dict[str, str]:
    # As from a shell where the virtualenv is not activated: a bare `python3` on PATH
    # knows nothing of the project.
    venv_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    kept = {k: v for k, v in env.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")}
    return kept | {"PATH": os.pathsep.join(path)}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    history = elsewhere / "history.jsonl"
    shutil.copy(DATA / "register.jsonl", history)
    tmpdir = elsewhere / "tmp"
    planted = tmpdir / f"harness-spark-{os.getuid()}"
    planted.mkdir(parents=True)
    victims = {}
    for name in ("spark.log", "log4j2.properties"):
        victims[name] = elsewhere / f"victim-{name}"
        victims[name].write_text(SECRET)
        victims[name].chmod(0o600)
        (planted / name).symlink_to(victims[name])
    env = _without_the_project(dict(os.environ)) | {"TMPDIR": str(tmpdir)}
    run = subprocess.run(
        [sys.executable, "-m", "harness", "check", "--spark", history.name],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return {"run": run, "victims": victims, "tmpdir": tmpdir}


def test_a_verdict_from_a_folder_outside_the_checkout(checked: dict[str, Any]) -> None:
    run = checked["run"]
    assert run.returncode == 0, run.stdout + run.stderr
    # The same first line as the local check, but for the time it took.
    assert run.stdout.startswith(
        "VALID   history.jsonl: cas-register model, jsonl, 5 ops over 1 key, "
    ), run.stdout


def test_nothing_is_written_through_links_planted_at_the_old_log_path(
    checked: dict[str, Any],
) -> None:
    for victim in checked["victims"].values():
        assert victim.read_text() == SECRET, victim
    # Its own log folder was private, and is gone once the check gave a verdict.
    left = [p.name for p in checked["tmpdir"].iterdir() if p.name.startswith("harness-spark")]
    assert left == [f"harness-spark-{os.getuid()}"]
