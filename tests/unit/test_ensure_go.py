"""compose/ensure-go.sh takes the Go on PATH when it is 1.22 or newer (faultfs's go.mod
asks for 1.22), without asking apt for anything (a fake go, no root, no network)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.cluster.config import COMPOSE_DIR


@pytest.mark.parametrize("version", ["go1.22.0", "go1.26.8", "go2.0"])
def test_a_go_new_enough_on_path_is_taken(tmp_path: Path, version: str) -> None:
    fake = tmp_path / "go"
    fake.write_text(f'#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && echo {version}\n')
    fake.chmod(0o755)
    found = subprocess.run(
        ["bash", str(COMPOSE_DIR / "ensure-go.sh")],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"PATH": f"{tmp_path}:{os.environ['PATH']}"},
    )
    assert found.stdout.strip() == str(fake)
