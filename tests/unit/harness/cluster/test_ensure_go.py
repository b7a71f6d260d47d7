"""compose/ensure-go.sh takes the Go on PATH when it is new enough for every Go build of
the project (1.26: nats-server v2.15's go.mod asks for it; faultfs's for 1.22), without
fetching anything (a fake go, no root, no network)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.cluster.config import COMPOSE_DIR


@pytest.mark.parametrize("version", ["go1.26.8", "go1.30.1"])
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
