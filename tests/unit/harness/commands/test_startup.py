"""Tests that the command line starts without the heavy libraries: importing the check
command, or asking any subcommand for --help, loads none of them. matplotlib, networkx
and pyspark are imported only where a drawing, a graph or Spark is needed; Docker's,
Kafka's and ZooKeeper's clients only by the commands that talk to a cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support import ROOT

HEAVY_FOR_CHECK = ("matplotlib", "networkx", "pyspark")
HEAVY_FOR_HELP = (
    *HEAVY_FOR_CHECK,
    "docker",
    "urllib3",
    "confluent_kafka",
    "kazoo",
    "kvstore",
    "harness.run.core",
    "workloads.registry",
    "nemesis.schedule",
)


def loaded_after(code: str, modules: tuple[str, ...]) -> list[str]:
    """Runs code in a fresh interpreter. Returns which of modules it left loaded (the
    report goes to stderr, so the code may print to stdout)."""
    report = (
        "import json, sys\n"
        f"loaded = sorted(m for m in {modules!r} if m in sys.modules)\n"
        "print(json.dumps(loaded), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stderr.strip().splitlines()[-1]))


def test_importing_the_check_cli_loads_no_heavy_library() -> None:
    assert loaded_after("import harness.commands.check", HEAVY_FOR_CHECK) == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["check", "--help"], ["run", "--help"], ["cluster", "up", "--help"]],
)
def test_help_loads_no_heavy_library(argv: list[str]) -> None:
    code = (
        "from harness.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
    )
    assert loaded_after(code, HEAVY_FOR_HELP) == []
